"""Writing a rosbag2 MCAP bag of raw messages with ``rosbags``, with their definitions.

The ``record`` executable's storage half, kept apart from rclpy so it can be tested on its own.
A bag is only useful if other tools can read it: ``ros2 bag info/play``, Foxglove and
``analyze`` decode a message only with its definition, so every connection carries one. The
definitions of the ROS 2 Jazzy standard types come from the ``rosbags`` type store; any other
type (this package's messages, a user's interfaces) from its installed ``.msg`` (or ``.idl``)
file, found through the ament index (``share/<pkg>/msg/<Type>.msg``) together with every type
it refers to. No message is ever deserialized: the bytes are written as they came.

Errors are ``RecordError`` with one sentence; ``rosbags`` and ``OSError`` errors are
translated here, at the boundary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
import contextlib
import heapq
import itertools
import os
from pathlib import Path
from types import TracebackType
from typing import Any

from ros2_deadline_monitor.analysis.errors import BagError

__all__ = ['BagWriter', 'check_output_path', 'Definitions', 'InOrder', 'RecordError',
           'share_definition']


class RecordError(BagError):
    """A bag cannot be written (a bad path, a full disk, a type without a definition)."""


def check_output_path(path: str | os.PathLike[str]) -> Path:
    """Return ``path`` if a new bag directory can be created there; else raise ``RecordError``.

    A bag is never overwritten. Missing parent folders are created when the bag is opened, so
    the nearest existing one must be a writable folder.
    """
    bag = Path(path)
    if not str(path):
        raise RecordError('no output path given')
    if bag.exists() or bag.is_symlink():
        raise RecordError(f'{bag} exists already: record never overwrites, give a new name')
    parent = bag.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise RecordError(f'cannot create {bag}: {parent} is not a folder')
    if not os.access(parent, os.W_OK | os.X_OK):
        raise RecordError(f'cannot create {bag}: folder {parent} is not writable')
    return bag


ShareLookup = Callable[[str], Path]
"""Package name -> its share directory; raises ``LookupError`` when it is not installed."""


def share_directory(package: str) -> Path:
    """Return ``package``'s share directory from the ament index (``LookupError`` if absent)."""
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError as err:
        raise LookupError('ament_index_python is not installed') from err
    try:
        return Path(get_package_share_directory(package))
    except Exception as err:  # PackageNotFoundError, ValueError: the boundary
        raise LookupError(str(err) or f'package {package} not found') from err


def share_definition(msgtype: str, share: ShareLookup = share_directory) -> dict[str, Any]:
    """Return the rosbags types (``{name: parse tree}``) defined by ``msgtype``'s installed file.

    ``msgtype`` is ``pkg/msg/Type``; the file is ``share/pkg/msg/Type.msg`` (or ``.idl``), as
    every rosidl package installs it. Raises ``RecordError`` when there is none.
    """
    from rosbags.typesys import get_types_from_idl, get_types_from_msg

    package, kind, name = _split(msgtype)
    try:
        folder = share(package) / kind
    except LookupError as err:
        raise RecordError(f'no definition of {msgtype}: it is not a ROS 2 Jazzy standard type '
                          f'and package {package} is not in the ament index ({err}; is its '
                          'workspace sourced?)') from None
    for suffix in ('.msg', '.idl'):
        path = folder / f'{name}{suffix}'
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding='utf-8')
            if suffix == '.msg':
                return dict(get_types_from_msg(text, msgtype))
            return dict(get_types_from_idl(text))
        except Exception as err:  # OSError or rosbags' parser on a file: the boundary
            raise RecordError(f'cannot read the definition of {msgtype} in {path}: '
                              f'{_describe(err)}') from err
    raise RecordError(f'no definition of {msgtype}: neither {folder / name}.msg nor .idl exists')


def _split(msgtype: str) -> tuple[str, str, str]:
    parts = msgtype.split('/')
    if len(parts) != 3 or not all(parts):
        raise RecordError(f'{msgtype!r} is not a type name (pkg/msg/Type)')
    return parts[0], parts[1], parts[2]


def _dependencies(fields: Iterable[tuple[str, Any]]) -> Iterator[str]:
    """Type names that fields refer to (nested, arrays and sequences)."""
    from rosbags.typesys.base import Nodetype

    for _, desc in fields:
        while desc[0] in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            desc = desc[1][0]
        if desc[0] == Nodetype.NAME:
            yield desc[1]


class Definitions:
    """Message definitions and type hashes for the connections of a bag.

    One ``rosbags`` type store: the Jazzy standard types, plus every type loaded from an
    installed file (``share``) the first time a topic needs it.
    """

    def __init__(self, share: ShareLookup = share_directory) -> None:
        """Start from the ROS 2 Jazzy types; find the others with ``share``."""
        from rosbags.typesys import get_typestore, Stores

        self.store = get_typestore(Stores.ROS2_JAZZY)
        self._share = share

    def __call__(self, msgtype: str) -> tuple[str, str]:
        """Return ``(message definition, RIHS01 hash)`` of ``msgtype``; ``RecordError`` if none.

        The definition is the ``ros2msg`` text ``ros2 bag record`` stores: the type, then each
        type it uses after a ``MSG:`` separator line.
        """
        self._load(msgtype)
        try:
            msgdef, _ = self.store.generate_msgdef(msgtype, ros_version=2)
            return msgdef, self.store.hash_rihs01(msgtype)
        except Exception as err:  # rosbags on a parsed definition: the boundary
            raise RecordError(f'cannot describe {msgtype}: {_describe(err)}') from err

    def _load(self, msgtype: str) -> None:
        """Register ``msgtype`` and every type it uses that the store does not hold yet."""
        known = self.store.fielddefs
        found: dict[str, Any] = {}
        todo = [msgtype]
        while todo:
            name = todo.pop()
            if name in known or name in found:
                continue
            types = share_definition(name, self._share)
            if name not in types:
                raise RecordError(f'the installed definition of {name} does not define it')
            found.update(types)
            for _, fields in types.values():
                todo.extend(_dependencies(fields))
        if found:
            try:
                self.store.register(found)
            except Exception as err:  # rosbags: a clash with a known type, the boundary
                raise RecordError(f'cannot use the definition of {msgtype}: '
                                  f'{_describe(err)}') from err


class BagWriter:
    """A new rosbag2 bag (format 9, MCAP storage) written as messages come.

    Use as a context manager, or ``open`` then ``close``. Topics are added when their first
    publisher is found (``add_topic``); ``write`` appends one raw message with its log time.
    ``rosbags`` keeps at most one 1 MiB chunk in memory and a small index entry per written
    chunk, so memory stays bounded however long the recording runs.
    """

    def __init__(self, path: str | os.PathLike[str],
                 definitions: Callable[[str], tuple[str, str]] | None = None) -> None:
        """Check ``path`` (``RecordError`` if unusable); nothing is created before ``open``."""
        self.path = check_output_path(path)
        self._definitions = definitions
        self._writer: Any = None
        self.counts: dict[str, int] = {}
        """Messages written per topic, in the order the topics were added."""

    def open(self) -> BagWriter:
        """Create the bag directory and its MCAP file; raise ``RecordError`` if impossible."""
        from rosbags.rosbag2 import StoragePlugin, Writer

        if self._definitions is None:
            self._definitions = Definitions()
        try:
            writer = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
            writer.open()
        except Exception as err:  # WriterError, OSError: the boundary
            raise RecordError(f'cannot create bag {self.path}: {_describe(err)}') from err
        self._writer = writer
        return self

    def add_topic(self, topic: str, msgtype: str, offered_qos: Sequence[Any] = ()) -> Any:
        """Add a topic's connection with its definition; return it (the handle for ``write``).

        ``offered_qos``: the publishers' profiles as ``rosbags.interfaces.Qos``, stored for
        ``ros2 bag play``. Raises ``RecordError`` when the type has no definition.
        """
        assert self._definitions is not None and self._writer is not None, 'open() first'
        msgdef, digest = self._definitions(msgtype)
        try:
            connection = self._writer.add_connection(
                topic, msgtype, msgdef=msgdef, rihs01=digest,
                offered_qos_profiles=list(offered_qos))
        except Exception as err:  # rosbags: the boundary
            raise RecordError(f'cannot add {topic} to {self.path}: {_describe(err)}') from err
        self.counts.setdefault(topic, 0)
        return connection

    def write(self, connection: Any, log_time_ns: int, raw: bytes | memoryview) -> None:
        """Append one message (its CDR bytes as received) logged at ``log_time_ns``."""
        try:
            self._writer.write(connection, log_time_ns, raw)
        except Exception as err:  # OSError (disk full), rosbags: the boundary
            raise RecordError(f'cannot write to {self.path}: {_describe(err)}') from err
        self.counts[connection.topic] += 1

    @property
    def message_count(self) -> int:
        """Messages written so far."""
        return sum(self.counts.values())

    def close(self) -> None:
        """Finish the MCAP file (index, summary) and write ``metadata.yaml``; safe twice.

        When that fails the file is closed all the same (``mcap recover`` may save it).
        """
        writer, self._writer = self._writer, None
        if writer is None:
            return
        try:
            writer.close()
        except Exception as err:  # OSError (disk full), rosbags: the boundary
            with contextlib.suppress(Exception):
                writer.abort()
            raise RecordError(f'cannot finish {self.path}: {_describe(err)}') from err

    def __enter__(self) -> BagWriter:
        return self.open()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if kind is None:
            self.close()
            return
        with contextlib.suppress(RecordError):  # the error in flight says what went wrong
            self.close()


class InOrder:
    """Messages written in log-time order although they are taken a little out of it.

    Messages of several topics are taken topic by topic, and one delivered just after a take
    comes with the next batch, behind later ones. Each message waits until the newest one
    added is ``hold_ns`` of log time younger, then they are written oldest first: a late
    message within ``hold_ns`` still lands in order, and the MCAP chunks do not overlap in
    time (``analyze``'s fast chunk reader needs that; an overlap is only slower to read).
    Memory: the messages of ``hold_ns``. ``add`` is the per-message call; ``flush`` writes.
    """

    def __init__(self, write: Callable[[Any, int, bytes], None], hold_ns: int) -> None:
        """Write each message with ``write(connection, log_time_ns, raw)``."""
        self._write = write
        self._hold_ns = hold_ns
        self._added: list[tuple[int, int, Any, bytes]] = []
        self._waiting: list[tuple[int, int, Any, bytes]] = []
        """A heap on (log time, order added): equal log times never compare connections."""
        self._order = itertools.count().__next__
        self._newest_ns: int | None = None

    def add(self, connection: Any, log_time_ns: int, raw: bytes) -> None:
        """Keep one message until ``flush`` writes it."""
        self._added.append((log_time_ns, self._order(), connection, raw))

    def flush(self, everything: bool = False) -> int:
        """Write the messages ``hold_ns`` older than the newest one (``everything``: all).

        Returns how many were written.
        """
        added, waiting = self._added, self._waiting
        if added:
            newest = max(item[0] for item in added)
            if self._newest_ns is None or newest > self._newest_ns:
                self._newest_ns = newest
            for item in added:
                heapq.heappush(waiting, item)
            added.clear()
        if not waiting or self._newest_ns is None:
            return 0
        until_ns = None if everything else self._newest_ns - self._hold_ns
        count = 0
        while waiting and (until_ns is None or waiting[0][0] <= until_ns):
            log_time_ns, _, connection, raw = heapq.heappop(waiting)
            self._write(connection, log_time_ns, raw)
            count += 1
        return count

    @property
    def waiting(self) -> int:
        """Messages added and not written yet."""
        return len(self._added) + len(self._waiting)


def _describe(err: BaseException) -> str:
    """One line naming the error, without a trailing period."""
    text = ' '.join(str(err).split()) or type(err).__name__
    return text.rstrip('.')
