"""The transforms of a TFMessage read from raw CDR bytes (analysis/tf_message.py).

The bytes come from real serializers: rosbags' (its typestore ships ``tf2_msgs/msg/TFMessage``,
little and big endian) and ``rclpy.serialization`` of the test interface laid out like it
(``tf2_msgs`` is not installable from PyPI).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from rosbags.typesys import get_typestore, Stores

from ros2_deadline_monitor.analysis.errors import CdrError
from ros2_deadline_monitor.analysis.stamp_field import (
    MessageLayout,
    primitive,
    SequenceType,
    StringType,
    time_layout,
)
from ros2_deadline_monitor.analysis.tf_message import is_tf_layout, read_transforms

NS = 1_000_000_000
STORE = get_typestore(Stores.ROS2_JAZZY)
T = STORE.types
SEC = st.integers(-(2**31), 2**31 - 1)
NANOSEC = st.integers(0, NS - 1)
FRAME = st.text(st.characters(codec='utf-8', exclude_characters='\x00'), max_size=12)
FLOAT = st.floats(allow_nan=False, allow_infinity=False)
ELEMENT = st.tuples(SEC, NANOSEC, FRAME, FRAME, st.lists(FLOAT, min_size=7, max_size=7))


def tf_message(elements: list[tuple[int, int, str, str, list[float]]]) -> Any:
    """Build a rosbags ``tf2_msgs/msg/TFMessage``."""
    return T['tf2_msgs/msg/TFMessage'](transforms=[
        T['geometry_msgs/msg/TransformStamped'](
            header=T['std_msgs/msg/Header'](
                stamp=T['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec),
                frame_id=parent),
            child_frame_id=child,
            transform=T['geometry_msgs/msg/Transform'](
                translation=T['geometry_msgs/msg/Vector3'](x=v[0], y=v[1], z=v[2]),
                rotation=T['geometry_msgs/msg/Quaternion'](x=v[3], y=v[4], z=v[5], w=v[6])))
        for sec, nanosec, parent, child, v in elements])


def serialize(elements: list[tuple[int, int, str, str, list[float]]],
              little_endian: bool = True) -> bytes:
    return bytes(STORE.serialize_cdr(tf_message(elements), 'tf2_msgs/msg/TFMessage',
                                     little_endian=little_endian))


def expected(elements: list[tuple[int, int, str, str, list[float]]]
             ) -> list[tuple[bytes, bytes, int]]:
    return [(parent.encode(), child.encode(), sec * NS + nanosec)
            for sec, nanosec, parent, child, _ in elements]


@settings(max_examples=200)
@given(st.lists(ELEMENT, max_size=6), st.booleans())
def test_every_transform_of_real_tf_messages(elements: list, little_endian: bool) -> None:
    raw = serialize(elements, little_endian)
    assert list(read_transforms(raw)) == expected(elements)


@settings(max_examples=100)
@given(st.lists(ELEMENT, min_size=1, max_size=3), st.data())
def test_every_truncation_is_an_error_or_the_true_prefix(elements: list, data: Any) -> None:
    raw = serialize(elements)
    cut = data.draw(st.integers(0, len(raw) - 1))
    got = []
    with pytest.raises(CdrError):
        for transform in read_transforms(raw[:cut]):
            got.append(transform)
    assert got == expected(elements)[:len(got)]


def test_from_rclpy_serialization_of_a_type_laid_out_alike(test_msgs: Any) -> None:
    from rclpy.serialization import serialize_message
    msg = test_msgs.TFMessageLike(transforms=[
        test_msgs.TransformStampedLike(child_frame_id=child) for child in ('a', 'bb', 'ccc')])
    for i, element in enumerate(msg.transforms):
        element.header.frame_id = 'odom' * i
        element.header.stamp.sec = 100 + i
        element.header.stamp.nanosec = 7 * i
        element.transform.translation.x = 1.5
    raw = serialize_message(msg)
    assert list(read_transforms(raw)) == [
        (b'', b'a', 100 * NS), (b'odom', b'bb', 101 * NS + 7),
        (b'odomodom', b'ccc', 102 * NS + 14)]


def test_refused_encodings_and_corrupt_counts() -> None:
    raw = serialize([(1, 2, 'map', 'odom', [0.0] * 7)])
    with pytest.raises(CdrError, match='not an XCDR1'):
        list(read_transforms(b'\x00\x07' + raw[2:]))  # PLAIN_CDR2: laid out otherwise
    with pytest.raises(CdrError, match='cannot fit'):
        list(read_transforms(raw[:4] + b'\xff\xff\xff\x00' + raw[8:]))
    with pytest.raises(CdrError, match='not an XCDR1'):
        list(read_transforms(b'\x00'))
    assert list(read_transforms(serialize([]))) == []


def test_tf_layout_is_told_by_shape() -> None:
    f64 = primitive('float64')
    vector = MessageLayout('geometry_msgs/msg/Vector3', (('x', f64), ('y', f64), ('z', f64)))
    quaternion = MessageLayout('geometry_msgs/msg/Quaternion',
                               (('x', f64), ('y', f64), ('z', f64), ('w', f64)))
    header = MessageLayout('std_msgs/msg/Header',
                           (('stamp', time_layout()), ('frame_id', StringType())))
    transform = MessageLayout('geometry_msgs/msg/Transform',
                              (('translation', vector), ('rotation', quaternion)))
    element = MessageLayout('geometry_msgs/msg/TransformStamped', (
        ('header', header), ('child_frame_id', StringType()), ('transform', transform)))
    tf = MessageLayout('tf2_msgs/msg/TFMessage', (('transforms', SequenceType(element)),))
    assert is_tf_layout(tf)
    assert not is_tf_layout(MessageLayout('x/msg/Y', (('transforms', SequenceType(header)),)))
    assert not is_tf_layout(MessageLayout('x/msg/Y', (('transforms',
                                                       SequenceType(element, bound=2)),)))
    wide = MessageLayout('x/msg/E', (('header', header),
                                     ('child_frame_id', StringType(wide=True)),
                                     ('transform', transform)))
    assert not is_tf_layout(MessageLayout('x/msg/Y', (('transforms', SequenceType(wide)),)))


@settings(max_examples=50)
@given(st.lists(ELEMENT, max_size=4))
def test_from_rclpy_serialization_of_tf2_msgs(elements: list) -> None:
    tf2_msgs = pytest.importorskip('tf2_msgs.msg', reason='tf2_msgs not built: scripts/dev setup')
    from geometry_msgs.msg import TransformStamped
    from rclpy.serialization import serialize_message

    transforms = []
    for sec, nanosec, parent, child, v in elements:
        element = TransformStamped(child_frame_id=child)
        element.header.frame_id = parent
        element.header.stamp.sec, element.header.stamp.nanosec = sec, nanosec
        element.transform.translation.x, element.transform.rotation.w = v[0], v[6]
        transforms.append(element)
    raw = serialize_message(tf2_msgs.TFMessage(transforms=transforms))
    assert list(read_transforms(raw)) == expected(elements)
