"""One producer per cycle stream (issue 12): several producers, foreign stamps, outages.

Event streams fed through the session as the adapters do. The user's case: a 100 Hz sim-time
producer at RTF 0.5 and, started 3 s later for 4 s, a second 100 Hz producer on the wall
clock on the same topic. Before, the monitor reported 29,456,163,785,073 skipped periods.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.cycles import CycleAnalyzer
from ros2_deadline_monitor.analysis.message_info import InfoFallback
from ros2_deadline_monitor.analysis.producer_streams import ProducerStreams
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.session import Session, TopicState

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S
"""Wall time (system clock) when sim time was 0."""
PERIOD = 10 * MS


def session(use_sim_time: bool = True) -> Session:
    return Session(AnalysisConfig(), use_sim_time=use_sim_time, start_wall_ns=OFF)


def sim_producer(seconds: float, rtf: float = 0.5, first_seq: int = 1):
    """Return a 100 Hz sim-time timer next to a /clock of 1 ms steps paced to ``rtf``.

    Returns the /clock samples and per cycle (arrival wall, stamp sim, seq).
    """
    step_wall = round(MS / rtf)
    steps = int(seconds * S / step_wall)
    clock = [(OFF + k * step_wall, k * MS) for k in range(steps)]
    events = []
    for i, k in enumerate(range(0, steps, PERIOD // MS)):
        events.append((OFF + k * step_wall + 50_000, k * MS, first_seq + i))
    return clock, events


def wall_producer(start_wall: int, seconds: float, first_seq: int = 1):
    """Return a 100 Hz wall-clock timer's events: stamps are Unix time."""
    n = int(seconds * S / PERIOD)
    return [(start_wall + i * PERIOD + 30_000, start_wall + i * PERIOD, first_seq + i)
            for i in range(n)]


def run(s: Session, topic_id: str, clock, events, *, every_ns: int = 100 * MS,
        status=None):
    """Feed /clock and messages in arrival order, processing every ``every_ns`` of wall."""
    merged = sorted([(w, 0, sim, 0) for w, sim in clock]
                    + [(w, 1, stamp, seq) for w, stamp, seq in events])
    next_process = merged[0][0] + every_ns
    for wall, kind, value, seq in merged:
        if wall >= next_process:
            if status is not None:
                status(wall)
            s.process(wall)
            next_process = wall + every_ns
        if kind == 0:
            s.clock_sample(wall, value)
        else:
            s.message(topic_id, wall, value, seq, 16)
    return merged[-1][0]


def sim_topic(**changes) -> TopicConfig:
    return TopicConfig(name='cmd', topic='/cmd', period_ns=PERIOD, stamp='start', clock='sim',
                       **changes)


def test_a_wall_clock_producer_next_to_a_sim_producer_is_no_absurd_figure():
    clock, sim_events = sim_producer(10.0)
    b_start = OFF + 3 * S
    b_events = wall_producer(b_start, 4.0)
    s = session()
    s.configure({'cmd': sim_topic()})
    publishers = {True: ('/controller', '/leftover_controller'), False: ('/controller',)}

    def status(wall: int) -> None:
        both = b_start <= wall <= b_start + 4 * S
        s.topic_status('cmd', TopicState.RECEIVING, publishers=publishers[both],
                       writers=2 if both else 1)

    end = run(s, 'cmd', clock, sim_events + b_events, status=status)
    status(b_start + S)  # both publishers in the graph, as during the overlap
    snap = s.snapshot(end + MS, final=True).topics[0]
    r = snap.report
    assert r.messages_total == len(sim_events) + len(b_events)
    assert r.foreign_stamps_total == len(b_events) == 400
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0
    assert r.interval_sim.max_ns == PERIOD and r.interval_sim.min_ns == PERIOD
    assert r.interval_wall.max_ns < 25 * MS  # 20 ms at RTF 0.5, never Unix time
    assert r.messages_lost_total == 0
    assert not r.loss_known and r.loss_note == '2 writers on the topic'
    assert r.producer_runs_total == 2
    assert snap.level is Level.WARN
    assert '400 start stamps on the wall (Unix) clock' in snap.reason
    assert '/controller, /leftover_controller' in snap.reason
    # Once the second producer has gone (and its runs, which overtook the first one's
    # numbers, left the window), loss is known again; nothing else changed.
    s.topic_status('cmd', TopicState.RECEIVING, publishers=('/controller',), writers=1)
    later = s.snapshot(end + AnalysisConfig().window_ns + MS).topics[0].report
    assert later.loss_known and later.messages_lost_total == 0
    assert later.skipped_periods_total == 0 and later.foreign_stamps_total == 400


def test_two_sim_producers_are_each_analyzed_on_their_own_grid():
    clock, a = sim_producer(6.0)
    # A second sim-time producer 3 ms out of phase, started 2 s of sim time later.
    b = [(wall + 6 * MS, stamp + 3 * MS, i + 1)
         for i, (wall, stamp, _) in enumerate(e for e in a if e[1] >= 2 * S)]
    s = session()
    s.configure({'cmd': sim_topic()})
    end = run(s, 'cmd', clock, a + b)
    r = s.snapshot(end + MS, final=True).topics[0].report
    assert r.foreign_stamps_total == 0
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0
    assert r.interval_sim.min_ns == r.interval_sim.max_ns == PERIOD  # never 3 ms or 7 ms
    assert r.lateness_max_ns == 0
    assert r.producer_runs_total == 2 and r.producers == 2
    assert r.messages_lost_total == 0


def test_losses_are_counted_within_each_producer_run():
    a = wall_producer(OFF, 3.0)
    b = wall_producer(OFF + S + 5 * MS, 2.0)  # a second later: numbered 100 apart
    events = [e for e in a if e[2] not in {151, 152}] + [e for e in b if e[2] != 121]
    s = session(use_sim_time=False)
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', period_ns=PERIOD, stamp='start')})
    end = run(s, 'cmd', [], events)
    r = s.snapshot(end + MS, final=True).topics[0].report
    assert r.messages_lost_total == 3 and r.unattributed_total == 0
    # Lost is not skipped: its producer ran the lost cycles, and the intervals across them
    # are none of its own (left out, counted).
    assert r.skipped_periods_total == 0
    assert r.interval_wall.min_ns == PERIOD and r.interval_wall.max_ns == PERIOD
    assert r.intervals_across_loss_total == 2
    assert r.producer_runs_total == 2


def test_producers_numbered_alike_are_said_to_need_one_producer():
    # Started together: their numbers run alike, and a loss hides which one went on.
    a = wall_producer(OFF, 2.0)
    b = wall_producer(OFF + 5 * MS, 2.0)
    events = [e for e in a if e[2] not in {51, 52}] + [e for e in b if e[2] != 121]
    s = session(use_sim_time=False)
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', period_ns=PERIOD, stamp='start')})
    s.topic_status('cmd', TopicState.RECEIVING, publishers=('/a', '/b'), writers=2)
    end = run(s, 'cmd', [], events)
    snap = s.snapshot(end + MS, final=True).topics[0]
    r = snap.report
    assert r.messages_total == len(events) and r.unattributed_total > 0
    assert r.interval_wall.count == 0 or r.interval_wall.min_ns >= PERIOD
    assert not r.loss_known
    assert ('per-cycle figures need one producer: 2 publishers (/a, /b) and their sequence '
            'numbers run alike to tell them apart') in snap.reason


def test_several_publishers_without_sequence_numbers_give_no_cycle_figures():
    a = wall_producer(OFF, 2.0)
    b = wall_producer(OFF + 5 * MS, 2.0)
    s = session(use_sim_time=False)
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', period_ns=PERIOD, stamp='start')})
    s.topic_status('cmd', TopicState.RECEIVING, publishers=('/a', '/b'), writers=2)
    events = sorted(a + b)
    end = run(s, 'cmd', [], [(w, st, NO_VALUE) for w, st, _ in events])
    snap = s.snapshot(end + MS, final=True).topics[0]
    r = snap.report
    assert r.messages_total == 400 and r.unattributed_total == 400
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0
    assert not r.counts_known and 'per-cycle figures need one producer' in r.counts_note
    # The topic as a whole keeps its intervals, by arrival (5 ms apart: never a period).
    arrivals = np.array([w for w, _, _ in events], np.int64)
    assert snap.run.interval_wall.count == 399
    assert snap.run.interval_wall.max_ns == int(np.diff(arrivals).max())
    assert not r.loss_known
    assert snap.level is Level.WARN
    assert ('per-cycle figures need one producer: 2 publishers (/a, /b) and no sequence '
            'numbers to tell them apart') in snap.reason


def test_a_restart_is_an_outage_not_a_thousand_skipped_periods():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=PERIOD, stamp='start',
                                  clock='wall'))
    first = wall_producer(OFF, 5.0)
    second = wall_producer(OFF + 5 * S + 9_700 * MS, 5.0)  # sequence numbers start again
    for wall, stamp, seq in first + second:
        a.record(wall, stamp, seq, 8)
    a.process(None)
    r = a.report(second[-1][0] + MS)
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0
    assert r.outages_total == 1
    assert r.outage_max_ns == r.outage_total_ns == pytest.approx(9_710 * MS, abs=MS)
    assert r.producer_runs_total == 2
    assert r.messages_lost_total == 0 and r.loss_known
    assert r.interval_wall.max_ns == PERIOD  # the silence is the outage, not an interval


def test_a_restart_under_sim_time_through_the_session():
    clock, events = sim_producer(12.0)
    # The producer stops at 2.5 s sim and restarts (sequence numbers from 1) at 4.0 s sim.
    kept = [e for e in events if e[1] < 2_500 * MS]
    kept += [(w, st, i + 1) for i, (w, st, _) in enumerate(e for e in events
                                                          if e[1] >= 4 * S)]
    s = session()
    s.configure({'cmd': sim_topic()})
    end = run(s, 'cmd', clock, kept)
    snap = s.snapshot(end + MS, final=True).topics[0]
    r = snap.report
    assert r.skipped_periods_total == 0
    assert r.outages_total == 1  # 1.5 s of sim time > the 1 s timeout
    assert r.outage_max_ns == pytest.approx(3_020 * MS, abs=2 * MS)  # wall, at RTF 0.5
    assert r.messages_lost_total == 0 and r.loss_known
    assert '1 outage(s), longest 3.0 s' in snap.reason


def test_a_silence_of_the_same_writer_re_anchors_and_keeps_its_losses():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=PERIOD, stamp='start'))
    first = wall_producer(OFF, 2.0)
    # 3 s without a message reaching the monitor; the writer's numbers went on (lost): it
    # ran its 300 cycles, so that is loss, no silence of the producer (issue 47), and the
    # grid goes on across it (300 slots, 300 cycles lost, no skipped period).
    second = wall_producer(OFF + 5 * S, 2.0, first_seq=first[-1][2] + 300 + 1)
    for wall, stamp, seq in first + second:
        a.record(wall, stamp, seq, 8)
    a.process(None)
    r = a.report(second[-1][0] + MS)
    assert r.outages_total == 0 and r.skipped_periods_total == 0
    assert r.intervals_across_loss_total == 1
    assert r.messages_lost_total == 300  # measured before, still measured
    assert r.producer_runs_total == 1


def test_a_short_restart_starts_a_new_grid_without_an_outage():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=PERIOD, stamp='start'))
    first = wall_producer(OFF, 2.0)
    second = wall_producer(OFF + 2 * S + 303 * MS, 2.0)  # 0.3 s later, another phase
    for wall, stamp, seq in first + second:
        a.record(wall, stamp, seq, 8)
    a.process(None)
    r = a.report(second[-1][0] + MS)
    assert r.outages_total == 0 and r.producer_runs_total == 2
    assert r.skipped_periods_total == 0 and r.lateness_max_ns == 0
    assert r.messages_lost_total == 0


def test_sim_stamps_on_a_wall_clock_topic_and_future_stamps_are_foreign():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=PERIOD, stamp='start'))
    events = wall_producer(OFF, 1.0)
    events[10] = (events[10][0], 5 * S, events[10][2])  # sim-scale stamp
    events[20] = (events[20][0], events[20][0] + 2 * S, events[20][2])  # 2 s in the future
    events[30] = (events[30][0], events[30][0] + 500 * MS, events[30][2])  # within tolerance
    for wall, stamp, seq in events:
        a.record(wall, stamp, seq, 8)
    a.process(None)
    r = a.report(events[-1][0] + MS)
    assert r.foreign_stamps_total == 2
    # After the stamp 0.5 s ahead, the next one goes back: counted, not placed.
    assert r.stamps_back_total == 1
    assert r.messages_total == 100 and r.messages == 97
    assert r.interval_wall.max_ns < 2 * S


def test_age_is_on_the_clock_the_stamp_is_on():
    # Header stamps on the wall clock (stamp: none) on a sim-clock topic at RTF 0.5.
    clock, events = sim_producer(3.0)
    wall_stamped = [(w, w - 2 * MS, seq) for w, _, seq in events]
    s = session()
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', period_ns=PERIOD, clock='sim')})
    end = run(s, 'cmd', clock, wall_stamped)
    r = s.snapshot(end + MS, final=True).topics[0].report
    assert r.age_max_ns == r.age_mean_ns == 2 * MS
    # Sim stamps: aged on sim time.
    s = session()
    s.configure({'cmd': sim_topic()})
    end = run(s, 'cmd', clock, events)
    r = s.snapshot(end + MS, final=True).topics[0].report
    assert 0 <= r.age_max_ns < MS


def test_fallbacks_of_a_middleware_that_fills_less_reach_the_snapshot():
    # A stream whose source timestamps are 0 from message 51 and sequence numbers from 101.
    fallback = InfoFallback('source_timestamp')
    s = session(use_sim_time=False)
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', period_ns=PERIOD)})
    for i in range(200):
        received = OFF + i * PERIOD + 40_000
        source = 0 if i >= 50 else received - 10_000
        seq = fallback.sequence(None if i >= 100 else i + 1) if fallback.arrival_ns(
            source, received, received + 5_000) else None
        s.message('cmd', received if i >= 50 else received - 10_000, NO_VALUE,
                  NO_VALUE if seq is None else seq, 8)
    s.topic_status('cmd', TopicState.RECEIVING, fallback=fallback.status())
    snap = s.snapshot(OFF + 2 * S + MS, final=True).topics[0]
    r = snap.report
    assert r.interval_wall.min_ns > 0  # never a 0 interval
    assert not r.loss_known
    assert any('received timestamps since message 51' in note for note in snap.notes)
    assert any('loss unknown since message 101' in note for note in snap.notes)
    assert 'loss unknown since message 101' in snap.reason


def test_sequence_numbers_missing_from_the_start_make_loss_unknown():
    fallback = InfoFallback('source_timestamp')
    s = session(use_sim_time=False)
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', period_ns=PERIOD)})
    for i in range(100):
        arrival = fallback.arrival_ns(OFF + i * PERIOD, OFF + i * PERIOD + 1, 0)
        seq = fallback.sequence(0)
        s.message('cmd', arrival, NO_VALUE, NO_VALUE if seq is None else seq, 8)
    s.topic_status('cmd', TopicState.RECEIVING, fallback=fallback.status())
    r = s.snapshot(OFF + S + MS, final=True).topics[0].report
    assert not r.loss_known and r.loss_note == 'the middleware gives no sequence numbers'
    assert r.interval_wall.count == 99


def test_one_producer_counting_up_takes_the_vectorized_path():
    counts = SimpleNamespace(lost=0, lost_by_monitor=0, unmonitored_messages=0, runs=0)
    producers = ProducerStreams(counts)
    arrivals = OFF + np.arange(10, dtype=np.int64) * PERIOD
    streams, lost, _, guessed = producers.split(arrivals, np.arange(1, 11, dtype=np.int64),
                                                None, 0, S)
    assert len(set(streams.tolist())) == 1 and not lost.any() and guessed is None
    streams, lost, _, guessed = producers.split(arrivals + S, np.arange(13, 23, dtype=np.int64),
                                                None, 0, S)
    assert len(set(streams.tolist())) == 1 and lost.tolist() == [2] + [0] * 9
    assert guessed is None  # the loop's result always has the array
    assert counts.lost == 2 and counts.runs == 1


@pytest.mark.parametrize('seed', range(5))
def test_jittery_producers_numbered_alike_never_share_a_grid(seed):
    # Two producers started together (alike numbers), 3 ms apart, with 2 ms of jitter and
    # losses: whatever is guessed, no interval joins two producers' cycles.
    rng = np.random.default_rng(seed)
    events, own = [], []
    for phase in (0, 3 * MS):
        starts = OFF + phase + np.arange(500) * PERIOD + rng.integers(0, 2 * MS, 500)
        keep = rng.random(500) > 0.02
        own.append(np.diff(starts[keep]))
        events += [(int(t) + 30_000, int(t), i + 1) for i, t in enumerate(starts) if keep[i]]
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=PERIOD, stamp='start'))
    for wall, stamp, seq in sorted(events):
        a.record(wall, stamp, seq, 8)
    a.process(None)
    r = a.report(max(e[0] for e in events) + MS)
    own_all = np.concatenate(own)
    assert r.messages_total == len(events)
    if r.interval_wall.count:
        assert own_all.min() <= r.interval_wall.min_ns <= r.interval_wall.max_ns <= own_all.max()
    assert not r.loss_known
