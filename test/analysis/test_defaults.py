"""Right by default (issue 44): stamps, periods, gaps, a coarse /clock and small topics.

Synthetic streams shaped like real recordings, fed through the one session with no flag set:
a Nav2-like odometry (stamped exactly 36 ms apart, a 2 s gap), a Gazebo-like world (a 10 Hz
/clock, a 200 Hz IMU and a 5 Hz scan stamped in sim time), a sim-time controller under that
/clock, and topics of 1, 2 and 20 messages. Ground truth is computed from the same integer
ns the stream is built from.
"""

import numpy as np
import pytest

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.cycles import count_cycles, CycleAnalyzer, learn_period
from ros2_deadline_monitor.analysis.figures import record as run_record
from ros2_deadline_monitor.analysis.figures import RUN_TOPIC, unknowns
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.session import Session
from ros2_deadline_monitor.configuration.expectations import evaluate, expectations_from
from ros2_deadline_monitor.outputs.gate import summary_record

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S


def wall_session(**topics: TopicConfig) -> Session:
    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    s.configure(topics)
    return s


def odometry(gap_after: int = 1000, gap_ns: int = 2_160 * MS, n: int = 2638):
    """Stamps exactly 36 ms apart, one silence of ``gap_ns`` after ``gap_after`` cycles.

    Arrivals follow each stamp by 0.3-0.9 ms (a jittery transport), never in step with it.
    """
    stamps = OFF + np.arange(n, dtype=np.int64) * 36 * MS
    stamps[gap_after:] += gap_ns - 36 * MS
    rng = np.random.default_rng(44)
    arrivals = stamps + rng.integers(300_000, 900_000, n)
    return stamps, arrivals


def test_an_exact_fit_is_kept_not_snapped_to_a_rounder_grid():
    # 36.000 ms is 27.78 Hz: 28 Hz (35.714 ms) lies 0.8 % away and fits every interval worse.
    assert learn_period(np.full(2637, 36 * MS)) == 36 * MS
    assert learn_period(np.full(20, 36 * MS)) == 36 * MS
    # Stamps on whole sim milliseconds (9, 10 and 11 ms apart) still read 10 ms.
    quantized = np.diff((np.arange(101) * 10 * MS + np.tile([300_000, 900_000], 51)[:101])
                        // MS * MS)
    assert learn_period(quantized[:20]) == 10 * MS


def test_nav2_like_odometry_is_exact_and_its_gap_is_never_hidden():
    stamps, arrivals = odometry()
    s = wall_session(odom=TopicConfig(name='odom', topic='/odom'))
    for i, (stamp, arrival) in enumerate(zip(stamps.tolist(), arrivals.tolist(), strict=True)):
        s.message('odom', arrival, stamp, i + 1, 700)
        if i % 97 == 0:
            s.snapshot(arrival)
    snap = s.snapshot(int(arrivals[-1]) + MS, final=True)
    topic = snap.topics[0]
    r = topic.report
    assert (r.start_source, r.rule, r.period_ns, r.period_learned) == (
        'header', 'response', 36 * MS, True)
    assert 'span the arrivals' in r.timing_reason
    assert (r.deadline_misses_total, r.skipped_periods_total) == (0, 0)  # not 21 phantom ones
    assert r.outages_total == 1
    assert r.outage_max_ns == int(arrivals[1000] - arrivals[999])
    assert '1 outage(s), longest 2.2 s' in topic.reason
    # The max interval of the run is the gap, with its time; the rate counts it too.
    run = topic.run
    assert run.interval_wall.max_ns == 2_160 * MS
    assert run.interval_wall.count == len(stamps) - 1
    assert run.interval_wall.sum_ns == int(stamps[-1] - stamps[0])
    figures = run_record(RUN_TOPIC, snap, snap.topics[0])
    assert figures['max_interval_ms'] == 2_160
    verdict = evaluate(expectations_from({'topic.odom.expect.max_interval_ms': 300}, ['odom']),
                       snap)
    assert not verdict.ok
    (failed,) = verdict.failed
    assert failed.key == 'max_interval_ms' and failed.measured == pytest.approx(2160.0)
    record = summary_record(snap, verdict, node='m', stopped_by='test')['topics'][0]
    assert record['max_interval_wall_ms'] == pytest.approx(2160.0)
    assert (record['outages'], record['outage_max_ms']) == (1, pytest.approx(
        r.outage_max_ns / 1e6))
    assert record['timing_source'] == 'header'


def test_the_gap_is_in_the_window_figures_while_the_window_holds_it():
    stamps, arrivals = odometry(gap_after=500, n=600)
    s = wall_session(odom=TopicConfig(name='odom', topic='/odom'))
    for i, (stamp, arrival) in enumerate(zip(stamps.tolist(), arrivals.tolist(), strict=True)):
        s.message('odom', arrival, stamp, i + 1, 700)
    r = s.snapshot(int(arrivals[-1]) + MS).topics[0].report
    assert r.interval_wall.max_ns == 2_160 * MS
    assert r.interval_wall.max_at_ns == int(stamps[500])


def test_a_gap_longer_than_the_timeout_fails_the_gate_with_arrival_timing():
    arrivals = OFF + np.arange(300, dtype=np.int64) * 10 * MS
    arrivals[150:] += 3 * S
    s = wall_session(cmd=TopicConfig(name='cmd', topic='/cmd', period_ns=10 * MS))
    for i, arrival in enumerate(arrivals.tolist()):
        s.message('cmd', arrival, NO_VALUE, i + 1, 8)
    snap = s.snapshot(int(arrivals[-1]) + MS, final=True)
    r = snap.topics[0].report
    assert r.start_source == 'arrival' and r.timing_reason == 'the messages carry no stamp'
    assert r.outages_total == 1
    assert (r.deadline_misses_total, r.skipped_periods_total) == (0, 0)  # re-anchored
    verdict = evaluate(expectations_from({'topic.cmd.expect.max_interval_ms': 100}, ['cmd']),
                       snap)
    assert [o.key for o in verdict.failed] == ['max_interval_ms']
    assert verdict.failed[0].measured == pytest.approx(3010.0)


def test_a_restarted_producer_s_silence_still_fails_the_gate():
    # Two sequence runs (a restart) 3 s apart: no interval of either run spans the silence.
    arrivals = OFF + np.arange(200, dtype=np.int64) * 10 * MS
    arrivals[100:] += 3 * S
    seqs = [i + 1 if i < 100 else i - 99 for i in range(200)]
    s = wall_session(cmd=TopicConfig(name='cmd', topic='/cmd', period_ns=10 * MS))
    for arrival, seq in zip(arrivals.tolist(), seqs, strict=True):
        s.message('cmd', arrival, NO_VALUE, seq, 8)
    snap = s.snapshot(int(arrivals[-1]) + MS, final=True)
    figures = run_record(RUN_TOPIC, snap, snap.topics[0])
    assert figures['max_interval_ms'] == int(arrivals[100] - arrivals[99]) / MS


def test_the_stalling_stamped_publisher_is_exact_without_a_flag(timer_cycles):
    starts, ends = timer_cycles()
    truth = count_cycles(starts, ends + 150_000, 10 * MS)
    a = CycleAnalyzer(TopicConfig(name='cmd', topic='/cmd'))
    for i, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        a.record(end + 150_000, start, i + 1, 64)
        if i % 13 == 0:
            a.process(None)
    a.process(None)
    r = a.report(int(ends[-1]) + MS)
    assert (r.start_source, r.rule) == ('header', 'response')
    assert (r.deadline_misses_total, r.skipped_periods_total) == (
        truth.misses, truth.skipped) == (20, 10)


@pytest.mark.parametrize('stamps, why', [
    (lambda a: np.full(len(a), a[0]), 'do not increase'),
    (lambda a: OFF + (a - OFF) * 2, 'span 2.00 x the arrivals'),
    (lambda a: (a - OFF), 'stamps in sim time, the timer clock is wall'),
    (lambda a: a + 5 * S, 'ahead of the wall clock'),
])
def test_unusable_stamps_fall_back_to_arrivals_and_say_why(stamps, why):
    arrivals = OFF + np.arange(100, dtype=np.int64) * 10 * MS
    a = CycleAnalyzer(TopicConfig(name='t', topic='/t'))
    for i, (arrival, stamp) in enumerate(zip(arrivals.tolist(), stamps(arrivals).tolist(),
                                             strict=True)):
        a.record(arrival, stamp, i + 1, 8)
    a.process(None)
    r = a.report(int(arrivals[-1]))
    assert r.start_source == 'arrival' and r.rule == 'interval'
    assert why in r.timing_reason
    assert r.period_ns == 10 * MS and r.deadline_misses_total == 0
    assert r.foreign_stamps_total == 0


def test_configured_stamp_meanings_are_kept():
    for stamp, source in (('none', 'arrival'), ('start', 'header')):
        a = CycleAnalyzer(TopicConfig(name='t', topic='/t', stamp=stamp))
        for i in range(30):
            a.record(OFF + i * 10 * MS + MS, OFF + i * 10 * MS, i + 1, 8)
        a.process(None)
        r = a.report(OFF + S)
        assert (r.start_source, r.timing_reason) == (source, f'stamp: {stamp} (configured)')


def gazebo_world(seconds: int = 6):
    """Build a 10 Hz /clock at RTF 1 (sim 100 ms a tick), a 200 Hz IMU, a 5 Hz scan in sim time.

    Physics runs ahead in steps: each sensor message is published (and arrives) within the
    wall time of its sim stamp's /clock step, 0.2 ms after that sim time's wall time.
    """
    clock = [(OFF + k * 100 * MS + 50_000, k * 100 * MS) for k in range(seconds * 10 + 1)]
    imu = [(k * 5 * MS, OFF + k * 5 * MS + 200_000) for k in range(seconds * 200)]
    scan = [(k * 200 * MS, OFF + k * 200 * MS + 200_000) for k in range(seconds * 5)]
    return clock, imu, scan


def sim_session(**topics: TopicConfig) -> Session:
    s = Session(AnalysisConfig(), use_sim_time=True, start_wall_ns=OFF)
    s.configure(topics)
    return s


def feed_world(s: Session, streams: dict[str, list[tuple[int, int]]], clock) -> int:
    """Feed /clock samples and the topics' (stamp, arrival) events in wall order."""
    events = [(wall, 0, '', sim) for wall, sim in clock]
    for topic_id, stream in streams.items():
        events += [(arrival, 1, topic_id, stamp) for stamp, arrival in stream]
    seqs = dict.fromkeys(streams, 0)
    last = 0
    for wall, kind, topic_id, value in sorted(events):
        if kind == 0:
            s.clock_sample(wall, value)
        else:
            seqs[topic_id] += 1
            s.message(topic_id, wall, value, seqs[topic_id], 100)
        if wall - last >= 250 * MS:
            s.snapshot(wall)
            last = wall
    return events[-1][0] if events else OFF


def test_gazebo_like_sensors_stamped_in_sim_time_are_exact_under_a_10_hz_clock():
    clock, imu, scan = gazebo_world()
    s = sim_session(imu=TopicConfig(name='imu', topic='/imu', clock='sim'),
                    scan=TopicConfig(name='scan', topic='/scan', clock='sim'))
    end = feed_world(s, {'imu': imu, 'scan': scan}, clock)
    snap = s.snapshot(max(end, clock[-1][0]) + MS, final=True)
    imu_topic, scan_topic = snap.topics
    for topic, period in ((imu_topic, 5 * MS), (scan_topic, 200 * MS)):
        r = topic.report
        assert (r.start_source, r.period_ns) == ('header', period), r.timing_reason
        assert (r.skipped_periods_total, r.deadline_misses_total) == (0, 0)
        assert topic.run.interval_sim.max_ns == period  # not 301 ms, not 100 ms
        assert not r.counts_note and not r.clock_note
    assert snap.clock.report.step_ns == 100 * MS


def test_arrivals_under_a_coarser_clock_give_unknown_sim_figures_with_the_reason():
    clock, imu, _ = gazebo_world()
    s = sim_session(imu=TopicConfig(name='imu', topic='/imu', clock='sim', stamp='none'))
    end = feed_world(s, {'imu': imu}, clock)
    snap = s.snapshot(end + MS, final=True)
    (topic,) = snap.topics
    r = topic.report
    assert r.start_source == 'arrival'
    assert r.period_ns is None  # never learned as a 100 ms topic
    assert r.counts_note.startswith('/clock every 100 ms is coarser than this topic')
    assert r.interval_sim.count == 0 and topic.run.interval_sim.count == 0
    assert r.interval_wall.count > 0  # the wall figures stay
    assert '/clock every 100 ms is coarser than this topic' in topic.reason
    figures = run_record(RUN_TOPIC, snap, snap.topics[0])
    assert figures['deadline_misses'] is None and figures['skipped_periods'] is None
    assert figures['max_interval_ms'] is None
    assert 'coarser' in unknowns(RUN_TOPIC, snap, snap.topics[0])['deadline_misses']


def test_a_sim_time_timer_faster_than_clock_is_counted_and_explained():
    # A 100 Hz sim-time timer fires once per /clock message (10 Hz): stamps = /clock values.
    clock, _, _ = gazebo_world(seconds=10)
    cmd = [(sim, wall + 300_000) for wall, sim in clock[1:]]
    s = sim_session(cmd=TopicConfig(name='cmd', topic='/cmd', clock='sim', period_ns=10 * MS))
    end = feed_world(s, {'cmd': cmd}, clock)
    snap = s.snapshot(end + MS, final=True)
    (topic,) = snap.topics
    r = topic.report
    stamps = np.array([stamp for stamp, _ in cmd], np.int64)
    truth = count_cycles(stamps, stamps, 10 * MS)
    assert r.start_source == 'header'
    assert (r.deadline_misses_total, r.skipped_periods_total) == (truth.misses, truth.skipped)
    assert r.skipped_periods_total == 9 * (len(cmd) - 1)
    note = ('/clock every 100 ms: a 100 Hz sim-time timer runs at most 10 Hz (rcl fires it '
            'once per /clock message and skips the periods in between; measured 10 Hz)')
    assert note in topic.notes and note in topic.reason


def test_a_sensor_stamped_in_sim_time_under_a_10_hz_clock_keeps_its_wall_intervals():
    # A simulator plugin publishes a 200 Hz IMU in sim time under a 10 Hz /clock; it arrives
    # with a real transport's jitter (0.2-4.4 ms late). Wall intervals are the arrivals' own,
    # never the stamps mapped through /clock (a 0/100 ms sawtooth), and the plugin is no
    # rcl timer bound to /clock: no "runs at most 10 Hz" note next to its 200 Hz.
    clock, _, _ = gazebo_world()
    rng = np.random.default_rng(55)
    stamps = np.arange(6 * 200, dtype=np.int64) * 5 * MS
    arrivals = OFF + stamps + rng.integers(200_000, 4_400_000, len(stamps))
    imu = list(zip(stamps.tolist(), arrivals.tolist(), strict=True))
    s = sim_session(imu=TopicConfig(name='imu', topic='/imu', clock='sim'))
    end = feed_world(s, {'imu': imu}, clock)
    snap = s.snapshot(max(end, clock[-1][0]) + MS, final=True)
    (topic,) = snap.topics
    r, run = topic.report, topic.run
    assert (r.start_source, r.period_ns) == ('header', 5 * MS)
    assert (r.skipped_periods_total, r.deadline_misses_total) == (0, 0)
    assert run.interval_sim.max_ns == 5 * MS
    wall = np.diff(arrivals)
    assert run.interval_wall.count == len(wall)
    assert run.interval_wall.max_ns == int(wall.max()) <= 9_400_000
    assert run.interval_wall.sum_ns == int(arrivals[-1] - arrivals[0])
    assert not any('runs at most' in note for note in topic.notes), topic.notes


@pytest.mark.parametrize('n', [1, 2, 20])
def test_a_small_topic_shows_what_is_computable_and_unknown_counts(n):
    arrivals = OFF + np.arange(n, dtype=np.int64) * 10 * MS
    s = wall_session(t=TopicConfig(name='t', topic='/t'))
    for i, arrival in enumerate(arrivals.tolist()):
        s.message('t', arrival + MS, arrival, i + 1, 8)
    snap = s.snapshot(int(arrivals[-1]) + 2 * MS, final=True)
    topic = snap.topics[0]
    r, run = topic.report, topic.run
    assert r.messages_total == n and r.period_ns is None
    assert run.interval_wall.count == n - 1
    if n > 1:
        assert run.interval_wall.max_ns == 10 * MS
        assert run.interval_wall.rate_hz == pytest.approx(100.0)
    assert not r.counts_known
    assert r.counts_note == f'period not learned: {n} cycles, it needs 21; configure ' \
        'period_ms to count misses'
    figures = run_record(RUN_TOPIC, snap, topic)
    assert figures['deadline_misses'] is None and figures['skipped_periods'] is None
    assert unknowns(RUN_TOPIC, snap, topic)['deadline_misses'] == r.counts_note
    record = summary_record(snap, evaluate(expectations_from({}, ['t']), snap),
                            node='m', stopped_by='test')['topics'][0]
    assert record['deadline_misses'] is None and record['skipped_periods'] is None


def test_a_learned_period_that_keeps_disagreeing_is_learned_again():
    # 10 ms for 30 cycles, then the producer runs at 12.5 ms: learned again, and said so.
    starts = np.concatenate([np.arange(30) * 10 * MS, 290 * MS + np.arange(1, 1200) * 12_500_000])
    starts = OFF + starts.astype(np.int64)
    s = wall_session(t=TopicConfig(name='t', topic='/t'))
    for i, start in enumerate(starts.tolist()):
        s.message('t', start + MS, start, i + 1, 8)
        if i % 50 == 0:
            s.snapshot(start + MS)
    snap = s.snapshot(int(starts[-1]) + 2 * MS, final=True)
    topic = snap.topics[0]
    r = topic.report
    assert r.period_ns == 12_500_000 and r.period_learned
    assert r.period_relearned_total == 1
    assert r.period_note.startswith('period re-learned: 10.000 -> 12.500 ms')
    assert r.period_note in topic.reason
    # Cycles on the old period's grid were misses until then; none after (the last 10 s).
    assert r.deadline_misses_total > 0
    window = s.snapshot(int(starts[-1]) + 3 * MS).topics[0].report
    assert window.deadline_misses == 0 and window.skipped_periods == 0


def test_a_steady_learned_period_is_never_learned_again(timer_cycles):
    starts, ends = timer_cycles(duration_ns=20 * S)
    a = CycleAnalyzer(TopicConfig(name='cmd', topic='/cmd'))
    for i, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        a.record(end, start, i + 1, 64)
        if i % 9 == 0:
            a.process(None)
    a.process(None)
    r = a.report(int(ends[-1]) + MS)
    assert r.period_relearned_total == 0 and r.period_ns == 10 * MS


def test_stamps_that_cannot_be_cycle_starts_are_refused_at_once():
    # Unset headers (zero stamps): no waiting for 21 messages, arrivals count from the start.
    a = CycleAnalyzer(TopicConfig(name='t', topic='/t', period_ns=100 * MS))
    for i, arrival in enumerate([0, 50, 650, 670, 690, 2190]):
        a.record(OFF + arrival * MS, 0, i + 1, 8)
        a.process(None)
    r = a.report(OFF + 3 * S)
    assert (r.start_source, r.timing_reason) == ('arrival',
                                                 'every stamp is zero (an unset header)')
    assert r.skipped_periods_total > 0 and r.deadline_misses_total > 0


def test_with_a_known_period_a_few_messages_decide():
    a = CycleAnalyzer(TopicConfig(name='t', topic='/t', period_ns=10 * MS))
    for i in range(7):
        a.record(OFF + i * 10 * MS + MS, OFF + i * 10 * MS, i + 1, 8)
    a.process(None)
    r = a.report(OFF + S)
    assert r.start_source == 'header' and r.messages_total == 7
    assert r.interval_wall.count == 6
