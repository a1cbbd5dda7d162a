"""Reading rosbag2 bags (MCAP and sqlite3) with ``rosbags``, without deserializing.

``BagSource`` is the only place that talks to ``rosbags``: every error it raises while
opening or reading a bag is translated into ``BagError`` here, at the boundary, so the CLI can
print one line instead of a traceback. Messages come out as raw ``(connection, log time ns,
bytes)`` in log-time order; the few messages that must be decoded (recorded MonitorStats)
are decoded with a typestore built from the bag's own definitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
import struct
from types import TracebackType
from typing import Any, NamedTuple

import numpy as np

from ros2_deadline_monitor.analysis.cdr import first_field_is_stamp
from ros2_deadline_monitor.analysis.errors import BagError

__all__ = [
    'CLOCK_TYPE',
    'STATS_TYPE',
    'BagSource',
    'BagTopic',
    'MessageBatch',
    'absolute_topic',
    'find_msg_dir',
]

PACKAGE = 'ros2_deadline_monitor'
CLOCK_TYPE = 'rosgraph_msgs/msg/Clock'
STATS_TYPE = f'{PACKAGE}/msg/MonitorStats'
_IDL_SEPARATOR = '=' * 80 + '\n'


@dataclass(frozen=True)
class BagTopic:
    """One topic in a bag: its type, message count and rosbags connections."""

    name: str
    msgtype: str
    count: int
    connections: tuple[Any, ...]


def recorded_writers(topic: BagTopic) -> int:
    """Count the writers a bag lists for ``topic`` (0: it does not say).

    rosbag2 stores one offered QoS profile per publisher the recorder matched
    (``offered_qos_profiles`` in ``metadata.yaml`` and in each MCAP channel), and an MCAP
    file may hold several channels of one topic: the larger count is a lower bound (a writer
    that joined later is not listed). A bag's messages carry no writer identity, so with
    several their per-cycle figures cannot be told apart.
    """
    profiles = 0
    for connection in topic.connections:
        offered = getattr(getattr(connection, 'ext', None), 'offered_qos_profiles', None)
        if isinstance(offered, str):  # older rosbags: the YAML list as it is stored
            profiles += offered.count('history:')
        elif offered:
            profiles += len(offered)
    channels = len(topic.connections) if len(topic.connections) > 1 else 0
    return max(profiles, channels)


class MessageBatch(NamedTuple):
    """Consecutive raw messages in log-time order, as columns over one byte buffer.

    Message ``i`` is connection ``conn_ids[i]`` (a rosbags connection id), logged at
    ``log_time[i]`` (int ns), its bytes ``data[starts[i]:starts[i] + sizes[i]]``: a bag chunk
    read without one Python object per message, for callers that work on whole columns.
    """

    log_time: np.ndarray
    conn_ids: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray
    data: bytes

    @property
    def buffer(self) -> np.ndarray:
        """``data`` as a uint8 array (no copy)."""
        return np.frombuffer(self.data, np.uint8)

    def raw(self, i: int) -> bytes:
        """Return the bytes of message ``i`` (for the per-message readers)."""
        start = int(self.starts[i])
        return self.data[start:start + int(self.sizes[i])]


BATCH_MESSAGES = 8_192
"""Messages per batch where the storage is read message by message (sqlite3, plain rosbags)."""


def find_msg_dir() -> Path:
    """Return the directory holding this package's ``.msg`` files.

    Looks in the installed share directory (ament index) first, then in the source tree
    next to the Python package. Raises ``BagError`` when neither exists.
    """
    candidates = []
    try:
        from ament_index_python.packages import (
            get_package_share_directory,
            PackageNotFoundError,
        )
    except ImportError:
        pass
    else:
        try:
            candidates.append(Path(get_package_share_directory(PACKAGE)) / 'msg')
        except (PackageNotFoundError, ValueError, OSError):
            pass
    candidates.append(Path(__file__).resolve().parents[2] / 'msg')
    for candidate in candidates:
        if (candidate / 'MonitorStats.msg').is_file():
            return candidate
    tried = ', '.join(str(c) for c in candidates)
    raise BagError(f'cannot find the {PACKAGE} message definitions (looked in {tried})')


def _parse_definition(msgtype: str, fmt: str, data: str) -> dict[str, Any]:
    """Types described by one stored message definition (MSG or IDL text)."""
    from rosbags.typesys import get_types_from_idl, get_types_from_msg

    if fmt == 'MSG':
        return dict(get_types_from_msg(data, msgtype))
    types: dict[str, Any] = {}
    if data.startswith(f'{_IDL_SEPARATOR}IDL: '):
        for part in data.split(_IDL_SEPARATOR)[1:]:
            types.update(get_types_from_idl(part.split('\n', 1)[1]))
    else:
        types.update(get_types_from_idl(data))
    return types


def _dependencies(desc: Any) -> Iterator[str]:
    """Type names a field description refers to (nested, arrays and sequences)."""
    from rosbags.typesys.base import Nodetype

    kind, detail = desc
    if kind == Nodetype.NAME:
        yield detail
    elif kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
        yield from _dependencies(detail[0])


class BagSource:
    """An open rosbag2 bag (a bag directory, or a single ``.mcap`` / ``.db3`` file).

    Use as a context manager. All times are int nanoseconds of the recorder's log time
    (the time ``ros2 bag record`` received each message, system clock). Topic names are
    absolute: a bag topic recorded as ``scan`` is ``/scan`` here, as ROS 2 resolves it.
    ``notes`` says what was done about a bag that could not be read as it describes itself
    (a ``metadata.yaml`` that does not match its storage file).
    """

    def __init__(self, path: str | Path) -> None:
        """Open ``path``; raise ``BagError`` when it is missing or not a readable bag."""
        from rosbags.rosbag2 import Reader

        self.path = Path(path)
        if not self.path.exists():
            raise BagError(f'{self.path}: no such file or directory')
        if self.path.is_dir() and not (self.path / 'metadata.yaml').is_file():
            inner = len(list(self.path.glob('*/metadata.yaml')))
            hint = (f' (it holds {inner} bag{"s" if inner > 1 else ""}: give them all, '
                    f'e.g. {self.path}/*/)' if inner else '')
            raise BagError(f'{self.path} is not a rosbag2 bag: it has no metadata.yaml{hint}')
        try:
            self._reader = Reader(self.path)
            self._reader.open()
        except Exception as err:  # rosbags, sqlite3, mcap or yaml: the boundary
            hint = ''
            if 'end magic' in str(err).lower():
                hint = (' (an MCAP file without its end: was the recording interrupted? '
                        '`mcap recover` can rebuild it)')
            raise BagError(f'cannot open bag {self.path}: {_describe(err)}{hint}') from err
        self.notes: list[str] = []
        self._read_storage_if_metadata_disagrees()
        try:
            self.storage = _storage_name(self._reader)
            self.start_ns = int(self._reader.start_time) if self._reader.message_count else 0
            self.end_ns = int(self._reader.end_time) if self._reader.message_count else 0
            self.message_count = int(self._reader.message_count)
            self.topics = self._group_topics(self._reader.connections)
        except Exception as err:
            self.close()
            raise BagError(f'cannot read bag {self.path}: {_describe(err)}') from err
        self._bag_types: dict[str, Any] | None = None
        self._jazzy_types: Mapping[str, Any] | None = None
        self._own_types: dict[str, Any] | None = None

    def _read_storage_if_metadata_disagrees(self) -> None:
        """Read the storage file on its own when ``metadata.yaml`` does not describe it.

        ``rosbags`` takes the topics and counts of a bag directory from ``metadata.yaml`` and
        reads only the storage connections that match one of them exactly (topic, type,
        serialization, QoS, type hash): a metadata file written by another tool or version
        that disagrees reads none of the messages it lists. The storage file describes its
        own connections, so it is read alone instead, and ``notes`` says so.
        """
        from rosbags.rosbag2 import Reader

        reader = self._reader
        storages = getattr(reader.storage, 'storages', None)
        if storages is None:  # a single storage file: nothing to disagree with
            return
        unmatched = [c for c in reader.connections if c.msgcount and not any(
            _same_connection(c, x) for storage in storages for x in storage.connections)]
        if not unmatched:
            return
        what = _disagreement(unmatched[0], [x for s in storages for x in s.connections])
        topics = ', '.join(sorted({c.topic for c in unmatched}))
        said = (f'{self.path}/metadata.yaml does not match its storage file for {topics} '
                f'({what}): the bag library would read none of their messages')
        files = [Path(storage.path) for storage in storages]
        if len(files) != 1 or reader.compression_mode == 'file':
            self.close()
            which = ('its storage files one by one' if len(files) > 1
                     else 'its storage file after decompressing it')
            raise BagError(f'{said}; analyze {which} instead')
        self.close()
        try:
            self._reader = Reader(files[0])
            self._reader.open()
        except Exception as err:  # the same boundary as opening the directory
            raise BagError(f'{said}, and its storage file {files[0]} cannot be opened on its '
                           f'own: {_describe(err)}') from err
        self.notes.append(f'{said}; read {files[0].name} on its own instead (its topics, '
                          'counts and times come from the storage file)')

    @property
    def duration_ns(self) -> int:
        """Log-time span from the first to the last message."""
        return max(0, self.end_ns - 1 - self.start_ns) if self.message_count else 0

    def __enter__(self) -> BagSource:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the underlying reader (safe to call twice)."""
        reader = getattr(self, '_reader', None)
        if reader is not None and reader.is_open:
            try:
                reader.close()
            except Exception:  # closing a broken bag must not mask the error being reported
                return

    @staticmethod
    def _group_topics(connections: Iterable[Any]) -> dict[str, BagTopic]:
        grouped: dict[str, list[Any]] = {}
        for conn in connections:
            grouped.setdefault(absolute_topic(conn.topic), []).append(conn)
        topics = {}
        for name, conns in grouped.items():
            types = sorted({c.msgtype for c in conns})
            if len(types) > 1:
                raise BagError(f'topic {name} is recorded with several types: {types}')
            topics[name] = BagTopic(name, types[0], sum(int(c.msgcount) for c in conns),
                                    tuple(conns))
        return dict(sorted(topics.items()))

    def messages(self, connections: Iterable[Any]) -> Iterator[tuple[Any, int, bytes]]:
        """Yield ``(connection, log_time_ns, raw)`` of ``connections`` in log-time order.

        Raises ``BagError`` when the storage cannot be read to the end (truncated or corrupt).
        """
        conns = list(connections)
        if not conns:
            return
        try:
            # ``yield from`` runs the storage's generator at C speed; only its own errors
            # land here (the consumer's do not pass through a generator).
            yield from self._reader.messages(conns)
        except Exception as err:  # storage errors surface only while iterating
            raise BagError(f'cannot read bag {self.path} to the end (truncated or '
                           f'corrupt?): {_describe(err)}') from err

    def batches(self, connections: Iterable[Any]) -> Iterator[MessageBatch]:
        """Yield the messages of ``connections`` as ``MessageBatch`` columns, in log-time order.

        The same messages in the same order as ``messages``: an indexed MCAP file one chunk
        per batch, straight from the decompressed bytes; any other storage in batches of
        ``BATCH_MESSAGES`` read through ``messages``. Raises ``BagError`` as ``messages`` does.
        """
        conns = list(connections)
        if not conns:
            return
        try:
            found = _mcap_plan(self._reader, conns)
        except Exception as err:  # as in ``messages``: the storage's errors, translated
            raise BagError(f'cannot read bag {self.path} to the end (truncated or '
                           f'corrupt?): {_describe(err)}') from err
        if found is None:
            yield from _batched(self.messages(conns))
            return
        try:
            yield from _chunk_batches(*found)
        except Exception as err:  # storage errors surface only while iterating
            raise BagError(f'cannot read bag {self.path} to the end (truncated or '
                           f'corrupt?): {_describe(err)}') from err

    # -- message types --------------------------------------------------------------------

    def _types_from_bag(self) -> dict[str, Any]:
        """Every type defined by the definitions stored in the bag (MCAP schemas, Jazzy db3)."""
        if self._bag_types is None:
            types: dict[str, Any] = {}
            for topic in self.topics.values():
                conn = topic.connections[0]
                fmt = conn.msgdef.format.name
                if fmt == 'NONE' or not conn.msgdef.data:
                    continue
                try:
                    types.update(_parse_definition(conn.msgtype, fmt, conn.msgdef.data))
                except Exception as err:  # rosbags' parser on bag content: the boundary
                    raise BagError(f'cannot parse the definition of {conn.msgtype} stored in '
                                   f'{self.path}: {_describe(err)}') from err
            self._bag_types = types
        return self._bag_types

    def _types_from_jazzy(self) -> Mapping[str, Any]:
        if self._jazzy_types is None:
            from rosbags.typesys import get_typestore, Stores

            self._jazzy_types = get_typestore(Stores.ROS2_JAZZY).fielddefs
        return self._jazzy_types

    def _types_from_package(self) -> dict[str, Any]:
        if self._own_types is None:
            from rosbags.typesys import get_types_from_msg

            types: dict[str, Any] = {}
            for path in sorted(find_msg_dir().glob('*.msg')):
                name = f'{PACKAGE}/msg/{path.stem}'
                types.update(get_types_from_msg(path.read_text(), name))
            self._own_types = types
        return self._own_types

    def definition(self, msgtype: str) -> Any:
        """``(constants, fields)`` of ``msgtype``; raise ``BagError`` when it is unknown.

        The bag's own definition wins (it is what was recorded); then the Jazzy standard
        types; then this package's ``msg/`` files.
        """
        found = self._types_from_bag().get(msgtype)
        if found is None:
            found = self._types_from_jazzy().get(msgtype)
        if found is None and msgtype.startswith(f'{PACKAGE}/'):
            found = self._types_from_package().get(msgtype)
        if found is None:
            raise BagError(f'unknown message type {msgtype}: the bag stores no definition '
                           'for it and it is not a standard ROS 2 Jazzy type')
        return found

    def has_leading_stamp(self, msgtype: str) -> bool:
        """Tell whether the type's first field is a ``std_msgs/Header`` or a ``Time``."""
        _, fields = self.definition(msgtype)
        shape: dict[str, str] = {}
        for name, (kind, detail) in fields[:2]:
            shape[name] = detail if kind.name == 'NAME' else (
                detail[0] if kind.name == 'BASE' else kind.name.lower())
        return first_field_is_stamp(shape, msgtype)

    def typestore(self, msgtypes: Iterable[str]) -> Any:
        """Build a rosbags typestore able to deserialize ``msgtypes`` (and what they contain)."""
        from rosbags.typesys import get_typestore, Stores

        wanted: dict[str, Any] = {}
        todo = list(msgtypes)
        while todo:
            name = todo.pop()
            if name in wanted:
                continue
            wanted[name] = self.definition(name)
            for _, desc in wanted[name][1]:
                todo.extend(_dependencies(desc))
        store = get_typestore(Stores.EMPTY)
        try:
            store.register(wanted)
        except Exception as err:
            raise BagError(f'cannot build decoders for {sorted(wanted)}: '
                           f'{_describe(err)}') from err
        return store


def absolute_topic(name: str) -> str:
    """Return ``name`` with a leading ``/``: ROS 2 resolves ``scan`` to ``/scan``."""
    return name if name.startswith('/') else f'/{name}'


def _same_connection(listed: Any, stored: Any) -> bool:
    """Tell whether ``rosbags`` reads storage connection ``stored`` for ``listed``."""
    return (listed.topic == stored.topic and listed.msgtype == stored.msgtype
            and listed.ext == stored.ext
            and (not listed.digest or not stored.digest or listed.digest == stored.digest))


def _disagreement(listed: Any, stored: list[Any]) -> str:
    """Say how the storage's connections of ``listed.topic`` differ from the listed one."""
    same_topic = [x for x in stored if x.topic == listed.topic]
    if not same_topic:
        return f'no connection on {listed.topic} in the storage file'
    x = same_topic[0]
    if x.msgtype != listed.msgtype:
        return f'type {listed.msgtype} listed, {x.msgtype} stored'
    if x.ext.serialization_format != listed.ext.serialization_format:
        return (f'serialization {listed.ext.serialization_format} listed, '
                f'{x.ext.serialization_format} stored')
    if x.ext != listed.ext:
        return 'the offered QoS profiles differ'
    return 'the type hashes differ'


def _storage_name(reader: Any) -> str:
    """``mcap`` or ``sqlite3``: the storage plugin of an open rosbags reader."""
    storage = reader.storage
    inner = getattr(storage, 'storages', None) or [storage]
    name = type(inner[0]).__name__.lower()
    return 'mcap' if 'mcap' in name else 'sqlite3' if 'sqlite' in name else name


_U32 = struct.Struct('<I').unpack_from
_U64 = struct.Struct('<Q').unpack_from
"""Of an MCAP message record after op and length: channel id, sequence, log time."""
_MESSAGE_HEADER = 1 + 8 + 2 + 4 + 8 + 8
"""op, record length, channel id, sequence, log time, publish time: then the data."""


def _storage_connections(reader: Any, conns: list[Any]) -> list[tuple[Any, dict[int, Any]]]:
    """Pair each storage of a rosbags reader with ``{its channel id: our connection}``.

    Matches connections as ``rosbags.rosbag2.reader.DirectoryReader.messages`` does.
    """
    top = reader.storage
    if not hasattr(top, 'storages'):  # a single .mcap file: its connections are ours
        return [(top, {c.id: c for c in conns})]
    pairs = []
    for storage in top.storages:
        cmap = {}
        for x in storage.connections:
            match = next((y for y in conns if y.topic == x.topic and y.msgtype == x.msgtype
                          and y.ext == x.ext
                          and (not x.digest or not y.digest or y.digest == x.digest)), None)
            if match is not None:
                cmap[x.id] = match
        if cmap:
            pairs.append((storage, cmap))
    return pairs


def _mcap_plan(reader: Any, conns: list[Any]) -> tuple[list[Any], Any] | None:
    """Plan reading indexed MCAP storages faster than ``rosbags`` does, with the same result.

    ``rosbags`` parses every record of a chunk through a ``BytesIO`` and merges all chunks
    with ``heapq``; here a chunk's decompressed bytes are read as columns
    (``_chunk_batches``) and chunks whose log times do not overlap are read one after the
    other (the order ``heapq.merge`` gives them, ties going to the earlier chunk). Returns
    None (use ``rosbags``) for anything else: sqlite3, unindexed or overlapping chunks,
    per-message compression. It reads private state of ``rosbags`` 0.11's ``McapReader``
    (its chunk index, file and ``decompress``), which no public API gives:
    ``test/bag/test_bag.py`` names each attribute used and fails when a ``rosbags`` release
    changes one, instead of this falling back to the slow path unnoticed.
    """
    try:
        from rosbags.rosbag2.storage_mcap import decompress, McapReader

        top = reader.storage
        if getattr(getattr(top, 'metadata', None), 'compression_mode', None) == 'message':
            return None
        plan = []
        for storage, cmap in _storage_connections(reader, conns):
            if not isinstance(storage, McapReader) or not storage.chunks:
                return None
            chunks = [c for c in storage.chunks
                      if any(c.channel_count.get(cid, 0) for cid in cmap)]
            for a, b in zip(chunks, chunks[1:], strict=False):
                if not (a.chunk_start_offset < b.chunk_start_offset
                        and a.message_end_time <= b.message_start_time):
                    return None
            plan.append((storage.bio, chunks, cmap))
    except (ImportError, AttributeError, TypeError):
        return None
    return plan, decompress


def _chunk_bytes(bio: Any, chunk: Any, decompress: Any) -> bytes:
    """Read and decompress one chunk's records (``decompress`` checks its CRC)."""
    bio.seek(chunk.chunk_start_offset + 9 + 24)
    crc = _U32(bio.read(4))[0]
    bio.seek(chunk.chunk_start_offset + 9 + 40 + len(chunk.compression))
    data = bio.read(chunk.compressed_size)
    if len(data) != chunk.compressed_size:
        raise BagError(f'truncated chunk at offset {chunk.chunk_start_offset}')
    return decompress(data, chunk.compression, chunk.uncompressed_size, crc)


def _chunk_batches(plan: list[tuple[Any, list[Any], dict[int, Any]]],
                   decompress: Any) -> Iterator[MessageBatch]:
    """Read the planned chunks as columns: ``messages``' messages and order, one batch a chunk.

    Only the walk from record to record is a Python loop (a record's length gives the next
    one's offset); the fields of the message records are gathered with numpy.
    """
    for bio, chunks, cmap in plan:
        lut = np.full(max(cmap) + 1, -1, np.int64)
        for channel, conn in cmap.items():
            lut[channel] = conn.id
        for chunk in chunks:
            raw = _chunk_bytes(bio, chunk, decompress)
            offsets = []
            append = offsets.append
            pos, end = 0, len(raw)
            while pos < end:
                append(pos)
                pos += 9 + _U64(raw, pos + 1)[0]
            buffer = np.frombuffer(raw, np.uint8)
            at = np.array(offsets, np.int64)
            is_message = buffer[at] == 0x05
            at = at[is_message]
            size = _gather(buffer, at + 1, '<u8').astype(np.int64)
            short = np.flatnonzero(size < _MESSAGE_HEADER - 9)
            if len(short):
                raise BagError(f'invalid message record length {int(size[short[0]])}')
            if pos != end:
                raise BagError(f'chunk at offset {chunk.chunk_start_offset} ends inside a '
                               'record')
            channel = _gather(buffer, at + 9, '<u2').astype(np.int64)
            log_time = _gather(buffer, at + 15, '<u8').astype(np.int64)
            conn_ids = np.where(channel < len(lut), lut[np.minimum(channel, len(lut) - 1)], -1)
            keep = ((conn_ids >= 0) & (log_time >= chunk.message_start_time)
                    & (log_time <= chunk.message_end_time))
            order = np.flatnonzero(keep)
            order = order[np.argsort(log_time[order], kind='stable')]
            if len(order):
                yield MessageBatch(log_time[order], conn_ids[order],
                                   at[order] + _MESSAGE_HEADER,
                                   size[order] - (_MESSAGE_HEADER - 9), raw)


def _gather(buffer: np.ndarray, at: np.ndarray, dtype: str) -> np.ndarray:
    """Read the little-endian ``dtype`` integers at byte offsets ``at`` of ``buffer``."""
    width = np.dtype(dtype).itemsize
    return np.ascontiguousarray(buffer[at[:, None] + np.arange(width)]).view(dtype)[:, 0]


def _batched(messages: Iterator[tuple[Any, int, bytes]]) -> Iterator[MessageBatch]:
    """Group ``(connection, log time, bytes)`` into batches of ``BATCH_MESSAGES``."""
    times: list[int] = []
    ids: list[int] = []
    payloads: list[bytes] = []
    for conn, t, raw in messages:
        times.append(t)
        ids.append(conn.id)
        payloads.append(bytes(raw))
        if len(times) == BATCH_MESSAGES:
            yield _batch_of(times, ids, payloads)
            times, ids, payloads = [], [], []
    if times:
        yield _batch_of(times, ids, payloads)


def _batch_of(times: list[int], ids: list[int], payloads: list[bytes]) -> MessageBatch:
    sizes = np.fromiter(map(len, payloads), np.int64, len(payloads))
    starts = np.zeros(len(payloads), np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    return MessageBatch(np.array(times, np.int64), np.array(ids, np.int64), starts, sizes,
                        b''.join(payloads))


def _describe(err: BaseException) -> str:
    """One line naming the error, without a trailing period."""
    text = ' '.join(str(err).split()) or type(err).__name__
    if isinstance(err, KeyError):
        text = f'missing key {text}'
    return text.rstrip('.')
