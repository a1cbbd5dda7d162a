"""The two big report messages as CDR bytes, assembled from the parts that did not change.

With a thousand topics, converting ``MonitorStats`` (one ``TopicStats`` per topic) and the
``DiagnosticArray`` (one status per topic) to CDR costs about 40 ms a report, most of it for
parts that are the very objects of the previous report (``TopicStatsCache``, the statuses
``diagnostics.statuses`` reuses: a topic with nothing new). Here each part's bytes are kept
while it is the same object (``outputs/reuse.py``), and the message is joined from them and
published as serialized bytes: a standing topic costs a look-up.

Where CDR puts a part decides its bytes (XCDR1, as the rmw implementations write it: each
primitive aligned to its size, 8 at most, counted from the start of the body after the
4-byte encapsulation header), so a part is kept apart from what its position decides:

- A ``DiagnosticStatus`` holds nothing wider than 4 bytes; only the padding after its
  leading ``level`` byte depends on where it starts (mod 4), and is added at each report.
  Its strings are written here (``_StatusBody``), each key's bytes kept: rclpy's
  ``serialize_message`` takes ~80 µs for a topic's 57 ``KeyValue`` objects, this ~20 µs.
- A ``TopicStats`` starting 8-aligned is what rclpy's ``serialize_message`` writes for it
  alone; it ends with a uint64, so the next one starts 8-aligned too. The first one starts
  wherever ``ClockStats`` left the list, and is written here (``_Writer``), as is the small
  rest of the message. Its first 8 bytes are its header's stamp: the others are kept
  without it. The topics of one report share the message's header
  (``TopicStatsCache``), so the stamp joins them.

The layout is read from the generated message classes, in declaration order
(``get_fields_and_field_types``): the fields of ``MonitorStats`` are written in their order,
its one ``TopicStats[]`` where it stands. What the joining above assumes of the messages is
checked at import (``check_layout``), and a message that breaks it fails loudly there
(``LayoutError``), never silently: ``TopicStats`` starts with its ``std_msgs/Header``
(whose ``builtin_interfaces/Time`` stamp comes first) and ends with an 8-byte number, and
``DiagnosticStatus`` and ``KeyValue`` hold the fields ``_StatusBody`` writes, in its order.
``Assembler.check`` compares the assembled bytes with rclpy's, read back field by field, once
at start-up; when they differ (another rmw) the monitor publishes objects.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.serialization import deserialize_message, serialize_message
from std_msgs.msg import Header

from ros2_deadline_monitor.msg import MonitorStats, TopicStats
from ros2_deadline_monitor.outputs.reuse import Reuse

ENCAPSULATION = b'\x00\x01\x00\x00'
"""CDR, little endian."""
_PRIMITIVES = {
    'boolean': ('?', 1), 'octet': ('B', 1), 'uint8': ('B', 1), 'int8': ('b', 1),
    'char': ('B', 1), 'int16': ('h', 2), 'uint16': ('H', 2), 'int32': ('i', 4),
    'uint32': ('I', 4), 'int64': ('q', 8), 'uint64': ('Q', 8), 'float': ('f', 4),
    'double': ('d', 8),
}
_U32 = struct.Struct('<I')
Report = MonitorStats | DiagnosticArray
_STAMP = struct.Struct('<iI')
_PADDING = (b'', b'\x00\x00\x00', b'\x00\x00', b'\x00')
"""Bytes to the next multiple of 4, by the position mod 4."""
KEYS_KEPT = 1024
"""Diagnostic keys whose bytes are kept: the figure tables' and the expectations' keys."""
TOPICS_FIELD_TYPE = 'sequence<ros2_deadline_monitor/TopicStats>'
_EIGHT_BYTES = ('double', 'int64', 'uint64')


class LayoutError(TypeError):
    """A message's fields no longer have the layout the assembled bytes rely on."""


def _fields(cls: type) -> list[tuple[str, str]]:
    return list(cls.get_fields_and_field_types().items())


def check_layout(topic_stats: type = TopicStats, monitor_stats: type = MonitorStats,
                 status: type = DiagnosticStatus, key_value: type = KeyValue,
                 header: type = Header, time: type = Time) -> None:
    """Raise ``LayoutError`` unless the messages have the layout the joining relies on.

    See the module docstring; run at import, so a field added to or moved in ``TopicStats``
    (or the others) cannot go unnoticed.
    """
    problems = []
    topic_fields = _fields(topic_stats)
    if not topic_fields or topic_fields[0] != ('header', 'std_msgs/Header'):
        problems.append('TopicStats must start with "std_msgs/Header header": the kept '
                        'bytes of a topic start after its stamp')
    if _fields(header)[:1] != [('stamp', 'builtin_interfaces/Time')] or _fields(time) != [
            ('sec', 'int32'), ('nanosec', 'uint32')]:
        problems.append('std_msgs/Header must start with its builtin_interfaces/Time stamp '
                        '(int32 sec, uint32 nanosec)')
    if not topic_fields or topic_fields[-1][1] not in _EIGHT_BYTES:
        problems.append('TopicStats must end with an 8-byte number (float64, int64, uint64): '
                        'the next one in the list then starts 8-aligned, as rclpy writes one '
                        f'alone; it ends with {topic_fields[-1] if topic_fields else None}')
    if [kind for _, kind in _fields(monitor_stats)].count(TOPICS_FIELD_TYPE) != 1:
        problems.append(f'MonitorStats must hold one {TOPICS_FIELD_TYPE} field')
    if _fields(status) != [('level', 'octet'), ('name', 'string'), ('message', 'string'),
                           ('hardware_id', 'string'),
                           ('values', 'sequence<diagnostic_msgs/KeyValue>')]:
        problems.append('DiagnosticStatus is not "byte level, string name, string message, '
                        'string hardware_id, KeyValue[] values"')
    if _fields(key_value) != [('key', 'string'), ('value', 'string')]:
        problems.append('KeyValue is not "string key, string value"')
    if problems:
        raise LayoutError('outputs/serialized.py cannot assemble these messages: '
                          + '; '.join(problems))


check_layout()


def _string(text: str) -> bytes:
    """Return a CDR string starting 4-aligned: length with the NUL, UTF-8, the NUL."""
    data = text.encode()
    return _U32.pack(len(data) + 1) + data + b'\x00'


class _StatusBody:
    """Writes a ``DiagnosticStatus`` after its level byte and padding (it starts 4-aligned)."""

    def __init__(self) -> None:
        self._keys: dict[str, bytes] = {}
        """Key -> its string padded to 4: the value string that follows starts aligned."""

    def __call__(self, status: DiagnosticStatus) -> bytes:
        """Return the bytes of ``status`` from its name on."""
        out = bytearray()
        for text in (status.name, status.message, status.hardware_id):
            out += _PADDING[len(out) % 4]
            out += _string(text)
        values = status.values
        out += _PADDING[len(out) % 4]
        out += _U32.pack(len(values))
        keys, pack = self._keys, _U32.pack
        for pair in values:
            key = pair.key
            written = keys.get(key)
            if written is None:
                written = _string(key)
                written += _PADDING[len(written) % 4]
                if len(keys) < KEYS_KEPT:
                    keys[key] = written
            data = pair.value.encode()  # _string, inlined: 57 values a status
            out += _PADDING[len(out) % 4]
            out += written
            out += pack(len(data) + 1)
            out += data
            out += b'\x00'
        return bytes(out)


class _Writer:
    """A small CDR writer for the fields of rosidl Python messages (no arrays, no wstrings)."""

    def __init__(self) -> None:
        self._plans: dict[type, list[tuple[str, str, Any]]] = {}

    def _plan(self, cls: type) -> list[tuple[str, str, Any]]:
        plan = self._plans.get(cls)
        if plan is None:
            plan = [self._plan_field(cls, name, kind)
                    for name, kind in cls.get_fields_and_field_types().items()]
            self._plans[cls] = plan
        return plan

    def write(self, out: bytearray, msg: Any) -> None:
        """Append ``msg`` to ``out`` (which starts with the encapsulation header)."""
        for name, kind, how in self._plan(type(msg)):
            self.write_field(out, kind, how, getattr(msg, name))

    def write_field(self, out: bytearray, kind: str, how: Any, value: Any) -> None:
        """Append one field's ``value`` as planned (``_plan``)."""
        if kind == 'primitive':
            packer, size = how
            out += bytes(-(len(out) - 4) % size)
            out += packer.pack(value)
        elif kind == 'string':
            out += bytes(-(len(out) - 4) % 4)
            out += _string(value)
        elif kind == 'byte':
            out += value
        else:
            self.write(out, value)

    def plan_around(self, cls: type, skipped: str) -> tuple[list, list]:
        """Return the plans of the fields of ``cls`` before and after the field ``skipped``."""
        plan = [(name, kind) for name, kind in _fields(cls)]
        at = [name for name, _ in plan].index(skipped)
        return ([self._plan_field(cls, name, kind) for name, kind in plan[:at]],
                [self._plan_field(cls, name, kind) for name, kind in plan[at + 1:]])

    def _plan_field(self, cls: type, name: str, kind: str) -> tuple[str, str, Any]:
        if kind in _PRIMITIVES:
            fmt, size = _PRIMITIVES[kind]
            return (name, 'primitive', (struct.Struct('<' + fmt), size))
        if kind in ('string', 'byte'):
            return (name, kind, None)
        if '/' in kind and '<' not in kind and '[' not in kind:
            return (name, 'message', None)
        raise TypeError(f'{cls.__name__}.{name}: {kind} is not written here')


class Assembler:
    """Serializes ``MonitorStats`` and ``DiagnosticArray``, reusing unchanged parts' bytes."""

    def __init__(self) -> None:
        """Start with nothing kept."""
        self._writer = _Writer()
        topics = next(name for name, kind in _fields(MonitorStats) if kind == TOPICS_FIELD_TYPE)
        self._topics_field = topics
        self._before_topics, self._after_topics = self._writer.plan_around(MonitorStats, topics)
        """The fields of ``MonitorStats`` around its ``TopicStats[]``, in declaration order."""
        self._forget()

    def _forget(self) -> None:
        """Keep nothing of the reports assembled so far."""
        self._topics: Reuse[TopicStats, bytes] = Reuse()
        """A ``TopicStats`` from its header's end on: rclpy's bytes of it alone."""
        self._statuses: Reuse[DiagnosticStatus, tuple[bytes, bytes]] = Reuse()
        """A status's level byte, and its bytes from its name on (``_StatusBody``)."""
        self._status_body = _StatusBody()
        self._seen_topics: list[TopicStats] = []

    def monitor_stats(self, msg: MonitorStats) -> bytes:
        """Return the CDR bytes of ``msg`` (equal to rclpy's, padding aside)."""
        topics = getattr(msg, self._topics_field)
        out = bytearray(ENCAPSULATION)
        writer = self._writer
        for name, kind, how in self._before_topics:
            writer.write_field(out, kind, how, getattr(msg, name))
        out += bytes(-(len(out) - 4) % 4)
        out += _U32.pack(len(topics))
        if topics:  # the first one starts where ClockStats left the list: written here
            writer.write(out, topics[0])
        head = bytes(out)
        # A TopicStats ends with an 8-byte number: every later one starts 8-aligned, as
        # rclpy's bytes of it alone (``check_layout``, ``Assembler.check``).
        bodies = self._topics(topics[1:], _topic_body)
        header = msg.header
        if all(topic.header is header for topic in topics[1:]):  # TopicStatsCache's way
            stamp = _STAMP.pack(header.stamp.sec, header.stamp.nanosec)
            chunks = [head, stamp, stamp.join(bodies)] if bodies else [head]
        else:
            chunks = [head]
            for topic, body in zip(topics[1:], bodies, strict=True):
                chunks += (_STAMP.pack(topic.header.stamp.sec, topic.header.stamp.nanosec),
                           body)
        chunks.append(self._tail(len(head) - 4, msg))
        return b''.join(chunks)

    def _tail(self, position: int, msg: MonitorStats) -> bytes:
        """Return the fields after the topics, written at ``position`` (in the body) mod 8.

        ``position``: where the topics end (the first one starts where ``head`` ends; each
        later one is 8-aligned and ends 8-aligned, ``check_layout``).
        """
        out = bytearray(4 + position % 8)
        for name, kind, how in self._after_topics:
            self._writer.write_field(out, kind, how, getattr(msg, name))
        return bytes(out[4 + position % 8:])

    def diagnostic_array(self, msg: DiagnosticArray) -> bytes:
        """Return the CDR bytes of ``msg`` (equal to rclpy's, padding aside)."""
        statuses = msg.status
        out = bytearray(ENCAPSULATION)
        self._writer.write(out, msg.header)
        out += bytes(-(len(out) - 4) % 4)
        out += _U32.pack(len(statuses))
        chunks, position = [bytes(out)], len(out) - 4
        for level, body in self._statuses(statuses, self._status_parts):
            padding = _PADDING[(position + 1) % 4]
            chunks += (level, padding, body)
            position += 1 + len(padding) + len(body)
        return b''.join(chunks)

    def _status_parts(self, status: DiagnosticStatus) -> tuple[bytes, bytes]:
        """Return a status's level byte and its bytes from its name on."""
        return status.level, self._status_body(status)

    def payload(self, msg: Report) -> Report | bytes:
        """Return what to publish: assembled bytes when most parts are kept, else ``msg``.

        A ``DiagnosticArray`` is always assembled (its statuses are written here faster
        than rclpy converts them). ``MonitorStats`` only when most of its topics are the
        objects of the previous report (``TopicStatsCache``): parts that all changed are
        converted faster by rclpy in one go.
        """
        if isinstance(msg, DiagnosticArray):
            return self.diagnostic_array(msg)
        topics, seen = msg.topics, self._seen_topics
        self._seen_topics = topics
        if 2 * sum(a is b for a, b in zip(seen, topics, strict=False)) >= len(topics):
            return self.monitor_stats(msg)
        return msg

    def check(self) -> bool:
        """Tell whether assembled bytes read back as the messages (twice: fresh, then kept)."""
        stats, array = _samples()
        for _ in range(2):
            if not (all(same(deserialize_message(self.monitor_stats(msg), MonitorStats), msg)
                        for msg in stats)
                    and same(deserialize_message(self.diagnostic_array(array),
                                                 DiagnosticArray), array)):
                return False
        self._forget()
        return True


def _topic_body(topic: TopicStats) -> bytes:
    """Return rclpy's bytes of a ``TopicStats`` alone, after the encapsulation and stamp."""
    return serialize_message(topic)[12:]


def _samples() -> tuple[list[MonitorStats], DiagnosticArray]:
    """Messages with strings of every length mod 8, non-ASCII and NaNs (``Assembler.check``).

    Two ``MonitorStats``: their topics stamped each its own way, and sharing the message's
    header (``TopicStatsCache``'s way).
    """
    from diagnostic_msgs.msg import KeyValue

    from ros2_deadline_monitor.msg import IntervalStats

    topics = [TopicStats(name='t' * i, status='s' * (3 * i), level=i, messages_total=i,
                         period_ms=float(i), rate_wall_hz=math.nan, counts_note='c' * i,
                         interval_wall=IntervalStats(clock='wall', count=i, max_ms=i / 3))
              for i in range(9)]
    for i, topic in enumerate(topics):
        topic.header.stamp.sec, topic.header.stamp.nanosec = 1_700_000_000 + i, 7 * i
    stats = MonitorStats(window_wall_s=1.5, topics=topics)
    stats.clock.status = 'clock ok'
    stats.host.cgroup_available = True
    shared = MonitorStats(window_sim_s=2.5)
    shared.header.stamp.sec, shared.header.stamp.nanosec = 1_800_000_000, 123
    shared.topics = [TopicStats(header=shared.header, name='u' * i, status='é' * i, level=i,
                                since_last_message_s=i / 7) for i in range(9)]
    statuses = [DiagnosticStatus(level=bytes([i % 4]), name='n' * i, message='m' * (i + 1),
                                 hardware_id='h' * (i % 3),
                                 values=[KeyValue(key='k' * j + 'µ' * (j == 2),
                                                  value='v' * (i + j) + 'é' * (i == j))
                                         for j in range(i % 4)])
                for i in range(9)]
    return [stats, shared], DiagnosticArray(status=statuses)


def same(a: Any, b: Any) -> bool:
    """Field by field equality of two messages (NaN equals NaN)."""
    if hasattr(a, 'get_fields_and_field_types'):
        return type(a) is type(b) and all(same(getattr(a, f), getattr(b, f))
                                          for f in a.get_fields_and_field_types())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b
