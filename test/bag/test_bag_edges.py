"""Bags as others write them (issue 44).

Relative topic names, metadata that disagrees with its storage file, and sim-time stamps
without /clock.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import Reader

from ros2_deadline_monitor.analysis.cycles import count_cycles
from ros2_deadline_monitor.bag.analyze import main
from ros2_deadline_monitor.bag.reader import BagSource

MS = 1_000_000
T0 = 1_700_000_000_000_000_000


def analyze_json(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / 'result.json'
    assert main([*args, '--no-progress', '--json', str(out)]) == 0
    return json.loads(out.read_text())


# -- topic names without a leading slash -----------------------------------------------------

def relative_names_bag(bags, path: Path, storage: str) -> tuple[np.ndarray, np.ndarray]:
    """Write the reference stream on ``demo/cmd``, /clock on ``clock``; return its truth.

    Names without a leading slash, as some tools write them. Returns (starts, arrivals).
    """
    starts, ends = bags.rcl_timer_cycles()
    arrivals = ends + 200_000
    messages = [('demo/cmd', int(t), bags.header_cdr(int(s)))
                for t, s in zip(arrivals, starts, strict=True)]
    messages += bags.clock_messages(5_100 * MS, MS, MS, topic='clock')
    bags.write(path, storage, {'demo/cmd': 'std_msgs/msg/Header',
                               'clock': 'rosgraph_msgs/msg/Clock'}, messages)
    return starts, arrivals


@pytest.mark.parametrize('selected', [(), ('--topic', 'demo/cmd'), ('--topic', '/demo/cmd')])
def test_topic_names_without_a_leading_slash_are_selected(bags, storage: str, selected,
                                                          tmp_path: Path) -> None:
    starts, arrivals = relative_names_bag(bags, tmp_path / 'bag', storage)
    truth = count_cycles(starts, arrivals, 10 * MS)
    assert (truth.misses, truth.skipped) == (20, 10)
    data = analyze_json(tmp_path, str(tmp_path / 'bag'), '--stamp', 'start', *selected)
    assert [t['topic'] for t in data['topics']] == ['/demo/cmd']
    topic = data['topics'][0]
    assert topic['messages'] == len(starts)
    assert topic['deadline_misses'] == truth.misses
    assert topic['skipped_periods'] == truth.skipped
    # ``clock`` is /clock: found as the clock, not analyzed as a topic.
    assert data['clock']['messages'] == 5101


def test_bag_topics_are_absolute(bags, tmp_path: Path) -> None:
    relative_names_bag(bags, tmp_path / 'bag', 'mcap')
    with BagSource(tmp_path / 'bag') as bag:
        assert sorted(bag.topics) == ['/clock', '/demo/cmd']
        assert bag.topics['/clock'].count == 5101
        assert bag.notes == []


def test_a_config_file_naming_a_relative_topic(bags, tmp_path: Path) -> None:
    starts, arrivals = relative_names_bag(bags, tmp_path / 'bag', 'sqlite3')
    config = tmp_path / 'monitor.yaml'
    config.write_text('deadline_monitor:\n  ros__parameters:\n    topics: [cmd]\n'
                      '    topic.cmd.name: demo/cmd\n    topic.cmd.period_ms: 10.0\n'
                      '    topic.cmd.stamp: start\n')
    data = analyze_json(tmp_path, str(tmp_path / 'bag'), '--config', str(config))
    topic, = data['topics']
    assert topic['topic'] == '/demo/cmd'
    assert topic['deadline_misses'] == count_cycles(starts, arrivals, 10 * MS).misses


# -- metadata.yaml that does not match its storage file --------------------------------------

QOS = """offered_qos_profiles:
      - history: keep_last
        depth: 10
        reliability: best_effort
        durability: volatile
        deadline:
          sec: 9223372036
          nsec: 854775807
        lifespan:
          sec: 9223372036
          nsec: 854775807
        liveliness: automatic
        liveliness_lease_duration:
          sec: 9223372036
          nsec: 854775807
        avoid_ros_namespace_conventions: false"""
"""QoS of a best-effort writer, where the storage file (written by rosbags) lists none."""


def disagreeing_metadata(path: Path) -> None:
    """List other QoS profiles for every topic in ``metadata.yaml`` than the storage holds."""
    metadata = path / 'metadata.yaml'
    text = metadata.read_text()
    assert 'offered_qos_profiles: []' in text
    metadata.write_text(text.replace('offered_qos_profiles: []', QOS))


def test_metadata_that_disagrees_falls_back_to_the_storage_file(
        bags, storage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', storage)
    disagreeing_metadata(ref.path)
    # The case: the bag library lists the messages but reads none of them.
    with Reader(ref.path) as reader:
        listed = {c.topic: c.msgcount for c in reader.connections}
        assert listed['/demo/cmd'] == len(ref.starts)
        assert sum(1 for _ in reader.messages(reader.connections)) == 0

    data = analyze_json(tmp_path, str(ref.path), '--stamp', 'start')
    topic = data['topics'][0]
    assert topic['messages'] == len(ref.starts)
    assert (topic['deadline_misses'], topic['skipped_periods']) == (20, 10)
    assert data['clock']['messages'] == 5101
    note = next(n for n in data['notes'] if 'metadata.yaml' in n)
    assert 'does not match its storage file' in note
    assert 'the offered QoS profiles differ' in note
    assert 'on its own instead' in note
    err = capsys.readouterr().err
    assert 'WARNING: ' in err and 'on its own instead' in err


def test_the_fallback_note_is_in_the_table(bags, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    disagreeing_metadata(ref.path)
    assert main([str(ref.path), '--no-progress']) == 0
    out = capsys.readouterr().out
    assert 'note: ' in out and 'read bag.mcap on its own instead' in out


def test_metadata_that_matches_is_read_as_it_is(bags, storage: str, tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', storage)
    with BagSource(ref.path) as bag:
        assert bag.notes == []
        assert bag.topics['/demo/cmd'].count == len(ref.starts)


# -- sim-time stamps without /clock ----------------------------------------------------------

def sim_stamped_bag(bags, path: Path, count: int = 2640, jitter_ns: int = 0) -> Path:
    """Odometry-like: stamped exactly 36 ms apart in sim time (from 100 s), no /clock.

    Logged 0.3 ms after each stamp's wall time, plus up to ``jitter_ns`` (a recorder's).
    """
    late = np.random.default_rng(55).integers(0, jitter_ns + 1, count)
    messages = [('/odom', T0 + k * 36 * MS + 300_000 + int(late[k]),
                 bags.header_cdr(100_000 * MS + k * 36 * MS)) for k in range(count)]
    return bags.write(path, 'mcap', {'/odom': 'std_msgs/msg/Header'}, messages)


@pytest.mark.parametrize('jitter_ns', [0, 12 * MS], ids=['steady', 'recorder-jitter'])
def test_clean_sim_stamps_without_clock_are_timed_on_their_own_clock(
        bags, tmp_path: Path, jitter_ns: int) -> None:
    # Before: timed by arrival, with a recorder's jitter period 36.2 ms, hundreds of misses
    # and skipped periods that were the recorder's; the output did not even suggest why.
    path = sim_stamped_bag(bags, tmp_path / 'bag', jitter_ns=jitter_ns)
    for args in ((), ('--stamp', 'start')):
        topic = analyze_json(tmp_path, str(path), *args)['topics'][0]
        assert (topic['timer_clock'], topic['start_source']) == ('sim', 'header')
        assert topic['period_ms'] == 36.0
        assert (topic['deadline_misses'], topic['skipped_periods']) == (0, 0)
        assert topic['max_interval_sim_ms'] == topic['min_interval_sim_ms'] == 36.0
        assert topic['intervals_sim'] == 2639
        assert 'sim-time stamps without /clock, exactly regular' in topic['note']
        assert 'timed on their own clock, as --stamp start --clock sim does' in topic['note']


def test_sim_stamps_on_the_wall_clock_say_why_no_period_was_learned(bags,
                                                                    tmp_path: Path) -> None:
    path = sim_stamped_bag(bags, tmp_path / 'bag')
    data = analyze_json(tmp_path, str(path), '--stamp', 'start', '--clock', 'wall')
    topic = data['topics'][0]
    assert topic['period_ms'] is None
    assert topic['timer_clock'] == 'wall'
    note = topic['note']
    assert 'need more than' not in note, note
    assert note.startswith('period not learned: 2640 of 2640 start stamps are not on the wall '
                           'clock (sim time? the bag has no /clock to place it)'), note
    assert '--clock sim' in note


def test_sim_stamps_without_clock_no_steadier_than_the_arrivals_are_timed_by_arrival(
        bags, tmp_path: Path) -> None:
    rng = np.random.default_rng(57)
    wobble = rng.integers(0, 8 * MS, 400)  # stamps copied from a jittery input
    messages = [('/pose', T0 + k * 36 * MS + 9 * MS, bags.header_cdr(100_000 * MS + k * 36 * MS
                                                                     + int(wobble[k])))
                for k in range(400)]
    path = bags.write(tmp_path / 'bag', 'mcap', {'/pose': 'std_msgs/msg/Header'}, messages)
    topic = analyze_json(tmp_path, str(path))['topics'][0]
    assert (topic['timer_clock'], topic['start_source']) == ('wall', 'arrival')
    assert 'on their own clock' not in (topic['note'] or '')
    assert topic['max_interval_wall_ms'] == pytest.approx(36.0)


def test_several_storage_files_that_disagree_are_one_error(
        bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    def part(name: str, start: int) -> Path:
        messages = [('/odom', T0 + (start + k) * 10 * MS, bags.header_cdr(T0 + k * 10 * MS))
                    for k in range(30)]
        return bags.write(tmp_path / name, 'mcap', {'/odom': 'std_msgs/msg/Header'}, messages)

    first, second = part('split', 0), part('second', 30)
    (second / 'second.mcap').rename(first / 'split_1.mcap')
    metadata = yaml.safe_load((first / 'metadata.yaml').read_text())
    info = metadata['rosbag2_bagfile_information']
    info['relative_file_paths'].append('split_1.mcap')
    info['topics_with_message_count'][0]['topic_metadata']['type'] = 'std_msgs/msg/String'
    (first / 'metadata.yaml').write_text(yaml.safe_dump(metadata))
    assert main([str(first), '--no-progress']) == 1
    err = capsys.readouterr().err
    assert 'Traceback' not in err
    assert err.strip().splitlines() == [
        f'ERROR: {first}/metadata.yaml does not match its storage file for /odom (type '
        'std_msgs/msg/String listed, std_msgs/msg/Header stored): the bag library would read '
        'none of their messages; analyze its storage files one by one instead']
    # As it says: each file alone analyzes.
    for name in ('split.mcap', 'split_1.mcap'):
        data = analyze_json(tmp_path, str(first / name))
        assert data['topics'][0]['messages'] == 30
