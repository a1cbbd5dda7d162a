"""Tests for the plot series of a bag analysis (outputs/series.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ros2_deadline_monitor.outputs.series import RtfWindow, Timeline, WindowSeries


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
