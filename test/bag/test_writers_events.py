"""``analyze`` on several writers of one topic and on event topics (issue 55), no flag set.

A bag records no writer identity: a topic whose metadata lists several offered QoS profiles
(one per publisher the recorder matched) keeps its rate, intervals and gaps, and its misses,
skipped periods and loss are unknown with the reason. An event topic opening with a 4 s gap
keeps it in the max interval and fails the gate on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rosbags.interfaces import (
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import StoragePlugin, Writer

from ros2_deadline_monitor.bag.analyze import main
from ros2_deadline_monitor.bag.reader import BagSource, recorded_writers

MS = 1_000_000
T0 = 1_700_000_000_000_000_000
HEADER = 'std_msgs/msg/Header'
FOREVER = QosTime(9223372036, 854775807)
VOLATILE = Qos(QosHistory.KEEP_LAST, 10, QosReliability.RELIABLE, QosDurability.VOLATILE,
               FOREVER, FOREVER, QosLiveliness.AUTOMATIC, FOREVER, False)


def analyze_json(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / 'result.json'
    assert main([*args, '--no-progress', '--json', str(out)]) == 0
    return json.loads(out.read_text())


def write(path: Path, storage: str, messages: list[tuple[str, int, bytes]],
          writers: dict[str, int], bags) -> Path:
    """Write Header messages, each topic listing ``writers[topic]`` offered QoS profiles."""
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    store = bags.typestore()
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        conns = {topic: writer.add_connection(topic, HEADER, typestore=store,
                                              offered_qos_profiles=[VOLATILE] * count)
                 for topic, count in writers.items()}
        for topic, t, raw in sorted(messages, key=lambda m: m[1]):
            writer.write(conns[topic], t, raw)
    return path


def three_broadcasters() -> tuple[np.ndarray, np.ndarray]:
    """Log times and stamps of 50, 20 and 1 Hz writers on one topic; the 20 Hz stops 2 s."""
    times = []
    for period_ms, phase in ((20, 0.3), (50, 1.7), (1000, 4.1)):
        starts = np.arange(0, 10_000, period_ms, dtype=np.float64) + phase
        if period_ms == 50:
            starts = starts[(starts < 4_000) | (starts >= 6_000)]  # it stops for 2 s
        times.append((starts * MS).astype(np.int64))
    stamps = T0 + np.sort(np.concatenate(times))
    rng = np.random.default_rng(55)
    return stamps + rng.integers(200_000, 600_000, len(stamps)), stamps


@pytest.fixture(params=['mcap', 'sqlite3'])
def storage(request) -> str:
    return request.param


def test_a_topic_with_three_recorded_writers_keeps_its_gaps_and_says_why_counts_are_unknown(
        bags, tmp_path: Path, storage: str) -> None:
    logged, stamps = three_broadcasters()
    messages = [('/tf_like', int(t), bags.header_cdr(int(s), b'odom'))
                for t, s in zip(logged, stamps, strict=True)]
    path = write(tmp_path / 'several', storage, messages, {'/tf_like': 3}, bags)
    with BagSource(path) as bag:
        assert recorded_writers(bag.topics['/tf_like']) == 3
    topic = analyze_json(tmp_path, str(path))['topics'][0]
    assert topic['messages'] == len(logged)
    # The topic as a whole: every interval between its messages by log time.
    gaps = np.diff(logged)
    assert topic['intervals_wall'] == len(logged) - 1
    assert topic['max_interval_wall_ms'] == pytest.approx(gaps.max() / MS)
    assert topic['rate_wall_hz'] == pytest.approx((len(logged) - 1) / (gaps.sum() / 1e9))
    # No timer that does not exist: unknown, with the reason.
    assert topic['deadline_misses'] is None and topic['skipped_periods'] is None
    assert topic['messages_lost'] is None
    assert '3 writers and no sequence numbers to tell them apart' in json.dumps(topic)
    assert topic['timing_reason'] == 'timed by arrival: several writers not told apart'


def test_one_recorded_writer_stays_one_timer(bags, tmp_path: Path) -> None:
    starts, ends = bags.rcl_timer_cycles()
    messages = [('/demo/cmd', int(e) + 200_000, bags.header_cdr(int(s), b'base'))
                for s, e in zip(starts, ends, strict=True)]
    path = write(tmp_path / 'one', 'mcap', messages, {'/demo/cmd': 1}, bags)
    topic = analyze_json(tmp_path, str(path), '--period-ms', '10', '--stamp', 'start',
                         '--clock', 'wall')['topics'][0]
    assert (topic['deadline_misses'], topic['skipped_periods']) == (20, 10)


def pose_updates(n: int = 60) -> np.ndarray:
    """Log times of a pose published on updates, opening with a 4 s gap.

    Runs 100 ms apart while the robot moves, pauses of 1 to 2 s between them.
    """
    rng = np.random.default_rng(55)
    gaps = np.where(rng.random(n - 1) < 0.6, rng.integers(80 * MS, 120 * MS, n - 1),
                    rng.integers(1_000 * MS, 2_000 * MS, n - 1))
    gaps[0] = 4_000 * MS
    return T0 + np.concatenate(([0], np.cumsum(gaps))).astype(np.int64)


@pytest.fixture
def pose_bag(bags, tmp_path: Path) -> Path:
    logged = pose_updates()
    messages = [('/amcl_pose', int(t), bags.header_cdr(int(t) - 5 * MS, b'map'))
                for t in logged]
    return write(tmp_path / 'pose', 'mcap', messages, {'/amcl_pose': 1}, bags)


def test_an_event_topic_opening_with_a_4_s_gap_keeps_it_in_its_max_interval(
        pose_bag: Path, tmp_path: Path) -> None:
    topic = analyze_json(tmp_path, str(pose_bag))['topics'][0]
    assert topic['max_interval_wall_ms'] == pytest.approx(4_000.0)
    assert topic['intervals_wall'] == len(pose_updates()) - 1
    assert topic['deadline_misses'] is None and topic['skipped_periods'] is None


def test_an_event_topic_opening_with_a_4_s_gap_fails_the_gate_on_it(
        pose_bag: Path, capsys) -> None:
    code = main([str(pose_bag), '--no-progress', '--check', '--expect-max-interval-ms', '3000'])
    out = capsys.readouterr().out
    assert code == 3
    failed = [line for line in out.splitlines() if line.startswith('FAIL ')]
    assert failed == ['FAIL /amcl_pose: max interval 4,000 ms, expected <= 3,000 ms '
                      '(max_interval_ms)']
