"""Tests for reading bags without deserializing (bag/reader.py)."""

from __future__ import annotations

from pathlib import Path
import sqlite3

import pytest

from ros2_deadline_monitor.analysis.errors import BagError
from ros2_deadline_monitor.bag.reader import BagSource, find_msg_dir, STATS_TYPE

MS = 1_000_000
T0 = 1_700_000_000_000_000_000


def test_topics_counts_and_times(bags, storage: str, tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', storage)
    with BagSource(ref.path) as bag:
        assert bag.storage == storage
        assert sorted(bag.topics) == ['/clock', '/demo/cmd', '/rosout']
        assert bag.topics['/demo/cmd'].msgtype == 'std_msgs/msg/Header'
        assert bag.topics['/demo/cmd'].count == len(ref.starts)
        assert bag.topics['/clock'].count == 5101
        assert bag.message_count == len(ref.starts) + 5101 + 1
        assert bag.start_ns == T0
        assert bag.duration_ns == 5_100 * MS


def test_messages_come_raw_and_in_log_time_order(bags, storage: str, tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', storage)
    with BagSource(ref.path) as bag:
        topic = bag.topics['/demo/cmd']
        items = list(bag.messages(topic.connections))
    assert [t for _, t, _ in items] == ref.arrivals.tolist()
    assert all(isinstance(raw, (bytes, memoryview)) for _, _, raw in items)
    assert bytes(items[0][2]) == bags.header_cdr(int(ref.stamps[0]), b'base')


@pytest.mark.parametrize('msgtype, expected', [
    ('std_msgs/msg/Header', True),
    ('geometry_msgs/msg/TwistStamped', True),
    ('sensor_msgs/msg/Imu', True),
    ('rosgraph_msgs/msg/Clock', True),
    ('builtin_interfaces/msg/Time', True),
    ('builtin_interfaces/msg/Duration', False),
    ('std_msgs/msg/String', False),
    ('geometry_msgs/msg/Twist', False),
    (STATS_TYPE, True),
])
def test_leading_stamp_from_the_definition(bags, msgtype: str, expected: bool,
                                           tmp_path: Path) -> None:
    path = bags.write(tmp_path / 'bag', 'mcap', {'/clock': 'rosgraph_msgs/msg/Clock'},
                      [('/clock', T0, bags.clock_cdr(0))])
    with BagSource(path) as bag:
        assert bag.has_leading_stamp(msgtype) is expected


def test_unknown_type_is_a_bag_error(bags, tmp_path: Path) -> None:
    path = bags.write(tmp_path / 'bag', 'mcap', {'/clock': 'rosgraph_msgs/msg/Clock'}, [])
    with BagSource(path) as bag, pytest.raises(BagError, match='unknown message type a/msg/B'):
        bag.definition('a/msg/B')


def test_definitions_stored_in_the_bag_win(bags, tmp_path: Path) -> None:
    """A custom type defined only in the bag (MCAP schema) is known."""
    path = tmp_path / 'bag'
    from rosbags.rosbag2 import StoragePlugin, Writer

    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection('/x', 'my_pkg/msg/Stamped',
                                     msgdef='std_msgs/Header header\nint32 value\n'
                                            '================================================'
                                            '================================\n'
                                            'MSG: std_msgs/Header\n'
                                            'builtin_interfaces/Time stamp\nstring frame_id\n'
                                            '================================================'
                                            '================================\n'
                                            'MSG: builtin_interfaces/Time\n'
                                            'int32 sec\nuint32 nanosec\n',
                                     rihs01='RIHS01_' + '0' * 64)
        writer.write(conn, T0, bags.header_cdr(T0) + b'\0\0\0\0')
    with BagSource(path) as bag:
        assert bag.has_leading_stamp('my_pkg/msg/Stamped')


def test_stats_definitions_fall_back_to_the_msg_files(bags, tmp_path: Path) -> None:
    path = bags.stats(tmp_path / 'bag', 'sqlite3', [
        (T0, [{'name': 'cmd', 'topic': '/demo/cmd', 'messages_total': 7}], None)])
    with sqlite3.connect(next(path.glob('*.db3'))) as conn:
        conn.execute('DELETE FROM message_definitions')
    with BagSource(path) as bag:
        store = bag.typestore([STATS_TYPE])
        (conn, _, raw), = bag.messages(bag.topics['/deadline_monitor/stats'].connections)
        msg = store.deserialize_cdr(raw, STATS_TYPE)
    assert msg.topics[0].messages_total == 7


def test_find_msg_dir_in_the_source_tree() -> None:
    directory = find_msg_dir()
    assert (directory / 'MonitorStats.msg').is_file()
    assert (directory / 'TopicStats.msg').is_file()


def test_open_errors_are_bag_errors(tmp_path: Path) -> None:
    with pytest.raises(BagError, match='no such file'):
        BagSource(tmp_path / 'missing')
    with pytest.raises(BagError, match='no metadata.yaml'):
        BagSource(tmp_path)
    (tmp_path / 'metadata.yaml').write_text('rosbag2_bagfile_information: {version: 99}\n')
    with pytest.raises(BagError, match='cannot open bag'):
        BagSource(tmp_path)


# -- the fast MCAP path -----------------------------------------------------------------------

def _many_chunks_bag(bags, path: Path) -> Path:
    """Three topics, ties in log time across topics, enough data for several MCAP chunks."""
    messages = []
    for k in range(30_000):
        t = T0 + (k // 3) * MS  # three messages share each log time
        topic = ('/a', '/b', '/clock')[k % 3]
        raw = bags.clock_cdr(k) if topic == '/clock' else bags.header_cdr(k, b'x' * (k % 50))
        messages.append((topic, t, raw))
    return bags.write(path, 'mcap', {'/a': 'std_msgs/msg/Header', '/b': 'std_msgs/msg/Header',
                                     '/clock': 'rosgraph_msgs/msg/Clock'}, messages)


CHUNK_FIELDS = ('chunk_start_offset', 'message_start_time', 'message_end_time',
                'channel_count', 'compression', 'compressed_size', 'uncompressed_size')
"""What ``bag/reader.py`` (``_mcap_plan``, ``_chunk_bytes``) reads of a ``rosbags`` chunk index."""


def test_the_mcap_fast_path_reads_rosbags_internals(bags, tmp_path: Path) -> None:
    """Fail loudly when ``rosbags`` changes the private state the fast path reads.

    ``_mcap_plan`` falls back to ``rosbags`` when an attribute is missing, silently and
    several times slower: this names each private attribute it uses, and that the plan is
    taken for an indexed MCAP bag (pinned: ``rosbags>=0.11.9,<0.12``).
    """
    import rosbags.rosbag2.storage_mcap as storage_mcap

    from ros2_deadline_monitor.bag.reader import _mcap_plan

    assert callable(getattr(storage_mcap, 'decompress', None)), 'rosbags: no decompress'
    path = _many_chunks_bag(bags, tmp_path / 'chunks')
    with BagSource(path) as bag:
        reader = bag._reader
        top = reader.storage
        assert hasattr(top, 'storages') and hasattr(top, 'metadata'), type(top)
        assert hasattr(top.metadata, 'compression_mode'), type(top.metadata)
        storage = top.storages[0]
        assert isinstance(storage, storage_mcap.McapReader), type(storage)
        assert hasattr(storage, 'bio') and hasattr(storage, 'connections'), vars(storage)
        assert len(storage.chunks) > 1
        for field in CHUNK_FIELDS:
            assert hasattr(storage.chunks[0], field), f'rosbags chunk index: no {field}'
        for name in ('topic', 'msgtype', 'ext', 'digest', 'id'):
            assert hasattr(storage.connections[0], name), f'rosbags connection: no {name}'
        conns = [c for topic in bag.topics.values() for c in topic.connections]
        assert _mcap_plan(reader, conns) is not None, 'the fast path is not taken'


def test_fast_mcap_falls_back_for_sqlite3(bags, tmp_path: Path) -> None:
    from ros2_deadline_monitor.bag.reader import _mcap_plan

    ref = bags.reference(tmp_path / 'bag', 'sqlite3')
    with BagSource(ref.path) as bag:
        conns = list(bag.topics['/demo/cmd'].connections)
        assert _mcap_plan(bag._reader, conns) is None
        assert len(list(bag.messages(conns))) == len(ref.starts)
        assert sum(len(b.log_time) for b in bag.batches(conns)) == len(ref.starts)


def _rows(batches) -> list[tuple[int, int, bytes]]:
    return [(int(b.conn_ids[i]), int(b.log_time[i]), b.raw(i))
            for b in batches for i in range(len(b.log_time))]


def test_batches_hold_the_messages_in_order(bags, tmp_path: Path) -> None:
    """Chunk columns (MCAP) and grouped messages (sqlite3) give what ``messages`` gives.

    ``messages`` is ``rosbags``' own reading: the fast path's reference.
    """
    from ros2_deadline_monitor.bag import reader as bag_module

    path = _many_chunks_bag(bags, tmp_path / 'chunks')
    with BagSource(path) as bag:
        for names in (['/a', '/b', '/clock'], ['/b'], ['/clock', '/a']):
            conns = [c for n in names for c in bag.topics[n].connections]
            batches = list(bag.batches(conns))
            assert len(batches) > 1
            assert _rows(batches) == [(c.id, t, raw) for c, t, raw in bag.messages(conns)]
    ref = bags.reference(tmp_path / 'bag', 'sqlite3')
    with BagSource(ref.path) as bag:
        conns = [c for topic in bag.topics.values() for c in topic.connections]
        expected = [(c.id, t, raw) for c, t, raw in bag.messages(conns)]
        assert _rows(bag.batches(conns)) == expected
        old = bag_module.BATCH_MESSAGES
        bag_module.BATCH_MESSAGES = 1000
        try:
            assert _rows(bag.batches(conns)) == expected
        finally:
            bag_module.BATCH_MESSAGES = old
