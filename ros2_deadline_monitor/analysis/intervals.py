"""Interval statistics on one clock, computed on the stats timer, never per message."""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np

from ros2_deadline_monitor.analysis.reports import IntervalSummary
from ros2_deadline_monitor.analysis.ring import NO_VALUE

FEW_VALUES = 64
"""Up to this many values percentiles are interpolated here: numpy's call costs ~20 µs."""


def percentiles(values: np.ndarray, qs: Sequence[float]) -> list[float]:
    """Return numpy's default percentiles (linear, type 7) of finite ``values``, exactly.

    A slow topic's window holds a handful of values, refreshed a hundred times a second with a
    thousand topics: for few values the same arithmetic (numpy's ``_lerp``, in the values'
    own type) runs on a sorted list.
    """
    n = len(values)
    if n > FEW_VALUES:
        return [float(p) for p in np.percentile(values, qs)]
    ordered = sorted(values.tolist())
    result = []
    for q in qs:
        virtual = (n - 1) * (q / 100)
        if virtual >= n - 1:
            result.append(float(ordered[-1]))
            continue
        below = math.floor(virtual)
        t = virtual - below
        a, b = ordered[below], ordered[below + 1]
        diff = b - a
        result.append(float(b - diff * (1 - t) if t >= 0.5 else a + diff * t))
    return result


def mean(values: np.ndarray) -> float:
    """Return numpy's ``mean`` of non-empty ``values`` exactly (its sum in float64 over n).

    The same arithmetic without the ~5 µs of Python ``ndarray.mean`` runs around it: a slow
    topic's refresh takes half a dozen means of a handful of values.
    """
    return float(np.add.reduce(values, dtype=np.float64)) / len(values)


def summarize_intervals(clock: str, intervals_ns: np.ndarray, at_ns: np.ndarray,
                        period_ns: int | None, jitter_ns: int | None,
                        wall_budget_ns: int | None = None) -> IntervalSummary:
    """Summarize ``intervals_ns`` (each ending at ``at_ns``) against the expected period.

    Percentiles use numpy's default linear interpolation (type 7). Counts against the period
    are zero while the period is unknown; ``wall_budget_ns`` applies to wall intervals only.
    """
    if len(intervals_ns) == 0:
        return IntervalSummary(clock=clock)
    values = intervals_ns.astype(np.float64)
    p50, p95, p99 = percentiles(values, (50, 95, 99))
    i_max = int(np.argmax(values))
    over_period = over_jitter = over_budget = 0
    if period_ns is not None:
        over_period = int(np.count_nonzero(intervals_ns > period_ns))
        over_jitter = int(np.count_nonzero(intervals_ns > period_ns + (jitter_ns or 0)))
    if wall_budget_ns is not None:
        over_budget = int(np.count_nonzero(intervals_ns > wall_budget_ns))
    return IntervalSummary(
        clock=clock,
        count=len(values),
        mean_ns=mean(values),
        min_ns=float(values.min()),
        max_ns=float(values[i_max]),
        max_at_ns=int(at_ns[i_max]),
        p50_ns=float(p50),
        p95_ns=float(p95),
        p99_ns=float(p99),
        tail_amplification=float(p99 / p50) if p50 > 0 else float('nan'),
        over_period=over_period,
        over_period_plus_jitter=over_jitter,
        over_wall_budget=over_budget,
    )


def diff_with(previous: int, values: np.ndarray) -> np.ndarray:
    """Differences to the previous value; NO_VALUE where either side is unknown."""
    before = np.empty(len(values), np.int64)
    before[0] = previous
    before[1:] = values[:-1]
    out = values - before
    out[(before == NO_VALUE) | (values == NO_VALUE)] = NO_VALUE
    return out
