"""A timer's period learned from its intervals, snapped to how timers are set (period_learning)."""

import numpy as np

from ros2_deadline_monitor.analysis.period_learning import learn_period, PeriodCheck

MS = 1_000_000


def test_learned_period_snaps_to_whole_hz_only_when_close():
    assert learn_period(np.full(20, 10_003_000)) == 10 * MS
    assert learn_period(np.full(20, 33_340_000)) == 33_333_333
    assert learn_period(np.full(20, 133_000_000)) == 133_000_000
    # A jittery start-up: late callbacks followed by short intervals, median 9.8 ms.
    jittery = np.array([9_800_000] * 11 + [10_200_000] * 9, np.int64)
    assert np.median(jittery) == 9_800_000
    assert learn_period(jittery) == 10 * MS
    # A skipped period adds one slot to the span, not a wrong period.
    assert learn_period(np.array([10 * MS] * 19 + [20 * MS], np.int64)) == 10 * MS


def test_a_late_end_stamp_does_not_shift_a_learned_1_khz_period():
    # 20 intervals of a 1 kHz timer whose first stamp came 30 µs late: the span reads 1002 Hz.
    late_start = np.array([MS - 30_000] + [MS] * 19, np.int64)
    assert round(1e9 / (late_start.sum() / 20)) == 1002
    assert learn_period(late_start) == MS
    assert learn_period(np.array([MS] * 19 + [MS + 30_000], np.int64)) == MS  # 999 Hz
    # One interval of 1.2 ms at the end, 20 intervals: the span lies between 990 and 1000 Hz.
    assert learn_period(np.array([MS] * 19 + [1_200_000], np.int64)) == MS
    # A 3 ms timer is 333.3 Hz, not the nearest whole 333 Hz (3.003 ms).
    assert learn_period(np.array([3 * MS + 2_000, 3 * MS - 2_000] * 10, np.int64)) == 3 * MS
    # Alternating short and long intervals of a 90 Hz timer: not the 11 ms 1 % away.
    alternating = np.array([10_888_889] * 11 + [11_333_333] * 9, np.int64)
    assert learn_period(alternating) == round(1e9 / 90)
    # A whole rate that is no round figure stays what it is, when its stamps say so precisely.
    assert learn_period(np.full(20, 1_005_025)) == 1_005_025  # 995 Hz


def test_a_learned_period_of_a_jittery_timer_is_the_configured_one():
    rng = np.random.default_rng(7)
    for period in (MS, 2 * MS, 10 * MS, 33_333_333, 50 * MS):
        # Each stamp a little late (most by a few µs, one in twenty by up to 300 µs).
        late = rng.exponential(3_000, 3001) + (rng.random(3001) < 0.05) * rng.uniform(
            0, 300_000, 3001)
        stamps = np.arange(3001) * period + late.astype(np.int64)
        intervals = np.diff(stamps)
        for n in (20, 50):
            learned = [learn_period(intervals[i:i + n]) for i in range(0, 3000 - n, 7)]
            assert all(p == period for p in learned), (period, n, sorted(set(learned)))


def test_intervals_too_jittery_to_tell_the_period_to_1_percent_give_the_round_one():
    # The first 20 intervals (µs) of a 100 Hz timer under two CPU hogs: they read 9.85 ms,
    # known only to about 3 %; 101 Hz lies 0.5 % from that, 10 ms 1.5 %.
    under_load = np.array([10236, 11556, 7574, 13862, 11049, 7950, 7993, 10706, 9585, 8657,
                           9598, 10029, 9959, 10146, 9878, 10044, 9944, 10502, 9541, 9972],
                          np.int64) * 1000
    assert learn_period(under_load) == 10 * MS
    # A steady 101 Hz timer is known to far better than 1 %: it stays 101 Hz.
    assert learn_period(np.full(20, 9_900_990)) == 9_900_990
    # Near no round period, the rule before applies: 30 Hz, jittery, is 30 Hz.
    thirty = np.array([33_333_333 + (4 if i % 2 else -4) * MS for i in range(20)], np.int64)
    assert learn_period(thirty) == 33_333_333


def _starts(period_ns, n, first=0):
    return first + np.arange(1, n + 1, dtype=np.int64) * period_ns


def test_a_period_is_relearned_only_when_two_blocks_agree_on_another():
    ms, block = 1_000_000, 100
    check = PeriodCheck()
    one = np.zeros(block, np.int64)  # one producer stream
    steady = _starts(10 * ms, block + 1)  # a block of intervals
    assert check.feed(steady, np.zeros(block + 1, np.int64), {0}, 10 * ms, 1000 * ms,
                      block) == []
    slower = _starts(12 * ms, block, int(steady[-1]))
    assert check.feed(slower, one, {0}, 10 * ms, 1000 * ms, block) == []  # one block: noise
    again = _starts(12 * ms, block, int(slower[-1]))
    assert check.feed(again, one, {0}, 10 * ms, 1000 * ms, block) == [(10 * ms, 12 * ms)]

