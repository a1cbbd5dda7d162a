"""Tests for the bounded whole-run accumulators (offline/accumulate.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ros2_deadline_monitor.offline.accumulate import (
    RtfWindow,
    RunningStats,
    Timeline,
    ValueSketch,
    WindowSeries,
)

QS = (0.0, 0.01, 0.5, 0.95, 0.99, 0.999, 1.0)


def test_sketch_is_exact_below_the_cap() -> None:
    rng = np.random.default_rng(1)
    values = rng.integers(1, 50_000_000, 5000)
    sketch = ValueSketch(exact_cap=10_000)
    for chunk in np.array_split(values, 7):
        sketch.add(chunk)
    assert sketch.exact and sketch.count == 5000
    assert sketch.quantiles(QS) == pytest.approx(tuple(np.quantile(values, QS)), rel=0, abs=0)
    x, y = sketch.ecdf(max_points=100)
    assert len(x) <= 100 and y[-1] == 1.0 and np.all(np.diff(x) >= 0)


def test_sketch_beyond_the_cap_stays_within_the_bin_width() -> None:
    rng = np.random.default_rng(2)
    values = np.round(rng.lognormal(np.log(10e6), 0.3, 50_000)).astype(np.int64)
    sketch = ValueSketch(exact_cap=1000, rel=1e-3)
    for chunk in np.array_split(values, 50):
        sketch.add(chunk)
    assert not sketch.exact and sketch.count == len(values)
    for got, want in zip(sketch.quantiles(QS), np.quantile(values, QS), strict=True):
        assert got == pytest.approx(want, rel=1e-3)
    counts, _ = sketch.histogram(bins=20)
    assert counts.sum() == len(values)
    assert sketch.ecdf()[1][-1] == pytest.approx(1.0)


def test_sketch_bins_zero_and_negative_values() -> None:
    values = np.array([-5_000, -5_000, 0, 0, 0, 1_000, 2_000, 4_000_000] * 100, np.int64)
    sketch = ValueSketch(exact_cap=10)
    sketch.add(values)
    low, mid, high = sketch.quantiles((0.0, 0.5, 1.0))
    assert low == pytest.approx(-5_000, rel=1e-3)
    assert mid == 0.0
    assert high == pytest.approx(4_000_000, rel=1e-3)


def test_empty_sketch() -> None:
    sketch = ValueSketch()
    assert all(np.isnan(sketch.quantiles((0.5, 0.99))))
    assert len(sketch.ecdf()[0]) == 0


def test_running_stats() -> None:
    stats = RunningStats()
    stats.add(np.array([5, 3, 9], np.int64), np.array([10, 20, 30], np.int64))
    stats.add(np.array([], np.int64))
    stats.add(np.array([9, 1], np.int64), np.array([40, 50], np.int64))
    assert (stats.count, stats.total, stats.min, stats.max, stats.max_at) == (5, 27, 1, 9, 30)
    assert stats.mean == pytest.approx(5.4)
    assert np.isnan(RunningStats().mean)


def _batch(t: np.ndarray, value: int, missed_every: int = 0) -> dict:
    n = len(t)
    columns = {name: np.full(n, value, np.int64) for name in Timeline.COLUMNS}
    known = {name: np.ones(n, bool) for name in Timeline.COLUMNS}
    missed = np.zeros(n, bool)
    if missed_every:
        missed[::missed_every] = True
    skipped = missed.astype(np.int64)
    return {'t_ns': t, 'columns': columns, 'known': known, 'missed': missed, 'skipped': skipped}


def test_timeline_keeps_points_then_only_buckets() -> None:
    timeline = Timeline(0, 1_000_000_000, buckets=10, raw_cap=100, mark_cap=5)
    first = np.arange(0, 50) * 10_000_000
    timeline.add(**_batch(first, 7, missed_every=10))
    raw = timeline.raw_points()
    assert raw is not None and len(raw['t']) == 50 and raw['missed'].sum() == 5
    assert timeline.marks('miss')[0].tolist() == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    second = 500_000_000 + np.arange(0, 60) * 8_000_000
    timeline.add(**_batch(second, 9, missed_every=10))
    assert timeline.raw_points() is None
    assert not timeline.misses_complete
    row = Timeline.COLUMNS.index('interval_wall')
    assert timeline.b_count[row].sum() == 110
    assert timeline.b_misses.sum() == 11 and timeline.b_skipped.sum() == 11
    assert timeline.b_max[row].max() == 9 and timeline.b_min[row].min() == 7


def test_window_series_merges_pairs_and_keeps_the_extremes() -> None:
    series = WindowSeries(cap=4)
    for i in range(9):
        series.add(RtfWindow(i * 10, i * 10 + 10, 10, 5 if i != 4 else 1, 0.5 - (i == 4) * 0.4,
                             0.6))
    assert len(series.windows) <= 4
    assert sum(w.wall_ns for w in series.windows) == 90
    assert sum(w.sim_ns for w in series.windows) == 41
    assert min(w.bin_min for w in series.windows) == pytest.approx(0.1)
    assert series.windows[0].start_ns == 0 and series.windows[-1].end_ns == 90
