"""The two big report messages as CDR bytes, assembled from the parts that did not change.

With a thousand topics, converting ``MonitorStats`` (one ``TopicStats`` per topic) and the
``DiagnosticArray`` (one status per topic) to CDR costs about 40 ms a report, most of it for
parts that are the very objects of the previous report (``TopicStatsCache``,
``StatusCache``: a topic with nothing new). Here each part's bytes are kept while it is the
same object, the message is assembled around them and published as serialized bytes.

Where CDR puts a part decides its bytes (XCDR1, as the rmw implementations write it: each
primitive aligned to its size, 8 at most, counted from the start of the body after the
4-byte encapsulation header), so a part is kept per starting position:

- A ``DiagnosticStatus`` holds nothing wider than 4 bytes; only the padding after its
  leading ``level`` byte depends on where it starts (mod 4). Its strings are written here
  (``_StatusBody``), each key's bytes kept: rclpy's ``serialize_message`` takes ~80 µs for
  a topic's 57 ``KeyValue`` objects, this ~20 µs.
- A ``TopicStats`` starting 8-aligned is what rclpy's ``serialize_message`` writes for it
  alone; it ends with a float64, so the next one starts 8-aligned too. The first one starts
  wherever ``ClockStats`` left the list, and is written here (``_Writer``), as is the small
  rest of the message. A kept ``TopicStats`` gets the new report's header stamp (its first
  8 bytes): ``TopicStatsCache`` changes nothing else of a reused message.

``Assembler.check`` compares the assembled bytes with rclpy's, read back field by field, once
at start-up; when they differ (another rmw, another layout) the monitor publishes objects.
"""

from __future__ import annotations

from collections.abc import Callable
import math
import struct
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.serialization import deserialize_message, serialize_message

from ros2_deadline_monitor.msg import MonitorStats, TopicStats

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
            plan = []
            for name, kind in cls.get_fields_and_field_types().items():
                if kind in _PRIMITIVES:
                    fmt, size = _PRIMITIVES[kind]
                    plan.append((name, 'primitive', (struct.Struct('<' + fmt), size)))
                elif kind in ('string', 'byte'):
                    plan.append((name, kind, None))
                elif '/' in kind and '<' not in kind and '[' not in kind:
                    plan.append((name, 'message', None))
                else:
                    raise TypeError(f'{cls.__name__}.{name}: {kind} is not written here')
            self._plans[cls] = plan
        return plan

    def write(self, out: bytearray, msg: Any) -> None:
        """Append ``msg`` to ``out`` (which starts with the encapsulation header)."""
        for name, kind, how in self._plan(type(msg)):
            value = getattr(msg, name)
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


class _KeptParts:
    """The parts of one message type's previous report and their bytes, by object identity."""

    def __init__(self, write: Callable[[Any], bytes]) -> None:
        """Keep ``write(part)`` of each part (the bytes a kept one reuses)."""
        self._write = write
        self._previous: dict[int, tuple[Any, bytes | None]] = {}
        """Part id -> (the part, its bytes; None: seen in the previous report, not kept)."""
        self._kept: dict[int, tuple[Any, bytes | None]] = {}
        self.reused = 0
        """Parts of the report being assembled whose bytes came from the previous one."""
        self.reused_most = False
        """Whether the last assembled report reused the bytes of most of its parts."""

    def bytes_of(self, part: Any) -> bytes:
        """Return a part's bytes (kept ones reused) and keep them for the next report."""
        cached = self._previous.get(id(part))
        if cached is None or cached[0] is not part or cached[1] is None:
            cached = (part, self._write(part))
        else:
            self.reused += 1
        self._kept[id(part)] = cached
        return cached[1]

    def seen_most(self, parts: list) -> bool:
        """Tell whether most of ``parts`` are the objects of the previous report."""
        previous = self._previous
        return 2 * sum(1 for part in parts
                       if previous.get(id(part), (None,))[0] is part) >= len(parts)

    def remember(self, parts: list) -> None:
        """Keep no bytes, but recognise these parts in the next report."""
        self._previous, self._kept, self.reused_most = (
            {id(part): (part, None) for part in parts}, {}, False)

    def next_report(self, parts: int) -> None:
        """Close the report just assembled (``parts`` long): what it kept is the previous."""
        self.reused_most = 2 * self.reused >= parts
        self._previous, self._kept, self.reused = self._kept, {}, 0


class Assembler:
    """Serializes ``MonitorStats`` and ``DiagnosticArray``, reusing unchanged parts' bytes."""

    def __init__(self) -> None:
        """Start with nothing kept."""
        self._writer = _Writer()
        self._topics, self._statuses = _topic_parts(), _status_parts()

    def monitor_stats(self, msg: MonitorStats) -> bytes:
        """Return the CDR bytes of ``msg`` (equal to rclpy's, padding aside)."""
        topics = msg.topics
        out = bytearray(ENCAPSULATION)
        writer = self._writer
        writer.write(out, msg.header)
        for value in (msg.window_wall_s, msg.window_sim_s):
            out += bytes(-(len(out) - 4) % 8)
            out += struct.pack('<d', value)
        writer.write(out, msg.clock)
        out += bytes(-(len(out) - 4) % 4)
        out += _U32.pack(len(topics))
        parts, header, stamp_bytes = self._topics, None, b''
        for i, topic in enumerate(topics):
            if i == 0 or (len(out) - 4) % 8:
                writer.write(out, topic)  # not 8-aligned: written here, not kept
                continue
            if topic.header is not header:  # the one field a kept TopicStats changes
                header = topic.header
                stamp_bytes = _STAMP.pack(header.stamp.sec, header.stamp.nanosec)
            out += stamp_bytes
            out += parts.bytes_of(topic)
        parts.next_report(len(topics))
        writer.write(out, msg.host)
        return bytes(out)

    def diagnostic_array(self, msg: DiagnosticArray) -> bytes:
        """Return the CDR bytes of ``msg`` (equal to rclpy's, padding aside)."""
        statuses = msg.status
        out = bytearray(ENCAPSULATION)
        self._writer.write(out, msg.header)
        out += bytes(-(len(out) - 4) % 4)
        out += _U32.pack(len(statuses))
        parts = self._statuses
        for status in statuses:
            out += status.level
            out += _PADDING[(len(out) - 4) % 4]
            out += parts.bytes_of(status)
        parts.next_report(len(statuses))
        return bytes(out)

    def payload(self, msg: Report) -> Report | bytes:
        """Return what to publish: assembled bytes when most parts are kept, else ``msg``.

        A ``DiagnosticArray`` is always assembled (its statuses are written here faster
        than rclpy converts them). ``MonitorStats`` only when most of its parts are kept
        from the previous report: parts that all changed are converted faster by rclpy in
        one go.
        """
        if isinstance(msg, DiagnosticArray):
            return self.diagnostic_array(msg)
        kept = self._topics
        if kept.reused_most or kept.seen_most(msg.topics):  # as the last one, or counted
            return self.monitor_stats(msg)
        kept.remember(msg.topics)
        return msg

    def check(self) -> bool:
        """Tell whether assembled bytes read back as the messages (twice: fresh, then kept)."""
        stats, array = _samples()
        for _ in range(2):
            if not (same(deserialize_message(self.monitor_stats(stats), MonitorStats), stats)
                    and same(deserialize_message(self.diagnostic_array(array),
                                                 DiagnosticArray), array)):
                return False
        self._topics, self._statuses = _topic_parts(), _status_parts()
        return True


def _topic_parts() -> _KeptParts:
    """Keep a ``TopicStats`` as rclpy's bytes after the encapsulation and the stamp."""
    return _KeptParts(lambda part: serialize_message(part)[12:])


def _status_parts() -> _KeptParts:
    """Keep a status from its name on, written here (``_StatusBody``)."""
    return _KeptParts(_StatusBody())


def _samples() -> tuple[MonitorStats, DiagnosticArray]:
    """Messages with strings of every length mod 8, non-ASCII and NaNs (``Assembler.check``)."""
    from diagnostic_msgs.msg import KeyValue

    from ros2_deadline_monitor.msg import IntervalStats

    topics = [TopicStats(name='t' * i, status='s' * (3 * i), level=i, messages_total=i,
                         period_ms=float(i), rate_wall_hz=math.nan,
                         interval_wall=IntervalStats(clock='wall', count=i, max_ms=i / 3))
              for i in range(9)]
    for i, topic in enumerate(topics):
        topic.header.stamp.sec, topic.header.stamp.nanosec = 1_700_000_000 + i, 7 * i
    stats = MonitorStats(window_wall_s=1.5, topics=topics)
    stats.clock.status = 'clock ok'
    stats.host.cgroup_available = True
    statuses = [DiagnosticStatus(level=bytes([i % 4]), name='n' * i, message='m' * (i + 1),
                                 hardware_id='h' * (i % 3),
                                 values=[KeyValue(key='k' * j + 'µ' * (j == 2),
                                                  value='v' * (i + j) + 'é' * (i == j))
                                         for j in range(i % 4)])
                for i in range(9)]
    return stats, DiagnosticArray(status=statuses)


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
