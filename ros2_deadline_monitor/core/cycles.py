"""Per-topic cycle analysis: intervals, skipped periods, lateness, response, misses (§3).

Each message is one cycle of the producer: its start is the header stamp when the stamp marks
the cycle start, else the arrival; its end is the arrival. ``CycleAnalyzer.record`` only
stores the raw event (O(1)); ``process`` turns the stored events into per-cycle figures on the
stats timer, in batches, which is exact because the arrival times come from the middleware.
The analysis session (``session.py``) decides when events are processed and hands over the
clock, the sim-time resets and the horizon; this module holds the per-topic arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .config import AnalysisConfig, resolve_timing, Timing, TopicConfig
from .grid import GridState, replay
from .intervals import summarize_intervals
from .reports import IntervalTotals, RunTotals, TopicReport
from .ring import ColumnRing, EventBuffer, NO_VALUE
from .rtf import RtfAnalyzer

NAN = float('nan')
PENDING_CAPACITY = 1 << 16
MALFORMED = NO_VALUE + 1
"""Stamp of an event whose bytes could not be read: a message, counted, but not a cycle."""
ROW_COLUMNS = ('arrival', 'start_wall', 'start_sim', 'interval_timer', 'interval_wall',
               'interval_sim', 'lateness', 'response', 'skipped', 'missed', 'lost', 'size',
               'age')
WINDOW_MIN_PERIODS = 5
"""The window figures of a timer topic cover at least this many periods, so a slow topic
(a period near or above the window) still has intervals and a rate to report."""
SLOW_SNAP_NS = 100_000_000
"""A learned period below 1 Hz is snapped to whole multiples of this (a tenth of a second)."""
LEARN_MIN_INTERVALS = 3
"""A slow topic learns its period from the intervals of its first window once they are at
least this many, instead of waiting for ``learn_intervals`` of them."""


class CycleCounts(NamedTuple):
    """Counting results of one cycle sequence."""

    cycles: int
    misses: int
    skipped: int
    grid_periods: int


def learn_period(intervals_ns: np.ndarray) -> int:
    """Period of a timer grid from observed intervals, snapped to a whole rate in Hz near 1 %.

    The median alone is fooled by a jittery start-up (a late callback is followed by a short
    interval, so 9.8 ms and 10.2 ms alternate); counting the grid slots the intervals span
    (their sum over the median, rounded) and dividing the span by that count is not, and a
    skipped period only adds a slot. Snapping keeps the replayed grid from drifting against a
    timer configured in Hz (10.003 ms would drift 1.5 ms over 500 cycles of a 100 Hz timer).
    Below 1 Hz timers are configured in seconds, so there a period is snapped to whole tenths
    of a second (4.999 s, measured on a few intervals, is the 5 s timer).
    """
    median = float(np.median(intervals_ns))
    total = float(np.sum(intervals_ns))
    estimate = total / max(1, round(total / median))
    rate_hz = 1e9 / estimate
    whole = round(rate_hz)
    if whole >= 1 and abs(rate_hz - whole) <= 0.01 * whole:
        return round(1e9 / whole)
    if rate_hz < 1:
        tenths = round(estimate / SLOW_SNAP_NS) * SLOW_SNAP_NS
        if tenths and abs(estimate - tenths) <= 0.01 * tenths:
            return tenths
    return max(1, round(estimate))


def classify_misses(rule: str, interval_timer_ns: np.ndarray, response_ns: np.ndarray,
                    timing: Timing) -> np.ndarray:
    """Deadline misses per cycle under ``rule`` (NO_VALUE intervals never miss)."""
    if rule == 'interval':
        known = interval_timer_ns != NO_VALUE
        return known & (interval_timer_ns > timing.period_ns + timing.jitter_ns)
    return response_ns > timing.deadline_ns


def count_cycles(starts_ns: np.ndarray, ends_ns: np.ndarray, period_ns: int,
                 deadline_ns: int | None = None, jitter_ns: int | None = None,
                 rule: str = 'response') -> CycleCounts:
    """Misses and skipped periods of a whole recorded cycle sequence (the ground truth).

    Uses the same grid replay and miss rule as the live analyzer, so a monitor and the
    producer's own record agree exactly. ``skipped`` includes the periods already passed when
    the last cycle started; ``grid_periods`` counts slots from the first cycle's to the last's.
    """
    starts = np.asarray(starts_ns, np.int64)
    ends = np.maximum(np.asarray(ends_ns, np.int64), starts)
    timing = resolve_timing(
        TopicConfig(name='truth', topic='/truth', period_ns=period_ns, deadline_ns=deadline_ns,
                    jitter_tolerance_ns=jitter_ns, rule=rule), period_ns, False, 1.0)
    slots, skipped = replay(starts, period_ns, GridState())
    intervals = np.full(len(starts), NO_VALUE, np.int64)
    intervals[1:] = np.diff(starts)
    misses = classify_misses(rule, intervals, ends - slots, timing)
    grid = int((slots[-1] - slots[0]) // period_ns + 1) if len(slots) else 0
    return CycleCounts(len(starts), int(misses.sum()), int(skipped.sum()), grid)


def _diff_with(previous: int, values: np.ndarray) -> np.ndarray:
    """Differences to the previous value; NO_VALUE where either side is unknown."""
    before = np.empty(len(values), np.int64)
    before[0] = previous
    before[1:] = values[:-1]
    out = values - before
    out[(before == NO_VALUE) | (values == NO_VALUE)] = NO_VALUE
    return out


def _no_negative(intervals: np.ndarray) -> np.ndarray:
    """Negative intervals become NO_VALUE (NO_VALUE itself is negative and stays)."""
    return np.where(intervals < 0, NO_VALUE, intervals)


@dataclass
class _IntervalSum:
    """Count, sum and longest of every interval on one clock since start."""

    count: int = 0
    sum_ns: int = 0
    max_ns: float = NAN

    def add(self, intervals: np.ndarray) -> None:
        known = intervals[intervals != NO_VALUE]
        if len(known):
            self.count += len(known)
            self.sum_ns += int(known.sum())
            self.max_ns = float(np.fmax(self.max_ns, known.max()))

    def totals(self, clock: str) -> IntervalTotals:
        return IntervalTotals(clock, self.count, self.sum_ns, self.max_ns)


@dataclass
class _Totals:
    messages: int = 0
    misses: int = 0
    skipped: int = 0
    lost: int = 0
    malformed: int = 0
    qos_deadline_events: int = 0
    resets: int = 0
    cycles: int = 0
    interval_wall: _IntervalSum = field(default_factory=_IntervalSum)
    interval_sim: _IntervalSum = field(default_factory=_IntervalSum)


class CycleAnalyzer:
    """Cycle statistics of one topic with bounded memory and an O(1) per-message call.

    Events wait in a pending buffer until ``process``; every call that processes takes the
    /clock analyzer (``clock``) that maps events between wall and sim time, so an event's
    figures never depend on when it was processed.
    """

    def __init__(self, config: TopicConfig, analysis: AnalysisConfig | None = None) -> None:
        """Analyze ``config``'s topic with the monitor-wide ``analysis`` settings."""
        self._config = config
        self._analysis = analysis or AnalysisConfig()
        self._pending = EventBuffer(PENDING_CAPACITY)
        self._rows = ColumnRing(self._analysis.window_cycles, ROW_COLUMNS)
        self._timing: Timing | None = None
        self._learning: list[tuple[np.ndarray, ...]] = []
        self._learning_count = 0
        self._grid = GridState()
        self._prev_start_timer = NO_VALUE
        self._prev_start_wall = NO_VALUE
        self._prev_start_sim = NO_VALUE
        self._prev_seq = NO_VALUE
        self._last_arrival: int | None = None
        self._start_source = 'arrival'
        self._totals = _Totals()
        self._offered_period_ns: int | None = None
        self._resolve()

    @property
    def config(self) -> TopicConfig:
        """The configuration in force."""
        return self._config

    @property
    def timing(self) -> Timing | None:
        """Resolved timing; None while the period is still being learned."""
        return self._timing

    @property
    def pending_full(self) -> bool:
        """True when the pending buffer must be processed before the next ``record``."""
        return self._pending.count >= self._pending.capacity

    def reconfigure(self, config: TopicConfig, analysis: AnalysisConfig) -> None:
        """Apply new settings to events processed from now on; counters are kept.

        The caller processes what was received before (``process`` with the clock) first,
        so a change never alters figures of cycles already received.
        """
        old_period = self._timing.period_ns if self._timing else None
        self._config = config
        if analysis.window_cycles != self._analysis.window_cycles:
            self._rows = ColumnRing(analysis.window_cycles, ROW_COLUMNS)
        self._analysis = analysis
        learned = self._timing.learned if self._timing else False
        if config.kind == 'event':
            self._timing = None
            self._learning, self._learning_count = [], 0  # an event topic learns nothing
        elif config.period_ns is None and learned and self._timing is not None:
            self._timing = resolve_timing(config, self._timing.period_ns, True,
                                          analysis.target_rtf)
        else:
            self._timing = None
            self._resolve()
        new_period = self._timing.period_ns if self._timing else None
        if new_period != old_period:
            self._grid = GridState()

    def _resolve(self) -> None:
        if self._config.kind == 'event':
            return
        if self._config.period_ns is not None:
            self._timing = resolve_timing(self._config, self._config.period_ns, False,
                                          self._analysis.target_rtf)
        elif self._offered_period_ns is not None:
            self._timing = resolve_timing(self._config, self._offered_period_ns, False,
                                          self._analysis.target_rtf, 'graph deadline QoS')

    def offer_period(self, period_ns: int | None) -> None:
        """Take the deadline the publishers offer (QoS) as the period instead of learning one.

        The publishers promise a message at least every D: that contract is the period, as a
        configured one would be. Only for a timer topic without a configured period whose
        period was not learned before the offer came (a learned period, measured on the
        stream, is kept). Cycles already waiting to learn the period are analysed with it at
        once; an offer withdrawn later (None) leaves the period in force.
        """
        self._offered_period_ns = period_ns
        if (period_ns is None or self._config.kind == 'event'
                or self._config.period_ns is not None
                or (self._timing is not None and self._timing.source != 'graph deadline QoS')):
            return
        if self._timing is not None and self._timing.period_ns == period_ns:
            return
        self._timing = None
        self._grid = GridState()
        self._resolve()
        if self._learning:
            batch = tuple(np.concatenate(cols) for cols in zip(*self._learning, strict=True))
            self._learning = []
            self._learning_count = 0
            self._analyze(*batch)

    def record(self, arrival_wall_ns: int, stamp_ns: int = NO_VALUE, seq: int = NO_VALUE,
               size_bytes: int = 0) -> bool:
        """Store one message event (the per-message call: O(1), no allocation).

        ``stamp_ns`` MALFORMED marks a message whose bytes could not be read. Returns True
        when the pending buffer is full: the caller must ``process`` before the next call.
        """
        return self._pending.append(arrival_wall_ns, stamp_ns, seq, size_bytes)

    def record_qos_deadline_missed(self, count: int = 1) -> None:
        """Count middleware 'requested deadline missed' events."""
        self._totals.qos_deadline_events += count

    def process(self, clock: RtfAnalyzer | None, resets_wall_ns: Sequence[int] = (),
                resets: int = 0, horizon_ns: int | None = None) -> None:
        """Turn pending events into per-cycle rows, in arrival order.

        ``resets_wall_ns``: wall times of the sim-time resets (sim time jumped back) received
        since the last call, oldest first; ``resets`` how many there were (a storm may hold
        more than the times kept). Events before a reset are processed with the state before
        it, then the sim-time state is dropped. ``horizon_ns``: for a sim-clock topic, events
        that arrived after it stay pending until the /clock sample after them is known, so
        the sim time of their end can be placed inside its /clock step (None: process all).
        """
        self._totals.resets += resets
        events = self._pending.drain() if self._pending.count else None
        if events is not None:
            arrival = events[0]
            if (arrival[1:] < arrival[:-1]).any():
                # Batched takes hand over each writer's messages in turn: restore arrival order.
                order = np.argsort(arrival, kind='stable')
                events = tuple(column[order] for column in events)
            if horizon_ns is not None and self._config.clock == 'sim':
                keep = int(np.searchsorted(events[0], horizon_ns, side='right'))
                if keep < len(events[0]):
                    self._pending.put_back(*(column[keep:] for column in events))
                    events = tuple(column[:keep] for column in events)
        for reset_at in resets_wall_ns:
            if events is not None and len(events[0]):
                cut = int(np.searchsorted(events[0], reset_at, side='left'))
                if cut:
                    self._process(*(column[:cut] for column in events), clock)
                events = tuple(column[cut:] for column in events)
            self._drop_sim_state()
        if resets and not resets_wall_ns:
            self._drop_sim_state()
        if events is not None and len(events[0]):
            self._process(*events, clock)

    def _drop_sim_state(self) -> None:
        self._prev_start_sim = NO_VALUE
        if self._config.clock == 'sim':
            self._grid = GridState()
            self._prev_start_timer = NO_VALUE
            self._rows.clear()

    def _process(self, arrival: np.ndarray, stamp: np.ndarray, seq: np.ndarray,
                 size: np.ndarray, clock: RtfAnalyzer | None) -> None:
        self._totals.messages += len(arrival)
        self._last_arrival = int(arrival[-1])
        lost = self._count_lost(seq)
        malformed = stamp == MALFORMED
        if malformed.any():
            self._totals.malformed += int(malformed.sum())
            stamp = np.where(malformed, NO_VALUE, stamp)
        start_timer, end_timer, start_wall, start_sim = self._place(arrival, stamp, clock)
        placed = (start_timer != NO_VALUE) & ~malformed
        if not placed.all():
            keep = np.flatnonzero(placed)
            arrival, stamp, size, lost = arrival[keep], stamp[keep], size[keep], lost[keep]
            start_timer, end_timer = start_timer[keep], end_timer[keep]
            start_wall, start_sim = start_wall[keep], start_sim[keep]
        batch = (arrival, stamp, size, lost, start_timer, end_timer, start_wall, start_sim)
        if self._config.kind == 'event':
            self._analyze_events(*batch)
            return
        if self._timing is None:
            self._learning.append(batch)
            self._learning_count += len(arrival)
            if (self._learning_count <= self._analysis.learn_intervals
                    and not self._learned_a_window(batch[0])):
                return
            batch = tuple(np.concatenate(cols) for cols in zip(*self._learning, strict=True))
            self._learning = []
            self._learning_count = 0
            diffs = np.diff(batch[4])
            diffs = diffs[diffs > 0]
            if len(diffs) == 0:
                return
            self._timing = resolve_timing(self._config, learn_period(diffs), True,
                                          self._analysis.target_rtf)
        self._analyze(*batch)

    def _learned_a_window(self, arrival: np.ndarray) -> bool:
        """Tell whether the cycles waiting to learn the period span a window (a slow topic)."""
        if self._learning_count < LEARN_MIN_INTERVALS + 1 or not len(arrival):
            return False
        first = next(b[0][0] for b in self._learning if len(b[0]))
        return int(arrival[-1]) - int(first) >= self._analysis.window_ns

    def _intervals(self, arrival: np.ndarray, stamp: np.ndarray, start_timer: np.ndarray,
                   end_timer: np.ndarray, start_wall: np.ndarray, start_sim: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Intervals on the timer, wall and sim clocks, and the age; counted in the totals.

        A start before the previous one (sim time jumped back before the reset reached this
        topic, or two producers) has no interval: a negative one would mean nothing.
        """
        interval_timer = _no_negative(_diff_with(self._prev_start_timer, start_timer))
        interval_wall = _no_negative(_diff_with(self._prev_start_wall, start_wall))
        interval_sim = _no_negative(_diff_with(self._prev_start_sim, start_sim))
        self._prev_start_timer = int(start_timer[-1])
        self._prev_start_wall = int(start_wall[-1])
        self._prev_start_sim = int(start_sim[-1])
        self._totals.cycles += len(arrival)
        self._totals.interval_wall.add(interval_wall)
        self._totals.interval_sim.add(interval_sim)
        # A zero stamp is an unset header, not a message from 1970.
        age = np.where((stamp != NO_VALUE) & (stamp != 0), end_timer - stamp, NO_VALUE)
        return interval_timer, interval_wall, interval_sim, age

    def _analyze_events(self, arrival: np.ndarray, stamp: np.ndarray, size: np.ndarray,
                        lost: np.ndarray, start_timer: np.ndarray, end_timer: np.ndarray,
                        start_wall: np.ndarray, start_sim: np.ndarray) -> None:
        """Rows of an event topic: intervals (gaps), age and size; no grid, so no slot."""
        if len(arrival) == 0:
            return
        interval_timer, interval_wall, interval_sim, age = self._intervals(
            arrival, stamp, start_timer, end_timer, start_wall, start_sim)
        none = np.full(len(arrival), NO_VALUE, np.int64)
        zero = np.zeros(len(arrival), np.int64)
        self._rows.extend(
            arrival=arrival, start_wall=start_wall, start_sim=start_sim,
            interval_timer=interval_timer, interval_wall=interval_wall,
            interval_sim=interval_sim, lateness=none, response=none, skipped=zero,
            missed=zero, lost=lost, size=size, age=age)

    def _count_lost(self, seq: np.ndarray) -> np.ndarray:
        """Messages lost before each event, from publication sequence number gaps."""
        gaps = _diff_with(self._prev_seq, seq)
        self._prev_seq = int(seq[-1])
        lost = np.where((gaps != NO_VALUE) & (gaps > 1), gaps - 1, 0)
        self._totals.lost += int(lost.sum())
        return lost

    def _place(self, arrival: np.ndarray, stamp: np.ndarray, clock: RtfAnalyzer | None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Start and end on the timer clock, start on the wall and sim clocks."""
        use_stamp = self._config.stamp == 'start' and bool((stamp != NO_VALUE).any())
        self._start_source = 'header' if use_stamp else 'arrival'
        have_clock = clock is not None and clock.has_samples
        unknown = np.full(len(arrival), NO_VALUE, np.int64)
        if self._config.clock == 'wall':
            start = np.where(stamp != NO_VALUE, stamp, arrival) if use_stamp else arrival
            end = arrival
            start_sim = clock.sim_at(start) if have_clock else unknown
            return start, end, start, start_sim
        # The end keeps the execution time inside its /clock step (DESIGN.md §3).
        end = clock.sim_in_step(arrival) if have_clock else unknown
        if use_stamp:
            start = np.where(stamp != NO_VALUE, stamp, end)
            start_wall = clock.wall_at(start) if have_clock else unknown
            start_wall = np.where(start_wall != NO_VALUE, start_wall, arrival)
        else:
            start = clock.sim_at(arrival) if have_clock else unknown
            start_wall = arrival
        end = np.where(end != NO_VALUE, np.maximum(end, start), start)
        return start, end, start_wall, start

    def _analyze(self, arrival: np.ndarray, stamp: np.ndarray, size: np.ndarray,
                 lost: np.ndarray, start_timer: np.ndarray, end_timer: np.ndarray,
                 start_wall: np.ndarray, start_sim: np.ndarray) -> None:
        timing = self._timing
        assert timing is not None
        if len(arrival) == 0:
            return
        slots, skipped = replay(start_timer, timing.period_ns, self._grid)
        interval_timer, interval_wall, interval_sim, age = self._intervals(
            arrival, stamp, start_timer, end_timer, start_wall, start_sim)
        response = end_timer - slots
        missed = classify_misses(timing.rule, interval_timer, response, timing)
        self._totals.misses += int(missed.sum())
        self._totals.skipped += int(skipped.sum())
        self._rows.extend(
            arrival=arrival, start_wall=start_wall, start_sim=start_sim,
            interval_timer=interval_timer, interval_wall=interval_wall,
            interval_sim=interval_sim, lateness=start_timer - slots, response=response,
            skipped=skipped, missed=missed.astype(np.int64), lost=lost, size=size, age=age)

    def drain_rows(self) -> dict[str, np.ndarray]:
        """Hand over every per-cycle row of the window, oldest first, and empty the window.

        For consumers that keep their own whole-run statistics (the offline analyzer): no row
        is handed over twice; the totals are kept.
        """
        rows = self._rows.rows()
        self._rows.clear()
        return rows

    def run_totals(self) -> RunTotals:
        """Whole-run figures no window bounds: cycles, and every interval per clock."""
        totals = self._totals
        return RunTotals(cycles=totals.cycles, interval_wall=totals.interval_wall.totals('wall'),
                         interval_sim=totals.interval_sim.totals('sim'))

    def report(self, now_wall_ns: int, writers: int = 1) -> TopicReport:
        """Summarize the rolling window and the totals of the events processed so far."""
        rows = self._rows.rows()
        timing = self._timing
        window_ns = self._analysis.window_ns
        if timing is not None:
            window_ns = max(window_ns, WINDOW_MIN_PERIODS * timing.period_ns)
        keep = rows['arrival'] >= now_wall_ns - window_ns
        rows = {k: v[keep] for k, v in rows.items()}
        period = timing.period_ns if timing else None
        jitter = timing.jitter_ns if timing else None
        n = len(rows['arrival'])
        wall_known = rows['interval_wall'] != NO_VALUE
        sim_known = rows['interval_sim'] != NO_VALUE
        interval_wall = summarize_intervals(
            'wall', rows['interval_wall'][wall_known], rows['start_wall'][wall_known],
            period, jitter, timing.wall_budget_ns if timing else None)
        interval_sim = summarize_intervals(
            'sim', rows['interval_sim'][sim_known], rows['start_sim'][sim_known], period, jitter)
        misses = int(rows['missed'].sum())
        span_wall = int(rows['arrival'][-1] - rows['arrival'][0]) if n > 1 else 0
        starts_sim = rows['start_sim'][rows['start_sim'] != NO_VALUE]
        span_sim = int(starts_sim[-1] - starts_sim[0]) if len(starts_sim) > 1 else 0
        age = rows['age'][rows['age'] != NO_VALUE]
        lateness = rows['lateness'][rows['lateness'] != NO_VALUE]
        response = rows['response'][rows['response'] != NO_VALUE]
        totals = self._totals
        return TopicReport(
            name=self._config.name,
            topic=self._config.topic,
            rule=self._config.effective_rule,
            start_source=self._start_source,
            timer_clock=self._config.clock,
            period_learned=timing.learned if timing else False,
            period_ns=period,
            deadline_ns=timing.deadline_ns if timing else None,
            jitter_ns=jitter,
            wall_budget_ns=timing.wall_budget_ns if timing else None,
            timeout_ns=timing.timeout_ns if timing else self._config.timeout_ns,
            window_wall_ns=span_wall,
            window_sim_ns=span_sim,
            messages_total=totals.messages,
            deadline_misses_total=totals.misses,
            skipped_periods_total=totals.skipped,
            messages_lost_total=totals.lost,
            malformed_total=totals.malformed,
            qos_deadline_events_total=totals.qos_deadline_events,
            resets_total=totals.resets,
            messages=n,
            deadline_misses=misses,
            skipped_periods=int(rows['skipped'].sum()),
            messages_lost=int(rows['lost'].sum()),
            loss_known=writers <= 1,
            miss_ratio=misses / n if n else NAN,
            rate_wall_hz=_rate(interval_wall.mean_ns),
            rate_sim_hz=_rate(interval_sim.mean_ns),
            interval_wall=interval_wall,
            interval_sim=interval_sim,
            lateness_mean_ns=_mean(lateness),
            lateness_max_ns=_max(lateness),
            response_mean_ns=_mean(response),
            response_max_ns=_max(response),
            response_p99_ns=float(np.percentile(response, 99)) if len(response) else NAN,
            size_mean_bytes=_mean(rows['size']),
            size_max_bytes=_max(rows['size']),
            bandwidth_bytes_per_s=(float(rows['size'].sum()) * 1e9 / span_wall
                                   if span_wall > 0 else NAN),
            age_mean_ns=_mean(age),
            age_max_ns=_max(age),
            last_arrival_wall_ns=self._last_arrival,
            kind=self._config.kind,
            period_source=timing.source if timing else '',
        )


def _rate(mean_interval_ns: float) -> float:
    return 1e9 / mean_interval_ns if mean_interval_ns > 0 else NAN


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else NAN


def _max(values: np.ndarray) -> float:
    return float(values.max()) if len(values) else NAN
