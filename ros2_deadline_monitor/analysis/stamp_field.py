"""Find a ``builtin_interfaces/Time`` anywhere in a message and read it from the raw CDR bytes.

``topic.<id>.stamp_field`` names where a topic's stamp is: ``header.stamp`` (the default),
``transforms[0].header.stamp`` for a ``tf2_msgs/TFMessage``, or a Time after other fields.
The path is resolved ONCE against the type's layout (a plain description built by the live adapter
from rosidl introspection, or offline from the bag's message definitions) into a
``StampRule`` whose ``read(raw)`` finds the stamp in the serialized bytes without
deserializing anything else (DESIGN §6).

The layout rules are XCDR1 as Fast DDS writes ROS types (and as
``rclpy.serialization.serialize_message`` does): a 4-byte encapsulation header, then the
members in order, each primitive aligned to its size (at most 8) relative to the end of that
header; nested messages add no alignment of their own; a string is a ``uint32`` length that
counts the terminating NUL, then the bytes; a sequence is a ``uint32`` count, then the
elements; an array is its elements. Little or big endian per the encapsulation id.

Resolution does as much as it can at start-up: while every member before the stamp has a
fixed size the stamp's offset is a constant (``header.stamp`` -> byte 4, exactly today's
``read_stamp_ns``, which is what the rule then is). Indexing into a sequence adds a check of
its count at run time (an empty ``transforms`` is a ``CdrError``, never a wrong value). After
a string or a sequence the rule reads lengths at run time and keeps the alignment exact.
Members whose width differs between middlewares (``wstring``, ``wchar``, ``long double``)
cannot be skipped: a stamp after one is refused with that reason.

XCDR2 (``PLAIN_CDR2``) aligns 8-byte members to 4 and puts headers before sequences of
structures, so only the leading stamp at byte 4 is read from it; for every other rule it is a
``CdrError``. Python and numpy, no ROS import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import re
import struct
from typing import NamedTuple

import numpy as np

from ros2_deadline_monitor.analysis.cdr import read_stamp_ns, read_stamps_ns
from ros2_deadline_monitor.analysis.errors import CdrError, ConfigError

__all__ = [
    'DEFAULT_STAMP_FIELD',
    'PRIMITIVE_SIZES',
    'TIME_TYPE',
    'ArrayType',
    'MessageLayout',
    'OpaqueType',
    'PathStep',
    'Primitive',
    'SequenceType',
    'StampFieldError',
    'StampReader',
    'StampRule',
    'StringType',
    'check_stamp_field',
    'normalize_type_name',
    'parse_stamp_field',
    'primitive',
    'resolve_stamp_field',
    'stamp_reader_for',
    'time_layout',
]

DEFAULT_STAMP_FIELD = 'header.stamp'
TIME_TYPE = 'builtin_interfaces/msg/Time'

#: Serialized size of each primitive under its ROS .msg name and its IDL (rosidl) name.
PRIMITIVE_SIZES: dict[str, int] = {
    'bool': 1, 'boolean': 1, 'byte': 1, 'octet': 1, 'char': 1, 'int8': 1, 'uint8': 1,
    'int16': 2, 'uint16': 2, 'short': 2, 'unsigned short': 2,
    'int32': 4, 'uint32': 4, 'long': 4, 'unsigned long': 4, 'float32': 4, 'float': 4,
    'int64': 8, 'uint64': 8, 'long long': 8, 'unsigned long long': 8, 'float64': 8,
    'double': 8,
}
_NS_PER_S = 1_000_000_000
_HEADER = 4  # encapsulation header: the payload (and the alignment origin) starts here
_MAX_INDEX = 2**31 - 1


class StampFieldError(ConfigError):
    """A stamp field path is malformed, or does not lead to a Time that can be read raw."""


# -- layouts: what the live and the bag adapters describe, in plain values -----------------


@dataclass(frozen=True)
class Primitive:
    """A fixed-size scalar (``int32``, ``float64``, ``bool``...); ``size`` in bytes."""

    name: str
    size: int


@dataclass(frozen=True)
class StringType:
    """A ``string`` (``bound`` for ``string<=N``); ``wide`` for ``wstring``."""

    bound: int | None = None
    wide: bool = False


@dataclass(frozen=True)
class ArrayType:
    """A fixed-length array ``T[N]``: N elements, no length on the wire."""

    element: FieldType
    length: int


@dataclass(frozen=True)
class SequenceType:
    """A sequence ``T[]`` or ``T[<=N]``: a ``uint32`` count, then the elements."""

    element: FieldType
    bound: int | None = None


@dataclass(frozen=True)
class OpaqueType:
    """A member whose serialized form is unknown (``wchar``, a type without a definition).

    It can be described, so that fields before it still resolve, but never skipped or
    entered; ``reason`` says why.
    """

    description: str
    reason: str = 'its serialized width differs between middlewares'


@dataclass(frozen=True)
class MessageLayout:
    """A message type: its full name (``pkg/msg/Type``) and its fields in order."""

    type_name: str
    fields: tuple[tuple[str, FieldType], ...]

    def field_type(self, name: str) -> FieldType | None:
        """Return the type of field ``name``, None if there is no such field."""
        for field_name, field_type in self.fields:
            if field_name == name:
                return field_type
        return None


FieldType = Primitive | StringType | ArrayType | SequenceType | OpaqueType | MessageLayout


def primitive(name: str) -> Primitive | OpaqueType:
    """Describe a primitive named as in .msg files or rosidl (``float64``, ``double``)."""
    size = PRIMITIVE_SIZES.get(name)
    if size is None:
        return OpaqueType(name)
    return Primitive(name, size)


def time_layout() -> MessageLayout:
    """Describe ``builtin_interfaces/msg/Time``."""
    return MessageLayout(TIME_TYPE, (('sec', Primitive('int32', 4)),
                                     ('nanosec', Primitive('uint32', 4))))


def normalize_type_name(type_name: str) -> str:
    """Spell ``pkg/Type`` as ``pkg/msg/Type``; leave other spellings alone."""
    parts = type_name.split('/')
    if len(parts) == 2:
        return f'{parts[0]}/msg/{parts[1]}'
    return type_name


def _describe(field_type: FieldType) -> str:
    """Name a type for a message: ``float64``, ``string``, ``geometry_msgs/msg/Pose[]``."""
    if isinstance(field_type, Primitive):
        return field_type.name
    if isinstance(field_type, StringType):
        name = 'wstring' if field_type.wide else 'string'
        return name if field_type.bound is None else f'{name}<={field_type.bound}'
    if isinstance(field_type, ArrayType):
        return f'{_describe(field_type.element)}[{field_type.length}]'
    if isinstance(field_type, SequenceType):
        bound = '' if field_type.bound is None else f'<={field_type.bound}'
        return f'{_describe(field_type.element)}[{bound}]'
    if isinstance(field_type, OpaqueType):
        return field_type.description
    return field_type.type_name


# -- the path syntax ----------------------------------------------------------------------


class PathStep(NamedTuple):
    """One ``name`` or ``name[index]`` of a stamp field path."""

    name: str
    index: int | None


_STEP_RE = re.compile(r'([A-Za-z][A-Za-z0-9_]*)(?:\[(0|[1-9][0-9]*)\])?')
_SYNTAX = 'a field path such as header.stamp or transforms[0].header.stamp'


def parse_stamp_field(path: str) -> tuple[PathStep, ...]:
    """Split ``a.b[0].c`` into steps; raise ``StampFieldError`` saying what is wrong."""
    if not isinstance(path, str):
        raise StampFieldError(f'expected {_SYNTAX}, got {path!r}')
    if not path:
        raise StampFieldError(f'expected {_SYNTAX}, got an empty string')
    steps = []
    for position, part in enumerate(path.split('.'), start=1):
        match = _STEP_RE.fullmatch(part)
        if match is None:
            why = ('an empty name' if not part else
                   f'{part!r} is not a field name with an optional [index]')
            raise StampFieldError(f'{path!r} is not {_SYNTAX}: part {position} is {why}')
        index = None if match.group(2) is None else int(match.group(2))
        if index is not None and index > _MAX_INDEX:
            raise StampFieldError(f'{path!r}: index {index} is out of range')
        steps.append(PathStep(match.group(1), index))
    return tuple(steps)


def check_stamp_field(param: str, path: object) -> str:
    """Return ``path`` if its syntax is valid, else raise ``StampFieldError`` naming ``param``."""
    try:
        parse_stamp_field(path)  # type: ignore[arg-type]
    except StampFieldError as err:
        raise StampFieldError(f'{param}: {err}') from None
    return path  # type: ignore[return-value]


# -- fixed-size members: where they end, as a function of where they start -------------------


class _Fixed:
    """A member without strings or sequences: its size depends only on its start mod 8."""

    __slots__ = ('sizes', '_cycle')

    def __init__(self, sizes: tuple[int, ...]) -> None:
        self.sizes = sizes
        # For k repetitions (arrays, sequences): after at most 8 elements the start residue
        # is on a cycle; remember each cycle's length and bytes so a skip is O(1) in k.
        self._cycle: dict[int, tuple[int, int]] = {}
        for residue in range(8):
            seen: dict[int, int] = {}
            r, total = residue, 0
            while r not in seen:
                seen[r] = total
                total += sizes[r]
                r = (r + sizes[r]) & 7
            self._cycle[r] = (len(seen) - list(seen).index(r), total - seen[r])

    def end(self, pos: int) -> int:
        """Where one instance that starts at payload offset ``pos`` ends."""
        return pos + self.sizes[pos & 7]

    def skip(self, pos: int, count: int) -> int:
        """Where ``count`` consecutive instances starting at ``pos`` end."""
        sizes = self.sizes
        while count and (pos & 7) not in self._cycle:
            pos += sizes[pos & 7]
            count -= 1
        if count:
            length, nbytes = self._cycle[pos & 7]
            pos += (count // length) * nbytes
            for _ in range(count % length):
                pos += sizes[pos & 7]
        return pos


def _fixed(field_type: FieldType) -> _Fixed | None:
    """Return the ``_Fixed`` shape of a type, None when its size depends on the data."""
    if isinstance(field_type, Primitive):
        size = field_type.size
        return _Fixed(tuple(-r % size + size for r in range(8)))
    if isinstance(field_type, ArrayType):
        element = _fixed(field_type.element)
        if element is None:
            return None
        return _Fixed(tuple(element.skip(r, field_type.length) - r for r in range(8)))
    if isinstance(field_type, MessageLayout):
        parts = [_fixed(t) for _, t in field_type.fields]
        if any(p is None for p in parts):
            return None
        sizes = []
        for r in range(8):
            pos = r
            for part in parts:
                pos = part.end(pos)  # type: ignore[union-attr]
            sizes.append(pos - r)
        return _Fixed(tuple(sizes))
    return None


def _min_size(field_type: FieldType) -> int:
    """Return a lower bound of the serialized size, to reject absurd counts early."""
    if isinstance(field_type, Primitive):
        return field_type.size
    if isinstance(field_type, (StringType, SequenceType)):
        return 4
    if isinstance(field_type, ArrayType):
        return field_type.length * _min_size(field_type.element)
    if isinstance(field_type, MessageLayout):
        return sum(_min_size(t) for _, t in field_type.fields)
    return 1


# -- run-time steps: used only after a member whose size is in the data ----------------------

_U32 = Callable[[bytes | memoryview, int], tuple[int]]
_Step = Callable[[bytes | memoryview, int, _U32], int]
"""``step(raw, pos, unpack_u32) -> pos``: payload offset after one member (raw has the header)."""


def _count(raw: bytes | memoryview, pos: int, u32: _U32, what: str) -> tuple[int, int]:
    """Read a ``uint32`` length at ``pos`` (aligned to 4); return it and the offset after it."""
    pos = (pos + 3) & -4
    if pos + _HEADER + 4 > len(raw):
        raise CdrError(f'message ends before the length of {what} at byte {pos + _HEADER}')
    return u32(raw, pos + _HEADER)[0], pos + 4


def _string_step(what: str) -> _Step:
    def step(raw: bytes | memoryview, pos: int, u32: _U32) -> int:
        length, pos = _count(raw, pos, u32, what)
        pos += length
        if pos + _HEADER > len(raw):
            raise CdrError(f'{what}: length {length} runs past the end of the message')
        return pos
    return step


def _advance_step(fixed: _Fixed) -> _Step:
    def step(raw: bytes | memoryview, pos: int, u32: _U32) -> int:
        return fixed.end(pos)
    return step


def _repeat(steps: tuple[_Step, ...], fixed: _Fixed | None, pos: int, count: int,
            raw: bytes | memoryview, u32: _U32) -> int:
    if fixed is not None:
        return fixed.skip(pos, count)
    for _ in range(count):
        for step in steps:
            pos = step(raw, pos, u32)
    return pos


def _sequence_step(element: FieldType, what: str) -> _Step:
    fixed = _fixed(element)
    steps = () if fixed is not None else tuple(_steps(element, f'{what}[i]'))
    least = max(1, _min_size(element))

    def step(raw: bytes | memoryview, pos: int, u32: _U32) -> int:
        count, pos = _count(raw, pos, u32, what)
        if count * least > len(raw) - _HEADER - pos:
            raise CdrError(f'{what}: {count} elements cannot fit in the message')
        return _repeat(steps, fixed, pos, count, raw, u32)
    return step


def _array_step(element: FieldType, length: int, what: str) -> _Step:
    fixed = _fixed(element)
    steps = () if fixed is not None else tuple(_steps(element, f'{what}[i]'))

    def step(raw: bytes | memoryview, pos: int, u32: _U32) -> int:
        return _repeat(steps, fixed, pos, length, raw, u32)
    return step


def _steps(field_type: FieldType, what: str) -> list[_Step]:
    """Return the run-time steps that skip one ``field_type`` member (named ``what``)."""
    fixed = _fixed(field_type)
    if fixed is not None:
        return [_advance_step(fixed)]
    if isinstance(field_type, StringType):
        _check_skippable(field_type, what)
        return [_string_step(what)]
    if isinstance(field_type, SequenceType):
        return [_sequence_step(field_type.element, what)]
    if isinstance(field_type, ArrayType):
        return [_array_step(field_type.element, field_type.length, what)]
    if isinstance(field_type, MessageLayout):
        steps = []
        for name, member in field_type.fields:
            steps += _steps(member, f'{what}.{name}')
        return steps
    _check_skippable(field_type, what)
    raise AssertionError(f'unhandled type {field_type!r}')


def _check_skippable(field_type: FieldType, what: str) -> None:
    if isinstance(field_type, OpaqueType) or (
            isinstance(field_type, StringType) and field_type.wide):
        reason = (field_type.reason if isinstance(field_type, OpaqueType)
                  else OpaqueType('wstring').reason)
        raise _UnreachableError(
            f'{what} ({_describe(field_type)}) comes before it, and {reason}, so the bytes '
            'after it cannot be located')


class _UnreachableError(Exception):
    """Internal: a member before the stamp cannot be skipped (turned into StampFieldError)."""


# -- compiling a path: constant offsets as long as possible, then run-time steps -------------


class _Compiler:
    """Walks the members before the stamp, folding everything it can into a constant."""

    def __init__(self) -> None:
        self.pos: int | None = 0  # payload offset while it is known at start-up
        self.checks: list[tuple[int, int, str]] = []  # (payload offset of a count, index, what)
        self.steps: list[_Step] = []
        self.start = 0  # payload offset where the run-time steps begin

    def skip(self, field_type: FieldType, what: str) -> None:
        """Move past one member."""
        fixed = _fixed(field_type)
        if self.pos is not None and fixed is not None:
            self.pos = fixed.end(self.pos)
            return
        if self.pos is not None and isinstance(field_type, MessageLayout):
            for name, member in field_type.fields:  # keep the fixed prefix constant
                self.skip(member, f'{what}.{name}')
            return
        self._go_dynamic()
        self.steps += _steps(field_type, what)

    def index(self, container: ArrayType | SequenceType, index: int, what: str) -> None:
        """Move to element ``index`` of an array or a sequence."""
        if isinstance(container, SequenceType):
            if self.pos is not None:
                self.pos = (self.pos + 3) & -4
                self.checks.append((self.pos, index, what))
                self.pos += 4
            else:
                self.steps.append(_index_step(index, what))
        if index == 0:
            return
        element = container.element
        fixed = _fixed(element)
        if fixed is not None and self.pos is not None:
            self.pos = fixed.skip(self.pos, index)
            return
        if fixed is None:
            self.skip(element, f'{what}[0]')  # keeps its fixed prefix constant
            index -= 1
        if index:
            self._go_dynamic()
            self.steps.append(_array_step(element, index, what))

    def _go_dynamic(self) -> None:
        if self.pos is not None:
            self.start, self.pos = self.pos, None


def _index_step(index: int, what: str) -> _Step:
    def step(raw: bytes | memoryview, pos: int, u32: _U32) -> int:
        count, pos = _count(raw, pos, u32, what)
        if count <= index:
            raise CdrError(f'{what} has {count} elements, the stamp is in element {index}')
        return pos
    return step


# -- the rule and its reader --------------------------------------------------------------

StampReader = Callable[[bytes | memoryview], int]
"""``read(raw) -> stamp ns``; raises ``CdrError`` for bytes it cannot read the stamp from."""

_Unpack = Callable[[bytes | memoryview, int], tuple[int, int]]
_TIME_LE: _Unpack = struct.Struct('<iI').unpack_from
_TIME_BE: _Unpack = struct.Struct('>iI').unpack_from
_U32_LE: _U32 = struct.Struct('<I').unpack_from
_U32_BE: _U32 = struct.Struct('>I').unpack_from
# Only XCDR1 (CDR_BE 0x0000, CDR_LE 0x0001): indexed by the second byte of the id.
_XCDR1: tuple[tuple[_Unpack, _U32] | None, ...] = (
    (_TIME_BE, _U32_BE), (_TIME_LE, _U32_LE), *([None] * 254))


def _xcdr1(raw: bytes | memoryview) -> tuple[_Unpack, _U32]:
    """Return the unpackers for ``raw``'s byte order; ``CdrError`` unless it is XCDR1."""
    if len(raw) < _HEADER:
        raise CdrError(f'message too short for an encapsulation header: {len(raw)} bytes')
    found = None if raw[0] else _XCDR1[raw[1]]
    if found is None:
        raise CdrError(f'encapsulation 0x{(raw[0] << 8) | raw[1]:04x}: a stamp that is not '
                       'the first field is located for XCDR1 (CDR_LE, CDR_BE) only')
    return found


def _stamp(sec: int, nanosec: int) -> int:
    if nanosec >= _NS_PER_S:
        raise CdrError(f'nanosec out of range: {nanosec} >= 1e9')
    return sec * _NS_PER_S + nanosec


def _constant_reader(offset: int, checks: tuple[tuple[int, int, str], ...]) -> StampReader:
    """Build a reader of a stamp at a constant byte ``offset``, after checking counts."""
    end = offset + 8

    def read(raw: bytes | memoryview) -> int:
        unpack, u32 = _xcdr1(raw)
        for at, index, what in checks:
            if at + 4 > len(raw):
                raise CdrError(f'message ends before the length of {what} at byte {at}')
            count = u32(raw, at)[0]
            if count <= index:
                raise CdrError(f'{what} has {count} elements, the stamp is in element {index}')
        if len(raw) < end:
            raise CdrError(f'message too short for the stamp at byte {offset}: '
                           f'{len(raw)} bytes')
        return _stamp(*unpack(raw, offset))

    if len(checks) > 1:
        return read
    if checks:
        ((at, index, _),) = checks

        def read_indexed(raw: bytes | memoryview) -> int:
            if len(raw) < end or raw[0] or raw[1] > 1:
                return read(raw)  # the slow path explains the error
            little = raw[1]
            if (_U32_LE if little else _U32_BE)(raw, at)[0] <= index:
                return read(raw)
            sec, nanosec = (_TIME_LE if little else _TIME_BE)(raw, offset)
            if nanosec >= _NS_PER_S:
                return read(raw)
            return sec * _NS_PER_S + nanosec

        return read_indexed

    def read_plain(raw: bytes | memoryview) -> int:
        if len(raw) < end or raw[0] or raw[1] > 1:
            return read(raw)
        sec, nanosec = (_TIME_LE if raw[1] else _TIME_BE)(raw, offset)
        if nanosec >= _NS_PER_S:
            return read(raw)
        return sec * _NS_PER_S + nanosec

    return read_plain


def _dynamic_reader(start: int, checks: tuple[tuple[int, int, str], ...],
                    steps: tuple[_Step, ...]) -> StampReader:
    """Build a reader that reads lengths at run time from payload offset ``start`` on."""
    def read(raw: bytes | memoryview) -> int:
        unpack, u32 = _xcdr1(raw)
        try:
            for at, index, what in checks:
                count = u32(raw, at + _HEADER)[0]
                if count <= index:
                    raise CdrError(
                        f'{what} has {count} elements, the stamp is in element {index}')
            pos = start
            for step in steps:
                pos = step(raw, pos, u32)
            at = ((pos + 3) & -4) + _HEADER
            if at + 8 > len(raw):
                raise CdrError(f'message ends before the stamp at byte {at}')
            return _stamp(*unpack(raw, at))
        except struct.error as err:
            raise CdrError(f'message too short: {err}') from None

    return read


@dataclass(frozen=True)
class StampRule:
    """Where a type's stamp is in its serialized bytes, resolved once from its layout.

    ``offset`` is the byte offset (counting the 4-byte encapsulation header) of ``sec`` when
    it is the same in every message, else None (lengths are read at run time). ``checks``
    names the sequences whose count is checked first, ``(byte offset of the count, index)``.
    ``read(raw)`` returns the stamp in ns or raises ``CdrError``.
    """

    type_name: str
    path: str
    offset: int | None
    checks: tuple[tuple[int, int], ...]
    read: StampReader = field(compare=False, repr=False)

    @property
    def leading(self) -> bool:
        """True when the stamp is the first thing in the payload (``read_stamp_ns`` applies)."""
        return self.offset == _HEADER and not self.checks

    def read_many(self, buffer: np.ndarray, starts: np.ndarray,
                  sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Read the stamps of many messages of one buffer at once: ``(stamps_ns, ok)``.

        For a bag chunk (``cdr.read_stamps_ns``): a constant offset without count checks is
        read vectorized where ``read`` would take its fast path; ``ok`` False leaves a
        message (all of them for any other rule) to ``read``, which is the reference.
        """
        if self.leading:
            return read_stamps_ns(buffer, starts, sizes)
        if self.offset is not None and not self.checks:
            return read_stamps_ns(buffer, starts, sizes, self.offset, little=(1,), big=(0,))
        return np.zeros(len(starts), np.int64), np.zeros(len(starts), bool)

    def describe(self) -> str:
        """One line for a status or a log: where the stamp is read from."""
        where = (f'at byte {self.offset}' if self.offset is not None
                 else 'after members whose lengths are read from each message')
        checked = ''
        if self.checks:
            checked = ', after checking the count at byte ' + ', '.join(
                str(at) for at, _ in self.checks)
        return f'{self.type_name} {self.path}: {where}{checked}'


def _leading_time(layout: MessageLayout) -> str | None:
    """Return what the default means without ``header``: the type itself or a first Time."""
    if normalize_type_name(layout.type_name) == TIME_TYPE:
        return ''
    if layout.fields:
        name, first = layout.fields[0]
        if isinstance(first, MessageLayout) and normalize_type_name(first.type_name) in (
                TIME_TYPE, 'std_msgs/msg/Header'):
            return name if normalize_type_name(first.type_name) == TIME_TYPE else (
                f'{name}.stamp')
    return None


def resolve_stamp_field(layout: MessageLayout, path: str = DEFAULT_STAMP_FIELD) -> StampRule:
    """Resolve ``path`` against ``layout`` into a ``StampRule``.

    The default ``header.stamp`` also covers what the monitor read before stamp fields
    existed: on a type without a ``header`` field it means the first field when that is a
    Header or a Time, or the message itself when the type is a Time.

    Raises ``StampFieldError`` with the reason when the path is malformed, a field does not
    exist, a step is not a message (or not an array/sequence where indexed), an index is
    beyond an array or a bounded sequence, the field is not a ``builtin_interfaces/Time``, or
    a member before it cannot be skipped in the raw bytes.
    """
    steps = parse_stamp_field(path)
    type_name = normalize_type_name(layout.type_name)
    if path == DEFAULT_STAMP_FIELD and layout.field_type('header') is None:
        leading = _leading_time(layout)
        if leading is not None:
            steps = parse_stamp_field(leading) if leading else ()
    compiler = _Compiler()
    current: FieldType = layout
    walked = ''
    try:
        for step in steps:
            if not isinstance(current, MessageLayout):
                hint = (f' (index it: {walked}[0].{step.name})'
                        if isinstance(current, (ArrayType, SequenceType)) else
                        f' ({current.reason})' if isinstance(current, OpaqueType) else '')
                raise StampFieldError(
                    f'{type_name} {path}: {walked} is a {_describe(current)}, not a message, '
                    f'so it has no field {step.name!r}{hint}')
            member = current.field_type(step.name)
            if member is None:
                names = ', '.join(n for n, _ in current.fields) or 'none'
                where = walked or type_name
                raise StampFieldError(f'{type_name} {path}: {where} has no field '
                                      f'{step.name!r} (its fields: {names})')
            for name, before in current.fields:
                if name == step.name:
                    break
                compiler.skip(before, f'{walked}.{name}'.lstrip('.'))
            walked = f'{walked}.{step.name}'.lstrip('.')
            current = member
            if step.index is not None:
                current = _enter(compiler, current, step.index, walked, type_name, path)
                walked = f'{walked}[{step.index}]'
    except _UnreachableError as err:
        raise StampFieldError(f'{type_name} {path}: cannot be read raw: {err}') from None
    if not isinstance(current, MessageLayout) or (
            normalize_type_name(current.type_name) != TIME_TYPE):
        what = walked or type_name
        raise StampFieldError(f'{type_name} {path}: {what} is a {_describe(current)}, not a '
                              'builtin_interfaces/Time')
    checks = tuple(compiler.checks)
    public_checks = tuple((at + _HEADER, index) for at, index, _ in checks)
    if compiler.pos is not None:
        offset = ((compiler.pos + 3) & -4) + _HEADER
        if offset == _HEADER and not checks:
            reader: StampReader = read_stamp_ns  # the default, exactly as fast as before
        else:
            reader = _constant_reader(offset, tuple((at + _HEADER, i, w) for at, i, w in checks))
        return StampRule(type_name, path, offset, public_checks, reader)
    reader = _dynamic_reader(compiler.start, checks, tuple(compiler.steps))
    return StampRule(type_name, path, None, public_checks, reader)


def _enter(compiler: _Compiler, container: FieldType, index: int, walked: str,
           type_name: str, path: str) -> FieldType:
    """Step into element ``index`` of ``container``; refuse what cannot be indexed."""
    if isinstance(container, ArrayType):
        if index >= container.length:
            raise StampFieldError(f'{type_name} {path}: {walked} has {container.length} '
                                  f'elements, no element {index}')
    elif isinstance(container, SequenceType):
        if container.bound is not None and index >= container.bound:
            raise StampFieldError(f'{type_name} {path}: {walked} holds at most '
                                  f'{container.bound} elements, no element {index}')
    else:
        raise StampFieldError(f'{type_name} {path}: {walked} is a {_describe(container)}, '
                              'not an array or a sequence, so it cannot be indexed')
    compiler.index(container, index, walked)
    return container.element


def stamp_reader_for(layout: MessageLayout, path: str = DEFAULT_STAMP_FIELD) -> StampReader:
    """``resolve_stamp_field(layout, path).read``: the one call a subscription needs."""
    return resolve_stamp_field(layout, path).read
