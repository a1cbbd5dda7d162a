"""The bag writer of ``record``: paths checked first, definitions stored, bags others can read.

No ROS here: messages are serialized with ``rosbags``, and the bags are read back with
``rosbags``' ``AnyReader`` (the library other tools use) and with ``analyze``'s ``BagSource``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ros2_deadline_monitor.record.bag_writer import (
    BagWriter,
    check_output_path,
    Definitions,
    InOrder,
    RecordError,
    share_definition,
)

S = 1_000_000_000
MS = 1_000_000
T0 = 1_796_106_837 * S


def test_an_existing_output_is_never_overwritten(tmp_path):
    (tmp_path / 'run1').mkdir()
    (tmp_path / 'file').write_text('x')
    with pytest.raises(RecordError, match='run1 exists already: record never overwrites'):
        check_output_path(tmp_path / 'run1')
    with pytest.raises(RecordError, match='exists already'):
        check_output_path(tmp_path / 'file')


def test_the_nearest_existing_parent_must_be_a_writable_folder(tmp_path):
    (tmp_path / 'file').write_text('x')
    with pytest.raises(RecordError, match='is not a folder'):
        check_output_path(tmp_path / 'file' / 'sub' / 'run1')
    assert check_output_path(tmp_path / 'new' / 'deeper' / 'run1') == \
        tmp_path / 'new' / 'deeper' / 'run1'


@pytest.mark.skipif(os.geteuid() == 0, reason='root may write into any folder')
def test_a_read_only_folder_is_refused(tmp_path):
    folder = tmp_path / 'ro'
    folder.mkdir(mode=0o500)
    with pytest.raises(RecordError, match='is not writable'):
        check_output_path(folder / 'run1')


def test_an_uncreatable_bag_fails_at_open_with_one_sentence():
    # /proc takes no new folders, even from root (whom os.access lets write anywhere).
    writer = BagWriter('/proc/deadline_monitor_record_test')
    with pytest.raises(RecordError, match='^cannot create bag /proc/deadline_monitor_record_t'):
        writer.open()


def test_standard_types_come_from_the_jazzy_store_with_the_installed_hash():
    msgdef, digest = Definitions()('geometry_msgs/msg/TwistStamped')
    assert msgdef.startswith('std_msgs/Header header\ngeometry_msgs/Twist twist\n')
    for nested in ('std_msgs/Header', 'builtin_interfaces/Time', 'geometry_msgs/Twist',
                   'geometry_msgs/Vector3'):
        assert f'\nMSG: {nested}\n' in msgdef
    assert digest == installed_hash('geometry_msgs', 'TwistStamped')


def installed_hash(package: str, name: str) -> str:
    """Return the RIHS01 hash rosidl generated for a type (share/<pkg>/msg/<Type>.json)."""
    from ament_index_python.packages import get_package_share_directory

    path = Path(get_package_share_directory(package)) / 'msg' / f'{name}.json'
    hashes = json.loads(path.read_text())['type_hashes']
    return next(h['hash_string'] for h in hashes if h['type_name'] == f'{package}/msg/{name}')


def test_other_types_come_from_their_installed_msg_files_with_what_they_use():
    definitions = Definitions()
    assert 'ros2_deadline_monitor/msg/MonitorStats' not in definitions.store.fielddefs
    msgdef, digest = definitions('ros2_deadline_monitor/msg/MonitorStats')
    assert msgdef.startswith('std_msgs/Header header\n')
    for nested in ('ros2_deadline_monitor/TopicStats', 'ros2_deadline_monitor/ClockStats',
                   'ros2_deadline_monitor/IntervalStats', 'std_msgs/Header'):
        assert f'\nMSG: {nested}\n' in msgdef
    # The hash rosidl computed at build time: ros2 bag play finds the type it recorded.
    assert digest == installed_hash('ros2_deadline_monitor', 'MonitorStats')


def test_a_type_found_nowhere_is_one_sentence():
    with pytest.raises(RecordError, match='no definition of no_such_pkg/msg/Thing: it is not a '
                                          'ROS 2 Jazzy standard type and package no_such_pkg'):
        Definitions()('no_such_pkg/msg/Thing')
    with pytest.raises(RecordError, match=r'neither .*/msg/NoSuchType.msg nor .idl exists'):
        Definitions()('std_msgs/msg/NoSuchType')


def fake_share(tmp_path: Path, files: dict[str, str]):
    """Return a share lookup over ``{"pkg/msg/Type.ext": text}`` written into tmp_path."""
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def share(package: str) -> Path:
        if not (tmp_path / package).is_dir():
            raise LookupError(f'package {package!r} not found')
        return tmp_path / package
    return share


def test_nested_types_of_a_user_package_are_loaded_from_msg_and_idl(tmp_path):
    share = fake_share(tmp_path, {
        'robot_msgs/msg/Command.msg': 'std_msgs/Header header\nrobot_msgs/Gain[] gains\n'
                                      'Mode mode\n',
        'robot_msgs/msg/Gain.msg': 'float64 kp\nfloat64 kd\n',
        'robot_msgs/msg/Mode.idl': 'module robot_msgs { module msg {\n'
                                   '  struct Mode { uint8 value; };\n}; };\n',
    })
    definitions = Definitions(share)
    msgdef, digest = definitions('robot_msgs/msg/Command')
    assert msgdef.startswith('std_msgs/Header header\nrobot_msgs/Gain[] gains\n'
                             'robot_msgs/Mode mode\n')
    assert '\nMSG: robot_msgs/Gain\nfloat64 kp\nfloat64 kd\n' in msgdef
    assert '\nMSG: robot_msgs/Mode\nuint8 value\n' in msgdef
    assert digest.startswith('RIHS01_') and len(digest) == len('RIHS01_') + 64
    assert share_definition('robot_msgs/msg/Gain', share)['robot_msgs/msg/Gain'][1][0][0] == 'kp'


def test_a_missing_nested_type_names_itself(tmp_path):
    share = fake_share(tmp_path, {'robot_msgs/msg/Command.msg': 'robot_msgs/Gain gain\n'})
    with pytest.raises(RecordError, match=r'no definition of robot_msgs/msg/Gain: neither'):
        Definitions(share)('robot_msgs/msg/Command')


def header_bytes(store, stamp_ns: int, frame: str = 'f') -> bytes:
    msg = store.types['std_msgs/msg/Header'](
        stamp=store.types['builtin_interfaces/msg/Time'](sec=stamp_ns // S,
                                                         nanosec=stamp_ns % S),
        frame_id=frame)
    return bytes(store.serialize_cdr(msg, 'std_msgs/msg/Header'))


def clock_bytes(store, sim_ns: int) -> bytes:
    msg = store.types['rosgraph_msgs/msg/Clock'](
        clock=store.types['builtin_interfaces/msg/Time'](sec=sim_ns // S, nanosec=sim_ns % S))
    return bytes(store.serialize_cdr(msg, 'rosgraph_msgs/msg/Clock'))


def test_a_written_bag_is_read_by_anyreader_and_analyze(tmp_path):
    from rosbags.highlevel import AnyReader

    from ros2_deadline_monitor.bag.reader import BagSource

    definitions = Definitions()
    store = definitions.store
    bag = tmp_path / 'runs' / 'run1'
    with BagWriter(bag, definitions) as writer:
        clock = writer.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
        ctrl = writer.add_topic('/ctrl', 'std_msgs/msg/Header')
        for i in range(30):
            writer.write(clock, T0 + i * MS, clock_bytes(store, i * MS))
            if i % 10 == 5:
                writer.write(ctrl, T0 + i * MS + 1, header_bytes(store, i * MS))
        assert writer.counts == {'/clock': 30, '/ctrl': 3} and writer.message_count == 33
    assert sorted(p.name for p in bag.iterdir()) == ['metadata.yaml', 'run1.mcap']

    with AnyReader([bag]) as reader:
        assert reader.message_count == 33
        by_topic = {c.topic: c for c in reader.connections}
        assert by_topic['/ctrl'].msgdef.data.startswith('builtin_interfaces/Time stamp\n')
        assert by_topic['/ctrl'].digest == installed_hash('std_msgs', 'Header')
        stamps = [reader.deserialize(raw, c.msgtype).stamp.nanosec
                  for c, _, raw in reader.messages([by_topic['/ctrl']])]
        assert stamps == [5 * MS, 15 * MS, 25 * MS]
    with BagSource(bag) as source:
        assert source.storage == 'mcap' and source.message_count == 33
        assert {n: t.count for n, t in source.topics.items()} == {'/clock': 30, '/ctrl': 3}
        times = [t for _, t, _ in source.messages(source.topics['/ctrl'].connections)]
        assert times == [T0 + 5 * MS + 1, T0 + 15 * MS + 1, T0 + 25 * MS + 1]


def test_the_publishers_qos_is_stored_for_playback(tmp_path):
    from rosbags.highlevel import AnyReader
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )

    latched = Qos(QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE,
                  QosDurability.TRANSIENT_LOCAL, QosTime(9223372036, 854775807),
                  QosTime(9223372036, 854775807), QosLiveliness.AUTOMATIC,
                  QosTime(9223372036, 854775807), False)
    with BagWriter(tmp_path / 'run', Definitions()) as writer:
        writer.add_topic('/map_header', 'std_msgs/msg/Header', [latched])
    with AnyReader([tmp_path / 'run']) as reader:
        (connection,) = reader.connections
        assert connection.ext.offered_qos_profiles == [latched]


def test_messages_taken_out_of_order_are_written_in_log_time_order():
    written = []
    ordered = InOrder(lambda connection, t, raw: written.append((t, connection, raw)), 10)
    # Topic by topic: b's message at 5 comes after a's at 8; equal times keep their order.
    for connection, t in (('a', 3), ('a', 8), ('b', 5), ('b', 8)):
        ordered.add(connection, t, b'%d' % t)
    assert ordered.flush() == 0 and ordered.waiting == 4  # the newest is 8: all within 10
    ordered.add('a', 14, b'14')
    ordered.add('b', 4, b'4')  # late, still within the wait
    assert ordered.flush() == 2  # newest 14: 3 and 4 are 10 older or more
    assert written == [(3, 'a', b'3'), (4, 'b', b'4')]
    ordered.add('a', 30, b'30')
    assert ordered.flush() == 4  # newest 30: up to 20
    assert [t for t, _, _ in written] == [3, 4, 5, 8, 8, 14]
    assert [c for t, c, _ in written if t == 8] == ['a', 'b']
    ordered.add('b', 2, b'2')  # later than the wait: written at once, out of order
    assert ordered.flush() == 1 and written[-1] == (2, 'b', b'2')
    assert ordered.flush(everything=True) == 1 and written[-1][0] == 30
    assert ordered.waiting == 0 and ordered.flush(everything=True) == 0


def test_a_full_disk_is_one_sentence_while_writing_and_when_closing(full_disk):
    definitions = Definitions()
    payload = b'\x00\x01\x00\x00' + bytes(1000)
    with pytest.raises(RecordError, match=r'^cannot write to .*/small/big: .*No space left'):
        with BagWriter(full_disk / 'big', definitions) as writer:
            blob = writer.add_topic('/blob', 'std_msgs/msg/ByteMultiArray')
            for i in range(2000):  # 2 MB: the first 1 MiB chunk does not fit
                writer.write(blob, T0 + i, payload)
    writer = BagWriter(full_disk / 'small', definitions).open()
    blob = writer.add_topic('/blob', 'std_msgs/msg/ByteMultiArray')
    for i in range(200):  # 200 kB: held in the open chunk until the bag is closed
        writer.write(blob, T0 + i, payload)
    with pytest.raises(RecordError, match=r'^cannot finish .*/small/small: .*No space left'):
        writer.close()
