"""Tests for the whole-run figures in bounded memory (analysis/whole_run.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ros2_deadline_monitor.analysis.config import resolve_timing, TopicConfig
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.whole_run import RunningStats, ValueSketch, WholeRun

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


def test_running_stats_few_and_many_values_give_the_same_figures() -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(-1000, 1_000_000, 400)
    at = np.arange(400, dtype=np.int64) * 7
    few, many = RunningStats(), RunningStats()
    for k in range(0, 400, 4):  # batches the plain-Python path takes
        few.add(values[k:k + 4], at[k:k + 4])
    many.add(values, at)  # one batch numpy takes
    assert (few.count, few.total, few.min, few.max, few.max_at) == (
        many.count, many.total, many.min, many.max, many.max_at) == (
        400, int(values.sum()), float(values.min()), float(values.max()),
        int(at[int(np.argmax(values))]))


def _rows(arrival, wall, sim, lateness, response, size, age) -> dict:
    columns = dict(arrival=arrival, start_wall=arrival, start_sim=arrival, interval_wall=wall,
                   interval_sim=sim, lateness=lateness, response=response, size=size, age=age)
    return {k: np.array(v, np.int64) for k, v in columns.items()}


def test_whole_run_counts_every_known_value_against_the_timing() -> None:
    timing = resolve_timing(TopicConfig(name='a', topic='/a', period_ns=100,
                                        jitter_tolerance_ns=10), 100, False, 1.0)
    run = WholeRun(percentiles=True)
    x = NO_VALUE
    run.add(_rows([1000, 1100, 1250], [x, 100, 150], [x, x, x], [0, 5, 60], [20, 30, x],
                  [8, 8, 16], [3, x, 5]), timing)
    run.add(_rows([1360], [110], [x], [x], [x], [8], [x]), None)  # no timing: not counted over
    totals = run.totals()
    assert totals is run.totals()  # cached until the next add
    wall = totals.interval_wall
    assert (totals.cycles, wall.count, wall.sum_ns, wall.min_ns, wall.max_ns, wall.max_at_ns) == (
        4, 3, 360, 100, 150, 1250)
    assert (wall.over_period, wall.over_period_plus_jitter, wall.over_wall_budget) == (1, 1, 1)
    assert wall.p50_ns == 110 and wall.rate_hz == pytest.approx(1e9 * 3 / 360)
    assert totals.interval_sim.count == 0 and np.isnan(totals.interval_sim.max_ns)
    assert (totals.lateness_max_ns, totals.response_mean_ns, totals.size_total_bytes) == (
        60, 25, 40)
    assert (totals.age_mean_ns, totals.age_max_ns) == (4, 5)
    assert (totals.first_arrival_ns, totals.last_arrival_ns, totals.span_ns) == (1000, 1360, 360)
    assert totals.bandwidth_bytes_per_s == pytest.approx(40 * 1e9 / 360)
    assert totals.percentiles_exact is True


def test_whole_run_without_percentiles_keeps_them_unknown() -> None:
    run = WholeRun()
    x = NO_VALUE
    run.add(_rows([10, 20], [x, 10], [x, x], [x, x], [x, x], [4, 4], [1, 1]), None)
    totals = run.totals()
    assert totals.interval_wall.count == 1 and totals.percentiles_exact is None
    assert np.isnan(totals.interval_wall.p99_ns) and np.isnan(totals.lateness_p99_ns)
    assert np.isnan(totals.interval_wall.tail_amplification)
    assert all(sketch is None for sketch in run.sketches().values())


def test_whole_run_fed_few_or_many_rows_at_a_time_gives_the_same_figures() -> None:
    """A slow topic's handful of rows (plain Python) and a batch (numpy): the same totals."""
    rng = np.random.default_rng(4)
    n = 300
    timing = resolve_timing(TopicConfig(name='a', topic='/a', period_ns=1000), 1000, False, 1.0)

    def column(unknown_every: int) -> np.ndarray:
        values = rng.integers(1, 3000, n)
        values[::unknown_every] = NO_VALUE
        return values.astype(np.int64)

    arrival = np.cumsum(rng.integers(1, 3000, n)).astype(np.int64)
    rows = _rows(arrival, column(7), column(5), column(11), column(13), rng.integers(1, 99, n),
                 column(3))
    few, many = WholeRun(percentiles=True), WholeRun(percentiles=True)
    for k in range(0, n, 3):
        few.add({name: values[k:k + 3] for name, values in rows.items()}, timing)
    many.add(rows, timing)
    assert few.totals() == many.totals()
    assert many.totals().interval_wall.over_period > 0
