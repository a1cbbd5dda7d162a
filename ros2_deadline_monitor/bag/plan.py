"""Which topics of a bag to analyze, and how: from the parameter file and the flags."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.errors import BagError, ConfigError
from ros2_deadline_monitor.analysis.stamp_field import (
    DEFAULT_STAMP_FIELD,
    StampFieldError,
    StampRule,
)
from ros2_deadline_monitor.bag.layouts import bag_stamp_rule
from ros2_deadline_monitor.bag.reader import (
    absolute_topic,
    BagSource,
    BagTopic,
    CLOCK_TYPE,
    STATS_TYPE,
)
from ros2_deadline_monitor.bag.replay import Plan, TopicPlan
from ros2_deadline_monitor.configuration.excluded_topics import excluded_reason, EXCLUDED_TOPICS
from ros2_deadline_monitor.configuration.params_file import FileConfig
from ros2_deadline_monitor.configuration.topic_flags import topic_id

__all__ = ['EXCLUDED_TOPICS', 'Overrides', 'build_plan', 'topic_id', 'topic_stamp_rule']



@dataclass(frozen=True)
class Overrides:
    """Per-topic settings given as flags; they win over the parameter file."""

    topics: tuple[str, ...] = ()
    period_ns: int | None = None
    deadline_ns: int | None = None
    jitter_ns: int | None = None
    stamp: str | None = None
    stamp_field: str | None = None
    rule: str | None = None
    clock: str | None = None
    timeout_ns: int | None = None
    kind: str | None = None

    def apply(self, config: TopicConfig) -> TopicConfig:
        """Return ``config`` with every given flag applied."""
        changes = {k: v for k, v in (
            ('period_ns', self.period_ns), ('deadline_ns', self.deadline_ns),
            ('jitter_tolerance_ns', self.jitter_ns), ('stamp', self.stamp),
            ('stamp_field', self.stamp_field), ('rule', self.rule),
            ('clock', self.clock), ('timeout_ns', self.timeout_ns),
            ('kind', self.kind)) if v is not None}
        return replace(config, **changes) if changes else config


def _default_topics(bag: BagSource, clock_topic: str) -> list[str]:
    return [t.name for t in bag.topics.values()
            if excluded_reason(t.name, (t.msgtype,), clock_topic=clock_topic) is None
            and t.msgtype != CLOCK_TYPE]


def _missing(names: list[str], bag: BagSource) -> BagError:
    have = ', '.join(bag.topics) or 'none'
    which = 'topic' if len(names) == 1 else 'topics'
    return BagError(f'{which} {", ".join(names)} not in the bag {bag.path} (it has: {have})')


def topic_stamp_rule(bag: BagSource, config: TopicConfig, topic: BagTopic,
                     field_given: bool = False) -> StampRule | None:
    """Resolve the topic's ``stamp_field`` against its type as the bag defines it.

    The stamp is needed when ``stamp`` is ``start`` or a ``stamp_field`` was set (or given
    as a flag, ``field_given``, even the default one): then a type the bag does not define,
    or a path it does not have, is a ``ConfigError`` with the reason (the user asked for a
    stamp that cannot be read). Otherwise (the default path, arrivals start the cycles) a
    type without that stamp just has none: None, as before stamp fields existed
    (``unreadable_stamp`` says why).
    """
    needed = config.stamp_required or field_given
    try:
        return bag_stamp_rule(bag, topic.msgtype, config.stamp_field)
    except BagError as err:
        if needed:
            raise ConfigError(f'{topic.name}: stamp_field {config.stamp_field} cannot be '
                              f'read: {err}') from None
    except StampFieldError as err:
        if not needed:
            return None
        if config.stamp_field == DEFAULT_STAMP_FIELD:
            raise ConfigError(f'{topic.name} ({topic.msgtype}) has no header stamp: stamp '
                              '"start" needs a header.stamp, a std_msgs/Header or '
                              'builtin_interfaces/Time first field, or a --stamp-field '
                              f'({err})') from None
        raise ConfigError(f'{topic.name}: stamp_field: {err}') from None
    return None


def unreadable_stamp(bag: BagSource, topic: BagTopic) -> str:
    """Say why a topic's messages have no stamp to read when the cause is no definition.

    A type the bag does not define (a custom type of a db3 recorded before Jazzy) may well
    carry a header: its stamp cannot be read, which is not "no stamp" ('' otherwise).
    """
    try:
        bag.definition(topic.msgtype)
    except BagError:
        return (f'the bag has no definition of {topic.msgtype}: its stamp (if any) cannot be '
                'read')
    return ''


def build_plan(bag: BagSource, file_config: FileConfig | None,
               overrides: Overrides) -> tuple[Plan, list[str]]:
    """Decide what to analyze; return the plan and warnings for the user.

    Raises ``BagError`` when a named topic is missing, the clock topic has the wrong type or
    there is nothing to analyze, and ``ConfigError`` for settings the bag cannot honour.
    """
    warnings: list[str] = list(file_config.warnings) if file_config else []
    warnings += bag.notes
    # Bag topics are absolute (``BagSource``); so are the names asked for here.
    clock_name = absolute_topic(file_config.clock_topic if file_config else '/clock')
    clock = bag.topics.get(clock_name)
    if clock is not None and clock.msgtype != CLOCK_TYPE:
        raise BagError(f'{clock_name} has type {clock.msgtype}, expected {CLOCK_TYPE}')
    stats = tuple(t for t in bag.topics.values() if t.msgtype == STATS_TYPE)

    configs: list[tuple[TopicConfig, str]] = []
    taken: set[str] = set()
    named = list(dict.fromkeys(overrides.topics))
    if file_config is not None:
        chosen = [replace(c, topic=absolute_topic(c.topic)) for c in file_config.topics]
        if named:
            named_topics = {absolute_topic(n) for n in named}
            chosen = [c for c in chosen if c.topic in named_topics or c.name in named]
        for config in chosen:
            taken.add(config.name)
            choice = 'auto' if config.name in file_config.auto_clock else 'config'
            configs.append((config, choice))
        known = {c.topic for c in chosen} | {c.name for c in chosen}
        extra = [n for n in named if n not in known and absolute_topic(n) not in known]
    else:
        extra = named or _default_topics(bag, clock_name)
    for name in extra:
        name = absolute_topic(name)
        configs.append((TopicConfig(name=topic_id(name, taken), topic=name), 'auto'))

    absent = [c.topic for c, _ in configs if c.topic not in bag.topics]
    if absent and (named or len(absent) == len(configs)):
        raise _missing(absent, bag)
    for topic in absent:
        warnings.append(f'{topic}: configured but not in the bag, skipped')

    plans = []
    for config, choice in configs:
        if config.topic not in bag.topics:
            continue
        if overrides.clock is not None:
            choice = 'flag'
        config = overrides.apply(config)
        topic = bag.topics[config.topic]
        rule = topic_stamp_rule(bag, config, topic, overrides.stamp_field is not None)
        plans.append(TopicPlan(config, topic, rule, choice,
                               unreadable_stamp(bag, topic) if rule is None else ''))

    if not plans and not stats and (clock is None or clock.count == 0):
        raise BagError(f'nothing to analyze in {bag.path}: no topics besides infrastructure '
                       f'ones (it has: {", ".join(bag.topics) or "none"})')
    analysis = file_config.analysis if file_config else AnalysisConfig()
    plan = Plan(topics=tuple(plans), clock=clock, stats=stats, analysis=analysis,
                use_sim_time=file_config.use_sim_time if file_config else None)
    return plan, warnings
