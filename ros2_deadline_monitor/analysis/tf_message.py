"""Read the transforms of a ``tf2_msgs/TFMessage`` straight from its raw CDR bytes.

``TFMessage`` is ``geometry_msgs/TransformStamped[] transforms``; each element is a Header
(``int32 sec``, ``uint32 nanosec``, ``string frame_id``), ``string child_frame_id`` and a
Transform (seven ``float64``: translation x, y, z, rotation x, y, z, w). Per transform the
monitor needs only the two frame names and the stamp, so this reads the sequence count, then
per element the stamp and the two strings, and skips the seven doubles with XCDR1's
alignment (8-byte members aligned to 8 from the end of the 4-byte encapsulation header),
as Fast DDS and ``rclpy.serialization.serialize_message`` write it, little or big endian.
XCDR2 lays sequences of structures out with headers of their own: refused, never guessed.

The frame names are returned as raw bytes (without the terminating NUL): the caller keys its
per-transform state by them and decodes a pair's names once, when it first sees the pair.
Python only, no ROS import; nothing else of the message is read.
"""

from __future__ import annotations

from collections.abc import Iterator
import struct

from ros2_deadline_monitor.analysis.errors import CdrError
from ros2_deadline_monitor.analysis.stamp_field import (
    MessageLayout,
    Primitive,
    SequenceType,
    StringType,
)

__all__ = ['TFMESSAGE_TYPE', 'is_tf_layout', 'read_transforms']

TFMESSAGE_TYPE = 'tf2_msgs/msg/TFMessage'
_NS_PER_S = 1_000_000_000
_ORIGIN = 4
"""The payload starts after the encapsulation header; alignment counts from there."""
_TRANSFORM_BYTES = 56
"""Seven float64: translation (3) and rotation (4)."""
_MAX_TRANSFORMS = 1 << 20
"""More transforms than a message could hold in its bytes is a corrupt count."""

_LE = (struct.Struct('<I').unpack_from, struct.Struct('<iII').unpack_from)
_BE = (struct.Struct('>I').unpack_from, struct.Struct('>iII').unpack_from)
"""Per byte order: a ``uint32`` (a count, a length), and a stamp with the length after it."""
_BY_REPRESENTATION = {0x00: _BE, 0x01: _LE}


def read_transforms(raw: bytes | memoryview) -> Iterator[tuple[bytes, bytes, int]]:
    """Yield ``(frame_id, child_frame_id, stamp_ns)`` of each transform in ``raw``.

    ``raw`` is the whole serialized message, encapsulation header included (what a
    ``raw=True`` subscription or a bag hands over). Raises ``CdrError`` for an encoding
    other than XCDR1 (``CDR_LE``/``CDR_BE``), a count or a string running past the end, a
    string without its NUL, or a ``nanosec`` of 1e9 or more; transforms before the fault
    have been yielded by then (the caller counts the message as malformed).
    """
    size = len(raw)
    if size < _ORIGIN + 4 or raw[0] or raw[1] not in _BY_REPRESENTATION:
        rep = (raw[0] << 8 | raw[1]) if size >= 2 else None
        raise CdrError(f'not an XCDR1 TFMessage (representation {rep!r}, {size} bytes)')
    unpack_u32, unpack_stamp = _BY_REPRESENTATION[raw[1]]
    (count,) = unpack_u32(raw, _ORIGIN)
    if count > _MAX_TRANSFORMS or count * 72 > size:  # an element takes at least 72 bytes
        raise CdrError(f'{count} transforms cannot fit in {size} bytes')
    pos = _ORIGIN + 4
    for _ in range(count):
        pos += -(pos - _ORIGIN) & 3
        if pos + 12 > size:
            raise CdrError(f'message ends at byte {size} inside a transform')
        sec, nanosec, length = unpack_stamp(raw, pos)
        if nanosec >= _NS_PER_S:
            raise CdrError(f'nanosec out of range: {nanosec} >= 1e9')
        start = pos + 12
        pos = start + length
        if length == 0 or pos > size or raw[pos - 1]:
            raise CdrError(f'frame_id of {length} bytes at byte {start} is no string')
        frame = bytes(raw[start:pos - 1])
        pos += -(pos - _ORIGIN) & 3
        if pos + 4 > size:
            raise CdrError(f'message ends at byte {size} before child_frame_id')
        (length,) = unpack_u32(raw, pos)
        start = pos + 4
        pos = start + length
        if length == 0 or pos > size or raw[pos - 1]:
            raise CdrError(f'child_frame_id of {length} bytes at byte {start} is no string')
        child = bytes(raw[start:pos - 1])
        pos += (-(pos - _ORIGIN) & 7) + _TRANSFORM_BYTES
        if pos > size:
            raise CdrError(f'message ends at byte {size} inside a transform')
        yield frame, child, sec * _NS_PER_S + nanosec


def _is_vector(field_type: object, names: tuple[str, ...]) -> bool:
    return (isinstance(field_type, MessageLayout)
            and tuple(name for name, _ in field_type.fields) == names
            and all(isinstance(t, Primitive) and t.size == 8 and t.name in ('float64', 'double')
                    for _, t in field_type.fields))


def _is_string(field_type: object) -> bool:
    return isinstance(field_type, StringType) and not field_type.wide


def is_tf_layout(layout: MessageLayout) -> bool:
    """Tell whether a type is laid out like ``tf2_msgs/TFMessage`` (``read_transforms`` reads it).

    True for ``tf2_msgs/msg/TFMessage`` itself and for any type of the same shape: one
    unbounded sequence of (Header, string, Transform of a Vector3 and a Quaternion).
    """
    if len(layout.fields) != 1:
        return False
    sequence = layout.fields[0][1]
    if not isinstance(sequence, SequenceType) or sequence.bound is not None:
        return False
    element = sequence.element
    if not isinstance(element, MessageLayout) or len(element.fields) != 3:
        return False
    (_, header), (_, child), (_, transform) = element.fields
    if not (isinstance(header, MessageLayout) and len(header.fields) == 2
            and _is_string(header.fields[1][1]) and _is_string(child)):
        return False
    stamp = header.fields[0][1]
    if not (isinstance(stamp, MessageLayout)
            and [(t.size, t.name.startswith('u') or t.name.startswith('unsigned'))
                 for _, t in stamp.fields if isinstance(t, Primitive)]
            == [(4, False), (4, True)]):
        return False
    return (isinstance(transform, MessageLayout) and len(transform.fields) == 2
            and _is_vector(transform.fields[0][1], ('x', 'y', 'z'))
            and _is_vector(transform.fields[1][1], ('x', 'y', 'z', 'w')))
