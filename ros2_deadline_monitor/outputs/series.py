"""Plot series of a bag analysis, bounded by bucketing in time (whatever the bag's length).

The per-cycle rows the session hands over (``Session.on_rows``) and the clock reports go
into these for the timeline and RTF plots only; every figure comes from the session's final
snapshot (``analysis.whole_run``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NAN = float('nan')


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
