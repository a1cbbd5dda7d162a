"""Validated configuration values for the analysis.

All durations are integer nanoseconds. The configuration converts parameters (ms, Hz, s) at the
edge and turns every ``ConfigError`` into a rejected parameter with the error's text as reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import math
import re

from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.analysis.stamp_field import check_stamp_field, DEFAULT_STAMP_FIELD

RULES = ('interval', 'response')
STAMPS = ('auto', 'none', 'start')
"""``auto`` (the default): the stamp starts the cycles when the data shows it is a usable
cycle start (``cycle_starts.stamps_usable``), else the arrival; ``none``: arrivals;
``start``: the stamp, always."""
CLOCKS = ('sim', 'wall')
KINDS = ('timer', 'event')
"""``timer``: a periodic producer (grid, misses, skipped periods); ``event``: no period."""
PERIOD_SOURCES = ('configured', 'graph deadline QoS', 'learned')
"""Where a topic's expected period came from, in the order they win."""
MAX_LEVEL_WINDOWS = 1000

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000
MAX_PERIOD_NS = 3600 * NS_PER_S
MAX_STEADY_REFRESHES_PER_S = 100_000.0
DEFAULT_JITTER_FRACTION = 0.05

_TOPIC_RE = re.compile(r'^~?/?[A-Za-z_{][A-Za-z0-9_{}]*(/[A-Za-z_{][A-Za-z0-9_{}]*)*$')
_NAME_RE = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')


def check_topic_name(topic: str) -> str:
    """Return ``topic`` if it is a valid ROS topic name, else raise ``ConfigError``."""
    if not isinstance(topic, str) or not _TOPIC_RE.match(topic):
        raise ConfigError(f'invalid topic name {topic!r}')
    return topic


def _check_duration(param: str, value: int | None, *, zero_ok: bool = False) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f'{param} must be an integer number of nanoseconds, got {value!r}')
    if value < 0 or (value == 0 and not zero_ok):
        raise ConfigError(f'{param} must be {"≥" if zero_ok else ">"} 0, got {value}')
    if value > MAX_PERIOD_NS:
        raise ConfigError(f'{param} must be at most one hour, got {value} ns')


def duration_ns(param: str, value: float, unit_ns: int, *, zero_ok: bool = False) -> int:
    """Convert a float in some unit (ms, s) to validated integer nanoseconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ConfigError(f'{param} must be a number, got {value!r}')
    if math.isinf(value) or abs(value) * unit_ns > MAX_PERIOD_NS:
        raise ConfigError(f'{param} must be at most one hour, got {value}')
    ns = round(value * unit_ns)
    _check_duration(param, ns, zero_ok=zero_ok)
    return ns


@dataclass(frozen=True)
class TopicConfig:
    """How one target topic is analysed (docs/design.md, Cycles).

    ``None`` means "use the default": the period is learned from the first intervals (see
    ``period_learning.learn_period``: their span over the grid slots they cover), the
    deadline equals the period, the jitter tolerance is ``jitter_fraction`` (5 %) of the
    period, the rule is
    ``response`` when the header stamp marks the cycle start and ``interval`` otherwise, the
    wall budget is ``period / target_rtf + jitter``.

    ``stamp_field`` is where the stamp is in the message (``header.stamp``,
    ``transforms[0].header.stamp``); only its syntax is checked here, whether the topic's type
    has it is decided when the type is known (``analysis.stamp_field.resolve_stamp_field``).
    """

    name: str
    topic: str
    period_ns: int | None = None
    deadline_ns: int | None = None
    jitter_tolerance_ns: int | None = None
    jitter_fraction: float = DEFAULT_JITTER_FRACTION
    rule: str | None = None
    stamp: str = 'auto'
    stamp_field: str = DEFAULT_STAMP_FIELD
    clock: str = 'wall'
    wall_budget_ns: int | None = None
    timeout_ns: int | None = None
    qos_deadline_ns: int | None = None
    kind: str = 'timer'
    """``event``: messages come when something happens (a planner's output), so there is no
    period, no deadline miss and no skipped period, and a timeout only when configured."""

    def __post_init__(self) -> None:
        """Reject invalid values with a reason naming the setting."""
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ConfigError(
                f'topic identifier {self.name!r} must start with a letter and hold only '
                'letters, digits and underscores')
        check_topic_name(self.topic)
        prefix = f'topic.{self.name}'
        _check_duration(f'{prefix}.period', self.period_ns)
        _check_duration(f'{prefix}.deadline', self.deadline_ns)
        _check_duration(f'{prefix}.jitter_tolerance', self.jitter_tolerance_ns, zero_ok=True)
        if (isinstance(self.jitter_fraction, bool)
                or not isinstance(self.jitter_fraction, (int, float))
                or not 0 <= self.jitter_fraction <= 1):
            raise ConfigError(f'{prefix}.jitter_tolerance_percent must be within [0, 100], '
                              f'got {self.jitter_fraction!r} (as a fraction)')
        _check_duration(f'{prefix}.wall_budget', self.wall_budget_ns)
        _check_duration(f'{prefix}.timeout', self.timeout_ns)
        _check_duration(f'{prefix}.qos_deadline', self.qos_deadline_ns)
        if self.rule is not None and self.rule not in RULES:
            raise ConfigError(f'{prefix}.rule must be one of {RULES}, got {self.rule!r}')
        if self.stamp not in STAMPS:
            raise ConfigError(f'{prefix}.stamp must be one of {STAMPS}, got {self.stamp!r}')
        check_stamp_field(f'{prefix}.stamp_field', self.stamp_field)
        if self.clock not in CLOCKS:
            raise ConfigError(f'{prefix}.clock must be one of {CLOCKS}, got {self.clock!r}')
        if self.kind not in KINDS:
            raise ConfigError(f'{prefix}.kind must be one of {KINDS}, got {self.kind!r}')
        if self.kind == 'event' and (self.period_ns is not None
                                     or self.deadline_ns is not None):
            raise ConfigError(f'{prefix}.kind is event, which has no period or deadline: set '
                              'period_ms, rate_hz and deadline_ms to 0 (or kind to timer)')

    @property
    def stamp_required(self) -> bool:
        """True when the topic must have a readable stamp: ``stamp: start`` or a set field.

        Otherwise a type without the default ``header.stamp`` simply has no stamp (arrivals
        start the cycles, no message age) and is no configuration error.
        """
        return self.stamp == 'start' or self.stamp_field != DEFAULT_STAMP_FIELD

    @property
    def effective_rule(self) -> str:
        """The miss rule in force: configured, else ``response`` when a start stamp exists."""
        if self.rule is not None:
            return self.rule
        return 'response' if self.stamp == 'start' else 'interval'

    def with_changes(self, **changes: object) -> TopicConfig:
        """Return a validated copy with some fields replaced."""
        return replace(self, **changes)


@dataclass(frozen=True)
class Timing:
    """The resolved per-topic timing after defaults and period learning."""

    period_ns: int
    deadline_ns: int
    jitter_ns: int
    wall_budget_ns: int
    timeout_ns: int
    rule: str
    learned: bool
    source: str = 'configured'
    """Where the period came from: one of ``PERIOD_SOURCES``."""


def resolve_timing(config: TopicConfig, period_ns: int, learned: bool,
                   target_rtf: float, source: str | None = None) -> Timing:
    """Fill the defaults of ``config`` from a known period (``source``: where it came from)."""
    jitter = (config.jitter_tolerance_ns if config.jitter_tolerance_ns is not None
              else round(period_ns * config.jitter_fraction))
    if config.wall_budget_ns is not None:
        budget = config.wall_budget_ns
    elif config.clock == 'sim':
        budget = round(period_ns / target_rtf) + jitter
    else:
        budget = period_ns + jitter
    timeout = (config.timeout_ns if config.timeout_ns is not None
               else max(10 * period_ns, NS_PER_S))
    return Timing(
        period_ns=period_ns,
        deadline_ns=config.deadline_ns if config.deadline_ns is not None else period_ns,
        jitter_ns=jitter,
        wall_budget_ns=budget,
        timeout_ns=timeout,
        rule=config.effective_rule,
        learned=learned,
        source=source or ('learned' if learned else 'configured'),
    )


@dataclass(frozen=True)
class Thresholds:
    """Where levels change (docs/design.md, Outputs); all adjustable at run time."""

    miss_ratio_error: float = 0.1
    rtf_warn_fraction: float = 0.95
    rtf_error_fraction: float = 0.5
    clock_timeout_ns: int = NS_PER_S
    grace_ns: int = 0
    """After the session starts or a topic appears in the graph, a timeout is no ERROR for
    this long; past it, a topic without any message is an ERROR too (0: off, such a topic
    stays STALE)."""
    level_rise_windows: int = 1
    """A topic's level rises only when this many reports in a row asked for a higher one."""
    level_fall_windows: int = 1
    """... and falls only when this many in a row asked for a lower one."""

    def __post_init__(self) -> None:
        """Reject ratios outside [0, 1], non-positive timeouts and window counts below 1."""
        for name in ('miss_ratio_error', 'rtf_warn_fraction', 'rtf_error_fraction'):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or math.isnan(value) or not 0 <= value <= 1:
                raise ConfigError(f'{name} must be within [0, 1], got {value!r}')
        if self.rtf_error_fraction > self.rtf_warn_fraction:
            raise ConfigError('rtf_error_fraction must not exceed rtf_warn_fraction')
        _check_duration('clock_timeout', self.clock_timeout_ns)
        _check_duration('grace', self.grace_ns, zero_ok=True)
        for name in ('level_rise_windows', 'level_fall_windows'):
            value = getattr(self, name)
            if (isinstance(value, bool) or not isinstance(value, int)
                    or not 1 <= value <= MAX_LEVEL_WINDOWS):
                raise ConfigError(f'{name} must be an integer within [1, {MAX_LEVEL_WINDOWS}], '
                                  f'got {value!r}')


@dataclass(frozen=True)
class AnalysisConfig:
    """Monitor-wide analysis settings."""

    window_ns: int = 10 * NS_PER_S
    window_cycles: int = 10_000
    learn_intervals: int = 20
    target_rtf: float = 1.0
    rtf_bin_ns: int = 100 * NS_PER_MS
    thresholds: Thresholds = field(default_factory=Thresholds)
    max_steady_refreshes_per_s: float = 10.0
    """Routine refreshes of steady slow topics a second, all together, at most about (0: no
    limit): with more slow topics each stands longer, so a report's cost stays bounded. A
    refresh costs about 0.8 ms: 10 a second are 0.8 % of a core."""
    run_percentiles: bool = False
    """Keep whole-run interval, lateness and response percentiles (``analysis.whole_run``): up
    to about 1 MB per series and topic. The bag replay sets it; live, the whole-run figures
    are count, mean, min and max (the report window has its percentiles)."""

    def __post_init__(self) -> None:
        """Reject windows that are empty or unbounded."""
        _check_duration('window', self.window_ns)
        budget = self.max_steady_refreshes_per_s
        if (isinstance(budget, bool) or not isinstance(budget, (int, float))
                or not 0 <= budget <= MAX_STEADY_REFRESHES_PER_S):
            raise ConfigError(f'max_steady_refreshes_per_s must be within '
                              f'[0, {MAX_STEADY_REFRESHES_PER_S:g}], got {budget!r}')
        _check_duration('rtf_bin', self.rtf_bin_ns)
        if not 2 <= self.window_cycles <= 1_000_000:
            raise ConfigError(f'window_cycles must be within [2, 1000000], got '
                              f'{self.window_cycles}')
        if not 2 <= self.learn_intervals <= 10_000:
            raise ConfigError(f'learn_intervals must be within [2, 10000], got '
                              f'{self.learn_intervals}')
        if (not isinstance(self.target_rtf, (int, float)) or math.isnan(self.target_rtf)
                or not 0 < self.target_rtf <= 1000):
            raise ConfigError(f'target_rtf must be within (0, 1000], got {self.target_rtf!r}')
