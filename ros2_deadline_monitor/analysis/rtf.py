"""Real time factor and /clock health from ``(wall, sim)`` samples (docs/design.md, Clock and RTF).

Each /clock message gives one sample: the wall time it was received (system clock ns, the
middleware's received timestamp) and the sim time it carried. ``record`` is O(1); everything
else runs when a report is made. The same samples map event times between the clocks, so
events handled late still get the sim time they happened at.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ros2_deadline_monitor.analysis.reports import ClockReport
from ros2_deadline_monitor.analysis.ring import NO_VALUE

NAN = float('nan')
JUMP_MAX_RTF = 1000
"""A sim step more than this many times its wall step is no simulation running: a seek."""
JUMP_MIN_NS = 1_000_000_000
"""... and at least this much sim time (two samples received in the same instant, a coarse
/clock of a fast simulator, stay steps): sim time that jumps forward (docs/design.md, Clock
and RTF)."""


NON_MONOTONIC_RESETS = 5
"""More resets than this in one report window are no world resets but a /clock that is not
monotonic (jitter back and forth, sources taking turns): that window's RTF is unknown."""


def is_jump(dwall_ns: int, dsim_ns: int) -> bool:
    """Tell whether sim time moved forward by ``dsim_ns`` in ``dwall_ns`` only by a seek."""
    return dsim_ns > max(JUMP_MAX_RTF * dwall_ns, JUMP_MIN_NS)


STEP_SAMPLES = 1024
"""/clock samples the resolution (``RtfAnalyzer.step_ns``) is measured over."""


class RtfAnalyzer:
    """Bounded history of /clock samples with RTF windows, gaps, pauses and resets."""

    def __init__(self, bin_ns: int = 100_000_000, capacity: int = 1 << 17) -> None:
        """Keep up to ``capacity`` samples; RTF is also given per ``bin_ns`` of wall time."""
        self.bin_ns = bin_ns
        self.capacity = capacity
        self._wall = np.empty(capacity, np.int64)
        self._sim = np.empty(capacity, np.int64)
        self._count = 0
        self._epoch_start = 0
        self._epoch_first: tuple[int, int] | None = None
        self._window_start = 0
        self._last: tuple[int, int] | None = None
        self.resets_total = 0
        self._window_resets = 0
        self.jumps_total = 0
        """Sim time jumped forward (a seek): a discontinuity like a reset, apart from it."""
        self._window_jumps = 0
        self.mixed = False
        """Several publishers on /clock (the session says so): their sim times alternate, so
        no RTF is measured from them (NaN), rather than one that mixes them."""
        self.run_unknown = ''
        """Why RTF since start is unknown for the rest of the run ('' while it is known):
        several publishers were on /clock, or sim time went back and forth in a window. An
        RTF since the last of thousands of resets is no figure of the run."""
        self._view: tuple[int, np.ndarray, np.ndarray] | None = None
        # Fixed bins continue across reports: the last edge evaluated and the sample at it.
        self._bin_edge: int | None = None
        self._bin_from = 0
        self._bin_min_run = NAN
        self._bin_min_run_at: int | None = None
        self._step_cache: tuple[int, float] = (-1, NAN)

    def new_epoch(self) -> None:
        """Start RTF afresh from the next sample (several /clock publishers are gone)."""
        self._epoch_start = self._count
        self._epoch_first = None
        self._bin_edge = None
        self._bin_from = self._count

    @property
    def has_samples(self) -> bool:
        """True once a /clock sample arrived."""
        return self._last is not None

    @property
    def step_ns(self) -> float:
        """The /clock resolution: median sim step of the latest ``STEP_SAMPLES`` samples.

        A sim-time timer runs at most once per /clock message and arrivals between two
        samples share one sim time, so no sim-time figure is finer than this (NaN before two
        samples). Computed on demand, cached until the next sample.
        """
        if self._step_cache[0] != self._count:
            wall, sim = self._chronological(max(self._epoch_start, self._count - STEP_SAMPLES))
            steps = np.diff(sim)
            steps = steps[steps > 0]
            self._step_cache = (self._count, float(np.median(steps)) if len(steps) else NAN)
        return self._step_cache[1]

    @property
    def messages_total(self) -> int:
        """Samples recorded since start."""
        return self._count

    def record(self, wall_ns: int, sim_ns: int) -> bool:
        """Store one /clock sample; return True at a discontinuity of sim time.

        Sim time going back (a reset) or jumping forward (a seek, ``is_jump``) starts a new
        epoch: RTF and bins start from that sample, and no sim time is interpolated across
        it.
        """
        reset = False
        last = self._last
        jump = last is not None and is_jump(wall_ns - last[0], sim_ns - last[1])
        if last is not None and (sim_ns < last[1] or jump):
            reset = True
            if jump:
                self.jumps_total += 1
                self._window_jumps += 1
            else:
                self.resets_total += 1
                self._window_resets += 1
            self._epoch_start = self._count
            self._epoch_first = None
            self._bin_edge = None
            self._bin_from = self._count
        if last is not None and wall_ns < last[0]:
            wall_ns = last[0]
        i = self._count % self.capacity
        self._wall[i] = wall_ns
        self._sim[i] = sim_ns
        self._count += 1
        self._last = (wall_ns, sim_ns)
        if self._epoch_first is None:
            self._epoch_first = (wall_ns, sim_ns)
        return reset

    def record_many(self, wall_ns: np.ndarray, sim_ns: np.ndarray) -> np.ndarray:
        """Store samples in arrival order, as ``record`` each; return the walls of the resets.

        The batch form for a bag replay: each wall time is clamped to the latest before it,
        a sim time below the previous sample's is a reset, one far ahead of it a jump
        (``is_jump``); the wall times returned are the clamped ones of those samples, as
        ``last_wall_ns`` would say after each.
        """
        n = len(wall_ns)
        if n == 0:
            return np.empty(0, np.int64)
        wall = np.asarray(wall_ns, np.int64)
        sim = np.asarray(sim_ns, np.int64)
        last = self._last
        if last is not None:
            wall = np.maximum(np.maximum.accumulate(wall), last[0])
        else:
            wall = np.maximum.accumulate(wall)
        before_wall = np.concatenate(([last[0] if last else wall[0]], wall[:-1]))
        before_sim = np.concatenate(([last[1] if last else sim[0]], sim[:-1]))
        dsim = sim - before_sim
        reset = dsim < 0
        jump = dsim > np.maximum(JUMP_MAX_RTF * (wall - before_wall), JUMP_MIN_NS)
        first = self._count
        at = np.flatnonzero(reset | jump)
        if len(at):
            k = int(at[-1])
            jumps = int(jump.sum())
            self.resets_total += len(at) - jumps
            self._window_resets += len(at) - jumps
            self.jumps_total += jumps
            self._window_jumps += jumps
            self._epoch_start = first + k
            self._epoch_first = (int(wall[k]), int(sim[k]))
            self._bin_edge = None
            self._bin_from = first + k
        elif self._epoch_first is None:
            self._epoch_first = (int(wall[0]), int(sim[0]))
        keep = min(n, self.capacity)
        idx = np.arange(first + n - keep, first + n) % self.capacity
        self._wall[idx] = wall[n - keep:]
        self._sim[idx] = sim[n - keep:]
        self._count = first + n
        self._last = (int(wall[-1]), int(sim[-1]))
        return wall[at]

    def _chronological(self, first: int) -> tuple[np.ndarray, np.ndarray]:
        """Return samples with index >= ``first`` (as far as the ring holds them), oldest first."""
        first = max(first, self._count - self.capacity, 0)
        idx = np.arange(first, self._count) % self.capacity
        return self._wall[idx], self._sim[idx]

    def _all(self) -> tuple[np.ndarray, np.ndarray]:
        view = self._view
        if view is None or view[0] != self._count:
            wall, sim = self._chronological(0)
            view = (self._count, wall, sim)
            self._view = view
        return view[1], view[2]

    def sim_at(self, wall_ns: np.ndarray) -> np.ndarray:
        """Sim time in force at each wall time (the latest sample at or before it)."""
        return self._sim_of(wall_ns, within_step=False)

    def sim_in_step(self, wall_ns: np.ndarray) -> np.ndarray:
        """Sim time at each wall time, placed inside its /clock step.

        Between the latest sample at or before a wall time and the next one, sim time is
        interpolated linearly and never reaches the next sample's value: the execution time
        of a cycle that ends inside a step is kept (docs/design.md, Cycles). After the last sample
        (or across a reset or a pause) it is the latest sample's sim time, as ``sim_at``.
        """
        return self._sim_of(wall_ns, within_step=True)

    def _sim_of(self, wall_ns: np.ndarray, within_step: bool) -> np.ndarray:
        wall, sim = self._all()
        out = np.full(len(wall_ns), NO_VALUE, np.int64)
        if len(wall) == 0:
            return out
        idx = np.searchsorted(wall, wall_ns, side='right') - 1
        known = idx >= 0
        out[known] = sim[idx[known]]
        inside = known & (idx + 1 < len(wall))
        if within_step and inside.any():
            i = idx[inside]
            dwall = wall[i + 1] - wall[i]
            dsim = sim[i + 1] - sim[i]
            into = wall_ns[inside] - wall[i]
            # Never across a reset, a pause or a jump forward (a seek).
            grows = (dwall > 0) & (dsim > 0) & (dsim <= np.maximum(JUMP_MAX_RTF * dwall,
                                                                   JUMP_MIN_NS))
            # float64: the product of two long gaps would overflow int64.
            add = np.floor(into * (dsim / np.where(grows, dwall, 1))).astype(np.int64)
            add = np.where(grows, np.minimum(add, dsim - 1), 0)
            out[inside] = sim[i] + add
        return out

    @property
    def last_wall_ns(self) -> int | None:
        """Wall time of the latest sample (None before the first)."""
        return self._last[0] if self._last else None

    @property
    def last_sim_ns(self) -> int | None:
        """Sim time of the latest sample (None before the first)."""
        return self._last[1] if self._last else None

    def sim_bound(self, wall_ns: np.ndarray) -> np.ndarray:
        """Sim time no later than which each wall time's sim time lay; NO_VALUE: unknown.

        The sim time of the /clock sample after it (or of the one before, across a reset):
        after the latest sample, while /clock is silent, sim time may have gone on unseen.
        """
        wall, sim = self._all()
        out = np.full(len(wall_ns), NO_VALUE, np.int64)
        if len(wall) == 0:
            return out
        idx = np.searchsorted(wall, wall_ns, side='right') - 1
        inside = (idx >= 0) & (idx + 1 < len(wall))
        i = idx[inside]
        out[inside] = np.maximum(sim[i], sim[i + 1])
        return out

    def in_silence(self, wall_ns: np.ndarray, limit_ns: int) -> np.ndarray:
        """Tell which wall times lie between two /clock samples more than ``limit_ns`` apart."""
        wall, _ = self._all()
        idx = np.searchsorted(wall, wall_ns, side='right') - 1
        inside = (idx >= 0) & (idx + 1 < len(wall))
        out = np.zeros(len(wall_ns), bool)
        i = idx[inside]
        out[inside] = (wall[i + 1] - wall[i]) > limit_ns
        return out

    def report(self, now_wall_ns: int) -> ClockReport:
        """Figures since the previous report; starts the next window."""
        anchor = max(self._window_start - 1, self._epoch_start)
        wall, sim = self._chronological(anchor)
        messages = self._count - max(self._window_start, self._count - self.capacity)
        resets = self._window_resets
        if resets > NON_MONOTONIC_RESETS and not self.run_unknown:
            self.run_unknown = (f'sim time went back {resets} times in one report window '
                                '(/clock not monotonic: several publishers, or sources taking '
                                'turns)')
        jumps = self._window_jumps
        self._window_start = self._count
        self._window_resets = 0
        self._window_jumps = 0
        last_wall = self._last[0] if self._last else None
        sim_now = self._last[1] if self._last else None
        rtf_total = NAN
        if (self._epoch_first and self._last and self._last[0] > self._epoch_first[0]
                and not self.run_unknown):
            rtf_total = ((self._last[1] - self._epoch_first[1])
                         / (self._last[0] - self._epoch_first[0]))
        empty = ClockReport(
            messages_total=self._count, messages=messages, window_wall_ns=0, window_sim_ns=0,
            sim_time_ns=sim_now, rtf=NAN, rtf_total=rtf_total, rtf_bin_ns=self.bin_ns,
            rtf_bin_min=NAN, rtf_bin_min_at_ns=None, rtf_bin_max=NAN, step_ns=NAN,
            max_wall_gap_ns=NAN, max_wall_gap_at_ns=None, resets_total=self.resets_total,
            resets=resets, paused=False, last_wall_ns=last_wall,
            rtf_bin_min_run=self._bin_min_run, rtf_bin_min_run_at_ns=self._bin_min_run_at,
            jumps_total=self.jumps_total, jumps=jumps, rtf_total_note=self.run_unknown)
        if len(wall) < 2 or messages == 0 or self.mixed:
            return empty if not self.mixed else _unmeasured(empty)
        if resets > NON_MONOTONIC_RESETS:
            # Each reset restarts the epoch: the spans left are short and end on jitter.
            return replace(_unmeasured(empty), non_monotonic=True)
        span_wall = int(wall[-1] - wall[0])
        span_sim = int(sim[-1] - sim[0])
        gaps = np.diff(wall)
        i_gap = int(np.argmax(gaps))
        steps = np.diff(sim)
        steps = steps[steps > 0]
        bin_min, bin_min_at, bin_max = self._bins()
        return ClockReport(
            messages_total=self._count,
            messages=messages,
            window_wall_ns=span_wall,
            window_sim_ns=span_sim,
            sim_time_ns=sim_now,
            rtf=span_sim / span_wall if span_wall > 0 else NAN,
            rtf_total=rtf_total,
            rtf_bin_ns=self.bin_ns,
            rtf_bin_min=bin_min,
            rtf_bin_min_at_ns=bin_min_at,
            rtf_bin_max=bin_max,
            step_ns=float(np.median(steps)) if len(steps) else NAN,
            max_wall_gap_ns=float(gaps[i_gap]),
            max_wall_gap_at_ns=int(wall[i_gap + 1]),
            resets_total=self.resets_total,
            resets=resets,
            paused=span_sim == 0,
            last_wall_ns=last_wall,
            rtf_bin_min_run=self._bin_min_run,
            rtf_bin_min_run_at_ns=self._bin_min_run_at,
            jumps_total=self.jumps_total,
            jumps=jumps,
            rtf_total_note=self.run_unknown,
        )

    def _bins(self) -> tuple[float, int | None, float]:
        """RTF in each complete fixed wall bin, with sim time interpolated at bin edges.

        Bins continue from the last edge of the previous report, so a bin straddling two
        reports is evaluated once, by the later one.
        """
        first_index = max(self._bin_from, self._epoch_start, self._count - self.capacity)
        wall, sim = self._chronological(first_index)
        b = self.bin_ns
        if len(wall) < 2:
            return NAN, None, NAN
        first_edge = -(-int(wall[0]) // b) * b
        if self._bin_edge is not None and self._bin_edge >= wall[0]:
            first_edge = self._bin_edge
        last_edge = (int(wall[-1]) // b) * b
        if last_edge - first_edge < b:
            return NAN, None, NAN
        edges = np.arange(first_edge, last_edge + 1, b, dtype=np.int64)
        origin = int(wall[0])
        sim_origin = int(sim[0])
        sim_at_edges = np.interp((edges - origin).astype(np.float64),
                                 (wall - origin).astype(np.float64),
                                 (sim - sim_origin).astype(np.float64))
        self._bin_edge = last_edge
        at_edge = int(np.searchsorted(wall, last_edge, side='right')) - 1
        self._bin_from = first_index + max(at_edge, 0)
        rtf = np.diff(sim_at_edges) / b
        i_min = int(np.argmin(rtf))
        if not self._bin_min_run <= rtf[i_min]:
            self._bin_min_run = float(rtf[i_min])
            self._bin_min_run_at = int(edges[i_min + 1])
        return float(rtf[i_min]), int(edges[i_min + 1]), float(rtf.max())


def _unmeasured(report: ClockReport) -> ClockReport:
    """Keep the counts of a report on several publishers' samples; no RTF, no sim time."""
    return replace(report, rtf_total=NAN, sim_time_ns=None)
