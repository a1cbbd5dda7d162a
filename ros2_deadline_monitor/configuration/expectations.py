"""Expectations on whole-run figures: the limits a CI job gates on, and their evaluation.

Limits are configured per topic and for the clock in the monitor's own parameter layout
(``topic.<id>.expect.max_misses: 0``, ``clock.expect.min_rtf: 0.9``) or given once for every
topic (the analyzer's ``--expect-*`` flags). ``evaluate`` checks them against a ``Snapshot``
(the live session's final one, a bag's final one, or one folded from recorded or watched
``MonitorStats``), reading each limit's figure through the whole-run tables ``RUN_TOPIC`` and
``RUN_CLOCK`` of ``analysis/figures.py``; it returns every outcome, passed or failed. Each limit
has one meaning everywhere: ``min_rate_hz`` bounds the whole-run mean rate (not the lowest
window's), ``max_interval_ms`` the longest interval of the run.

A figure that could not be measured (loss with several writers, a period never learned, a
topic that never showed up) fails its expectation as *unknown*: a gate that cannot see a
figure must not pass it.

No ROS import, no numpy: plain values only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
import difflib
import math
from typing import Any

from ros2_deadline_monitor.analysis.errors import ExpectationError
from ros2_deadline_monitor.analysis.figures import Figure, known, RUN_CLOCK, RUN_TOPIC, TRANSFORM
from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot

__all__ = [
    'CLOCK_LIMITS', 'CLOCK_PREFIX', 'CLOCK_SUBJECT', 'EVERY_TOPIC',
    'Expectations', 'Limit', 'LimitSpec', 'Outcome', 'TOPIC_LIMITS', 'TRANSFORM_KEYS', 'Verdict',
    'evaluate', 'expectation_names', 'expectations_from', 'is_expectation', 'known',
    'limit_value', 'parse_limit', 'topic_expectation_prefix',
]

EXPECT = 'expect'
NULL_SPELLINGS = frozenset({'null', 'Null', 'NULL', '~'})
"""YAML's null as rcl reads it from a params file or ``-p``: a string. ``ros2 param dump``
writes an unset expectation as ``null``; the dump must load back as "no limit"."""
CLOCK_PREFIX = f'clock.{EXPECT}.'
CLOCK_SUBJECT = 'clock'
"""``Outcome.topic_id`` of the clock's expectations."""
EVERY_TOPIC = '(every topic)'
"""``Outcome.topic`` of an every-topic limit when the run has no topic at all."""


@dataclass(frozen=True)
class LimitSpec:
    """One kind of limit: its key and how it bounds its figure.

    The figure is the row of ``RUN_TOPIC`` / ``RUN_CLOCK`` whose ``limit`` is ``key``, in
    the limit's unit; ``bound`` is ``max`` (measured <= limit holds) or ``min`` (measured >=
    limit holds).
    """

    key: str
    label: str
    bound: str
    description: str
    unit: str = ''
    integer: bool = False
    high: float | None = None


TOPIC_LIMITS: tuple[LimitSpec, ...] = (
    LimitSpec('max_misses', 'deadline misses', 'max',
              'Most deadline misses allowed over the whole run.', integer=True),
    LimitSpec('max_miss_ratio', 'miss ratio', 'max',
              'Largest allowed share of cycles that missed their deadline (0..1).', high=1.0),
    LimitSpec('max_skipped', 'skipped periods', 'max',
              'Most skipped timer periods allowed over the whole run.', integer=True),
    LimitSpec('max_interval_ms', 'max interval', 'max',
              'Longest allowed interval between cycle starts (ms, on the timer clock).',
              unit='ms'),
    LimitSpec('max_lost', 'messages lost', 'max',
              'Most messages allowed to be lost between writer and monitor; fails as unknown '
              'when loss cannot be measured (several writers, or a bag).', integer=True),
    LimitSpec('min_rate_hz', 'rate', 'min',
              'Lowest allowed mean message rate over the whole run (Hz, on the timer clock; '
              'not the lowest window).', unit='Hz'),
    LimitSpec('max_transform_gap_ms', 'longest gap', 'max',
              'Longest allowed time without each transform of a /tf-like topic (ms: an '
              'interval between its arrivals, or its silence while the topic went on; static '
              'transforms exempt).', unit='ms'),
    LimitSpec('min_transform_rate_hz', 'rate', 'min',
              'Lowest allowed mean rate of each transform of a /tf-like topic (Hz; static '
              'transforms exempt).', unit='Hz'),
)
TRANSFORM_KEYS = frozenset({'max_transform_gap_ms', 'min_transform_rate_hz'})
"""Limits checked on each transform of a /tf-like topic (``TopicSnapshot.transforms``)."""
CLOCK_LIMITS: tuple[LimitSpec, ...] = (
    LimitSpec('min_rtf', 'RTF overall', 'min',
              'Lowest allowed real time factor over the whole run.'),
    LimitSpec('min_rtf_bin', 'worst RTF window', 'min',
              'Lowest allowed RTF of any fixed wall window (rtf_bin_s long).'),
)
_TOPIC_SPECS = {s.key: s for s in TOPIC_LIMITS}
_CLOCK_SPECS = {s.key: s for s in CLOCK_LIMITS}
_TOPIC_FIGURES: dict[str, Figure] = {f.limit: f for f in RUN_TOPIC + TRANSFORM if f.limit}
_CLOCK_FIGURES: dict[str, Figure] = {f.limit: f for f in RUN_CLOCK if f.limit}
assert set(_TOPIC_FIGURES) == set(_TOPIC_SPECS) and set(_CLOCK_FIGURES) == set(_CLOCK_SPECS)


# -- configuration ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Limit:
    """One configured limit: ``spec.key`` at ``value`` (in the spec's unit)."""

    spec: LimitSpec
    value: float

    @property
    def key(self) -> str:
        """The limit's key, e.g. ``max_misses``."""
        return self.spec.key


@dataclass(frozen=True)
class Expectations:
    """Every configured limit.

    ``topics`` maps a topic identifier to its own limits; ``every_topic`` applies to each
    topic of the run and wins over a topic's own limit of the same key (flags override the
    file); ``clock`` bounds the /clock figures.
    """

    topics: Mapping[str, tuple[Limit, ...]] = field(default_factory=dict)
    every_topic: tuple[Limit, ...] = ()
    clock: tuple[Limit, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nothing is expected at all."""
        return not (any(self.topics.values()) or self.every_topic or self.clock)

    def with_overrides(self, every_topic: Iterable[Limit] = (),
                       clock: Iterable[Limit] = ()) -> Expectations:
        """Return a copy where ``every_topic`` and ``clock`` limits replace same-key ones."""
        return Expectations(topics=self.topics,
                            every_topic=_merge(self.every_topic, every_topic),
                            clock=_merge(self.clock, clock))

    def for_topic(self, topic_id: str) -> tuple[Limit, ...]:
        """Return the limits of one topic: its own, overridden by ``every_topic``."""
        return _merge(self.topics.get(topic_id, ()), self.every_topic)


def _merge(base: Iterable[Limit], over: Iterable[Limit]) -> tuple[Limit, ...]:
    merged = {limit.key: limit for limit in base}
    merged.update({limit.key: limit for limit in over})
    return tuple(merged.values())


def limit_value(spec: LimitSpec, name: str, value: Any) -> Limit:
    """Validate one limit value; ``name`` is how the user wrote it (for the error text)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ExpectationError(f'{name} must be a number, got {value!r}')
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise ExpectationError(f'{name} must be a finite number, got {value}')
    if value < 0:
        raise ExpectationError(f'{name} must be ≥ 0 (a limit cannot be negative), got {value:g}')
    if spec.integer and not value.is_integer():
        raise ExpectationError(f'{name} must be a whole number (a count), got {value:g}')
    if spec.high is not None and value > spec.high:
        raise ExpectationError(f'{name} must be at most {spec.high:g}, got {value:g}')
    return Limit(spec, value)


def _unknown_key(name: str, key: str, specs: Mapping[str, LimitSpec], prefix: str
                 ) -> ExpectationError:
    close = difflib.get_close_matches(key, list(specs), n=1, cutoff=0.6)
    hint = f' (did you mean {prefix}{close[0]}?)' if close else ''
    return ExpectationError(f'{name}: unknown expectation {key!r}{hint}; known: '
                            f'{", ".join(specs)}')


def topic_expectation_prefix(topic_id: str) -> str:
    """``topic.<id>.expect.``: what every expectation parameter of one topic starts with."""
    return f'topic.{topic_id}.{EXPECT}.'


def is_expectation(name: str) -> bool:
    """Tell whether a parameter name is written as an expectation (known key or not)."""
    parts = name.split('.')
    return parts[0] == 'clock' or (parts[0] == 'topic' and len(parts) >= 3
                                   and parts[2] == EXPECT)


def expectation_names(topic_ids: Iterable[str]) -> list[str]:
    """Every expectation parameter name for ``topic_ids`` (for declaring them live)."""
    names = [f'{CLOCK_PREFIX}{spec.key}' for spec in CLOCK_LIMITS]
    for topic_id in topic_ids:
        names += [f'{topic_expectation_prefix(topic_id)}{spec.key}' for spec in TOPIC_LIMITS]
    return names


def expectations_from(values: Mapping[str, Any], topic_ids: Iterable[str]) -> Expectations:
    """Read the expectations out of flat ``{parameter: value}`` node parameters.

    Takes ``topic.<id>.expect.<key>`` and ``clock.expect.<key>``; other parameters are left
    alone. ``None``, or YAML's null read as a string by rcl (``NULL_SPELLINGS``: ``null``,
    ``~``, what ``ros2 param dump`` writes for an unset one), means "no limit". Raises
    ``ExpectationError`` for an unknown key (naming the closest known one), a non-number, a
    negative or out-of-range limit, a fractional count, or an identifier that is not in
    ``topic_ids``.
    """
    ids = list(topic_ids)
    topics: dict[str, list[Limit]] = {}
    clock: list[Limit] = []
    for name in sorted(values):
        value = values[name]
        if isinstance(value, str) and value in NULL_SPELLINGS:
            value = None
        parts = name.split('.')
        if parts[0] == 'clock':
            if len(parts) < 3 or parts[1] != EXPECT:
                raise _unknown_parameter(name, 'clock.expect.<limit>')
            key = '.'.join(parts[2:])
            if key not in _CLOCK_SPECS:
                raise _unknown_key(name, key, _CLOCK_SPECS, CLOCK_PREFIX)
            if value is not None:
                clock.append(limit_value(_CLOCK_SPECS[key], name, value))
        elif parts[0] == 'topic' and len(parts) >= 4:
            topic_id = parts[1]
            prefix = f'topic.{topic_id}.{EXPECT}.'
            if parts[2] != EXPECT:
                raise _unknown_parameter(name, f'{prefix}<limit>')
            key = '.'.join(parts[3:])
            if key not in _TOPIC_SPECS:
                raise _unknown_key(name, key, _TOPIC_SPECS, prefix)
            if topic_id not in ids:
                listed = ', '.join(ids) or 'none'
                raise ExpectationError(f'{name}: {topic_id!r} is not listed in topics '
                                       f'({listed}), so this expectation would never be checked')
            if value is not None:
                topics.setdefault(topic_id, []).append(
                    limit_value(_TOPIC_SPECS[key], name, value))
        elif parts[0] == 'topic' and len(parts) == 3 and parts[2] == EXPECT:
            raise ExpectationError(f'{name} must be a mapping of limits '
                                   f'({", ".join(_TOPIC_SPECS)}), got {value!r}')
    order = {spec.key: i for i, spec in enumerate(TOPIC_LIMITS + CLOCK_LIMITS)}

    def ordered(limits: list[Limit]) -> tuple[Limit, ...]:
        return tuple(sorted(limits, key=lambda limit: order[limit.key]))

    return Expectations(topics={k: ordered(v) for k, v in topics.items()},
                        clock=ordered(clock))


def _unknown_parameter(name: str, form: str) -> ExpectationError:
    return ExpectationError(f'{name}: unknown parameter; expectations are written {form}')


def parse_limit(key: str, text: str, *, clock: bool = False) -> Limit:
    """Parse one limit given as text (a command-line flag ``--expect-<key>``)."""
    specs = _CLOCK_SPECS if clock else _TOPIC_SPECS
    if key not in specs:
        raise _unknown_key(key, key, specs, '')
    try:
        value: Any = float(text)
    except ValueError:
        value = text
    return limit_value(specs[key], f'--expect-{key.replace("_", "-")}', value)


# -- evaluation -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """One expectation checked: what was measured against which limit.

    ``measured`` is None when the figure is unknown (then ``passed`` is False and ``reason``
    says why). ``topic`` is the topic name, or the clock topic for the clock's expectations;
    ``topic_id`` its identifier (``clock`` for the clock).
    """

    topic_id: str
    topic: str
    key: str
    figure: str
    bound: str
    measured: float | None
    limit: float
    unit: str
    passed: bool
    reason: str = ''

    @property
    def measured_text(self) -> str:
        """The measured value as shown to users (``unknown`` when not measured)."""
        return 'unknown' if self.measured is None else _number(self.measured, self.unit)

    @property
    def limit_text(self) -> str:
        """The limit as shown to users, with its comparison (``<= 0``, ``>= 0.9``)."""
        sign = '<=' if self.bound == 'max' else '>='
        return f'{sign} {_number(self.limit, self.unit)}'

    def describe(self) -> str:
        """Topic, figure, measured value and limit (and why it is unknown), without status."""
        text = (f'{self.topic}: {self.figure} {self.measured_text}, expected '
                f'{self.limit_text} ({self.key})')
        return f'{text}: {self.reason}' if self.reason else text

    def line(self) -> str:
        """One line for a terminal or a CI log: ``FAIL`` or ``ok``, then ``describe()``."""
        return f'{"ok  " if self.passed else "FAIL"} {self.describe()}'


def _number(value: float, unit: str) -> str:
    text = f'{value:,.0f}' if float(value).is_integer() and abs(value) < 1e15 else f'{value:.4g}'
    return f'{text} {unit}' if unit else text


@dataclass(frozen=True)
class Verdict:
    """Every outcome of one run, in the order the expectations were checked."""

    outcomes: tuple[Outcome, ...]

    @property
    def failed(self) -> tuple[Outcome, ...]:
        """The outcomes that did not hold (including unknown figures)."""
        return tuple(o for o in self.outcomes if not o.passed)

    @property
    def passed(self) -> tuple[Outcome, ...]:
        """The outcomes that held."""
        return tuple(o for o in self.outcomes if o.passed)

    @property
    def ok(self) -> bool:
        """True when every expectation held (vacuously true without expectations)."""
        return not self.failed


def _check(limit: Limit, topic_id: str, topic: str, value: Any,
           why: Callable[[], str]) -> Outcome:
    spec = limit.spec
    common = dict(topic_id=topic_id, topic=topic, key=spec.key, figure=spec.label,
                  bound=spec.bound, limit=limit.value, unit=spec.unit)
    value = known(value)
    if value is None or isinstance(value, str):
        return Outcome(measured=None, passed=False, reason=f'unknown: {why()}', **common)
    measured = float(value)
    held = measured <= limit.value if spec.bound == 'max' else measured >= limit.value
    return Outcome(measured=measured, passed=bool(held), **common)


def _absent(why: str) -> Callable[[], str]:
    return lambda: why


def _transform_outcomes(limit: Limit, snapshot: Snapshot, topic: TopicSnapshot, figure: Figure,
                        own: bool) -> list[Outcome]:
    """Check a transform limit on each transform of a topic that repeats (not static).

    A limit given for every topic (a flag) leaves topics without transforms alone, and a
    latched topic's static ones; one written for this topic fails as unknown where there is
    no transform to check (a type not laid out like a TFMessage, none received).
    """
    name = topic.topic or topic.topic_id
    transforms = topic.transforms
    if transforms is None:
        return [_check(limit, topic.topic_id, name, None, _absent(
            'no per-transform figures: the type is not laid out like tf2_msgs/TFMessage, or '
            'the figures come from stats messages, which carry none'))] if own else []
    dynamic = transforms.dynamic()
    if not dynamic:
        if transforms.static and not own:
            return []
        why = ('only static transforms (a latched topic)' if transforms.static
               else 'no transform received')
        return [_check(limit, topic.topic_id, name, None, _absent(why))]
    return [_check(limit, topic.topic_id, f'{name} {tf.name}', figure.get(snapshot, tf),
                   lambda f=figure, t=tf: f.unknown(snapshot, t)) for tf in dynamic]


def evaluate(expectations: Expectations, snapshot: Snapshot) -> Verdict:
    """Check every expectation against a run's snapshot (its whole-run figures).

    Topic limits apply to the topics in ``snapshot`` (``every_topic`` to each of them; with no
    topic at all each fails once as unknown); a topic identifier with limits but no topic in
    the snapshot (it was not in the run) fails each of its limits as unknown. Clock limits
    without any /clock message fail as unknown too.
    """
    outcomes: list[Outcome] = []
    seen = set()
    for topic in snapshot.topics:
        seen.add(topic.topic_id)
        name = topic.topic or topic.topic_id
        own = {limit.key for limit in expectations.topics.get(topic.topic_id, ())}
        for limit in expectations.for_topic(topic.topic_id):
            figure = _TOPIC_FIGURES[limit.key]
            if limit.key in TRANSFORM_KEYS:
                outcomes += _transform_outcomes(limit, snapshot, topic, figure,
                                                limit.key in own)
                continue
            outcomes.append(_check(limit, topic.topic_id, name, figure.get(snapshot, topic),
                                   lambda f=figure, t=topic: f.unknown(snapshot, t)))
    if not snapshot.topics:
        for limit in expectations.every_topic:
            outcomes.append(_check(limit, EVERY_TOPIC, EVERY_TOPIC, None,
                                   _absent('no topic was analyzed')))
    for topic_id, limits in expectations.topics.items():
        if topic_id in seen:
            continue
        for limit in _merge(limits, expectations.every_topic):
            outcomes.append(_check(limit, topic_id, topic_id, None,
                                   _absent('the topic is not in the run')))
    clock = snapshot.clock
    for limit in expectations.clock:
        figure = _CLOCK_FIGURES[limit.key]
        outcomes.append(_check(limit, CLOCK_SUBJECT, clock.topic, figure.get(snapshot, clock),
                               lambda f=figure: f.unknown(snapshot, clock)))
    return Verdict(tuple(outcomes))
