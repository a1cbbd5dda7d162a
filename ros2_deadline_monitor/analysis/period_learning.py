"""A timer's period learned from the intervals of its cycles, snapped to how timers are set.

Used when a topic has no ``period_ms`` (docs/design.md, Cycles): the period is learned from the
first window of intervals, checked against later blocks, and snapped to the whole milliseconds or
whole rate in Hz a timer is configured with, within what the intervals' spread lets be known.
"""

from __future__ import annotations

from collections.abc import Container
import math

import numpy as np

from ros2_deadline_monitor.analysis.config import NS_PER_MS
from ros2_deadline_monitor.analysis.producer_streams import stream_diffs
from ros2_deadline_monitor.analysis.ring import HeldBatches

SLOW_SNAP_NS = 100_000_000
"""A learned period below 1 Hz is snapped to whole multiples of this (a tenth of a second)."""
LEARN_MIN_SNAP = 0.001
"""A learned period is snapped to whole milliseconds within at least this share (0.1 %)."""
LEARN_MAX_SNAP = 0.01
"""A learned period is snapped to a whole rate in Hz within this share of it (1 %)."""
LEARN_MAX_MS_SNAP = 0.005
"""... and to whole milliseconds within at most this share (0.5 %), however widely the
intervals spread: 45, 55, 90 and 110 Hz lie 1 % from a whole number of ms."""
ROUND_PERIODS_MS = tuple(ms for ms in range(1, 1001) if 1000 % ms == 0)
"""Periods that are a whole number of ms and a whole rate in Hz (1, 2, 4, 5, 8, 10, 20 ms...):
the settings a timer has most often."""
BURST_SLOTS_RATIO = 1.5
"""A learning window whose intervals span more slots of the period learned from them than
this many per interval is burst-like (``burst_like``): a third of its slots skipped."""


def learn_period(intervals_ns: np.ndarray) -> int:
    """Period of a timer grid from observed intervals, snapped to the period it was given.

    The median alone is fooled by a jittery start-up (a late callback is followed by a short
    interval, so 9.8 ms and 10.2 ms alternate); the span of the intervals over the grid
    slots it covers (over the median, rounded: a skipped period only adds a slot) is not, but
    it carries the jitter of its two end stamps: the first of 21 stamps of a 1 kHz timer
    30 µs late reads 1002 Hz, and a grid replayed 2 µs a cycle short of the timer's counts a
    skipped period every 500 cycles and misses beside it (up to a quarter of the periods a
    1 kHz Python timer learned from 20 intervals were 1–3 Hz off that way). So the estimate is
    the median of the spans of every run of half the intervals, each over its slots: a late
    stamp moves only the runs that end on it, alternating intervals even out in each. It is
    snapped to the period a timer is configured with (``configured_period``), within how
    precisely the spread of the intervals lets it be known.
    """
    median = float(np.median(intervals_ns))
    starts = np.concatenate(([0.0], np.cumsum(intervals_ns, dtype=np.float64)))
    half = (len(intervals_ns) + 1) // 2
    spans = starts[half:] - starts[:-half]
    per_run = spans / np.maximum(1, np.round(spans / median))
    estimate = float(np.median(per_run))
    quartiles = np.percentile(intervals_ns / np.maximum(1, np.round(intervals_ns / median)),
                              (25, 75))
    # A median of n values is known to about their spread over the root of n; the runs
    # themselves disagree by how much their end stamps are quantized (sim time in whole
    # /clock steps: intervals of 9, 10 and 11 ms read 10.04 ms over 10 of them).
    tolerance = 2 * float(quartiles[1] - quartiles[0]) / (math.sqrt(len(intervals_ns)) * estimate)
    runs = np.percentile(per_run, (10, 90))
    tolerance = max(tolerance, float(runs[1] - runs[0]) / estimate)
    return configured_period(estimate, tolerance)


def configured_period(estimate_ns: float, tolerance: float) -> int:
    """Return the period a timer was most likely configured with, near ``estimate_ns``.

    Timers are configured in milliseconds or in Hz: a whole number of milliseconds within
    ``tolerance`` (relative; kept within ``LEARN_MIN_SNAP`` and ``LEARN_MAX_MS_SNAP``), or a
    whole rate within the same ``tolerance`` but at most 1 % (10.003 ms would drift 1.5 ms
    over 500 cycles of a 100 Hz timer). Never further than the spread of the intervals lets
    the period be known: an exact fit (36.000 ms apart) is kept, not snapped to a rounder
    grid that fits worse (28 Hz, 0.8 % off). When both fit, the coarser of the two grids is
    the likelier setting: milliseconds above 31.6 Hz (1 kHz is 1 ms, not 1001 Hz), Hz below
    (30 Hz, not 33 ms). When the intervals cannot tell the period to 1 %, a period that is
    both (``ROUND_PERIODS_MS``) within what they allow. Below 1 Hz, where timers are
    configured in seconds, whole tenths of a second (4.999 s, measured on a few intervals, is
    the 5 s timer). Else the estimate.
    """
    rate_hz = 1e9 / estimate_ns
    if rate_hz < 1:
        tenths = round(estimate_ns / SLOW_SNAP_NS) * SLOW_SNAP_NS
        if tenths and abs(estimate_ns - tenths) <= LEARN_MAX_SNAP * tenths:
            return tenths
        return max(1, round(estimate_ns))
    if tolerance > LEARN_MAX_SNAP:
        # The intervals cannot tell the period to 1 % (a timer under CPU load): of the
        # periods they allow, the round one (a 100 Hz timer under two CPU hogs read 9.85 ms
        # and was set to 101 Hz: phantom skips and misses until the re-check).
        near = [ms * NS_PER_MS for ms in ROUND_PERIODS_MS
                if abs(estimate_ns - ms * NS_PER_MS) <= tolerance * ms * NS_PER_MS]
        if near:
            return min(near, key=lambda period: abs(period - estimate_ns))
    ms_tolerance = min(LEARN_MAX_MS_SNAP, max(LEARN_MIN_SNAP, tolerance))
    whole_ms = round(estimate_ns / NS_PER_MS)
    ms_ns = whole_ms * NS_PER_MS
    by_ms = whole_ms > 0 and abs(estimate_ns - ms_ns) <= ms_tolerance * ms_ns
    whole_hz = round(rate_hz)
    # Never snapped further than the intervals let the period be known: 36.000 ms stamps
    # (27.78 Hz) are 36 ms, not the 28 Hz 0.8 % away that fits them worse.
    hz_tolerance = min(LEARN_MAX_SNAP, max(LEARN_MIN_SNAP, tolerance))
    by_hz = abs(rate_hz - whole_hz) <= hz_tolerance * whole_hz
    if by_ms and (not by_hz or whole_hz > whole_ms):  # a ms step is the finer one below 31.6 Hz
        return ms_ns
    if by_hz:
        return round(1e9 / whole_hz)
    return max(1, round(estimate_ns))


def keeps_period(intervals_ns: np.ndarray, period_ns: int) -> bool:
    """Tell cheaply whether intervals keep to ``period_ns`` (no period to learn again).

    Most intervals one slot long, and the slots they span as long as the intervals within
    ``LEARN_MIN_SNAP``: what ``learn_period`` would find the same period in, for a fraction
    of its cost (re-checking a 1 kHz topic ran it ten times a second).
    """
    slots = np.maximum(1, np.round(intervals_ns / period_ns))
    if 2 * np.count_nonzero(slots == 1) < len(slots):
        return False
    spanned = float(slots.sum()) * period_ns
    return abs(float(intervals_ns.sum()) - spanned) <= LEARN_MIN_SNAP * spanned


def burst_like(intervals_ns: np.ndarray, period_ns: int) -> str:
    """Why a learning window is no timer's rhythm, or '' when the period fits it.

    A period learned from burst-like intervals (messages delivered in batches, a timer
    catching up) is a fraction of the real one: its grid holds far more slots than the
    window has cycles, and every later window would count the difference as skipped
    periods (135,497 at 10 kHz). A window whose intervals span more than
    ``BURST_SLOTS_RATIO`` slots each of the learned period is rejected.
    """
    if not len(intervals_ns):
        return 'no interval between distinct cycle starts to learn the period from'
    slots = float(intervals_ns.sum()) / period_ns
    if slots <= BURST_SLOTS_RATIO * len(intervals_ns):
        return ''
    mean_ms = float(intervals_ns.mean()) / NS_PER_MS
    return (f'intervals came in bursts: a period of {period_ns / NS_PER_MS:.4g} ms learned '
            f'from them gives {slots:.0f} slots for {len(intervals_ns)} intervals (mean '
            f'{mean_ms:.4g} ms); period not learned from that window')


RHYTHM_SLACK = 0.2
"""An interval keeps a timer's rhythm when it lies within this share of a period of a whole
number of periods (a late callback, a skipped period)."""
RHYTHM_SHARE = 0.5
"""A learning window is a timer's when at least this share of its intervals keep the rhythm
of the period learned from them (``no_rhythm``)."""


def no_rhythm(intervals_ns: np.ndarray, period_ns: int) -> str:
    """Why intervals are no timer's rhythm at ``period_ns``, or '' when they are.

    A timer's intervals lie near whole numbers of its period, however late a callback runs;
    a topic published on updates (a localization pose: runs 100 ms apart between pauses of
    1 to 2 s) has intervals on no grid, and a period learned from them would count misses
    and skipped periods of a timer that does not exist. Too few intervals to tell: ''.
    """
    if len(intervals_ns) < 2 or period_ns <= 0:
        return ''
    slots = np.maximum(1, np.round(intervals_ns / period_ns))
    off = np.abs(intervals_ns - slots * period_ns) / period_ns
    fit = int(np.count_nonzero(off <= RHYTHM_SLACK))
    if fit >= RHYTHM_SHARE * len(intervals_ns):
        return ''
    return (f'intervals keep no timer rhythm: {fit} of {len(intervals_ns)} lie within '
            f'{RHYTHM_SLACK:.0%} of a whole number of the {period_ns / NS_PER_MS:.4g} ms '
            'learned from them; period not learned from that window')


EVENT_WINDOWS = 2
"""Learning windows in a row that keep no timer rhythm (``burst_like``, ``no_rhythm``) before
a topic without a configured period is an event topic: rate, intervals and gaps, no misses
or skipped periods, until a window keeps a rhythm (or a period is offered or configured)."""


class PeriodLearner:
    """A topic's period learned from a window of its cycles, or why no window gave one.

    Cycles wait in ``held`` (batches whose columns 4 and 8 are the timer-clock starts and the
    producer streams) until a window is full; ``learn`` then finds the period of the intervals
    of each stream, or rejects a window that keeps no timer rhythm (counted by the caller, its
    intervals kept). ``EVENT_WINDOWS`` such windows in a row make the topic an event topic,
    until one keeps a rhythm.
    """

    def __init__(self) -> None:
        """Start with nothing held and nothing rejected."""
        self.held = HeldBatches()
        """Cycles waiting for enough of them to learn the period."""
        self.note = ''
        """Why the latest window was rejected ('' once a period is learned)."""
        self.rejected_in_a_row = 0

    @property
    def event(self) -> bool:
        """True when the latest windows in a row kept no timer rhythm (an event topic)."""
        return self.rejected_in_a_row >= EVENT_WINDOWS

    def learn(self, batch: tuple[np.ndarray, ...]) -> int | None:
        """Return the period of a full window's cycles, or None when they keep no rhythm."""
        diffs = stream_diffs(batch[4], batch[8])
        diffs = diffs[diffs > 0]
        period = learn_period(diffs) if len(diffs) else 0
        rejected = burst_like(diffs, period) or no_rhythm(diffs, period)
        if not rejected:
            self.note = ''
            self.rejected_in_a_row = 0
            return period
        self.rejected_in_a_row += 1
        self.note = rejected
        if self.event:
            self.note = (f'an event topic: {self.rejected_in_a_row} windows in a row kept no '
                         f'timer rhythm (latest: {rejected})')
        return None


RELEARN_MIN_INTERVALS = 100
"""A learned period is checked against blocks of at least this many later intervals (and
``4 x learn_intervals``); two blocks in a row that learn the same other period re-learn it."""


class PeriodCheck:
    """A learned period held against blocks of later intervals, per producer stream.

    Each block learns a period; two blocks in a row that learn the same other one replace it.
    A steady timer costs ``keeps_period`` per block, a fraction of learning.
    """

    def __init__(self) -> None:
        """Start with no interval held."""
        self._held: list[np.ndarray] = []
        self._candidates: list[int] = []
        self._previous: dict[int, int] = {}
        """Each stream's last start: the interval across two batches counts as well."""

    def forget_starts(self) -> None:
        """Drop each stream's last start (nothing spans a gap of the monitor's own)."""
        self._previous.clear()

    def feed(self, start_ns: np.ndarray, streams: np.ndarray, live: Container[int],
             period_ns: int, timeout_ns: int, block: int) -> list[tuple[int, int]]:
        """Check the cycles' starts (``streams``: each one's stream) against ``period_ns``.

        Intervals longer than ``timeout_ns`` (outages) are left out. ``live``: the streams
        still kept (a forgotten producer's last start is dropped). Returns each re-learning
        as (old period, new period), in order; usually none.
        """
        previous = self._previous
        for serial in np.unique(streams).tolist():
            mine = start_ns[streams == serial]
            before = previous.get(serial)
            if before is not None:
                mine = np.concatenate(([before], mine))
            previous[serial] = int(mine[-1])
            diffs = np.diff(mine)
            diffs = diffs[(diffs > 0) & (diffs <= timeout_ns)]
            if len(diffs):
                self._held.append(diffs)
        for serial in [k for k in previous if k not in live]:
            del previous[serial]
        held = np.concatenate(self._held) if self._held else np.empty(0, np.int64)
        changes = []
        while len(held) >= block:
            chunk, held = held[:block], held[block:]
            if keeps_period(chunk, period_ns):
                self._candidates = []
                continue
            candidate = learn_period(chunk)
            if abs(candidate - period_ns) <= LEARN_MIN_SNAP * period_ns:
                self._candidates = []
                continue
            self._candidates.append(candidate)
            if len(self._candidates) < 2:
                continue
            first, second = self._candidates[-2:]
            if abs(first - second) > LEARN_MIN_SNAP * second:
                self._candidates = [second]
                continue
            self._candidates = []
            changes.append((period_ns, second))
            period_ns = second
        self._held = [held] if len(held) else []
        return changes

