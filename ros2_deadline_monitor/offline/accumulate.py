"""Whole-run accumulators with bounded memory, fed per-cycle rows in batches.

A bag can hold hours of data; the core's analyzers keep only a bounded window. These
accumulators add up what the whole-bag summary and the plots need without keeping every
value: counts, sums, minima and maxima are exact; quantiles are exact while a series holds at
most ``exact_cap`` values and come from a logarithmic histogram with relative bin width
``rel`` (error below ``rel / 2``) beyond that; plot series are bucketed in time.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

NAN = float('nan')
EXACT_CAP = 1 << 17
"""Values a sketch keeps verbatim; quantiles are exact up to this many values."""
REL_BIN = 1e-3
"""Relative width of a histogram bin once a sketch holds more than ``EXACT_CAP`` values."""


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

    def __init__(self) -> None:
        """Start empty."""
        self.count = 0
        self.total = 0
        self.min = NAN
        self.max = NAN
        self.max_at: int | None = None

    def add(self, values: np.ndarray, at: np.ndarray | None = None) -> None:
        """Add a batch; ``at[i]`` is when ``values[i]`` happened (for the time of the max)."""
        if len(values) == 0:
            return
        self.count += len(values)
        self.total += int(values.sum(dtype=np.int64))
        low = float(values.min())
        i_max = int(np.argmax(values))
        if not self.min <= low:
            self.min = low
        if not self.max >= float(values[i_max]):
            self.max = float(values[i_max])
            self.max_at = int(at[i_max]) if at is not None else None

    @property
    def mean(self) -> float:
        """Mean of all values; NaN when empty."""
        return self.total / self.count if self.count else NAN


class Timeline:
    """Per-cycle series for the timeline plot, bounded by bucketing in time.

    Keeps every point while there are at most ``raw_cap`` of them, and always a fixed number
    of time buckets with min, max, sum and count of each column plus miss and skip counts,
    so a plot of any bag length shows the envelope. Misses and skipped periods are also
    kept as individual points up to ``mark_cap`` each.
    """

    COLUMNS = ('interval_wall', 'interval_sim', 'response')

    def __init__(self, t0_ns: int, span_ns: int, buckets: int = 1500, raw_cap: int = 20_000,
                 mark_cap: int = 20_000) -> None:
        """Cover ``[t0_ns, t0_ns + span_ns]`` of wall time with ``buckets`` buckets."""
        self.t0_ns = t0_ns
        self.span_ns = max(span_ns, 1)
        self.buckets = buckets
        self.raw_cap = raw_cap
        self.mark_cap = mark_cap
        self.raw: dict[str, list[np.ndarray]] | None = {
            k: [] for k in ('t', 'missed', *self.COLUMNS, *(f'{c}_known' for c in self.COLUMNS))}
        self.raw_count = 0
        shape = (len(self.COLUMNS), buckets)
        self.b_min = np.full(shape, np.iinfo(np.int64).max, np.int64)
        self.b_max = np.full(shape, np.iinfo(np.int64).min, np.int64)
        self.b_sum = np.zeros(shape, np.float64)
        self.b_count = np.zeros(shape, np.int64)
        self.b_misses = np.zeros(buckets, np.int64)
        self.b_skipped = np.zeros(buckets, np.int64)
        self.miss_t: list[np.ndarray] = []
        self.miss_v: list[np.ndarray] = []
        self.skip_t: list[np.ndarray] = []
        self.skip_v: list[np.ndarray] = []
        self.skip_n: list[np.ndarray] = []
        self.misses_held = 0
        self.skips_held = 0
        self.misses_complete = True
        self.skips_complete = True

    def bucket_edges_s(self) -> np.ndarray:
        """Bucket edges in seconds since ``t0_ns``."""
        return np.linspace(0.0, self.span_ns / 1e9, self.buckets + 1)

    def add(self, t_ns: np.ndarray, columns: dict[str, np.ndarray], known: dict[str, np.ndarray],
            missed: np.ndarray, skipped: np.ndarray) -> None:
        """Add a batch of cycles at wall times ``t_ns``; ``known`` masks each column."""
        n = len(t_ns)
        if n == 0:
            return
        if self.raw is not None:
            if self.raw_count + n <= self.raw_cap:
                self.raw['t'].append(t_ns.copy())
                self.raw['missed'].append(missed.copy())
                for name in self.COLUMNS:
                    self.raw[name].append(np.where(known[name], columns[name], 0))
                    self.raw[f'{name}_known'].append(known[name].copy())
                self.raw_count += n
            else:
                self.raw = None
        idx = ((t_ns - self.t0_ns) * (self.buckets / self.span_ns)).astype(np.int64)
        np.clip(idx, 0, self.buckets - 1, out=idx)
        for row, name in enumerate(self.COLUMNS):
            ok = known[name]
            if not ok.any():
                continue
            i, v = idx[ok], columns[name][ok]
            np.minimum.at(self.b_min[row], i, v)
            np.maximum.at(self.b_max[row], i, v)
            np.add.at(self.b_sum[row], i, v.astype(np.float64))
            np.add.at(self.b_count[row], i, 1)
        np.add.at(self.b_misses, idx, missed.astype(np.int64))
        np.add.at(self.b_skipped, idx, skipped)
        marks = np.flatnonzero(missed)
        if len(marks):
            if self.misses_held + len(marks) <= self.mark_cap:
                self.miss_t.append(t_ns[marks])
                self.miss_v.append(self._value_of(columns, known, marks))
                self.misses_held += len(marks)
            else:
                self.misses_complete = False
        marks = np.flatnonzero(skipped)
        if len(marks):
            if self.skips_held + len(marks) <= self.mark_cap:
                self.skip_t.append(t_ns[marks])
                self.skip_v.append(self._value_of(columns, known, marks))
                self.skip_n.append(skipped[marks])
                self.skips_held += len(marks)
            else:
                self.skips_complete = False

    @staticmethod
    def _value_of(columns: dict[str, np.ndarray], known: dict[str, np.ndarray],
                  marks: np.ndarray) -> np.ndarray:
        """Wall interval at each marked cycle (sim interval when wall is unknown)."""
        wall = columns['interval_wall'][marks]
        sim = columns['interval_sim'][marks]
        return np.where(known['interval_wall'][marks], wall,
                        np.where(known['interval_sim'][marks], sim, 0))

    def raw_points(self) -> dict[str, np.ndarray] | None:
        """Every point: ``t`` (s since ``t0_ns``), columns (ns), ``<column>_known``, ``missed``.

        None once there were more than ``raw_cap`` points: then only the buckets are left.
        """
        if self.raw is None:
            return None
        out = {k: (np.concatenate(v) if v else np.empty(
            0, bool if k == 'missed' or k.endswith('_known') else np.int64))
            for k, v in self.raw.items()}
        out['t'] = (out['t'] - self.t0_ns) / 1e9
        return out

    def marks(self, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(t_s, interval_ns, count)`` of each held miss (``kind='miss'``) or skip."""
        if kind == 'miss':
            t, v, n = self.miss_t, self.miss_v, [np.ones(len(x), np.int64) for x in self.miss_t]
        else:
            t, v, n = self.skip_t, self.skip_v, self.skip_n
        if not t:
            return np.empty(0), np.empty(0), np.empty(0, np.int64)
        return ((np.concatenate(t) - self.t0_ns) / 1e9, np.concatenate(v).astype(np.float64),
                np.concatenate(n))


@dataclass(frozen=True)
class RtfWindow:
    """RTF over one span of wall time, with the worst and best fixed bin inside it."""

    start_ns: int
    end_ns: int
    wall_ns: int
    sim_ns: int
    bin_min: float
    bin_max: float

    @property
    def rtf(self) -> float:
        """Elapsed sim over elapsed wall time; NaN for an empty span."""
        return self.sim_ns / self.wall_ns if self.wall_ns > 0 else NAN


class WindowSeries:
    """RTF windows for plotting, bounded by merging neighbours pairwise when full."""

    def __init__(self, cap: int = 4000) -> None:
        """Hold at most ``cap`` windows (an even number)."""
        self.cap = cap + cap % 2
        self.windows: list[RtfWindow] = []

    def add(self, window: RtfWindow) -> None:
        """Append a window, halving the resolution when the series is full."""
        self.windows.append(window)
        if len(self.windows) > self.cap:
            pairs = zip(self.windows[0::2], self.windows[1::2], strict=False)
            merged = [_merge(a, b) for a, b in pairs]
            if len(self.windows) % 2:
                merged.append(self.windows[-1])
            self.windows = merged


def _merge(a: RtfWindow, b: RtfWindow) -> RtfWindow:
    return RtfWindow(a.start_ns, b.end_ns, a.wall_ns + b.wall_ns, a.sim_ns + b.sim_ns,
                     float(np.fmin(a.bin_min, b.bin_min)), float(np.fmax(a.bin_max, b.bin_max)))
