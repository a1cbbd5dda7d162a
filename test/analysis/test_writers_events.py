"""Several writers on one topic and event topics (issue 55): what cannot be known says so.

An event topic opening with a long gap keeps it in its max interval and in the gate,
whatever learning leaves out of the per-cycle figures. Several writers without sequence
numbers (a bag) keep the topic's rate, intervals and gaps; their misses, skipped periods and
loss are unknown with the reason. Producers told apart by their sequence numbers at 10, 50
and 100 Hz are never timed on one learned period, and a loss that was a guess is never a
figure later. Ground truth is computed from the integer ns each stream is built from.
"""

import numpy as np
import pytest

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.figures import record as run_record
from ros2_deadline_monitor.analysis.figures import RUN_TOPIC
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.configuration.expectations import evaluate, expectations_from

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S


def wall_session(**topics: TopicConfig) -> Session:
    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    s.configure(topics)
    return s


def pose_updates(first_gap_ns: int = 4_000 * MS, n: int = 60, seed: int = 55) -> np.ndarray:
    """Arrivals of a pose published on updates (about 1.5 Hz) after a long gap.

    Updates come in runs (about 100 ms apart while the robot moves) between pauses of 1 to
    2 s: no timer's rhythm (a period learned from them would be a fraction of none).
    """
    rng = np.random.default_rng(seed)
    short = rng.integers(80 * MS, 120 * MS, n - 1)
    pause = rng.integers(1_000 * MS, 2_000 * MS, n - 1)
    gaps = np.where(rng.random(n - 1) < 0.6, short, pause)
    gaps[0] = first_gap_ns
    return OFF + np.concatenate(([0], np.cumsum(gaps))).astype(np.int64)


def feed(s: Session, topic_id: str, arrivals: np.ndarray, seqs=None, every: int = 3) -> None:
    for i, arrival in enumerate(arrivals.tolist()):
        s.message(topic_id, arrival, NO_VALUE, NO_VALUE if seqs is None else int(seqs[i]), 90)
        if i % every == 0:
            s.snapshot(arrival)


@pytest.mark.parametrize('seed', [55, 56, 57])
def test_an_event_topic_opening_with_a_long_gap_keeps_it_in_the_max_interval_and_gate(seed):
    arrivals = pose_updates(seed=seed)
    assert 1.0 < (len(arrivals) - 1) / ((arrivals[-1] - arrivals[0]) / S) < 2.0
    truth_ms = float(np.diff(arrivals).max()) / MS
    assert truth_ms == 4_000
    s = wall_session(pose=TopicConfig(name='pose', topic='/amcl_pose'))
    feed(s, 'pose', arrivals, seqs=np.arange(1, len(arrivals) + 1))
    snap = s.snapshot(int(arrivals[-1]) + MS, final=True)
    topic = snap.topics[0]
    # Every interval is in the run, whatever learning did with it.
    assert topic.run.interval_wall.count == len(arrivals) - 1
    assert topic.run.interval_wall.max_ns == 4_000 * MS
    figures = run_record(RUN_TOPIC, snap, topic)
    assert figures['max_interval_ms'] == truth_ms
    verdict = evaluate(expectations_from({'topic.pose.expect.max_interval_ms': 3000},
                                         ['pose']), snap)
    assert [o.key for o in verdict.failed] == ['max_interval_ms']
    assert verdict.failed[0].measured == pytest.approx(truth_ms)
    # What learning left out of the per-cycle figures is counted, and said.
    r = topic.report
    assert r.messages_total == len(arrivals)
    assert r.unlearned_total > 0
    assert any('learning windows without a timer rhythm' in note for note in topic.notes)
    assert r.kind == 'event' and 'an event topic' in r.learn_note
    assert figures['deadline_misses'] is None and figures['skipped_periods'] is None
    assert r.deadline_misses_total == r.skipped_periods_total == 0


def test_an_event_topic_s_opening_gap_is_in_the_first_window_with_figures():
    arrivals = pose_updates(n=30)
    s = wall_session(pose=TopicConfig(name='pose', topic='/amcl_pose'))
    first = None
    for i, arrival in enumerate(arrivals.tolist()):
        s.message('pose', arrival, NO_VALUE, i + 1, 90)
        r = s.snapshot(arrival).topics[0].report
        if r.interval_wall.count:
            first = r
            break
    assert first is not None, 'no window with intervals'
    # The cycles held to learn the period reach the window together: the gap among them.
    assert first.interval_wall.max_ns == 4_000 * MS
    assert first.interval_wall.count == i


def three_writers(seconds: float = 3.0, seq: bool = True):
    """10, 50 and 100 Hz producers started together: arrivals, sequence numbers, writer."""
    events = []
    for writer, period_ms in enumerate((100, 20, 10)):
        n = int(seconds * 1000 / period_ms)
        for i in range(n):
            events.append((OFF + i * period_ms * MS + writer * 1_300_000 + 40_000, i + 1,
                           writer))
    events.sort()
    arrivals = np.array([e[0] for e in events], np.int64)
    seqs = np.array([e[1] for e in events], np.int64) if seq else None
    return arrivals, seqs, [e[2] for e in events]


def test_several_writers_without_sequence_numbers_keep_the_topic_s_intervals():
    arrivals, _, _ = three_writers()
    s = wall_session(tf=TopicConfig(name='tf', topic='/tf'))
    s.topic_status('tf', TopicState.RECEIVING, writers=3)
    feed(s, 'tf', arrivals, every=40)
    snap = s.snapshot(int(arrivals[-1]) + MS, final=True)
    topic = snap.topics[0]
    r = topic.report
    gaps = np.diff(arrivals)
    assert r.messages_total == len(arrivals) == r.unattributed_total
    # The topic as a whole: every interval between its messages, its longest gap.
    assert topic.run.interval_wall.count == len(arrivals) - 1
    assert topic.run.interval_wall.max_ns == int(gaps.max())
    assert topic.run.interval_wall.min_ns == int(gaps.min())
    # No timer that does not exist: misses, skipped periods and loss are unknown, said why.
    assert r.deadline_misses_total == 0 and r.skipped_periods_total == 0
    assert 'per-cycle figures need one producer' in r.counts_note
    figures = run_record(RUN_TOPIC, snap, topic)
    assert figures['deadline_misses'] is None and figures['skipped_periods'] is None
    assert figures['messages_lost'] is None
    assert 'no sequence numbers to tell them apart' in topic.reason


def test_producers_at_10_50_and_100_hz_are_never_timed_on_one_learned_period():
    # 12 s: the 10 s window holds none of the first messages, numbered alike (guessed).
    arrivals, seqs, _ = three_writers(seconds=12.0)
    s = wall_session(cmd=TopicConfig(name='cmd', topic='/cmd'))
    feed(s, 'cmd', arrivals, seqs, every=50)
    snap = s.snapshot(int(arrivals[-1]) + MS, final=True)
    topic = snap.topics[0]
    r = topic.report
    assert r.messages_total == len(arrivals)
    assert r.producers == 3
    # Each producer's own timer skipped nothing: no phantom skips or misses, and no loss.
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0
    assert r.messages_lost_total == 0
    figures = run_record(RUN_TOPIC, snap, topic)
    assert figures['deadline_misses'] is None and figures['skipped_periods'] is None
    assert 'a period learned from them would be none of theirs' in topic.reason
    # Each producer's intervals are its own (never 1.3 ms between two producers' messages).
    assert topic.run.interval_wall.min_ns >= 10 * MS - 1
    assert r.rate_wall_hz == pytest.approx(160, rel=0.05)
    # The run's rate is the topic's (its messages over the run), not one over the mean of
    # intervals that are each a producer's own (53 Hz).
    assert r.producers_at_once_max == 3
    assert figures['rate_hz'] == pytest.approx(
        (topic.run.cycles - 1) / ((arrivals[-1] - arrivals[0]) / S), rel=0.01)
    assert figures['rate_hz'] == pytest.approx(160, rel=0.05)


def test_producers_numbered_alike_with_losses_never_make_up_a_loss_later():
    arrivals, seqs, writers = three_writers(seconds=2.0)
    keep = np.ones(len(arrivals), bool)
    rng = np.random.default_rng(5)
    keep[rng.choice(len(arrivals), 12, replace=False)] = False  # lost on the way
    s = wall_session(cmd=TopicConfig(name='cmd', topic='/cmd', period_ns=10 * MS))
    s.topic_status('cmd', TopicState.RECEIVING, writers=3)
    feed(s, 'cmd', arrivals[keep], seqs[keep], every=20)
    # They leave: the graph says one writer (or none) and the window empties.
    s.topic_status('cmd', TopicState.RECEIVING, writers=0)
    later = int(arrivals[-1]) + AnalysisConfig().window_ns + S
    snap = s.snapshot(later, final=True)
    topic = snap.topics[0]
    figures = run_record(RUN_TOPIC, snap, topic)
    r = topic.report
    if r.run_loss_note:
        assert figures['messages_lost'] is None
    else:  # every producer was told apart: the loss is each one's own, exactly
        assert figures['messages_lost'] == 12
