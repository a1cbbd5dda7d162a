"""Whole-run figures of one topic, fed the analyzer's per-cycle rows on the stats timer.

A run can last hours (a bag, a long CI run); the analyzers keep only a bounded window. These
accumulators add up what the whole-run figures need without keeping every value: counts,
sums, minima and maxima are exact; quantiles (only when ``AnalysisConfig.run_percentiles``
asks for them: the bag replay does, the live monitor does not) are exact while a series holds
at most ``exact_cap`` values and come from a logarithmic histogram with relative bin width
``rel`` (error below ``rel / 2``) beyond that. The session (``analysis/session.py``) keeps one
``WholeRun`` per topic, from its first cycle on, and puts ``totals()`` on every snapshot.
"""

from __future__ import annotations

import math

import numpy as np

from ros2_deadline_monitor.analysis.config import Timing
from ros2_deadline_monitor.analysis.reports import IntervalTotals, RunTotals
from ros2_deadline_monitor.analysis.ring import NO_VALUE

NAN = float('nan')
EXACT_CAP = 1 << 17
"""Values a sketch keeps verbatim; quantiles are exact up to this many values."""
REL_BIN = 1e-3
"""Relative width of a histogram bin once a sketch holds more than ``EXACT_CAP`` values."""
FEW_VALUES = 16
"""Batches up to this many values are summed in plain Python (numpy's calls cost more)."""
PERCENTILE_METHOD = (
    f'exact (linear interpolation, numpy type 7) up to {EXACT_CAP:,} values per series; '
    f'beyond that from a log histogram with {REL_BIN:.1%} bins (relative error < '
    f'{REL_BIN / 2:.2%})')
"""How whole-run percentiles are computed (said next to them where they are not exact)."""


class ValueSketch:
    """Quantiles, ECDF and histogram of an int64 series in bounded memory."""

    def __init__(self, exact_cap: int = EXACT_CAP, rel: float = REL_BIN) -> None:
        """Keep up to ``exact_cap`` values verbatim, then bins ``rel`` wide (relative)."""
        self.exact_cap = exact_cap
        self._log_gamma = math.log1p(rel)
        self._chunks: list[np.ndarray] = []
        self._held = 0
        self.count = 0
        self._pos: np.ndarray | None = None
        self._neg: np.ndarray | None = None
        self._zero = 0

    @property
    def exact(self) -> bool:
        """True while every value is held verbatim (quantiles are exact)."""
        return self._pos is None

    def add(self, values: np.ndarray) -> None:
        """Add a batch of int64 values."""
        if len(values) == 0:
            return
        self.count += len(values)
        if self._pos is None:
            self._chunks.append(np.asarray(values, np.int64).copy())
            self._held += len(values)
            if self._held > self.exact_cap:
                held = self._values()
                self._chunks = []
                self._held = 0
                self._pos = np.zeros(self._bin_of(np.iinfo(np.int64).max) + 2, np.int64)
                self._bin(held)
            return
        self._bin(np.asarray(values, np.int64))

    def _bin_of(self, magnitude: float | np.ndarray) -> np.ndarray | int:
        return np.ceil(np.log(magnitude) / self._log_gamma).astype(np.int64)

    def _bin(self, values: np.ndarray) -> None:
        assert self._pos is not None
        positive = values[values > 0].astype(np.float64)
        negative = -values[values < 0].astype(np.float64)
        self._zero += int(np.count_nonzero(values == 0))
        if len(positive):
            self._pos += np.bincount(self._bin_of(positive), minlength=len(self._pos))
        if len(negative):
            if self._neg is None:  # most series never go negative: allocate on demand
                self._neg = np.zeros_like(self._pos)
            self._neg += np.bincount(self._bin_of(negative), minlength=len(self._neg))

    def _values(self) -> np.ndarray:
        if len(self._chunks) > 1:
            self._chunks = [np.concatenate(self._chunks)]
        return self._chunks[0] if self._chunks else np.empty(0, np.int64)

    def _binned(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the representative value and count of every non-empty bin, ascending."""
        assert self._pos is not None
        gamma = math.exp(self._log_gamma)
        neg = self._neg if self._neg is not None else np.zeros(0, np.int64)
        pos_idx = np.flatnonzero(self._pos)
        neg_idx = np.flatnonzero(neg)[::-1]
        # The value that minimizes the relative error for a bin (gamma^(i-1), gamma^i].
        scale = 2.0 / (1.0 + gamma)
        values = np.concatenate([
            -np.exp(neg_idx * self._log_gamma) * scale,
            np.zeros(1 if self._zero else 0),
            np.exp(pos_idx * self._log_gamma) * scale,
        ])
        counts = np.concatenate([
            neg[neg_idx], np.full(1 if self._zero else 0, self._zero), self._pos[pos_idx]])
        return values, counts

    def quantiles(self, qs: tuple[float, ...]) -> tuple[float, ...]:
        """Quantiles (0..1) with linear interpolation (numpy's default, type 7); NaN if empty."""
        if self.count == 0:
            return tuple(NAN for _ in qs)
        if self.exact:
            return tuple(float(v) for v in np.quantile(self._values(), qs))
        values, counts = self._binned()
        ends = np.cumsum(counts)
        out = []
        for q in qs:
            h = q * (self.count - 1)
            lo = math.floor(h)
            v_lo, v_hi = (float(values[np.searchsorted(ends, r, side='right')])
                          for r in (lo, min(lo + 1, self.count - 1)))
            out.append(v_lo + (h - lo) * (v_hi - v_lo))
        return tuple(out)

    def ecdf(self, max_points: int = 2000) -> tuple[np.ndarray, np.ndarray]:
        """``(x, F(x))`` of the empirical CDF with at most ``max_points`` points."""
        if self.count == 0:
            return np.empty(0), np.empty(0)
        if self.exact:
            x = np.sort(self._values()).astype(np.float64)
            y = np.arange(1, len(x) + 1) / len(x)
        else:
            x, counts = self._binned()
            y = np.cumsum(counts) / self.count
        if len(x) > max_points:
            keep = np.unique(np.linspace(0, len(x) - 1, max_points).round().astype(np.int64))
            x, y = x[keep], y[keep]
        return x, y

    def histogram(self, bins: int = 60, range_: tuple[float, float] | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(counts, edges)`` over ``bins`` equal bins (from the bins once binned)."""
        if self.count == 0:
            return np.zeros(bins, np.int64), np.linspace(0.0, 1.0, bins + 1)
        if self.exact:
            return np.histogram(self._values().astype(np.float64), bins=bins, range=range_)
        values, counts = self._binned()
        return np.histogram(values, bins=bins, range=range_, weights=counts)


class RunningStats:
    """Exact count, sum, min and max (and when the max happened, an int) of an int64 series."""

    __slots__ = ('count', 'max', 'max_at', 'min', 'total')

    def __init__(self) -> None:
        """Start empty."""
        self.count = 0
        self.total = 0
        self.min = NAN
        self.max = NAN
        self.max_at: int | None = None

    def add(self, values: np.ndarray, at: np.ndarray | None = None) -> None:
        """Add a batch; ``at[i]`` is when ``values[i]`` happened (for the time of the max)."""
        n = len(values)
        if n == 0:
            return
        if n <= FEW_VALUES:  # a slow topic's few rows: plain Python costs less than numpy
            self.add_list(values.tolist(), None if at is None else at.tolist())
            return
        self.count += n
        self.total += int(values.sum(dtype=np.int64))
        low = float(values.min())
        i_max = int(np.argmax(values))
        high = float(values[i_max])
        if not self.min <= low:
            self.min = low
        if not self.max >= high:
            self.max = high
            self.max_at = int(at[i_max]) if at is not None else None

    def add_list(self, values: list[int], at: list[int] | None = None) -> None:
        """Add a few values as a list (``add`` for a slow topic's handful of rows)."""
        if not values:
            return
        self.count += len(values)
        self.total += sum(values)
        low, high = min(values), max(values)
        if not self.min <= low:
            self.min = float(low)
        if not self.max >= high:
            self.max = float(high)
            self.max_at = at[values.index(high)] if at is not None else None

    @property
    def mean(self) -> float:
        """Mean of all values; NaN when empty."""
        return self.total / self.count if self.count else NAN




def _over(values: np.ndarray, limit: int) -> int:
    """Count the values above ``limit``."""
    return int(np.count_nonzero(values > limit))


class _Series:
    """One interval clock's whole-run figures: stats, sketch (or None), counts over limits."""

    __slots__ = ('over', 'sketch', 'stats')

    def __init__(self, percentiles: bool) -> None:
        self.stats = RunningStats()
        self.sketch = ValueSketch() if percentiles else None
        self.over = [0, 0, 0]

    def add(self, values: np.ndarray, at: np.ndarray, timing: Timing | None,
            budget: bool) -> None:
        if len(values) <= FEW_VALUES:
            listed, when = values.tolist(), at.tolist()
            if NO_VALUE in listed:
                when = [w for v, w in zip(listed, when, strict=True) if v != NO_VALUE]
                listed = [v for v in listed if v != NO_VALUE]
            self.add_list(listed, when, timing, budget)
            return
        known = values != NO_VALUE
        if not known.all():
            values, at = values[known], at[known]
        if not len(values):
            return
        self.stats.add(values, at)
        if self.sketch is not None:
            self.sketch.add(values)
        if timing is not None:
            self.over[0] += _over(values, timing.period_ns)
            self.over[1] += _over(values, timing.period_ns + timing.jitter_ns)
            if budget:
                self.over[2] += _over(values, timing.wall_budget_ns)

    def add_list(self, values: list[int], at: list[int], timing: Timing | None,
                 budget: bool) -> None:
        """Add a few known values as lists (a slow topic's rows)."""
        if not values:
            return
        self.stats.add_list(values, at)
        if self.sketch is not None:
            self.sketch.add(np.array(values, np.int64))
        if timing is not None:
            period, over = timing.period_ns, self.over
            limit = period + timing.jitter_ns
            over[0] += sum(v > period for v in values)
            over[1] += sum(v > limit for v in values)
            if budget:
                over[2] += sum(v > timing.wall_budget_ns for v in values)

    def totals(self, clock: str) -> IntervalTotals:
        stats = self.stats
        if stats.count == 0:
            return IntervalTotals(clock)
        p50 = p95 = p99 = NAN
        if self.sketch is not None:
            p50, p95, p99 = self.sketch.quantiles((0.5, 0.95, 0.99))
        return IntervalTotals(
            clock, stats.count, stats.total, stats.max, min_ns=stats.min,
            max_at_ns=stats.max_at, p50_ns=p50, p95_ns=p95, p99_ns=p99,
            over_period=self.over[0], over_period_plus_jitter=self.over[1],
            over_wall_budget=self.over[2])


class WholeRun:
    """Every cycle of one topic since it started: the figures no window bounds.

    ``add`` takes the rows one processing made (``CycleAnalyzer.take_rows``) with the timing
    in force after it; ``totals`` is cached until the next ``add``, so a report of a topic
    that made no cycle costs nothing here. Memory is a few hundred bytes without
    percentiles; with them, up to ``EXACT_CAP`` values (then a histogram) per series.
    """

    __slots__ = ('_cached', 'age', 'cycles', 'first_arrival', 'last_arrival', 'lateness',
                 'percentiles', 'response', 'sim', 'size', 'sketch_lateness',
                 'sketch_response', 'wall')

    def __init__(self, percentiles: bool = False) -> None:
        """Start empty; ``percentiles`` keeps the sketches p50/p95/p99 are read from."""
        self.percentiles = percentiles
        self.cycles = 0
        self.first_arrival: int | None = None
        self.last_arrival: int | None = None
        self.wall = _Series(percentiles)
        self.sim = _Series(percentiles)
        self.lateness = RunningStats()
        self.response = RunningStats()
        self.size = RunningStats()
        self.age = RunningStats()
        self.sketch_lateness = ValueSketch() if percentiles else None
        self.sketch_response = ValueSketch() if percentiles else None
        self._cached: RunTotals | None = None

    def add(self, rows: dict[str, np.ndarray], timing: Timing | None) -> None:
        """Fold in one processing's rows (``ROW_COLUMNS`` of ``analysis.cycles``), oldest first."""
        arrival = rows['arrival']
        n = len(arrival)
        if n == 0:
            return
        self._cached = None
        self.cycles += n
        if self.first_arrival is None:
            self.first_arrival = int(arrival[0])
        self.last_arrival = int(arrival[-1])
        self.wall.add(rows['interval_wall'], rows['start_wall'], timing, True)
        self.sim.add(rows['interval_sim'], rows['start_sim'], timing, False)
        # An event topic has no scheduled slot: its rows carry no lateness or response.
        few = n <= FEW_VALUES
        for name, stats, sketch in (('lateness', self.lateness, self.sketch_lateness),
                                    ('response', self.response, self.sketch_response),
                                    ('size', self.size, None), ('age', self.age, None)):
            if few:
                listed = [v for v in rows[name].tolist() if v != NO_VALUE]
                stats.add_list(listed)
                if sketch is not None and listed:
                    sketch.add(np.array(listed, np.int64))
                continue
            values = rows[name]
            known = values != NO_VALUE
            if not known.all():
                values = values[known]
            stats.add(values)
            if sketch is not None:
                sketch.add(values)

    def totals(self) -> RunTotals:
        """Return the whole-run figures so far (percentiles NaN unless kept)."""
        if self._cached is None:
            self._cached = self._totals()
        return self._cached

    def _totals(self) -> RunTotals:
        late_p99 = resp_p99 = NAN
        exact = None
        if self.percentiles:
            assert self.sketch_lateness is not None and self.sketch_response is not None
            late_p99, = self.sketch_lateness.quantiles((0.99,))
            resp_p99, = self.sketch_response.quantiles((0.99,))
            exact = all(s is not None and s.exact for s in (
                self.wall.sketch, self.sim.sketch, self.sketch_lateness, self.sketch_response))
        return RunTotals(
            cycles=self.cycles, interval_wall=self.wall.totals('wall'),
            interval_sim=self.sim.totals('sim'),
            first_arrival_ns=self.first_arrival, last_arrival_ns=self.last_arrival,
            lateness_mean_ns=self.lateness.mean, lateness_max_ns=self.lateness.max,
            lateness_p99_ns=late_p99, response_mean_ns=self.response.mean,
            response_max_ns=self.response.max, response_p99_ns=resp_p99,
            size_mean_bytes=self.size.mean, size_max_bytes=self.size.max,
            size_total_bytes=self.size.total, age_mean_ns=self.age.mean,
            age_max_ns=self.age.max, percentiles_exact=exact)

    def sketches(self) -> dict[str, ValueSketch | None]:
        """Return the whole-run series' sketches (None without percentiles): for plots."""
        return {'interval_wall': self.wall.sketch, 'interval_sim': self.sim.sketch,
                'lateness': self.sketch_lateness, 'response': self.sketch_response}
