"""Stamp field paths resolved into offset rules on the CDR bytes (analysis/stamp_field.py).

The layouts are written out by hand here (the core gets plain descriptions, never ROS
classes); the bytes come from the real serializers: ``rclpy.serialization`` (Fast DDS's
XCDR1 little endian) and rosbags' (for big endian). Types that the standard packages lack
(laid out like ``tf2_msgs/TFMessage``, stamps after padding or strings) are the project's
test interfaces, built by ``scripts/dev setup``.
"""

from __future__ import annotations

from pathlib import Path
import struct
from typing import Any

from builtin_interfaces.msg import Time
from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from rclpy.serialization import serialize_message
from rosbags.typesys import get_types_from_msg, get_typestore, Stores
from sensor_msgs.msg import Imu, TimeReference
from std_msgs.msg import Header

from ros2_deadline_monitor.analysis.cdr import read_stamp_ns
from ros2_deadline_monitor.analysis.errors import CdrError, ConfigError
from ros2_deadline_monitor.analysis.stamp_field import (
    _Fixed,
    _fixed,
    ArrayType,
    check_stamp_field,
    DEFAULT_STAMP_FIELD,
    MessageLayout,
    OpaqueType,
    parse_stamp_field,
    PathStep,
    primitive,
    resolve_stamp_field,
    SequenceType,
    stamp_reader_for,
    StampFieldError,
    StringType,
    time_layout,
)

TEST_MSG_DIR = Path(__file__).resolve().parents[1] / 'interfaces' / 'deadline_monitor_test_msgs'
TEST_PKG = 'deadline_monitor_test_msgs/msg'
NS = 1_000_000_000

TIME = time_layout()
F64 = primitive('float64')
HEADER = MessageLayout('std_msgs/msg/Header', (('stamp', TIME), ('frame_id', StringType())))
VECTOR3 = MessageLayout('geometry_msgs/msg/Vector3', (('x', F64), ('y', F64), ('z', F64)))
QUATERNION = MessageLayout('geometry_msgs/msg/Quaternion',
                           (('x', F64), ('y', F64), ('z', F64), ('w', F64)))
TRANSFORM = MessageLayout('geometry_msgs/msg/Transform',
                          (('translation', VECTOR3), ('rotation', QUATERNION)))
TRANSFORM_STAMPED_LIKE = MessageLayout(f'{TEST_PKG}/TransformStampedLike', (
    ('header', HEADER), ('child_frame_id', StringType()), ('transform', TRANSFORM)))
TF_LIKE = MessageLayout(f'{TEST_PKG}/TFMessageLike',
                        (('transforms', SequenceType(TRANSFORM_STAMPED_LIKE)),))
AFTER_FIXED = MessageLayout(f'{TEST_PKG}/StampAfterFixed', (
    ('kind', primitive('uint8')), ('value', F64), ('code', primitive('uint16')),
    ('stamp', TIME)))
AFTER_STRING = MessageLayout(f'{TEST_PKG}/StampAfterString',
                             (('label', StringType()), ('stamp', TIME)))
AFTER_WSTRING = MessageLayout(f'{TEST_PKG}/StampAfterWString',
                              (('label', StringType(wide=True)), ('stamp', TIME)))
MIXED = MessageLayout(f'{TEST_PKG}/MixedLayout', (
    ('flag', primitive('bool')), ('vector', ArrayType(F64, 3)),
    ('samples', SequenceType(primitive('int16'))), ('name', StringType(bound=8)),
    ('times', ArrayType(TIME, 2)), ('headers', SequenceType(HEADER)),
    ('blob', SequenceType(primitive('uint8'))), ('last', F64), ('stamp', TIME)))
IMU = MessageLayout('sensor_msgs/msg/Imu', (
    ('header', HEADER), ('orientation', QUATERNION),
    ('orientation_covariance', ArrayType(F64, 9))))  # (the rest does not matter here)
TIME_REFERENCE = MessageLayout('sensor_msgs/msg/TimeReference', (
    ('header', HEADER), ('time_ref', TIME), ('source', StringType())))

SEC = st.integers(min_value=-(2**31), max_value=2**31 - 1)
NANOSEC = st.integers(min_value=0, max_value=NS - 1)
TEXT = st.text(max_size=20)
SHORT_TEXT = st.text(alphabet='abcdefgh', max_size=8)


def stamp(sec: int, nanosec: int) -> Time:
    return Time(sec=sec, nanosec=nanosec)


def header(sec: int, nanosec: int, frame_id: str = '') -> Header:
    return Header(stamp=stamp(sec, nanosec), frame_id=frame_id)


# -- the path syntax ------------------------------------------------------------------------


@pytest.mark.parametrize(('path', 'steps'), [
    ('header.stamp', (PathStep('header', None), PathStep('stamp', None))),
    ('transforms[0].header.stamp', (PathStep('transforms', 0), PathStep('header', None),
                                    PathStep('stamp', None))),
    ('stamp', (PathStep('stamp', None),)),
    ('a_1[12].B', (PathStep('a_1', 12), PathStep('B', None))),
])
def test_parse_valid_paths(path: str, steps: tuple[PathStep, ...]) -> None:
    assert parse_stamp_field(path) == steps


@pytest.mark.parametrize(('path', 'why'), [
    ('', 'empty string'),
    ('header..stamp', 'part 2 is an empty name'),
    ('.stamp', 'part 1 is an empty name'),
    ('header.', 'part 2 is an empty name'),
    ('header[a].stamp', "'header\\[a\\]' is not a field name"),
    ('transforms[-1].stamp', 'not a field name'),
    ('transforms[01].stamp', 'not a field name'),
    ('a[0][1]', 'not a field name'),
    ('1abc', 'not a field name'),
    ('header stamp', 'not a field name'),
    ('header/stamp', 'not a field name'),
    ('a[99999999999]', 'out of range'),
])
def test_parse_rejects_with_a_reason(path: str, why: str) -> None:
    with pytest.raises(StampFieldError, match=why):
        parse_stamp_field(path)


def test_check_names_the_parameter_and_is_a_config_error() -> None:
    assert check_stamp_field('topic.tf.stamp_field', 'transforms[0].header.stamp') == (
        'transforms[0].header.stamp')
    with pytest.raises(ConfigError, match=r'^topic\.tf\.stamp_field: .*part 2'):
        check_stamp_field('topic.tf.stamp_field', 'a..b')
    with pytest.raises(StampFieldError, match='got 3'):
        check_stamp_field('x', 3)


# -- rules: constant offsets where the layout allows ------------------------------------------


def test_default_header_stamp_is_todays_reader() -> None:
    rule = resolve_stamp_field(IMU)
    assert rule.path == DEFAULT_STAMP_FIELD
    assert (rule.offset, rule.checks, rule.leading) == (4, (), True)
    assert rule.read is read_stamp_ns  # the default costs exactly what it did before
    assert stamp_reader_for(IMU) is read_stamp_ns


def test_padding_before_a_time_is_computed() -> None:
    # kind at 0, 7 bytes of padding, value at 8, code at 16, 2 bytes of padding, stamp at 20
    # (payload offsets); + 4 bytes of encapsulation header.
    rule = resolve_stamp_field(AFTER_FIXED, 'stamp')
    assert (rule.offset, rule.checks, rule.leading) == (24, (), False)


def test_first_element_of_a_sequence_is_a_constant_after_a_count_check() -> None:
    rule = resolve_stamp_field(TF_LIKE, 'transforms[0].header.stamp')
    assert (rule.offset, rule.checks) == (8, ((4, 0),))
    assert 'byte 8' in rule.describe() and 'count at byte 4' in rule.describe()


def test_fixed_elements_before_the_index_keep_the_offset_constant() -> None:
    times = MessageLayout('x/msg/Times', (('flag', primitive('uint8')),
                                          ('times', ArrayType(TIME, 3))))
    assert resolve_stamp_field(times, 'times[2]').offset == 4 + 4 + 2 * 8
    seq = MessageLayout('x/msg/Times', (('times', SequenceType(TIME)),))
    rule = resolve_stamp_field(seq, 'times[3]')
    assert (rule.offset, rule.checks) == (4 + 4 + 3 * 8, ((4, 3),))


def test_after_a_string_the_rule_reads_lengths() -> None:
    for layout, path in ((AFTER_STRING, 'stamp'), (TIME_REFERENCE, 'time_ref'),
                         (TF_LIKE, 'transforms[1].header.stamp'), (MIXED, 'stamp')):
        rule = resolve_stamp_field(layout, path)
        assert rule.offset is None, path
        assert 'lengths are read' in rule.describe()


# -- values against the real serializers ------------------------------------------------------


@given(SEC, NANOSEC, TEXT)
def test_time_reference_after_a_frame_id(sec: int, nanosec: int, frame_id: str) -> None:
    msg = TimeReference(header=header(1, 2, frame_id), time_ref=stamp(sec, nanosec),
                        source='gps')
    raw = serialize_message(msg)
    assert stamp_reader_for(TIME_REFERENCE, 'time_ref')(raw) == sec * NS + nanosec
    assert stamp_reader_for(TIME_REFERENCE)(raw) == 1 * NS + 2


@given(SEC, NANOSEC)
def test_imu(sec: int, nanosec: int) -> None:
    raw = serialize_message(Imu(header=header(sec, nanosec, 'imu')))
    assert stamp_reader_for(IMU, 'header.stamp')(raw) == sec * NS + nanosec


@settings(max_examples=50)
@given(st.integers(0, 255), st.floats(allow_nan=False), st.integers(0, 65535), SEC, NANOSEC)
def test_stamp_after_fixed_fields(test_msgs: Any, kind: int, value: float, code: int,
                                  sec: int, nanosec: int) -> None:
    msg = test_msgs.StampAfterFixed(kind=kind, value=value, code=code, stamp=stamp(sec, nanosec))
    assert stamp_reader_for(AFTER_FIXED, 'stamp')(serialize_message(msg)) == sec * NS + nanosec


@settings(max_examples=50)
@given(TEXT, SEC, NANOSEC)
def test_stamp_after_a_string(test_msgs: Any, label: str, sec: int, nanosec: int) -> None:
    msg = test_msgs.StampAfterString(label=label, stamp=stamp(sec, nanosec))
    assert stamp_reader_for(AFTER_STRING, 'stamp')(serialize_message(msg)) == sec * NS + nanosec


def tf_like(test_msgs: Any, stamps: list[tuple[int, int]], frames: list[str]) -> Any:
    return test_msgs.TFMessageLike(transforms=[
        test_msgs.TransformStampedLike(header=header(sec, nanosec, frame),
                                       child_frame_id=frame * 2)
        for (sec, nanosec), frame in zip(stamps, frames, strict=True)])


@settings(max_examples=50)
@given(st.lists(st.tuples(SEC, NANOSEC, TEXT), min_size=1, max_size=4))
def test_tf_like_every_element(test_msgs: Any, elements: list[tuple[int, int, str]]) -> None:
    raw = serialize_message(tf_like(test_msgs, [(s, n) for s, n, _ in elements],
                                    [f for _, _, f in elements]))
    for i, (sec, nanosec, _) in enumerate(elements):
        assert stamp_reader_for(TF_LIKE, f'transforms[{i}].header.stamp')(raw) == (
            sec * NS + nanosec)


@settings(max_examples=50)
@given(st.booleans(), st.lists(st.integers(-(2**15), 2**15 - 1), max_size=5), SHORT_TEXT,
       st.lists(st.tuples(SEC, NANOSEC), min_size=2, max_size=2),
       st.lists(st.tuples(SEC, NANOSEC, TEXT), min_size=1, max_size=3),
       st.binary(max_size=9), SEC, NANOSEC)
def test_mixed_layout(test_msgs: Any, flag: bool, samples: list[int], name: str,
                      times: list[tuple[int, int]], headers: list[tuple[int, int, str]],
                      blob: bytes, sec: int, nanosec: int) -> None:
    msg = test_msgs.MixedLayout(
        flag=flag, vector=[1.0, 2.0, 3.0], samples=samples, name=name,
        times=[stamp(s, n) for s, n in times],
        headers=[header(s, n, f) for s, n, f in headers], blob=blob, last=0.5,
        stamp=stamp(sec, nanosec))
    raw = serialize_message(msg)
    assert stamp_reader_for(MIXED, 'stamp')(raw) == sec * NS + nanosec
    for i, (s, n) in enumerate(times):
        assert stamp_reader_for(MIXED, f'times[{i}]')(raw) == s * NS + n
    for i, (s, n, _) in enumerate(headers):
        assert stamp_reader_for(MIXED, f'headers[{i}].stamp')(raw) == s * NS + n


# -- bytes that do not hold the stamp -------------------------------------------------------


def test_empty_sequence_is_a_cdr_error_not_a_value(test_msgs: Any) -> None:
    raw = serialize_message(test_msgs.TFMessageLike())
    with pytest.raises(CdrError, match='transforms has 0 elements, the stamp is in element 0'):
        stamp_reader_for(TF_LIKE, 'transforms[0].header.stamp')(raw)
    one = serialize_message(tf_like(test_msgs, [(1, 2)], ['map']))
    with pytest.raises(CdrError, match='transforms has 1 elements, the stamp is in element 1'):
        stamp_reader_for(TF_LIKE, 'transforms[1].header.stamp')(one)
    mixed = serialize_message(test_msgs.MixedLayout())
    with pytest.raises(CdrError, match='headers has 0 elements'):
        stamp_reader_for(MIXED, 'headers[0].stamp')(mixed)


@pytest.mark.parametrize(('layout', 'path'), [
    (TF_LIKE, 'transforms[0].header.stamp'), (TF_LIKE, 'transforms[1].header.stamp'),
    (AFTER_FIXED, 'stamp'), (AFTER_STRING, 'stamp'), (MIXED, 'stamp'),
    (MIXED, 'headers[1].stamp'), (IMU, 'header.stamp')])
def test_every_truncation_is_an_error_or_the_true_value(test_msgs: Any,
                                                        layout: MessageLayout,
                                                        path: str) -> None:
    msgs = {
        TF_LIKE.type_name: tf_like(test_msgs, [(1, 2), (3, 4)], ['map', 'odom_long']),
        AFTER_FIXED.type_name: test_msgs.StampAfterFixed(stamp=stamp(5, 6)),
        AFTER_STRING.type_name: test_msgs.StampAfterString(label='abc', stamp=stamp(5, 6)),
        MIXED.type_name: test_msgs.MixedLayout(
            samples=[1, 2, 3], headers=[header(7, 8, 'a'), header(9, 10, 'bcd')],
            blob=b'xyz', stamp=stamp(5, 6)),
        IMU.type_name: Imu(header=header(5, 6, 'imu')),
    }
    raw = serialize_message(msgs[layout.type_name])
    read = stamp_reader_for(layout, path)
    truth = read(raw)
    for size in range(len(raw)):
        try:
            value = read(raw[:size])
        except CdrError:
            continue
        assert value == truth, size


@pytest.mark.parametrize('count', [0x7FFFFFFF, 0xFFFFFFFF, 1000])
def test_absurd_counts_are_cdr_errors_at_once(test_msgs: Any, count: int) -> None:
    msg = test_msgs.MixedLayout(samples=[1], headers=[header(1, 2, 'a')], stamp=stamp(5, 6))
    raw = bytearray(serialize_message(msg))
    # samples' count sits after flag (1 byte) and vector (padding to 8, then 24 bytes).
    at = 4 + 32
    assert struct.unpack_from('<I', raw, at)[0] == 1
    struct.pack_into('<I', raw, at, count)
    with pytest.raises(CdrError):
        stamp_reader_for(MIXED, 'stamp')(bytes(raw))
    with pytest.raises(CdrError):
        stamp_reader_for(MIXED, 'headers[0].stamp')(bytes(raw))


def test_string_length_past_the_end_is_a_cdr_error() -> None:
    raw = b'\x00\x01\x00\x00' + struct.pack('<I', 1000) + b'abc\x00' + b'\x00' * 8
    with pytest.raises(CdrError, match='runs past the end'):
        stamp_reader_for(AFTER_STRING, 'stamp')(raw)


@pytest.mark.parametrize('rep_id', [b'\x00\x02', b'\x00\x03', b'\x00\x06', b'\x00\x07',
                                    b'\x00\x09', b'\x00\x0b', b'\x01\x01'])
def test_only_xcdr1_is_read_beyond_the_leading_stamp(rep_id: bytes) -> None:
    body = struct.pack('<I', 4) + b'abc\x00' + struct.pack('<iI', 1, 2)
    for layout, path in ((AFTER_STRING, 'stamp'), (AFTER_FIXED, 'stamp'),
                         (TF_LIKE, 'transforms[0].header.stamp')):
        raw = rep_id + b'\x00\x00' + body + b'\x00' * 24
        with pytest.raises(CdrError):
            stamp_reader_for(layout, path)(raw)


def test_leading_stamp_reads_plain_cdr2_as_before() -> None:
    raw = b'\x00\x07\x00\x00' + struct.pack('<iI', 3, 4)
    assert stamp_reader_for(TIME_REFERENCE)(raw) == 3 * NS + 4


def test_nanosec_out_of_range_is_a_cdr_error() -> None:
    body = b'\x05' + b'\x00' * 19 + struct.pack('<iI', 1, NS)
    with pytest.raises(CdrError, match='nanosec out of range'):
        stamp_reader_for(AFTER_FIXED, 'stamp')(b'\x00\x01\x00\x00' + body)
    string = b'\x00\x01\x00\x00' + struct.pack('<I', 1) + b'\x00' + b'\x00' * 3 + struct.pack(
        '<iI', 1, NS)
    with pytest.raises(CdrError, match='nanosec out of range'):
        stamp_reader_for(AFTER_STRING, 'stamp')(string)
    tf = b'\x00\x01\x00\x00' + struct.pack('<IiI', 1, 1, NS) + b'\x00' * 64
    with pytest.raises(CdrError, match='nanosec out of range'):
        stamp_reader_for(TF_LIKE, 'transforms[0].header.stamp')(tf)


def test_memoryview_and_bytearray_work_like_bytes(test_msgs: Any) -> None:
    raw = serialize_message(tf_like(test_msgs, [(1, 2), (3, 4)], ['a', 'bb']))
    for path in ('transforms[0].header.stamp', 'transforms[1].header.stamp'):
        read = stamp_reader_for(TF_LIKE, path)
        assert read(memoryview(raw)) == read(bytearray(raw)) == read(raw)


# -- big endian, from rosbags' serializer ---------------------------------------------------


@pytest.fixture(scope='module')
def rosbags_store() -> Any:
    """Return a rosbags typestore: the Jazzy types and the test interfaces (their .msg)."""
    store = get_typestore(Stores.ROS2_JAZZY)
    types: dict[str, Any] = {}
    for path in sorted((TEST_MSG_DIR / 'msg').glob('*.msg')):
        if path.stem != 'StampAfterWString':  # rosbags' .msg parser has no wstring
            types.update(get_types_from_msg(path.read_text(), f'{TEST_PKG}/{path.stem}'))
    store.register(types)
    return store


def rosbags_tf_like(store: Any, stamps: list[tuple[int, int]], frame: str) -> Any:
    t = store.types
    transform = t['geometry_msgs/msg/Transform'](
        translation=t['geometry_msgs/msg/Vector3'](x=1.0, y=2.0, z=3.0),
        rotation=t['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0))
    return t[f'{TEST_PKG}/TFMessageLike'](transforms=[
        t[f'{TEST_PKG}/TransformStampedLike'](
            header=t['std_msgs/msg/Header'](
                stamp=t['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec),
                frame_id=frame * (i + 1)),
            child_frame_id='child', transform=transform)
        for i, (sec, nanosec) in enumerate(stamps)])


@pytest.mark.parametrize('little_endian', [True, False])
def test_big_and_little_endian_from_rosbags(rosbags_store: Any, little_endian: bool) -> None:
    store, t = rosbags_store, rosbags_store.types
    ser = store.serialize_cdr

    def time(sec: int, nanosec: int) -> Any:
        return t['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec)

    tf = rosbags_tf_like(store, [(-5, 7), (8, 9)], 'odom')
    raw = bytes(ser(tf, f'{TEST_PKG}/TFMessageLike', little_endian=little_endian))
    assert raw[1] == (1 if little_endian else 0)
    assert stamp_reader_for(TF_LIKE, 'transforms[0].header.stamp')(raw) == -5 * NS + 7
    assert stamp_reader_for(TF_LIKE, 'transforms[1].header.stamp')(raw) == 8 * NS + 9

    fixed = t[f'{TEST_PKG}/StampAfterFixed'](kind=1, value=2.5, code=3, stamp=time(10, 11))
    raw = bytes(ser(fixed, fixed.__msgtype__, little_endian=little_endian))
    assert stamp_reader_for(AFTER_FIXED, 'stamp')(raw) == 10 * NS + 11

    after = t[f'{TEST_PKG}/StampAfterString'](label='hé', stamp=time(12, 13))
    raw = bytes(ser(after, after.__msgtype__, little_endian=little_endian))
    assert stamp_reader_for(AFTER_STRING, 'stamp')(raw) == 12 * NS + 13

    empty = t[f'{TEST_PKG}/TFMessageLike'](transforms=[])
    raw = bytes(ser(empty, empty.__msgtype__, little_endian=little_endian))
    with pytest.raises(CdrError, match='0 elements'):
        stamp_reader_for(TF_LIKE, 'transforms[0].header.stamp')(raw)


# -- refusals, with the reason -------------------------------------------------------------


@pytest.mark.parametrize(('layout', 'path', 'why'), [
    (IMU, 'header.stmp', "header has no field 'stmp' \\(its fields: stamp, frame_id\\)"),
    (AFTER_FIXED, DEFAULT_STAMP_FIELD, "has no field 'header'"),
    (AFTER_FIXED, 'value', 'value is a float64, not a builtin_interfaces/Time'),
    (IMU, 'header', 'header is a std_msgs/msg/Header, not a builtin_interfaces/Time'),
    (IMU, 'header.frame_id.x', 'header.frame_id is a string, not a message'),
    (TF_LIKE, 'transforms.header.stamp',
     r'not a message, so it has no field .header. \(index it: transforms\[0\].header\)'),
    (TF_LIKE, 'transforms[0]', 'TransformStampedLike, not a builtin_interfaces/Time'),
    (IMU, 'header[0].stamp', 'not an array or a sequence, so it cannot be indexed'),
    (MIXED, 'times[2]', 'times has 2 elements, no element 2'),
    (MessageLayout('x/msg/B', (('t', SequenceType(TIME, bound=2)),)), 't[2]',
     't holds at most 2 elements, no element 2'),
    (AFTER_WSTRING, 'stamp',
     'cannot be read raw: label \\(wstring\\) comes before it, and its serialized width'),
    (MessageLayout('x/msg/W', (('w', OpaqueType('wchar')), ('stamp', TIME))), 'stamp',
     'w \\(wchar\\) comes before it'),
    (MessageLayout('x/msg/U', (('u', OpaqueType('y/msg/Unknown', 'it has no definition')),
                               ('stamp', TIME))), 'stamp',
     'u \\(y/msg/Unknown\\) comes before it, and it has no definition'),
    (MessageLayout('x/msg/U', (('u', OpaqueType('y/msg/Unknown', 'it has no definition')),)),
     'u.stamp', 'u is a y/msg/Unknown, not a message.*it has no definition'),
    (MessageLayout('x/msg/D', (('d', MessageLayout('builtin_interfaces/msg/Duration',
                                                   TIME.fields)),)), 'd',
     'builtin_interfaces/msg/Duration, not a builtin_interfaces/Time'),
    (MessageLayout('builtin_interfaces/msg/Duration', TIME.fields), DEFAULT_STAMP_FIELD,
     "has no field 'header'"),
])
def test_refusals_say_why(layout: MessageLayout, path: str, why: str) -> None:
    with pytest.raises(StampFieldError, match=why) as info:
        resolve_stamp_field(layout, path)
    assert isinstance(info.value, ConfigError)
    assert path in str(info.value) and layout.type_name in str(info.value)


def test_fields_before_an_unreadable_member_still_resolve() -> None:
    layout = MessageLayout('x/msg/W', (('stamp', TIME), ('w', StringType(wide=True)),
                                       ('later', TIME)))
    assert resolve_stamp_field(layout, 'stamp').leading
    with pytest.raises(StampFieldError):
        resolve_stamp_field(layout, 'later')


# -- the default covers what the leading-stamp reader read before -----------------------------


@pytest.mark.parametrize('layout', [
    TIME,
    HEADER,
    MessageLayout('x/msg/Stamped', (('stamp', TIME), ('value', F64))),
    MessageLayout('x/msg/Renamed', (('hdr', HEADER), ('value', F64))),
    MessageLayout('builtin_interfaces/Time', TIME.fields),
])
def test_default_without_a_header_field_reads_the_leading_stamp(layout: MessageLayout) -> None:
    assert resolve_stamp_field(layout).read is read_stamp_ns


def test_default_prefers_a_header_field_that_is_not_first() -> None:
    layout = MessageLayout('x/msg/Late', (('id', primitive('uint8')), ('header', HEADER)))
    assert resolve_stamp_field(layout).offset == 8


# -- fixed-size skipping: O(1) in the count, same as one element at a time --------------------

FIXED_TYPES = st.recursive(
    st.sampled_from(['uint8', 'int16', 'uint32', 'float64', 'bool']).map(primitive),
    lambda inner: st.one_of(
        st.tuples(inner, st.integers(1, 4)).map(lambda a: ArrayType(a[0], a[1])),
        st.lists(inner, min_size=1, max_size=4).map(
            lambda members: MessageLayout('x/msg/S', tuple(
                (f'm{i}', m) for i, m in enumerate(members))))),
    max_leaves=6)


@given(FIXED_TYPES, st.integers(0, 40), st.integers(0, 64))
def test_fixed_skip_equals_one_by_one(field_type: Any, count: int, start: int) -> None:
    fixed = _fixed(field_type)
    assert isinstance(fixed, _Fixed)
    pos = start
    for _ in range(count):
        pos = fixed.end(pos)
    assert fixed.skip(start, count) == pos


@settings(max_examples=50)
@given(st.lists(st.tuples(st.sampled_from(['le', 'be', 'xcdr2', 'short', 'bad_ns']), SEC,
                          NANOSEC), min_size=1, max_size=20))
def test_a_fixed_offset_read_in_batch_equals_the_reader(
        messages: list[tuple[str, int, int]]) -> None:
    # The stamp at byte 24 (AFTER_FIXED): the batch reader of a bag chunk takes plain CDR
    # only and leaves every other message (ok False) to the per-message reader.
    rule = resolve_stamp_field(AFTER_FIXED, 'stamp')
    raws = []
    for kind, sec, nanosec in messages:
        head = {'le': b'\x00\x01', 'be': b'\x00\x00', 'xcdr2': b'\x00\x07'}.get(kind, b'\x00\x01')
        pack = '>iI' if kind == 'be' else '<iI'
        body = b'\x05' + b'\x00' * 19 + struct.pack(pack, sec, NS if kind == 'bad_ns' else nanosec)
        raws.append((head + b'\x00\x00' + body)[:10 if kind == 'short' else None])
    starts = np.cumsum([0] + [len(r) for r in raws[:-1]])
    buffer = np.frombuffer(b''.join(raws), np.uint8)
    stamps, ok = rule.read_many(buffer, starts, np.array([len(r) for r in raws]))
    for raw, stamp_ns, read in zip(raws, stamps.tolist(), ok.tolist(), strict=True):
        if read:
            assert stamp_ns == rule.read(raw)
        else:
            with pytest.raises(CdrError):
                rule.read(raw)
    assert ok.tolist() == [kind in ('le', 'be') for kind, _, _ in messages]
