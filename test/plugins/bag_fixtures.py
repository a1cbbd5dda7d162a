"""Bags written with rosbags from synthesized streams whose answers are known.

Shared by the bag adapter's tests and the outputs' (tables, plots); registered in
``test/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
import struct

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import get_types_from_msg, get_typestore, Stores

MS = 1_000_000
T0 = 1_700_000_000_000_000_000
"""Wall time (system clock ns) at which every synthesized run starts."""
REPO = Path(__file__).resolve().parents[2]
STATS = 'ros2_deadline_monitor/msg/MonitorStats'


def rcl_timer_cycles(period_ns: int = 10 * MS, duration_ns: int = 5_000 * MS,
                     stall_ns: int = 22 * MS, stall_every: int = 50, exec_ns: int = 300_000,
                     wake_ns: int = 50_000, t0_ns: int = T0) -> tuple[np.ndarray, np.ndarray]:
    """Return (starts, ends) of a single-threaded rcl timer whose every Nth callback stalls.

    A callback starts ``wake_ns`` after its slot or when the previous one ended, whichever
    is later; the next slot follows rcl (one period after the previous slot, jumping over
    slots already passed at the start).
    """
    starts, ends = [], []
    expected = t0_ns
    free = t0_ns
    i = 0
    while expected < t0_ns + duration_ns:
        start = max(expected + wake_ns, free)
        i += 1
        run = stall_ns if stall_every and i % stall_every == stall_every // 2 else exec_ns
        nxt = expected + period_ns
        if nxt <= start:
            nxt += (1 + (start - nxt) // period_ns) * period_ns
        starts.append(start)
        ends.append(start + run)
        expected = nxt
        free = start + run
    return np.array(starts, np.int64), np.array(ends, np.int64)


def header_cdr(stamp_ns: int, frame_id: bytes = b'') -> bytes:
    """Serialize a std_msgs/Header (XCDR1 little endian) without a serializer."""
    sec, nanosec = divmod(stamp_ns, 1_000_000_000)
    body = struct.pack('<iII', sec, nanosec, len(frame_id) + 1) + frame_id + b'\0'
    return b'\x00\x01\x00\x00' + body


def clock_cdr(sim_ns: int) -> bytes:
    """Serialize a rosgraph_msgs/Clock."""
    sec, nanosec = divmod(sim_ns, 1_000_000_000)
    return b'\x00\x01\x00\x00' + struct.pack('<iI', sec, nanosec)


def typestore(with_stats: bool = False):
    """Return the Jazzy typestore, with this package's messages registered on request."""
    store = get_typestore(Stores.ROS2_JAZZY)
    if with_stats:
        types = {}
        for path in sorted((REPO / 'msg').glob('*.msg')):
            types.update(get_types_from_msg(path.read_text(),
                                            f'ros2_deadline_monitor/msg/{path.stem}'))
        store.register(types)
    return store


def write_bag(path: Path, storage: str, topics: dict[str, str],
              messages: Iterable[tuple[str, int, bytes]], store=None) -> Path:
    """Write ``(topic, log_time_ns, raw)`` messages (sorted by time) into a new bag."""
    store = store or typestore()
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        conns = {topic: writer.add_connection(topic, msgtype, typestore=store)
                 for topic, msgtype in topics.items()}
        for topic, t, raw in sorted(messages, key=lambda m: m[1]):
            writer.write(conns[topic], t, raw)
    return path


@dataclass(frozen=True)
class Reference:
    """A written bag and the ground truth of what it holds."""

    path: Path
    starts: np.ndarray
    ends: np.ndarray
    arrivals: np.ndarray
    stamps: np.ndarray


def clock_messages(duration_ns: int, wall_step_ns: int, sim_step_ns: int, t0_ns: int = T0,
                   topic: str = '/clock') -> list[tuple[str, int, bytes]]:
    """/clock samples: sim advances ``sim_step_ns`` every ``wall_step_ns`` from sim 0."""
    n = duration_ns // wall_step_ns + 1
    return [(topic, t0_ns + k * wall_step_ns, clock_cdr(k * sim_step_ns)) for k in range(n)]


def reference_bag(path: Path, storage: str, *, twist: bool = False, sim_stamps: bool = False,
                  delay_ns: int = 200_000) -> Reference:
    """Write the reference scenario: 100 Hz, 22 ms stall every 50th cycle, 5 s, /clock at 1 kHz.

    Header stamp = cycle start (wall clock, or the sim time then with ``sim_stamps``),
    log time = end + ``delay_ns``; /clock runs at RTF 1.0 from sim 0.
    """
    starts, ends = rcl_timer_cycles()
    arrivals = ends + delay_ns
    stamps = (starts - T0) // MS * MS if sim_stamps else starts
    store = typestore()
    if twist:
        msgtype = 'geometry_msgs/msg/TwistStamped'
        cls = store.types[msgtype]
        hdr = store.types['std_msgs/msg/Header']
        tim = store.types['builtin_interfaces/msg/Time']
        vec = store.types['geometry_msgs/msg/Vector3']
        tw = store.types['geometry_msgs/msg/Twist']

        def encode(stamp: int) -> bytes:
            sec, nanosec = divmod(int(stamp), 1_000_000_000)
            msg = cls(header=hdr(stamp=tim(sec=sec, nanosec=nanosec), frame_id='base'),
                      twist=tw(linear=vec(x=0.5, y=0.0, z=0.0), angular=vec(x=0.0, y=0.0,
                                                                             z=0.1)))
            return bytes(store.serialize_cdr(msg, msgtype))
    else:
        msgtype = 'std_msgs/msg/Header'

        def encode(stamp: int) -> bytes:
            return header_cdr(int(stamp), b'base')
    messages = [('/demo/cmd', int(t), encode(s)) for t, s in zip(arrivals, stamps, strict=True)]
    messages += clock_messages(5_100 * MS, MS, MS)
    messages += [('/rosout', T0 + 5 * MS, b'\x00\x01\x00\x00' + bytes(40))]
    write_bag(path, storage, {'/demo/cmd': msgtype, '/clock': 'rosgraph_msgs/msg/Clock',
                              '/rosout': 'rcl_interfaces/msg/Log'}, messages, store)
    return Reference(path, starts, ends, arrivals, stamps)


def slow_sim_bag(path: Path, storage: str, rtf: float = 0.5) -> Path:
    """Write a producer on sim time at 100 Hz sim while /clock runs at ``rtf`` (1 ms sim steps).

    /clock: sim advances 1 ms per 1/rtf ms of wall. The timer fires when sim reaches each
    10 ms slot; its header stamp is the slot; the message is logged 0.5 ms (wall) later.
    """
    wall_step = round(MS / rtf)
    messages = clock_messages(5_000 * MS, wall_step, MS)
    for k in range(0, 5_000 * MS // wall_step // 10):
        slot_sim = k * 10 * MS
        wall = T0 + k * 10 * wall_step
        messages.append(('/sim/cmd', wall + 500_000, header_cdr(slot_sim)))
    write_bag(path, storage, {'/sim/cmd': 'std_msgs/msg/Header',
                              '/clock': 'rosgraph_msgs/msg/Clock'}, messages)
    return path


def default_message(store, typename: str, **values):
    """Build a ``typename`` message with zero / empty fields, some set from ``values``."""
    from rosbags.typesys.base import Nodetype

    _, fields = store.fielddefs[typename]
    kwargs = {}
    for name, (kind, detail) in fields:
        if name in values:
            kwargs[name] = values[name]
        elif kind == Nodetype.NAME:
            kwargs[name] = default_message(store, detail)
        elif kind == Nodetype.BASE:
            base = detail[0]
            kwargs[name] = ('' if base == 'string' else False if base == 'bool'
                            else 0.0 if base.startswith('float') else 0)
        else:
            kwargs[name] = []
    return store.types[typename](**kwargs)


@pytest.fixture(params=['mcap', 'sqlite3'])
def storage(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_reference(tmp_path: Path) -> Callable[..., Reference]:
    def make(storage: str, name: str = 'ref', **kwargs) -> Reference:
        return reference_bag(tmp_path / name, storage, **kwargs)
    return make


def stats_message(store, stamp_ns: int, topics: list[dict], clock: dict | None = None):
    """Build a MonitorStats with one TopicStats per dict (fields by name; dotted for nested)."""
    sec, nanosec = divmod(stamp_ns, 1_000_000_000)
    stamp = store.types['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec)
    header = store.types['std_msgs/msg/Header'](stamp=stamp, frame_id='')

    def build(typename: str, values: dict):
        nested: dict[str, dict] = {}
        flat = {}
        for key, value in values.items():
            if '.' in key:
                outer, inner = key.split('.', 1)
                nested.setdefault(outer, {})[inner] = value
            else:
                flat[key] = value
        _, fields = store.fielddefs[typename]
        for name, (_, detail) in fields:
            if name in nested:
                flat[name] = build(detail, nested[name])
        return default_message(store, typename, header=header, **flat)

    return default_message(
        store, STATS, header=header,
        topics=[build('ros2_deadline_monitor/msg/TopicStats', t) for t in topics],
        clock=build('ros2_deadline_monitor/msg/ClockStats', clock or {}))


def stats_bag(path: Path, storage: str, reports: list, topic: str = '/deadline_monitor/stats'
              ) -> Path:
    """Write ``(stamp_ns, topics, clock)`` reports as MonitorStats messages."""
    store = typestore(with_stats=True)
    messages = []
    for stamp_ns, topics, clock in reports:
        msg = stats_message(store, stamp_ns, topics, clock)
        messages.append((topic, stamp_ns, bytes(store.serialize_cdr(msg, STATS))))
    return write_bag(path, storage, {topic: STATS}, messages, store)


class Bags:
    """The helpers above, for test modules (which cannot import conftest by name)."""

    rcl_timer_cycles = staticmethod(rcl_timer_cycles)
    header_cdr = staticmethod(header_cdr)
    clock_cdr = staticmethod(clock_cdr)
    clock_messages = staticmethod(clock_messages)
    typestore = staticmethod(typestore)
    write = staticmethod(write_bag)
    reference = staticmethod(reference_bag)
    slow_sim = staticmethod(slow_sim_bag)
    stats = staticmethod(stats_bag)
    stats_message = staticmethod(stats_message)
    default_message = staticmethod(default_message)


@pytest.fixture
def bags() -> type[Bags]:
    return Bags


class TopicView:
    """One analyzed topic of a ``BagResult`` by name, for assertions.

    Whole-run figures first (``TopicSnapshot.run``), then the session's report, the bag
    facts and the snapshot; misses and skipped periods None while unknown (as in the JSON),
    ``note`` the table's note.
    """

    def __init__(self, topic, facts) -> None:
        self._parts = (topic.run, topic.report, facts, topic)
        self._topic, self._facts = topic, facts

    def __getattr__(self, name):
        report = self._topic.report
        if name in ('deadline_misses_total', 'skipped_periods_total'):
            return getattr(report, name) if report.counts_known else None
        if name in ('rate_wall_hz', 'rate_sim_hz'):
            return getattr(self._topic.run, f'interval_{name.split("_")[1]}').rate_hz
        if name == 'note':
            from ros2_deadline_monitor.outputs.tables import topic_note
            return topic_note(self._topic, self._facts)
        if name == 'name':
            return self._topic.topic_id
        for part in self._parts:
            if hasattr(part, name):
                return getattr(part, name)
        raise AttributeError(name)


@pytest.fixture
def topic_views():
    """Return a function giving the ``TopicView`` of every topic of a ``BagResult``."""
    return lambda result: tuple(TopicView(t, f) for t, f in result.topics)
