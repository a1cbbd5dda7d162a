import numpy as np
import pytest

from ros2_deadline_monitor.analysis.intervals import summarize_intervals

MS = 1_000_000


def test_percentiles_equal_numpy_and_tail_amplification():
    rng = np.random.default_rng(7)
    intervals = rng.integers(9 * MS, 12 * MS, 1000).astype(np.int64)
    intervals[::97] = 23 * MS
    at = np.cumsum(intervals)
    s = summarize_intervals('wall', intervals, at, 10 * MS, MS // 2, 25 * MS)
    p50, p95, p99 = np.percentile(intervals, (50, 95, 99))
    assert (s.p50_ns, s.p95_ns, s.p99_ns) == (p50, p95, p99)
    assert s.tail_amplification == pytest.approx(p99 / p50)
    assert s.max_ns == 23 * MS and s.max_at_ns == at[0]
    assert s.count == 1000
    assert s.over_period == int((intervals > 10 * MS).sum())
    assert s.over_period_plus_jitter == int((intervals > 10.5 * MS).sum())
    assert s.over_wall_budget == 0


def test_empty_window_is_nan_not_an_error():
    s = summarize_intervals('sim', np.array([], np.int64), np.array([], np.int64), None, None)
    assert s.count == 0 and np.isnan(s.mean_ns) and s.over_period == 0


def test_percentiles_of_few_values_are_numpys_exactly():
    from ros2_deadline_monitor.analysis.intervals import FEW_VALUES, percentiles

    rng = np.random.default_rng(11)
    qs = (0, 1, 25, 50, 95, 99, 99.9, 100)
    for n in list(range(1, FEW_VALUES + 3)) + [500]:
        for values in (rng.integers(-5 * MS, 2**62, n).astype(np.int64),  # responses
                       rng.integers(0, 3 * MS, n).astype(np.float64),  # intervals
                       rng.normal(1e9, 3e6, n), np.full(n, 7 * MS, np.int64)):
            expected = [float(p) for p in np.percentile(values, qs)]
            assert percentiles(values, qs) == expected, (n, values.dtype)


def test_mean_is_numpys_exactly():
    from ros2_deadline_monitor.analysis.intervals import mean

    rng = np.random.default_rng(13)
    for n in (1, 2, 7, 10, 129, 10_000):
        for values in (rng.integers(-5 * MS, 2**62, n).astype(np.int64),  # sums past 2**53
                       rng.integers(0, 3 * MS, n).astype(np.float64),
                       rng.normal(1e9, 3e6, n)):
            assert mean(values) == float(values.mean()), (n, values.dtype)
