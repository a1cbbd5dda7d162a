"""Where cycles start, as pure functions over a batch: the stamp decision, foreign stamps, ages."""

import numpy as np

from ros2_deadline_monitor.analysis.cycle_starts import (
    ages,
    EPOCH_SCALE_NS,
    foreign_starts,
    FOREIGN_TOLERANCE_NS,
    place,
    stamps_on_their_own_clock,
    stamps_refused,
    stamps_usable,
)
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer

MS = 1_000_000
WALL = EPOCH_SCALE_NS + 10**12  # a Unix time
ONE = np.zeros(20, np.int64)  # a single producer stream


def arrivals(n=20, period=10 * MS, start=WALL):
    return start + np.arange(n, dtype=np.int64) * period


def test_stamps_a_millisecond_before_the_arrivals_are_usable_on_the_wall_clock():
    arrival = arrivals()
    usable, why = stamps_usable(arrival, arrival - MS, ONE, 'wall', None)
    assert usable and '1.00 x' in why


def test_each_broken_assumption_refuses_the_stamps_with_its_reason():
    arrival = arrivals()
    cases = {
        'no stamp': np.full(20, NO_VALUE, np.int64),
        'zero': np.zeros(20, np.int64),
        'sim time': np.arange(20, dtype=np.int64) * 10 * MS + 5,
        'not increase': np.full(20, WALL, np.int64) + np.arange(20)[::-1],
        'span 0.50 x': WALL + np.arange(20, dtype=np.int64) * 5 * MS,
        'ahead': arrival + 2 * FOREIGN_TOLERANCE_NS,
    }
    for words, stamp in cases.items():
        usable, why = stamps_usable(arrival, stamp, ONE, 'wall', None)
        assert not usable, words
        assert words.split()[-1] in why, (words, why)


def test_refused_at_once_only_for_what_more_messages_cannot_mend():
    stamp = arrivals(3)
    assert not stamps_refused(stamp, ONE[:3], 'wall')  # only the spacing is left to judge
    assert stamps_refused(stamp, ONE[:3], 'sim')  # Unix stamps on a sim timer
    assert stamps_refused(stamp[::-1].copy(), ONE[:3], 'wall')  # going back
    # two producers each counting up are fine, though the merged order goes back
    two = np.array([WALL + 5, WALL + 1, WALL + 6, WALL + 2], np.int64)
    assert not stamps_refused(two, np.array([0, 1, 0, 1]), 'wall')


def test_a_sim_stamp_on_a_wall_topic_is_foreign_and_so_is_one_far_ahead():
    arrival = arrivals(3)
    stamp = np.array([arrival[0] - MS, 5 * MS, arrival[2] + 2 * FOREIGN_TOLERANCE_NS])
    foreign, ahead = foreign_starts(arrival, stamp, 'wall', None)
    assert foreign.tolist() == [False, True, True]
    assert ahead.tolist() == [False, False, True]


def test_an_age_ahead_of_the_arrival_is_unknown_and_counted_never_negative():
    arrival = arrivals(3)
    stamp = np.array([arrival[0] - 2 * MS, 0, arrival[2] + 2 * FOREIGN_TOLERANCE_NS])
    age, unknown = ages(arrival, stamp, arrival, 'wall', None)
    assert age.tolist() == [2 * MS, NO_VALUE, NO_VALUE]  # an unset header has no age
    assert unknown == 1


def test_arrivals_inside_a_clock_silence_have_no_sim_start():
    clock = RtfAnalyzer()
    for k in range(5):  # /clock every 10 ms, then silent for 3 s, then again
        clock.record(WALL + k * 10 * MS, k * 10 * MS)
    clock.record(WALL + 3040 * MS, 3040 * MS)
    arrival = np.array([WALL + 25 * MS, WALL + 1000 * MS], np.int64)
    start, end, start_wall, _ = place(arrival, np.full(2, NO_VALUE, np.int64), False, 'sim',
                                      clock, clock_timeout_ns=1000 * MS, silent_after=None)
    assert start.tolist() == [20 * MS, NO_VALUE]
    assert start_wall.tolist() == arrival.tolist()
    start, *_ = place(arrival, np.full(2, NO_VALUE, np.int64), False, 'sim', clock,
                      clock_timeout_ns=10_000 * MS, silent_after=WALL + 500 * MS)
    assert start.tolist() == [20 * MS, NO_VALUE]


def test_exact_sim_stamps_without_clock_are_clean_where_the_arrivals_jitter():
    # Odometry stamped exactly 36 ms apart in sim time, logged with 0.3-9 ms of jitter.
    rng = np.random.default_rng(55)
    stamp = 100_000 * MS + np.arange(64, dtype=np.int64) * 36 * MS
    arrival = WALL + stamp + rng.integers(300_000, 9_000_000, 64)
    clean, why = stamps_on_their_own_clock(arrival, stamp)
    assert clean and why.startswith('sim-time stamps without /clock, exactly regular'), why
    # A 30 Hz sensor on a 1 ms physics grid (33 or 34 ms apart) is still well under it.
    grid = 100_000 * MS + np.arange(64, dtype=np.int64) * 33_333_333 // MS * MS
    clean, why = stamps_on_their_own_clock(grid + WALL + rng.integers(300_000, 9_000_000, 64),
                                           grid)
    assert clean and 'regular within 1 ms' in why, why
    # Perfectly regular arrivals next to exact stamps: clean too (today's exact bags).
    assert stamps_on_their_own_clock(WALL + stamp, stamp)[0]


def test_sim_stamps_without_clock_that_are_not_clean_are_refused_with_the_reason():
    rng = np.random.default_rng(56)
    stamp = 100_000 * MS + np.arange(64, dtype=np.int64) * 36 * MS
    arrival = WALL + stamp + rng.integers(300_000, 900_000, 64)
    jittery = stamp + rng.integers(0, 5 * MS, 64)  # as jittery as a copied arrival time
    cases = [
        (arrival, jittery, 'no steadier than the arrivals'),
        (arrival, stamp[::-1].copy(), 'stamps do not increase'),
        (arrival, np.where(np.arange(64) == 5, NO_VALUE, stamp), 'not every message'),
        (arrival, np.zeros(64, np.int64), 'not every message'),
        (arrival, WALL + stamp, 'not in sim time'),  # wall stamps: not this case
        (stamp + MS, stamp, 'arrivals not on the wall clock'),  # logged in sim time
        (arrival[:5], stamp[:5], 'too few'),
    ]
    for arrive, stamps, reason in cases:
        clean, why = stamps_on_their_own_clock(arrive, stamps)
        assert not clean and reason in why, (reason, why)
