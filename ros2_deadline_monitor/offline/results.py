"""Plain result values of a bag analysis, in nanoseconds as the core's reports.

Statistics are floats (NaN when unmeasured), points in time (``*_at_ns``) ints (None when
unknown). The analysis fills them; the table, JSON, CSV, plot and HTML writers only read
them. Units change to ms, Hz and s at those writers, as in the live node's messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ros2_deadline_monitor.core.reports import IntervalSummary

from .recorded import RecordedStats

NAN = float('nan')


@dataclass(frozen=True)
class TopicResult:
    """Whole-bag figures of one analyzed topic.

    Counters are exact. Interval, lateness and response statistics cover every analyzed
    cycle; percentiles are exact when ``percentiles_exact`` is true, else from a log
    histogram (see ``offline.accumulate``).
    """

    name: str
    topic: str
    msgtype: str
    rule: str
    stamp: str
    start_source: str
    timer_clock: str
    clock_choice: str
    period_ns: int | None
    period_learned: bool
    deadline_ns: int | None
    jitter_ns: int | None
    wall_budget_ns: int | None
    messages_total: int
    cycles: int
    deadline_misses_total: int | None
    """None (JSON null) while unknown: no period learned, /clock coarser than the topic."""
    skipped_periods_total: int | None
    messages_lost_total: int
    malformed_total: int
    resets_total: int
    miss_ratio: float
    first_arrival_ns: int | None
    last_arrival_ns: int | None
    rate_wall_hz: float
    rate_sim_hz: float
    interval_wall: IntervalSummary
    interval_sim: IntervalSummary
    lateness_mean_ns: float
    lateness_max_ns: float
    lateness_p99_ns: float
    response_mean_ns: float
    response_max_ns: float
    response_p99_ns: float
    size_mean_bytes: float
    size_max_bytes: float
    bandwidth_bytes_per_s: float
    age_mean_ns: float
    age_max_ns: float
    percentiles_exact: bool
    note: str = ''
    kind: str = 'timer'
    """``event``: no period, so misses and skipped periods do not apply (shown as n/a)."""
    foreign_stamps_total: int = 0
    """Start stamps not on the timer clock: counted, never placed on a grid (as live)."""
    outages_total: int = 0
    """Silences longer than the timeout; each re-anchored the grid (as live)."""
    outage_total_ns: int = 0
    outage_max_ns: int = 0
    outage_max_at_ns: int | None = None
    """Log time that ended the longest outage (the max interval includes it)."""
    timing_reason: str = ''
    """Why ``start_source`` times the cycles (configured, or what ``stamp: auto`` saw)."""
    counts_note: str = ''
    """Why misses and skipped periods are unknown ('' when they are figures)."""
    period_relearned_total: int = 0
    """Times the learned period was learned again."""
    timeout_ns: int | None = None
    """Silence after which the topic had an outage (None: an event topic without one)."""


@dataclass(frozen=True)
class ClockResult:
    """Whole-bag figures of the /clock stream and the real time factor."""

    topic: str
    messages_total: int
    malformed_total: int
    wall_span_ns: int
    sim_span_ns: int
    rtf_total: float
    rtf_bin_ns: int
    rtf_bin_min: float
    rtf_bin_min_at_ns: int | None
    rtf_bin_max: float
    step_ns: float
    max_wall_gap_ns: float
    max_wall_gap_at_ns: int | None
    resets_total: int
    paused_windows: int


@dataclass(frozen=True)
class BagInfo:
    """What the bag is: where, which storage, when and how much."""

    path: str
    storage: str
    start_ns: int
    duration_ns: int
    message_count: int
    topic_count: int


@dataclass(frozen=True)
class BagResult:
    """Everything the analyzer found in one bag; ``series`` feeds the plots only."""

    bag: BagInfo
    topics: tuple[TopicResult, ...]
    clock: ClockResult | None
    recorded: RecordedStats | None
    percentile_method: str
    notes: tuple[str, ...] = ()
    series: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
