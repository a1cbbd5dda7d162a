"""Read a message's stamp straight from its serialized CDR bytes.

The monitor subscribes with ``raw=True`` so it never pays for deserialization (DESIGN §6).
For types whose first field is ``std_msgs/Header`` or ``builtin_interfaces/Time`` the
stamp is the first thing in the payload: after the 4-byte encapsulation header come
``int32 sec`` and ``uint32 nanosec``, both 4-byte aligned from the start of the payload, so
they sit at byte offset 4 in every plain encoding (XCDR1 ``CDR_*`` and XCDR2 ``PLAIN_CDR2_*``).

Fast DDS in Jazzy (``rmw_fastrtps_cpp``) sends ROS types as XCDR1 little endian,
representation id ``0x0001``, as does ``rclpy.serialization.serialize_message``.
Parameter-list (``PL_CDR``, ``PL_CDR2``) and delimited (``DELIMIT_CDR2``) encodings put
member or delimiter headers in front of the members, so the stamp is not at offset 4 there;
they are rejected rather than misread.

Which types qualify is decided by the live adapter from the message class:
``first_field_is_stamp(Msg.get_fields_and_field_types(), type_name)``. This module is pure
Python and imports no ROS package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import struct

import numpy as np

from ros2_deadline_monitor.analysis.errors import CdrError

__all__ = [
    'STAMPED_FIRST_FIELD_TYPES',
    'encapsulation_little_endian',
    'first_field_is_stamp',
    'read_stamp_ns',
    'read_stamps_ns',
]

#: Types that, as the first field of a message, put the stamp at payload offset 0.
#: Spelled ``pkg/msg/Type``; ``get_fields_and_field_types()`` spells them ``pkg/Type``.
STAMPED_FIRST_FIELD_TYPES = frozenset({'std_msgs/msg/Header', 'builtin_interfaces/msg/Time'})

_DURATION = 'builtin_interfaces/msg/Duration'
_NS_PER_S = 1_000_000_000
_STAMP_OFFSET = 4
_MIN_SIZE = _STAMP_OFFSET + 8

_Unpack = Callable[[bytes | memoryview, int], tuple[int, int]]
_UNPACK_LE: _Unpack = struct.Struct('<iI').unpack_from
_UNPACK_BE: _Unpack = struct.Struct('>iI').unpack_from

# Indexed by the second byte of the representation id (the first must be 0): a tuple index
# is the cheapest lookup that works alike for bytes, bytearray and memoryview.
_ENCODINGS: dict[int, tuple[str, _Unpack | None]] = {
    0x00: ('CDR_BE', _UNPACK_BE),
    0x01: ('CDR_LE', _UNPACK_LE),
    0x02: ('PL_CDR_BE', None),
    0x03: ('PL_CDR_LE', None),
    0x06: ('PLAIN_CDR2_BE', _UNPACK_BE),
    0x07: ('PLAIN_CDR2_LE', _UNPACK_LE),
    0x08: ('DELIMIT_CDR2_BE', None),
    0x09: ('DELIMIT_CDR2_LE', None),
    0x0A: ('PL_CDR2_BE', None),
    0x0B: ('PL_CDR2_LE', None),
}
_UNPACKERS: tuple[_Unpack | None, ...] = tuple(
    _ENCODINGS[i][1] if i in _ENCODINGS else None for i in range(256)
)


def _reject(raw: bytes | memoryview) -> CdrError:
    """Explain why ``raw`` has no readable stamp (the slow path, off the per-message cost)."""
    if len(raw) < _MIN_SIZE:
        return CdrError(f'message too short for a stamp: {len(raw)} bytes, need {_MIN_SIZE}')
    rep_id = (raw[0] << 8) | raw[1]
    if raw[0] == 0 and raw[1] in _ENCODINGS:
        name = _ENCODINGS[raw[1]][0]
        return CdrError(f'encapsulation {name} (0x{rep_id:04x}) has no stamp at offset 4')
    return CdrError(f'unknown CDR representation id 0x{rep_id:04x}')


def read_stamp_ns(raw: bytes | memoryview) -> int:
    """Return the leading stamp of a serialized message as ``sec * 1e9 + nanosec`` ns.

    ``raw`` is the whole serialized message including the encapsulation header, as handed
    to a ``raw=True`` subscription callback. The caller must know that the type's first
    field is a Header or a Time (``first_field_is_stamp``); the bytes cannot tell.
    Negative seconds (before the epoch) give negative nanoseconds.

    Raises ``CdrError`` for data shorter than 12 bytes, an encapsulation without the stamp
    at offset 4, or ``nanosec >= 1e9`` (not a valid ``builtin_interfaces/Time``).
    """
    if len(raw) < _MIN_SIZE or raw[0]:
        raise _reject(raw)
    unpack = _UNPACKERS[raw[1]]
    if unpack is None:
        raise _reject(raw)
    sec, nanosec = unpack(raw, _STAMP_OFFSET)
    if nanosec >= _NS_PER_S:
        raise CdrError(f'nanosec out of range: {nanosec} >= 1e9')
    return sec * _NS_PER_S + nanosec


_LEADING_LITTLE = tuple(i for i, (name, unpack) in _ENCODINGS.items()
                        if unpack is _UNPACK_LE)
_LEADING_BIG = tuple(i for i, (name, unpack) in _ENCODINGS.items() if unpack is _UNPACK_BE)
_BYTES_8 = np.arange(8)


def read_stamps_ns(buffer: np.ndarray, starts: np.ndarray, sizes: np.ndarray,
                   offset: int = _STAMP_OFFSET, little: tuple[int, ...] = _LEADING_LITTLE,
                   big: tuple[int, ...] = _LEADING_BIG) -> tuple[np.ndarray, np.ndarray]:
    """Read the stamps of many messages at once: ``(stamps_ns, ok)``.

    The batch form of ``read_stamp_ns`` for a bag chunk: message ``i`` is
    ``buffer[starts[i]:starts[i] + sizes[i]]`` (``buffer`` uint8) and its ``sec`` sits at byte
    ``offset``, little endian for the representation ids in ``little``, big endian for those
    in ``big``. ``ok[i]`` False means "not read here": the caller asks the per-message reader,
    which gives the value or the ``CdrError`` (a short message, another encoding, a
    ``nanosec`` out of range), so the two never disagree. Vectorized: no per-message Python.
    """
    n = len(starts)
    stamps = np.zeros(n, np.int64)
    ok = sizes >= offset + 8
    if not ok.any():  # also: no byte of the buffer is read below unless it holds a stamp
        return stamps, ok
    at = np.where(ok, starts, 0)
    first, rep = buffer[at], buffer[np.minimum(at + 1, len(buffer) - 1)]
    is_little = np.isin(rep, little)
    ok &= (first == 0) & (is_little | np.isin(rep, big))
    at = np.where(ok, at, 0)
    raw = np.ascontiguousarray(buffer[(at + offset)[:, None] + _BYTES_8])
    if not ok.all():
        raw[~ok] = 0
    words_le, words_be = raw.view('<u4'), raw.view('>u4')
    sec = np.where(is_little, words_le[:, 0], words_be[:, 0]).astype(np.int64)
    nanosec = np.where(is_little, words_le[:, 1], words_be[:, 1]).astype(np.int64)
    sec = np.where(sec >= 1 << 31, sec - (1 << 32), sec)  # int32
    ok &= nanosec < _NS_PER_S
    stamps[ok] = sec[ok] * _NS_PER_S + nanosec[ok]
    return stamps, ok


def encapsulation_little_endian(raw: bytes | memoryview) -> bool:
    """Return True when the payload of ``raw`` is little endian.

    Raises ``CdrError`` when ``raw`` has fewer than 4 bytes or a representation id this
    module does not know.
    """
    if len(raw) < _STAMP_OFFSET:
        raise CdrError(f'message too short for an encapsulation header: {len(raw)} bytes')
    if raw[0] or raw[1] not in _ENCODINGS:
        raise CdrError(f'unknown CDR representation id 0x{(raw[0] << 8) | raw[1]:04x}')
    return bool(raw[1] & 1)


def _full_type_name(type_name: str) -> str:
    """Spell ``pkg/Type`` as ``pkg/msg/Type``; leave other spellings alone."""
    parts = type_name.split('/')
    if len(parts) == 2:
        return f'{parts[0]}/msg/{parts[1]}'
    return type_name


def first_field_is_stamp(
    fields_and_types: Mapping[str, str], type_name: str | None = None
) -> bool:
    """Tell whether ``read_stamp_ns`` applies to a message type.

    ``fields_and_types`` is ``Msg.get_fields_and_field_types()`` of an rclpy message class
    (insertion order is field order), e.g. ``{'header': 'std_msgs/Header', ...}`` for
    ``sensor_msgs/Imu``. True when the first field is a Header or a Time.

    A Time topic itself (fields ``sec: int32, nanosec: uint32``) also qualifies. That shape is
    shared with ``builtin_interfaces/Duration``, whose value is not a stamp: pass the topic's
    ``type_name`` (``pkg/msg/Type`` or ``pkg/Type``) to tell them apart; without it the shape
    alone decides.
    """
    if type_name is not None and _full_type_name(type_name) in STAMPED_FIRST_FIELD_TYPES:
        return True
    items = list(fields_and_types.items())
    if not items:
        return False
    if _full_type_name(items[0][1]) in STAMPED_FIRST_FIELD_TYPES:
        return True
    if items[:2] == [('sec', 'int32'), ('nanosec', 'uint32')]:
        return type_name is None or _full_type_name(type_name) != _DURATION
    return False
