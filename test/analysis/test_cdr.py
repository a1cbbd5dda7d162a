"""Tests for reading stamps from serialized CDR bytes (analysis/cdr.py)."""

import os
from pathlib import Path
import struct
import subprocess
import sys

from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Pose, PoseArray, PoseStamped
from hypothesis import given
from hypothesis import strategies as st
import numpy as np
import pytest
from rclpy.serialization import serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu
from std_msgs.msg import Float64, Header, String

from ros2_deadline_monitor.analysis import cdr
from ros2_deadline_monitor.analysis.cdr import (
    encapsulation_little_endian,
    first_field_is_stamp,
    read_stamp_ns,
    STAMPED_FIRST_FIELD_TYPES,
)
from ros2_deadline_monitor.analysis.errors import CdrError, MonitorError

SEC = st.integers(min_value=-(2**31), max_value=2**31 - 1)
NANOSEC = st.integers(min_value=0, max_value=999_999_999)
FRAME = st.text(alphabet='abcdefghijklmnopqrstuvwxyz_/', max_size=12)


def header(sec: int, nanosec: int, frame_id: str = '') -> Header:
    msg = Header(frame_id=frame_id)
    msg.stamp.sec = sec
    msg.stamp.nanosec = nanosec
    return msg


def plain(rep_id: bytes, fmt: str, sec: int, nanosec: int, tail: bytes = b'') -> bytes:
    """Hand-built CDR: representation id, options, stamp, rest of the message."""
    return rep_id + b'\x00\x00' + struct.pack(fmt, sec, nanosec) + tail


@given(SEC, NANOSEC, FRAME)
def test_header(sec, nanosec, frame_id):
    raw = serialize_message(header(sec, nanosec, frame_id))
    assert read_stamp_ns(raw) == sec * 10**9 + nanosec


@given(SEC, NANOSEC)
def test_imu(sec, nanosec):
    raw = serialize_message(Imu(header=header(sec, nanosec, 'imu')))
    assert read_stamp_ns(raw) == sec * 10**9 + nanosec


@given(SEC, NANOSEC)
def test_pose_stamped(sec, nanosec):
    raw = serialize_message(PoseStamped(header=header(sec, nanosec, 'map')))
    assert read_stamp_ns(raw) == sec * 10**9 + nanosec


@given(SEC, NANOSEC, st.integers(min_value=0, max_value=50))
def test_pose_array(sec, nanosec, count):
    poses = [Pose() for _ in range(count)]
    for i, pose in enumerate(poses):
        pose.position.x = float(i)
    raw = serialize_message(PoseArray(header=header(sec, nanosec, 'map'), poses=poses))
    assert read_stamp_ns(raw) == sec * 10**9 + nanosec


@given(SEC, NANOSEC)
def test_time_and_clock(sec, nanosec):
    assert read_stamp_ns(serialize_message(Time(sec=sec, nanosec=nanosec))) == (
        sec * 10**9 + nanosec)
    clock = Clock(clock=Time(sec=sec, nanosec=nanosec))
    assert read_stamp_ns(serialize_message(clock)) == sec * 10**9 + nanosec


def test_rclpy_serializes_little_endian_xcdr1():
    raw = serialize_message(header(1, 2))
    assert raw[:2] == b'\x00\x01'
    assert encapsulation_little_endian(raw)


def test_negative_sec_before_epoch():
    raw = serialize_message(header(-1, 250_000_000))
    assert read_stamp_ns(raw) == -750_000_000
    raw = serialize_message(header(-(2**31), 0))
    assert read_stamp_ns(raw) == -(2**31) * 10**9


@given(SEC, NANOSEC)
def test_big_endian_by_hand(sec, nanosec):
    raw = plain(b'\x00\x00', '>iI', sec, nanosec, b'\x00\x00\x00\x01x\x00')
    assert read_stamp_ns(raw) == sec * 10**9 + nanosec
    assert not encapsulation_little_endian(raw)


@pytest.mark.parametrize(('rep_id', 'fmt', 'little'), [
    (b'\x00\x00', '>iI', False),
    (b'\x00\x01', '<iI', True),
    (b'\x00\x06', '>iI', False),
    (b'\x00\x07', '<iI', True),
])
def test_plain_encodings(rep_id, fmt, little):
    raw = plain(rep_id, fmt, -5, 999_999_999, b'\x00' * 8)
    assert read_stamp_ns(raw) == -5 * 10**9 + 999_999_999
    assert encapsulation_little_endian(raw) is little


def test_exactly_twelve_bytes_and_buffer_types():
    raw = plain(b'\x00\x01', '<iI', 3, 4)
    assert len(raw) == 12
    expected = 3_000_000_004
    assert read_stamp_ns(raw) == expected
    assert read_stamp_ns(bytearray(raw)) == expected
    assert read_stamp_ns(memoryview(raw)) == expected
    assert read_stamp_ns(memoryview(bytearray(raw))) == expected


@pytest.mark.parametrize('size', [0, 1, 2, 4, 8, 11])
def test_too_short(size):
    raw = plain(b'\x00\x01', '<iI', 3, 4)[:size]
    with pytest.raises(CdrError, match=rf'too short for a stamp: {size} bytes, need 12'):
        read_stamp_ns(raw)


@pytest.mark.parametrize('rep_id', [b'\x00\x04', b'\x00\x05', b'\x00\x0c', b'\x00\xff',
                                    b'\x01\x00', b'\x01\x01', b'\xff\xff'])
def test_unknown_representation_id(rep_id):
    raw = plain(rep_id, '<iI', 3, 4)
    with pytest.raises(CdrError, match=rf'unknown CDR representation id 0x{rep_id.hex()}'):
        read_stamp_ns(raw)
    with pytest.raises(CdrError, match='unknown CDR representation id'):
        encapsulation_little_endian(raw)


@pytest.mark.parametrize(('rep_id', 'name'), [
    (b'\x00\x02', 'PL_CDR_BE'), (b'\x00\x03', 'PL_CDR_LE'),
    (b'\x00\x08', 'DELIMIT_CDR2_BE'), (b'\x00\x09', 'DELIMIT_CDR2_LE'),
    (b'\x00\x0a', 'PL_CDR2_BE'), (b'\x00\x0b', 'PL_CDR2_LE'),
])
def test_encodings_with_headers_before_members_are_rejected(rep_id, name):
    raw = plain(rep_id, '<iI', 3, 4)
    with pytest.raises(CdrError, match=rf'{name} \(0x{rep_id.hex()}\) has no stamp at offset 4'):
        read_stamp_ns(raw)
    assert encapsulation_little_endian(raw) is bool(rep_id[1] & 1)


@pytest.mark.parametrize('nanosec', [1_000_000_000, 2**32 - 1])
@pytest.mark.parametrize(('rep_id', 'fmt'), [(b'\x00\x00', '>iI'), (b'\x00\x01', '<iI')])
def test_nanosec_out_of_range(nanosec, rep_id, fmt):
    with pytest.raises(CdrError, match=rf'nanosec out of range: {nanosec} >= 1e9'):
        read_stamp_ns(plain(rep_id, fmt, 0, nanosec))


def test_errors_are_monitor_errors():
    with pytest.raises(MonitorError):
        read_stamp_ns(b'')


def test_encapsulation_too_short():
    with pytest.raises(CdrError, match='too short for an encapsulation header: 3 bytes'):
        encapsulation_little_endian(b'\x00\x01\x00')


@pytest.mark.parametrize(('msg_class', 'expected'), [
    (Imu, True),
    (PoseArray, True),
    (PoseStamped, True),
    (Header, True),
    (Clock, True),
    (Time, True),
    (Float64, False),
    (String, False),
    (Pose, False),
])
def test_first_field_is_stamp_real_classes(msg_class, expected):
    fields = msg_class.get_fields_and_field_types()
    assert first_field_is_stamp(fields) is expected


def test_first_field_is_stamp_with_type_name():
    time_fields = Time.get_fields_and_field_types()
    assert first_field_is_stamp(time_fields, 'builtin_interfaces/msg/Time')
    assert first_field_is_stamp(time_fields, 'builtin_interfaces/Time')
    # Duration has Time's layout but its value is not a stamp.
    duration_fields = Duration.get_fields_and_field_types()
    assert duration_fields == time_fields
    assert not first_field_is_stamp(duration_fields, 'builtin_interfaces/msg/Duration')
    assert not first_field_is_stamp(duration_fields, 'builtin_interfaces/Duration')
    assert first_field_is_stamp(Imu.get_fields_and_field_types(), 'sensor_msgs/msg/Imu')
    assert not first_field_is_stamp(Float64.get_fields_and_field_types(), 'std_msgs/msg/Float64')
    # The type's own name qualifies it even if the field dict is unexpected.
    assert first_field_is_stamp({}, 'std_msgs/msg/Header')


def test_first_field_is_stamp_spellings_and_edge_cases():
    assert first_field_is_stamp({'stamp': 'builtin_interfaces/msg/Time', 'x': 'double'})
    assert first_field_is_stamp({'h': 'std_msgs/msg/Header'})
    assert not first_field_is_stamp({})
    assert not first_field_is_stamp({'x': 'double', 'header': 'std_msgs/Header'})
    assert not first_field_is_stamp({'headers': 'sequence<std_msgs/Header>'})
    assert not first_field_is_stamp({'stamps': 'builtin_interfaces/Time[2]'})
    assert not first_field_is_stamp({'nanosec': 'uint32', 'sec': 'int32'})
    assert STAMPED_FIRST_FIELD_TYPES == {'std_msgs/msg/Header', 'builtin_interfaces/msg/Time'}


def test_core_modules_import_without_rclpy():
    code = (
        'import sys\n'
        "for name in ('rclpy', 'std_msgs', 'builtin_interfaces', 'rosidl_runtime_py'):\n"
        '    sys.modules[name] = None\n'
        'import ros2_deadline_monitor.analysis.cdr, ros2_deadline_monitor.analysis.host\n'
    )
    package_parent = str(Path(cdr.__file__).resolve().parents[2])
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [package_parent, env.get('PYTHONPATH')]))
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.returncode == 0, result.stderr


def _pack_messages(messages: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sizes = np.array([len(m) for m in messages], np.int64)
    starts = np.cumsum(sizes) - sizes
    return np.frombuffer(b''.join(messages), np.uint8), starts, sizes


def _one_by_one(messages: list[bytes]) -> list[int | None]:
    out: list[int | None] = []
    for raw in messages:
        try:
            out.append(read_stamp_ns(raw))
        except CdrError:
            out.append(None)
    return out


def test_read_stamps_ns_reads_what_read_stamp_ns_reads() -> None:
    """The batch reader leaves to the per-message one exactly what it could not read."""
    messages = [
        b'\x00\x01\x00\x00' + struct.pack('<iI', 5, 7) + b'tail',
        b'\x00\x00\x00\x00' + struct.pack('>iI', -3, 999_999_999),
        b'\x00\x07\x00\x00' + struct.pack('<iI', 2**31 - 1, 1),
        b'\x00\x06\x00\x00' + struct.pack('>iI', -(2**31), 0),
        b'\x00\x03\x00\x00' + struct.pack('<iI', 1, 1),  # PL_CDR_LE: not at offset 4
        b'\x00\x01\x00\x00' + struct.pack('<iI', 1, 10**9),  # nanosec out of range
        b'\x00\x01\x00\x00\x01',  # too short
        b'\x01\x01\x00\x00' + struct.pack('<iI', 1, 1),  # unknown representation id
        b'',
    ]
    stamps, ok = cdr.read_stamps_ns(*_pack_messages(messages))
    expected = _one_by_one(messages)
    assert ok.tolist() == [e is not None for e in expected]
    assert [int(s) for s, k in zip(stamps, ok, strict=True) if k] == [
        e for e in expected if e is not None]


@given(st.lists(st.tuples(st.sampled_from([0, 1, 2, 6, 7, 9]),
                          st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1),
                          st.integers(0, 5)), max_size=20))
def test_read_stamps_ns_agrees_with_read_stamp_ns(items: list[tuple[int, int, int, int]]) -> None:
    messages = []
    for rep, sec, nanosec, extra in items:
        order = '<' if rep & 1 else '>'
        messages.append(bytes([0, rep, 0, 0]) + struct.pack(f'{order}iI', sec, nanosec)
                        + b'x' * extra)
    stamps, ok = cdr.read_stamps_ns(*_pack_messages(messages))
    assert [int(s) if k else None for s, k in zip(stamps, ok, strict=True)] == _one_by_one(
        messages)
