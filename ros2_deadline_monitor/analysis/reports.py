"""Plain result values produced by the analysers.

Times are nanoseconds (``*_ns``): statistics such as means or percentiles are floats, NaN
when there is nothing to measure; points in time (``*_at_ns``) are ints, None when unknown.
The outputs convert them to messages (``outputs/conversions.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

NAN = float('nan')


class Level(IntEnum):
    """Diagnostic levels with the values of ``diagnostic_msgs/DiagnosticStatus``."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


@dataclass(frozen=True)
class IntervalSummary:
    """Statistics of the intervals between consecutive cycle starts on one clock."""

    clock: str
    count: int = 0
    mean_ns: float = NAN
    min_ns: float = NAN
    max_ns: float = NAN
    max_at_ns: int | None = None
    p50_ns: float = NAN
    p95_ns: float = NAN
    p99_ns: float = NAN
    tail_amplification: float = NAN
    over_period: int = 0
    over_period_plus_jitter: int = 0
    over_wall_budget: int = 0


@dataclass(frozen=True)
class TopicReport:
    """Everything measured about one topic, cumulative and over the rolling window."""

    name: str
    topic: str
    rule: str
    start_source: str
    timer_clock: str
    period_learned: bool
    period_ns: int | None
    deadline_ns: int | None
    jitter_ns: int | None
    wall_budget_ns: int | None
    timeout_ns: int | None
    window_wall_ns: int
    window_sim_ns: int
    messages_total: int
    deadline_misses_total: int
    skipped_periods_total: int
    messages_lost_total: int
    malformed_total: int
    qos_deadline_events_total: int
    resets_total: int
    messages: int
    deadline_misses: int
    skipped_periods: int
    messages_lost: int
    loss_known: bool
    miss_ratio: float
    rate_wall_hz: float
    rate_sim_hz: float
    interval_wall: IntervalSummary
    interval_sim: IntervalSummary
    lateness_mean_ns: float
    lateness_max_ns: float
    response_mean_ns: float
    response_max_ns: float
    response_p99_ns: float
    size_mean_bytes: float
    size_max_bytes: float
    bandwidth_bytes_per_s: float
    age_mean_ns: float
    age_max_ns: float
    last_arrival_wall_ns: int | None
    kind: str = 'timer'
    """``timer`` or ``event`` (no period: misses and skipped periods do not apply)."""
    period_source: str = ''
    """Where ``period_ns`` came from (``config.PERIOD_SOURCES``); '' while unknown."""

    foreign_stamps_total: int = 0
    """Start stamps that cannot be on the timer clock: counted, never placed on a grid."""
    outages_total: int = 0
    """Silences longer than the timeout (on the timer clock); each re-anchored the grids."""
    outage_total_ns: int = 0
    """Wall time of those silences, summed, and the longest."""
    outage_max_ns: int = 0
    producer_runs_total: int = 0
    """Runs of publication sequence numbers seen: one per producer and per restart."""
    producers: int = 0
    """Producer streams with cycles in the window, each analyzed on its own grid."""
    unattributed_total: int = 0
    """Messages of several producers without sequence numbers: no cycle figure uses them."""
    loss_note: str = ''
    """Why loss is unknown (``loss_known`` False), '' when it is known."""
    intervals_across_loss_total: int = 0
    """Intervals spanning cycles the monitor never saw (lost, or received without a usable
    start): not the producer's intervals, left out of the interval figures and misses."""
    stamps_back_total: int = 0
    """Header starts earlier than the producer's previous one: not placed on the grid."""
    stamps_shared_total: int = 0
    """Header starts equal to the producer's previous one (several cycles share a slot)."""
    sim_unknown_total: int = 0
    """Messages of a sim-clock topic received while sim time was unknown (several /clock
    publishers): counted, never analyzed as cycles."""
    foreign_ahead_total: int = 0
    """Of the foreign stamps, those on the timer clock's scale but ahead of it beyond 1 s."""
    age_unknown_total: int = 0
    """Header stamps more than 1 s ahead of their arrival: on no plausible clock, no age."""
    unlearned_total: int = 0
    """Messages of learning windows rejected as burst-like: counted, never analyzed."""
    learn_note: str = ''
    """Why the latest learning window was rejected ('' when none was, or once learned)."""
    outage_max_at_ns: int | None = None
    """Wall arrival that ended the longest outage (None without one)."""
    lost_by_monitor_total: int = 0
    """Messages the monitor's own reader queue dropped: its loss, not in ``messages_lost``."""
    unmonitored_total: int = 0
    """Gaps of the monitor's own (not subscribed: re-subscribing, refused), an open one too."""
    unmonitored_ns: int = 0
    """Wall time of those gaps, up to the report for an open one."""
    unmonitored_messages_total: int = 0
    """Messages published during those gaps (sequence numbers skipped): never lost."""
    unmonitored_gap: tuple[int, int | None, str] | None = None
    """The latest gap: wall times from, to (None while open), and why."""
    timing_reason: str = ''
    """Why ``start_source`` times the cycles: configured, or what ``stamp: auto`` saw."""
    counts_note: str = ''
    """Why misses and skipped periods are unknown (no period yet, /clock too coarse); ''
    when they are known. Unknown counts are shown as unknown, never as 0."""
    clock_note: str = ''
    """Why sim-time figures from arrivals are unknown (/clock coarser than the topic)."""
    period_note: str = ''
    """The latest re-learning of the period, '' when it was never learned again."""
    period_relearned_total: int = 0
    """Times the learned period was learned again (later intervals kept disagreeing)."""
    unattributed_note: str = ''
    """Why the latest unattributed messages were not timed as cycles ('' when none was)."""
    run_counts_note: str = ''
    """Why the whole run's misses and skipped periods are no figure although the window's
    may be (messages of several producers were not timed as cycles); '' when they are."""
    producers_at_once_max: int = 0
    """The most producers whose messages interleaved over the run: with several, each one's
    intervals are its own and the topic's run rate is its messages over the run's span."""
    run_loss_note: str = ''
    """Why the whole run's loss is no figure although the window's may be (which producer
    sent a message was a guess: a loss counted from it would be made up); '' when known."""

    @property
    def counts_known(self) -> bool:
        """True when misses and skipped periods are figures (a timer topic with a period)."""
        return self.kind == 'timer' and self.period_ns is not None and not self.counts_note


@dataclass(frozen=True)
class IntervalTotals:
    """Every interval on one clock since start (never windowed).

    Count, sum, min and max (and when) are exact. The percentiles are NaN unless the analysis
    keeps them (``AnalysisConfig.run_percentiles``: a bag replay does, the live monitor does
    not); the counts over the period, period + jitter and the wall budget stay 0 while no
    period is known.
    """

    clock: str
    count: int = 0
    sum_ns: int = 0
    max_ns: float = NAN
    min_ns: float = NAN
    max_at_ns: int | None = None
    """When the longest interval ended (its cycle's start on this clock)."""
    p50_ns: float = NAN
    p95_ns: float = NAN
    p99_ns: float = NAN
    over_period: int = 0
    over_period_plus_jitter: int = 0
    over_wall_budget: int = 0

    @property
    def mean_ns(self) -> float:
        """Mean interval over the whole run (NaN without an interval)."""
        return self.sum_ns / self.count if self.count else NAN

    @property
    def rate_hz(self) -> float:
        """Mean rate over the whole run, 1 / mean interval (NaN without an interval)."""
        return 1e9 * self.count / self.sum_ns if self.count and self.sum_ns > 0 else NAN

    @property
    def tail_amplification(self) -> float:
        """p99 / p50: how much longer the worst percent is than the typical interval."""
        return self.p99_ns / self.p50_ns if self.p50_ns > 0 else NAN


@dataclass(frozen=True)
class RunTotals:
    """Whole-run figures of one topic that no window bounds: what a CI gate checks.

    ``cycles`` counts the messages analyzed as cycles (after the period was learned and,
    for a sim-clock topic, once /clock was there); the miss ratio is misses / cycles.
    Lateness and response cover the cycles placed on a grid (none for an event topic).
    ``percentiles_exact``: None when no percentile is kept, else whether every one is exact
    (``analysis.whole_run.PERCENTILE_METHOD`` says how the others are estimated).
    """

    cycles: int = 0
    interval_wall: IntervalTotals = IntervalTotals('wall')
    interval_sim: IntervalTotals = IntervalTotals('sim')
    first_arrival_ns: int | None = None
    last_arrival_ns: int | None = None
    lateness_mean_ns: float = NAN
    lateness_max_ns: float = NAN
    lateness_p99_ns: float = NAN
    response_mean_ns: float = NAN
    response_max_ns: float = NAN
    response_p99_ns: float = NAN
    size_mean_bytes: float = NAN
    size_max_bytes: float = NAN
    size_total_bytes: int = 0
    age_mean_ns: float = NAN
    age_max_ns: float = NAN
    percentiles_exact: bool | None = None

    @property
    def span_ns(self) -> int:
        """Wall time from the first to the last analyzed arrival (0 with fewer than two)."""
        if self.first_arrival_ns is None or self.last_arrival_ns is None:
            return 0
        return self.last_arrival_ns - self.first_arrival_ns

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """Bytes of the analyzed cycles over their wall span (NaN without a span)."""
        span = self.span_ns
        return self.size_total_bytes * 1e9 / span if span > 0 else NAN


@dataclass(frozen=True)
class ClockReport:
    """The /clock stream and the real time factor over one report window."""

    messages_total: int
    messages: int
    window_wall_ns: int
    window_sim_ns: int
    sim_time_ns: int | None
    rtf: float
    rtf_total: float
    rtf_bin_ns: int
    rtf_bin_min: float
    rtf_bin_min_at_ns: int | None
    rtf_bin_max: float
    step_ns: float
    max_wall_gap_ns: float
    max_wall_gap_at_ns: int | None
    resets_total: int
    resets: int
    paused: bool
    last_wall_ns: int | None
    rtf_bin_min_run: float = NAN
    """Worst fixed-window RTF over the whole run (across reports and resets)."""
    rtf_bin_min_run_at_ns: int | None = None
    jumps_total: int = 0
    """Sim time jumped forward (a seek), since start and in the window: like a reset, each
    started RTF afresh and cleared every topic's sim-time state."""
    jumps: int = 0
    non_monotonic: bool = False
    """Sim time went back more than ``NON_MONOTONIC_RESETS`` times in the window: no RTF."""
    rtf_total_note: str = ''
    """Why ``rtf_total`` is unknown for the rest of the run (several /clock publishers were
    seen, or /clock went back and forth); '' while it is known."""


@dataclass(frozen=True)
class HostReport:
    """Host context over one report window; ``cgroup_available`` False means unreadable."""

    cgroup_available: bool = False
    cgroup_nr_periods: int = 0
    cgroup_nr_throttled: int = 0
    cgroup_throttled_ns: int = 0
    cpu_fraction: float = NAN
    minor_faults: int = 0
    max_rss_bytes: int = 0
