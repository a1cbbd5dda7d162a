import numpy as np
import pytest

from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer

MS = 1_000_000
S = 1_000_000_000
T0 = 1_700_000_000_000_000_000


def publish(clock, rtf, duration_ns, *, step_ns=MS, wall0=T0, sim0=0, stall=None):
    """Feed /clock samples of a simulator that never bursts to catch up."""
    wall, sim = wall0, sim0
    while wall < wall0 + duration_ns:
        if stall and stall[0] <= wall - wall0 < stall[0] + stall[1]:
            wall = wall0 + stall[0] + stall[1]
        clock.record(wall, sim)
        sim += step_ns
        wall += round(step_ns / rtf)
    return wall, sim


@pytest.mark.parametrize('rtf', [1.0, 0.5, 2.0])
def test_rtf_of_a_steady_clock(rtf):
    clock = RtfAnalyzer()
    publish(clock, rtf, 5 * S)
    r = clock.report(T0 + 5 * S)
    assert r.rtf == pytest.approx(rtf, rel=1e-3)
    assert r.rtf_total == pytest.approx(rtf, rel=1e-3)
    assert r.rtf_bin_min == pytest.approx(rtf, rel=1e-3)
    assert r.rtf_bin_max == pytest.approx(rtf, rel=1e-3)
    assert r.step_ns == MS
    assert r.max_wall_gap_ns == pytest.approx(MS / rtf)
    assert not r.paused and r.resets == 0


def test_a_300_ms_stall_shows_in_the_worst_window_and_the_gap():
    clock = RtfAnalyzer()
    publish(clock, 1.0, 5 * S, stall=(2 * S + 50 * MS, 300 * MS))
    r = clock.report(T0 + 5 * S)
    assert r.rtf == pytest.approx(4.7 / 5, rel=0.01)  # the mean barely moves ...
    assert r.rtf_bin_min < 0.05  # ... the worst 100 ms window does
    assert T0 + 2 * S + 100 * MS <= r.rtf_bin_min_at_ns <= T0 + 2 * S + 400 * MS
    assert r.max_wall_gap_ns == pytest.approx(301 * MS, abs=MS)
    assert r.max_wall_gap_at_ns == T0 + 2 * S + 350 * MS


def test_windows_follow_each_other_without_gaps():
    clock = RtfAnalyzer()
    wall, sim = publish(clock, 1.0, S)
    first = clock.report(wall)
    publish(clock, 0.5, S, wall0=wall, sim0=sim)
    second = clock.report(wall + S)
    assert first.rtf == pytest.approx(1.0, rel=1e-3)
    assert second.rtf == pytest.approx(0.5, rel=1e-2)
    assert second.messages == 500
    assert second.rtf_total == pytest.approx(1.5 / 2, rel=1e-2)


def test_backwards_jump_is_a_reset_that_restarts_the_figures():
    clock = RtfAnalyzer()
    wall, _ = publish(clock, 1.0, S, sim0=50 * S)
    assert clock.record(wall, 0) is True
    publish(clock, 0.5, S, wall0=wall + MS, sim0=MS)
    r = clock.report(wall + S)
    assert r.resets == 1 and r.resets_total == 1
    assert r.rtf == pytest.approx(0.5, rel=1e-2)
    assert r.rtf_total == pytest.approx(0.5, rel=1e-2)
    assert clock.report(wall + 2 * S).resets == 0


def test_paused_simulation_is_reported():
    clock = RtfAnalyzer()
    for i in range(100):
        clock.record(T0 + i * 10 * MS, 7 * S)
    r = clock.report(T0 + S)
    assert r.paused and r.rtf == 0.0


def test_clock_maps_wall_to_sim():
    clock = RtfAnalyzer()
    publish(clock, 0.5, S, sim0=10 * S)  # sample k: wall T0 + 2k ms, sim 10 s + k ms
    sim = clock.sim_at(np.array([T0 - 1, T0, T0 + 3 * MS, T0 + 4 * MS], np.int64))
    assert sim.tolist() == [NO_VALUE, 10 * S, 10 * S + MS, 10 * S + 2 * MS]


def test_memory_is_bounded_by_capacity():
    clock = RtfAnalyzer(capacity=1000)
    publish(clock, 1.0, 5 * S)
    r = clock.report(T0 + 5 * S)
    assert r.messages == 1000 and r.messages_total == 5000
    assert r.rtf == pytest.approx(1.0, rel=1e-3)


def test_a_bin_straddling_two_reports_is_evaluated_once():
    clock = RtfAnalyzer()
    # sim frozen over wall [1.0 s, 1.1 s); reports at 1.05 s and 2.05 s.
    wall = T0
    sim = 0
    mins = []
    while wall < T0 + 3 * S:
        frozen = T0 + S <= wall < T0 + S + 100 * MS
        clock.record(wall, sim)
        if not frozen:
            sim += MS
        wall += MS
        if wall - T0 in (1050 * MS, 2050 * MS):
            mins.append(clock.report(wall).rtf_bin_min)
    assert mins[0] == pytest.approx(1.0, abs=0.02)
    assert mins[1] < 0.05


T0 = 1_700_000_000_000_000_000


def _state(rtf: RtfAnalyzer) -> tuple:
    walls = np.array([T0 + k * 250_000 for k in range(-10, 5000, 7)], np.int64)
    return (rtf.messages_total, rtf.resets_total, rtf.last_wall_ns, rtf.last_sim_ns,
            rtf.sim_at(walls).tolist(), rtf.sim_in_step(walls).tolist(),
            repr(rtf.report(T0 + 10**9)))


@pytest.mark.parametrize('capacity', [7, 64, 1 << 12])
def test_record_many_equals_record_one_by_one(capacity: int) -> None:
    """Resets, wall times going back, a report between and a ring smaller than a batch."""
    rng = np.random.default_rng(3)
    wall = T0 + np.cumsum(rng.integers(-200_000, 2_000_000, 600))
    sim = np.cumsum(rng.integers(0, 2_000_000, 600))
    sim[[100, 101, 350]] -= 50_000_000  # sim time jumps back (resets)
    ref, many = RtfAnalyzer(capacity=capacity), RtfAnalyzer(capacity=capacity)
    ref_walls = []
    for k, (w, s) in enumerate(zip(wall.tolist(), sim.tolist(), strict=True)):
        if k == 90:
            ref.report(T0 + 10**8)
        if ref.record(w, s):
            ref_walls.append(ref.last_wall_ns)
    walls = []
    for lo, hi in ((0, 1), (1, 90), (90, 100), (100, 300), (300, 301), (301, 600)):
        if lo == 90:
            many.report(T0 + 10**8)
        walls += many.record_many(wall[lo:hi], sim[lo:hi]).tolist()
    assert len(ref_walls) == 2  # at 100 and at 350 (101 continues from 100)
    assert walls == ref_walls
    assert _state(many) == _state(ref)


def test_a_seek_forward_is_a_discontinuity_kept_out_of_rtf():
    # RTF 1.0, 1 ms steps; at wall 2 s the simulator seeks 1 h ahead, then runs on at 1.0.
    from ros2_deadline_monitor.analysis.rtf import JUMP_MIN_NS

    a = RtfAnalyzer(bin_ns=100 * MS)
    jumps = []
    for i in range(4001):
        wall = S + i * MS
        sim = i * MS + (3600 * S if i >= 2000 else 0)
        jumps.append(a.record(wall, sim))
    assert jumps.count(True) == 1 and jumps.index(True) == 2000
    r = a.report(S + 4 * S)
    assert (r.jumps_total, r.jumps, r.resets_total) == (1, 1, 0)
    # Window, bins and since-start all start at the jump: RTF 1.0, never 3,597.
    assert r.rtf == pytest.approx(1.0) and r.rtf_total == pytest.approx(1.0)
    assert r.rtf_bin_max == pytest.approx(1.0) and r.rtf_bin_min == pytest.approx(1.0)
    # No sim time is interpolated into the hour: a message inside the step that jumps keeps
    # the sim time of the sample before it; one inside an ordinary step is interpolated.
    inside = a.sim_in_step(np.array([S + 1999 * MS + MS // 2, S + 2000 * MS - 1,
                                     S + 1998 * MS + MS // 2], np.int64))
    assert inside.tolist() == [1999 * MS, 1999 * MS, 1998 * MS + MS // 2]
    assert inside.max() < 3600 * S - JUMP_MIN_NS


def test_a_jump_in_a_batch_is_found_as_by_single_records():
    walls = np.array([S + i * MS for i in range(100)], np.int64)
    sims = np.array([i * MS + (10 * S if i >= 60 else 0) for i in range(100)], np.int64)
    one, many = RtfAnalyzer(), RtfAnalyzer()
    marks = [one.record(int(w), int(s)) for w, s in zip(walls, sims, strict=True)]
    at = many.record_many(walls, sims)
    assert at.tolist() == [int(walls[60])] and marks.index(True) == 60
    assert (many.jumps_total, many.resets_total) == (one.jumps_total, one.resets_total) == (1, 0)


def test_a_fast_simulator_with_a_coarse_clock_is_no_jump():
    # RTF 50 with /clock at 10 Hz: 5 s of sim time per 100 ms sample, a plausible step.
    a = RtfAnalyzer()
    assert not any(a.record(S + i * 100 * MS, i * 5 * S) for i in range(50))
    assert a.jumps_total == 0
