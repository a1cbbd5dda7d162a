"""Sim time that jumps, mixes or falls silent never yields absurd figures (#47).

The session is fed what the live node would feed it: /clock samples and message events in
arrival order, a snapshot a second; the producers' truth is known by construction.
"""

import math

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.session import Session
from ros2_deadline_monitor.configuration.expectations import evaluate, expectations_from

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S
HOUR = 3600 * S


def sim_session():
    s = Session(AnalysisConfig(), use_sim_time=True, start_wall_ns=OFF)
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', period_ns=10 * MS,
                                    stamp='start', clock='sim')})
    return s


def run(s, duration_ns, sim_of, *, clock_on=lambda wall: True, publish=True, seq0=0):
    """Feed 1 ms /clock samples and a 100 Hz sim-stamped producer; a snapshot a second.

    ``sim_of(wall)`` is the simulator's sim time. The producer stamps its cycle start with
    the sim time and publishes 200 µs of wall time later. Returns the last sequence number.
    """
    seq = seq0
    snaps = []
    for k in range(duration_ns // MS):
        wall = OFF + k * MS
        if clock_on(wall):
            s.clock_sample(wall, sim_of(wall))
        if publish and k % 10 == 0:
            seq += 1
            s.message('cmd', wall + 200_000, sim_of(wall), seq, 16)
        if k % 1000 == 999:
            snaps.append(s.snapshot(wall + MS))
    return seq, snaps


def test_a_seek_one_hour_ahead_is_a_jump_not_a_miss():
    s = sim_session()
    _, snaps = run(s, 4 * S, lambda wall: wall - OFF + (HOUR if wall >= OFF + 2 * S else 0))
    final = s.snapshot(OFF + 4 * S + MS, final=True)
    clock = final.clock.report
    assert sum(snap.clock.report.jumps for snap in snaps) == 1
    assert clock.jumps_total == 1 and clock.resets_total == 0
    for snap in snaps:  # every window RTF 1.0 (never 3,597), every bin too
        r = snap.clock.report
        assert math.isnan(r.rtf) or abs(r.rtf - 1.0) < 0.01
        assert math.isnan(r.rtf_bin_max) or r.rtf_bin_max < 1.01
        assert math.isnan(r.rtf_total) or abs(r.rtf_total - 1.0) < 0.01
    assert 'jumped forward 1 time(s)' in snaps[2].clock.reason
    topic = final.topics[0].report
    assert topic.messages_total == 400 and topic.resets_total == 1
    assert topic.deadline_misses_total == 0 and topic.skipped_periods_total == 0
    assert topic.response_max_ns < 10 * MS
    assert s.snapshot(OFF + 4 * S + MS, final=True).topics[0].run.interval_sim.max_ns == 10 * MS


def test_two_clock_publishers_make_sim_time_unknown_not_mixed():
    # Two simulators, RTF 1.0 and 0.5, publish /clock in turn; the producer follows one.
    s = sim_session()
    s.clock_publishers(2)
    run(s, 3 * S, lambda wall: (wall - OFF) // (2 if (wall // MS) % 2 else 1))
    snap = s.snapshot(OFF + 3 * S + MS, final=True)
    clock = snap.clock.report
    assert math.isnan(clock.rtf) and math.isnan(clock.rtf_total)
    assert math.isnan(clock.rtf_bin_min) and math.isnan(clock.rtf_bin_max)
    assert clock.sim_time_ns is None
    assert 'RTF and sim-time figures unknown' in snap.clock.reason
    topic = snap.topics[0]
    assert topic.report.messages_total == 300 and topic.report.sim_unknown_total == 300
    assert topic.report.skipped_periods_total == 0 and topic.report.deadline_misses_total == 0
    assert 'sim time unknown while several publishers were on /clock' in topic.reason


def test_rtf_starts_afresh_once_one_clock_publisher_is_left():
    s = sim_session()
    s.clock_publishers(2)
    for k in range(1000):
        s.clock_sample(OFF + k * MS, k * MS * (3 if k % 2 else 1))
    s.snapshot(OFF + S)
    s.clock_publishers(1)
    for k in range(1000, 3000):
        s.clock_sample(OFF + k * MS, 5 * S + k * MS)
    snap = s.snapshot(OFF + 3 * S, final=True)
    r = snap.clock.report
    assert abs(r.rtf - 1.0) < 0.01
    # Since start, sim time was two publishers' in turn: no RTF of the run, and the gate
    # says why rather than judging the RTF of the last writer alone.
    assert math.isnan(r.rtf_total)
    assert r.rtf_total_note == '2 publishers on /clock during the run: their sim times mixed'
    verdict = evaluate(expectations_from({'clock.expect.min_rtf': 0.5}, ['cmd']), snap)
    (outcome,) = verdict.failed
    assert outcome.measured is None and outcome.key == 'min_rtf'
    assert outcome.reason == f'unknown: {r.rtf_total_note}'


def test_a_clock_going_back_and_forth_leaves_the_run_without_rtf():
    # Two /clock writers recorded in one bag (no graph to count them): every other sample
    # goes back. The last reset's RTF is no figure of the run; min_rtf fails as unknown.
    s = sim_session()
    for k in range(3000):
        s.clock_sample(OFF + k * MS, k * MS if k % 2 else 100 * S + k * MS)
        if k % 1000 == 999:
            s.snapshot(OFF + (k + 1) * MS)
    for k in range(3000, 3100):  # one writer left: a quiet window ends the run
        s.clock_sample(OFF + k * MS, 100 * S + k * MS)
    snap = s.snapshot(OFF + 3100 * MS, final=True)
    r = snap.clock.report
    assert not r.non_monotonic and r.resets == 0 and abs(r.rtf - 1.0) < 0.02
    assert math.isnan(r.rtf_total)
    assert r.rtf_total_note.startswith('sim time went back ')
    verdict = evaluate(expectations_from({'clock.expect.min_rtf': 0.5}, ['cmd']), snap)
    assert [o.reason for o in verdict.failed] == [f'unknown: {r.rtf_total_note}']


def test_clock_silent_while_the_producer_goes_on_is_no_outage_nor_foreign():
    # /clock falls silent from 2 s to 11 s; the producer (its own sim source) goes on, and
    # /clock comes back at the producer's sim time: a producer that never stopped.
    s = sim_session()
    seq, snaps = run(s, 13 * S, lambda wall: wall - OFF,
                     clock_on=lambda wall: not OFF + 2 * S <= wall < OFF + 11 * S)
    final = s.snapshot(OFF + 13 * S + MS, final=True).topics[0]
    r = final.report
    assert r.messages_total == seq == 1300
    assert r.foreign_stamps_total == 0 and r.outages_total == 0
    assert r.skipped_periods_total == 0
    assert 'wall (Unix)' not in final.reason
    # While /clock was silent the clock said so (and no topic was blamed for it).
    assert any('/clock silent' in snap.clock.reason for snap in snaps)


def test_a_clock_jittering_back_and_forth_has_no_rtf():
    # One publisher, RTF 1.0, each sample 0.6 ms early or late in turn: 500 "resets" a
    # second. RTF would read from spans between them (1.37-3.29); it is unknown instead.
    s = Session(AnalysisConfig(), use_sim_time=True, start_wall_ns=OFF)
    for k in range(1000):
        s.clock_sample(OFF + k * MS, k * MS + (600_000 if k % 2 else -600_000) + S)
    snap = s.snapshot(OFF + S)
    r = snap.clock.report
    assert r.non_monotonic and r.resets == 499
    assert math.isnan(r.rtf) and math.isnan(r.rtf_total)
    assert snap.clock.level.name == 'ERROR' and 'not monotonic' in snap.clock.reason


def test_clock_silent_under_an_arrival_timed_producer_is_no_outage_nor_skips():
    # The same silence, a producer without stamps (its cycle start is its arrival, on sim
    # time): inside the silence its sim times are unknown, not the last sample's.
    s = Session(AnalysisConfig(), use_sim_time=True, start_wall_ns=OFF)
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', period_ns=10 * MS,
                                    stamp='none', clock='sim')})
    seq, _ = run(s, 13 * S, lambda wall: wall - OFF,
                 clock_on=lambda wall: not OFF + 2 * S <= wall < OFF + 11 * S)
    r = s.snapshot(OFF + 13 * S + MS, final=True).topics[0].report
    assert r.messages_total == seq == 1300
    assert r.outages_total == 0 and r.skipped_periods_total == 0
    assert s.snapshot(OFF + 13 * S + 2 * MS, final=True).topics[0].run.cycles < 1300


def test_the_same_silence_offline_gives_the_same_counts():
    # A bag replay feeds every /clock sample before the events it places (no silence seen
    # while processing): the events inside the 9 s gap are unknown the same way.
    s = Session(AnalysisConfig(), use_sim_time=True, start_wall_ns=OFF)
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', period_ns=10 * MS,
                                    stamp='none', clock='sim')})
    for k in range(13_000):
        wall = OFF + k * MS
        if not OFF + 2 * S <= wall < OFF + 11 * S:
            s.clock_sample(wall, wall - OFF)
        if k % 10 == 0:
            s.message('cmd', wall + 200_000, NO_VALUE, k // 10 + 1, 16)
    r = s.snapshot(OFF + 13 * S + MS, final=True).topics[0].report
    assert r.messages_total == 1300
    assert r.outages_total == 0 and r.skipped_periods_total == 0
