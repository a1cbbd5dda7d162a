"""``analyze`` of a bag with /tf from three broadcasters: figures per transform, and the gate.

The broadcasters send at 50, 20 and 1 Hz; the 50 Hz one stops for 2 s. Every expected
figure is computed from the generator's own lists (the log times and stamps it wrote).
"""

from __future__ import annotations

import json
from pathlib import Path
import struct

import numpy as np
import pytest

from ros2_deadline_monitor.bag.analyze import main

MS = 1_000_000
T0 = 1_700_000_000_000_000_000
DURATION_NS = 10_000 * MS
STOP_NS = (3_000 * MS, 5_000 * MS)
"""The 50 Hz broadcaster sends nothing in [3 s, 5 s)."""
BROADCASTERS = (
    # period, transforms per message, silent span
    (20 * MS, (('odom', 'base_link'),), STOP_NS),
    (50 * MS, (('base_link', 'laser'), ('base_link', 'camera')), None),
    (1_000 * MS, (('map', 'odom'),), None),
)


def tf_cdr(stamp_ns: int, pairs: tuple[tuple[str, str], ...]) -> bytes:
    """Serialize a tf2_msgs/TFMessage (XCDR1 little endian), aligned as Fast DDS does."""
    out = bytearray(b'\x00\x01\x00\x00') + struct.pack('<I', len(pairs))

    def align(n: int) -> None:
        out.extend(b'\0' * (-(len(out) - 4) % n))

    sec, nanosec = divmod(stamp_ns, 1_000_000_000)
    for parent, child in pairs:
        align(4)
        out.extend(struct.pack('<iI', sec, nanosec))
        for name in (parent, child):
            align(4)
            data = name.encode() + b'\0'
            out.extend(struct.pack('<I', len(data)) + data)
        align(8)
        out.extend(struct.pack('<7d', 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0))
    return bytes(out)


def broadcast(seed: int = 7) -> tuple[list[tuple[str, int, bytes]], dict[tuple[str, str], list]]:
    """Return the broadcasters' messages and, per pair, its (log time, stamp) list."""
    rng = np.random.default_rng(seed)
    messages, truth = [], {}
    for period, pairs, silent in BROADCASTERS:
        for k in range(DURATION_NS // period):
            stamp = T0 + k * period
            if silent and silent[0] <= stamp - T0 < silent[1]:
                continue
            logged = stamp + int(rng.integers(100_000, 900_000))  # delivery delay
            messages.append(('/tf', logged, tf_cdr(stamp, pairs)))
            for pair in pairs:
                truth.setdefault(pair, []).append((logged, stamp))
    return messages, truth


def test_each_transform_has_its_own_rate_gap_and_age(bags, tmp_path: Path) -> None:
    messages, truth = broadcast()
    static = [('/tf_static', T0 + 5 * MS, tf_cdr(T0, (('base_link', 'imu'),)))]
    bag = bags.write(tmp_path / 'tf', 'mcap', {'/tf': 'tf2_msgs/msg/TFMessage',
                                               '/tf_static': 'tf2_msgs/msg/TFMessage'},
                     messages + static)
    out = tmp_path / 'tf.json'
    assert main([str(bag), '--topic', '/tf', '--topic', '/tf_static', '--no-progress',
                 '--json', str(out)]) == 0
    topics = {t['topic']: t for t in json.loads(out.read_text())['topics']}
    tf = {(r['parent'], r['child']): r for r in topics['/tf']['transforms']}
    assert set(tf) == set(truth)
    end = max(t for _, t, _ in messages + static)  # the bag's last log time
    for pair, sent in truth.items():
        logged = np.array([t for t, _ in sent], np.int64)
        stamps = np.array([s for _, s in sent], np.int64)
        intervals = np.diff(logged)
        got = tf[pair]
        assert got['messages'] == len(sent)
        assert got['static'] is False
        assert got['rate_hz'] == pytest.approx(len(intervals) * 1e9 / intervals.sum(), rel=1e-12)
        assert got['max_interval_ms'] == pytest.approx(intervals.max() / 1e6, abs=1e-9)
        assert got['silent_ms'] == pytest.approx((end - logged[-1]) / 1e6, abs=1e-9)
        assert got['longest_gap_ms'] == pytest.approx(
            max(intervals.max(), end - logged[-1]) / 1e6, abs=1e-9)
        assert got['mean_age_ms'] == pytest.approx((logged - stamps).mean() / 1e6, abs=1e-9)
        assert got['max_age_ms'] == pytest.approx((logged - stamps).max() / 1e6, abs=1e-9)
        assert got['age_unknown'] == 0
        assert got['writer'] is None  # a bag records no writer: unknown, never guessed
    # The stopped broadcaster's frame shows its gap; the others' do not.
    assert tf[('odom', 'base_link')]['max_interval_ms'] > 2_000
    start = min(t for _, t, _ in messages + static)  # the bag's first log time
    assert tf[('odom', 'base_link')]['max_interval_at_s'] == pytest.approx(
        (min(t for t, s in truth[('odom', 'base_link')] if s - T0 >= STOP_NS[1]) - start) / 1e9)
    assert tf[('base_link', 'laser')]['max_interval_ms'] < 60
    assert topics['/tf']['transforms_writer_note'] == 'a bag records no writer of its messages'
    (imu,) = topics['/tf_static']['transforms']
    assert (imu['parent'], imu['child'], imu['static'], imu['messages']) == (
        'base_link', 'imu', True, 1)
    assert imu['rate_hz'] is None and imu['longest_gap_ms'] is None
    assert imu['mean_age_ms'] == pytest.approx(5.0)


def test_the_gate_fails_on_the_stopped_broadcaster_only(
        bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messages, truth = broadcast()
    bag = bags.write(tmp_path / 'tf', 'mcap', {'/tf': 'tf2_msgs/msg/TFMessage'}, messages)
    argv = [str(bag), '--topic', '/tf', '--no-progress', '--check',
            '--expect-max-transform-gap-ms', '1500', '--expect-min-transform-rate-hz', '0.9']
    assert main(argv) == 3
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if line.startswith('FAIL')]
    assert len(failed) == 1, out
    gap_ms = max(np.diff([t for t, _ in truth[('odom', 'base_link')]])) / 1e6
    assert failed[0] == (f'FAIL /tf odom->base_link: longest gap {gap_ms:.4g} ms, expected '
                         '<= 1,500 ms (max_transform_gap_ms)')
    assert f'check: 7 of {2 * len(truth)} expectations held' in out
    # A limit above the stop holds for every transform.
    assert main([str(bag), '--topic', '/tf', '--no-progress', '--check',
                 '--expect-max-transform-gap-ms', '2100']) == 0


def test_a_transform_limit_on_a_topic_without_transforms(bags, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    messages, _ = broadcast()
    header = [('/scan', T0 + k * 100 * MS, bags.header_cdr(T0 + k * 100 * MS))
              for k in range(50)]
    bag = bags.write(tmp_path / 'tf', 'mcap', {'/tf': 'tf2_msgs/msg/TFMessage',
                                               '/scan': 'std_msgs/msg/Header'},
                     messages + header)
    # Given for every topic, the limit checks the transforms and leaves /scan alone (a
    # limit it could not see would fail as unknown).
    assert main([str(bag), '--no-progress', '--check', '--expect-min-transform-rate-hz',
                 '0.5']) == 0
    assert 'check: 4 of 4 expectations held' in capsys.readouterr().out


def test_transform_limits_from_the_params_file(bags, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    messages, truth = broadcast()
    bag = bags.write(tmp_path / 'tf', 'mcap', {'/tf': 'tf2_msgs/msg/TFMessage',
                                               '/scan': 'std_msgs/msg/Header'},
                     messages + [('/scan', T0 + MS, bags.header_cdr(T0 + MS))])
    config = tmp_path / 'ci.yaml'
    config.write_text('deadline_monitor:\n  ros__parameters:\n    topics: [tf, scan]\n'
                      '    topic.tf.name: /tf\n    topic.tf.kind: event\n'
                      '    topic.tf.expect.max_transform_gap_ms: 1500.0\n'
                      '    topic.scan.name: /scan\n'
                      '    topic.scan.expect.min_transform_rate_hz: 1.0\n')
    assert main([str(bag), '--config', str(config), '--no-progress', '--check']) == 3
    failed = [line for line in capsys.readouterr().out.splitlines() if line.startswith('FAIL')]
    # The stopped broadcaster's frame, and a limit written for a topic without transforms.
    assert len(failed) == 2, failed
    assert failed[0].startswith('FAIL /tf odom->base_link: longest gap')
    assert failed[1] == ('FAIL /scan: rate unknown, expected >= 1 Hz (min_transform_rate_hz): '
                         'unknown: no transforms: the type is not laid out like '
                         'tf2_msgs/TFMessage')
