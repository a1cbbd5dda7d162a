"""Per-transform figures (analysis/transforms.py) and their way through the session."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.analysis.transforms import (
    is_static_topic,
    STAMPS_PER_TRANSFORM,
    TransformAnalyzer,
    writer_of,
)

MS = 1_000_000
T0 = 1_700_000_000_000_000_000


def tf_cdr(pairs: list[tuple[str, str, int]]) -> bytes:
    """Serialize a TFMessage (XCDR1 little endian) of ``(parent, child, stamp_ns)``."""
    out = bytearray(b'\x00\x01\x00\x00') + struct.pack('<I', len(pairs))

    def align(n: int) -> None:
        out.extend(b'\0' * (-(len(out) - 4) % n))

    for parent, child, stamp in pairs:
        align(4)
        out.extend(struct.pack('<iI', *divmod(stamp, 1_000_000_000)))
        for name in (parent, child):
            align(4)
            data = name.encode() + b'\0'
            out.extend(struct.pack('<I', len(data)) + data)
        align(8)
        out.extend(bytes(56))
    return bytes(out)


def test_interleaved_writers_each_pair_its_own_stream() -> None:
    analyzer = TransformAnalyzer(static=False)
    rng = np.random.default_rng(3)
    sent: dict[tuple[str, str], list[int]] = {}
    events = []
    for parent, child, period in (('odom', 'base', 20 * MS), ('map', 'odom', 333 * MS)):
        for k in range(60):
            t = T0 + k * period + int(rng.integers(0, MS))
            events.append((t, parent, child))
    for t, parent, child in sorted(events):
        analyzer.record(t, tf_cdr([(parent, child, t - 2 * MS)]))
        sent.setdefault((parent, child), []).append(t)
    end = max(t for t, _, _ in events)  # the topic's latest message
    report = analyzer.report(None, 'a bag records no writer of its messages')
    assert [f.name for f in report.transforms] == ['map->odom', 'odom->base']
    for figures in report.transforms:
        arrivals = np.array(sent[(figures.parent, figures.child)])
        intervals = np.diff(arrivals)
        assert figures.messages == len(arrivals)
        assert figures.max_interval_ns == intervals.max()
        assert figures.max_interval_at_ns == arrivals[1:][intervals.argmax()]
        assert figures.rate_hz == pytest.approx(len(intervals) * 1e9 / intervals.sum())
        assert figures.silence_ns == end - arrivals[-1]
        assert figures.longest_gap_ns == max(intervals.max(), end - arrivals[-1])
        assert (figures.age_mean_ns, figures.age_max_ns) == (2 * MS, 2 * MS)
        assert figures.writer is None
    assert report.messages == len(events) and report.malformed == report.untracked == 0


def test_silence_ends_at_the_topics_latest_message_not_at_the_report() -> None:
    """The whole topic stopping (the run's end) is no gap of each transform.

    A report taken later (live, after the run) and a bag ending at its last message give the
    same gaps.
    """
    session = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=T0)
    session.configure({'tf': TopicConfig(name='tf', topic='/tf')})
    session.topic_status('tf', TopicState.RECEIVING, type_name='tf2_msgs/msg/TFMessage',
                         publishers=('/sim', '/controller'), writers=2)
    record = session.recorder('tf', None, transforms=True)
    for k in range(100):  # world->pole every 10 ms for 1 s; world->reference stops at 0.5 s
        t = T0 + k * 10 * MS
        pairs = [('world', 'pole', t)] + ([('world', 'reference', t)] if k < 50 else [])
        record(t + MS, tf_cdr(pairs), NO_VALUE)
    last = T0 + 99 * 10 * MS + MS
    at_end, later = (session.snapshot(now).topics[0] for now in (last, last + 5_000 * MS))
    assert at_end.transforms == later.transforms  # nothing arrived since: the same figures
    assert later.transforms is not None
    pole, reference = later.transforms.transforms
    assert (pole.name, pole.silence_ns, pole.longest_gap_ns) == ('world->pole', 0, 10 * MS)
    # Its broadcaster stopped while the topic went on: that silence is its gap.
    assert reference.silence_ns == reference.longest_gap_ns == 50 * 10 * MS


def test_the_monitors_own_gap_is_no_interval_of_a_transform() -> None:
    analyzer = TransformAnalyzer(static=False)
    for k in range(10):
        analyzer.record(T0 + k * 10 * MS, tf_cdr([('odom', 'base', T0)]))
    analyzer.unmonitored()  # re-subscribed: 700 ms without a subscription
    for k in range(80, 90):
        analyzer.record(T0 + k * 10 * MS, tf_cdr([('odom', 'base', T0)]))
    (figures,) = analyzer.report(None, '').transforms
    assert figures.messages == 20 and figures.intervals == 18
    assert figures.max_interval_ns == figures.longest_gap_ns == 10 * MS


def test_static_transforms_have_no_rate_and_no_gap() -> None:
    analyzer = TransformAnalyzer(static=True)
    analyzer.record(T0 + 7 * MS, tf_cdr([('base', 'imu', T0), ('base', 'gps', T0)]))
    report = analyzer.report('robot_state_publisher', '')
    assert report.static and not report.dynamic()
    for figures in report.transforms:
        assert figures.static and figures.messages == 1
        assert figures.rate_hz is None and figures.longest_gap_ns is None
        assert figures.age_mean_ns == 7 * MS
        assert figures.writer == 'robot_state_publisher'
    assert is_static_topic('/tf_static') and is_static_topic('/robot1/tf_static')
    assert not is_static_topic('/tf') and not is_static_topic('/tf_static_not')


def test_tracked_pairs_are_bounded_and_the_rest_counted() -> None:
    analyzer = TransformAnalyzer(static=False, kept=3)
    for k in range(5):
        analyzer.record(T0 + k * MS, tf_cdr([(f'p{i}', 'c', T0) for i in range(5)]))
    report = analyzer.report(None, '')
    assert len(report.transforms) == 3
    assert report.untracked == 5 * 2
    assert all(f.messages == 5 for f in report.transforms)


def test_malformed_and_unknown_ages_are_counted_not_figures() -> None:
    analyzer = TransformAnalyzer(static=False)
    good = tf_cdr([('a', 'b', T0)])
    analyzer.record(T0 + MS, good)
    analyzer.record(T0 + 2 * MS, good[:-3])  # cut inside the transform: malformed
    analyzer.record(T0 + 3 * MS, tf_cdr([('a', 'b', 0)]))  # an unset stamp
    analyzer.record(T0 + 4 * MS, tf_cdr([('a', 'b', T0 + 10_000 * MS)]))  # 10 s ahead
    analyzer.record(T0 + 5 * MS, tf_cdr([('a', 'b', 5 * MS)]))  # sim time, no /clock
    analyzer.process(None)
    report = analyzer.report(None, '')
    (figures,) = report.transforms
    assert report.malformed == 1 and report.messages == 5
    assert figures.messages == 4  # the malformed message's transform was never complete
    assert (figures.ages, figures.age_unknown, figures.age_mean_ns) == (1, 3, 1 * MS)
    assert 'zero stamp' in report.age_note and 'without /clock' in report.age_note


def test_sim_stamps_are_aged_through_clock_up_to_its_latest_sample() -> None:
    clock = RtfAnalyzer(bin_ns=100 * MS, capacity=1024)
    for k in range(11):  # /clock every 10 ms of wall, sim from 0 at RTF 1
        clock.record(T0 + k * 10 * MS, k * 10 * MS)
    analyzer = TransformAnalyzer(static=False)
    analyzer.record(T0 + 25 * MS, tf_cdr([('a', 'b', 21 * MS)]))
    analyzer.record(T0 + 105 * MS, tf_cdr([('a', 'b', 101 * MS)]))  # after the last sample
    analyzer.process(clock, horizon_ns=clock.last_wall_ns)
    assert analyzer.report(None, '').transforms[0].ages == 1
    clock.record(T0 + 110 * MS, 110 * MS)
    analyzer.process(clock, horizon_ns=clock.last_wall_ns)
    (figures,) = analyzer.report(None, '').transforms
    assert (figures.ages, figures.age_max_ns, figures.age_unknown) == (2, 4 * MS, 0)


def test_writer_is_named_only_when_the_graph_tells() -> None:
    assert writer_of(('/robot_state_publisher',), 1, False) == ('/robot_state_publisher', '')
    writer, why = writer_of(('/a', '/b'), 2, False)
    assert writer is None and why.startswith('2 publishers (/a, /b)')
    assert writer_of(('/a',), 1, True) == (None, 'a bag records no writer of its messages')
    assert writer_of((), 0, False) == (None, 'no publisher in the graph')


def test_the_session_reports_each_transform_and_warns_on_a_silent_one() -> None:
    session = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=T0)
    session.configure({'tf': TopicConfig(name='tf', topic='/tf', kind='event')})
    session.topic_status('tf', TopicState.RECEIVING, type_name='tf2_msgs/msg/TFMessage',
                         publishers=('/broadcaster',), writers=1)
    record = session.recorder('tf', None, transforms=True)
    for k in range(100):  # odom->base at 50 Hz for 2 s; map->odom at 10 Hz for 10 s
        t = T0 + k * 20 * MS
        record(t, tf_cdr([('odom', 'base', t)]), NO_VALUE)
    for k in range(100):
        t = T0 + k * 100 * MS + MS
        record(t, tf_cdr([('map', 'odom', t)]), NO_VALUE)
    snapshot = session.snapshot(T0 + 10_000 * MS)
    (topic,) = snapshot.topics
    assert topic.transforms is not None
    by_name = {f.name: f for f in topic.transforms.transforms}
    assert by_name['odom->base'].messages == 100 and by_name['map->odom'].messages == 100
    assert by_name['odom->base'].writer == '/broadcaster'
    # odom->base fell silent 7.92 s before map->odom's last message: beyond 10 of its 20 ms
    # intervals (at least 1 s).
    assert topic.level is Level.WARN
    assert '1 transform(s) silent beyond their timeout: odom->base 7.92 s' in topic.reason
    # A TFMessage is stamped per transform, not "carries no stamp".
    assert topic.report.timing_reason == STAMPS_PER_TRANSFORM


def test_a_writer_that_left_is_still_one_of_the_writers() -> None:
    """A simulator sent world->pole and left: the controller left alone is not its writer.

    The graph named two publishers during the run.
    """
    session = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=T0)
    session.configure({'tf': TopicConfig(name='tf', topic='/tf', kind='event')})
    record = session.recorder('tf', None, transforms=True)
    for publishers in (('/sim',), ('/sim', '/controller'), ('/controller',)):
        session.topic_status('tf', TopicState.RECEIVING, type_name='tf2_msgs/msg/TFMessage',
                             publishers=publishers, writers=len(publishers))
        record(T0, tf_cdr([('world', 'pole', T0)]), NO_VALUE)
    report = session.snapshot(T0 + MS).topics[0].transforms
    assert report is not None and report.transforms[0].writer is None
    assert report.writer_note.startswith('2 publishers (/sim, /controller)')
    # One publisher over the run, gone at the end: still the writer of what it sent.
    session.configure({'one': TopicConfig(name='one', topic='/one/tf', kind='event')})
    record = session.recorder('one', None, transforms=True)
    session.topic_status('one', TopicState.RECEIVING, publishers=('/rsp',), writers=1)
    record(T0, tf_cdr([('base', 'arm', T0)]), NO_VALUE)
    session.topic_status('one', TopicState.WAITING, publishers=(), writers=0)
    one = next(t for t in session.snapshot(T0 + MS).topics if t.topic_id == 'one')
    assert one.transforms is not None and one.transforms.transforms[0].writer == '/rsp'
