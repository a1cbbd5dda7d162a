"""``record``: topics and ``/clock`` into an MCAP rosbag2 bag, raw, without the ``ros2`` CLI.

    record /demo/cmd -o run1
    record --all -o run1
    analyze run1

For users of the PyPI set-up, who have no ``ros2 bag``: the bag is what ``analyze`` reads, and
``ros2 bag info/play`` too (every connection stores its message definition, see
``bag_writer.py``). Messages are never deserialized (DESIGN.md §6): each subscription is raw,
on a node no executor spins, and its queue is taken in batches every ``TAKE_PERIOD_S`` from the
main thread, as the monitor does (``subscriptions.make_drain``), and written in log-time
order after waiting ``REORDER_NS`` (``bag_writer.InOrder``). Memory is bounded by the reader
queues, that wait and one MCAP chunk.

The log time of a message is the middleware timestamp the live monitor takes as its arrival
(``--log-time``, the monitor's ``arrival_timestamp``: the writer-side source timestamp by
default), so ``analyze`` on the bag counts what the live monitor counted. Topics are found as
the monitor finds them: named ones wait for their first publisher; ``--all`` adopts every topic
``monitor --all`` would (``core/topic_selection.py``); the QoS follows the publishers
(``qos.choose_qos``), and a latched topic is subscribed transient local to get its history.

A bad command line or an output path that cannot be used is one ``ERROR:`` line and exit code
2, before anything subscribes. SIGINT and SIGTERM take what is queued and close the bag.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
import sys
from typing import Any, TextIO

from ros2_deadline_monitor.core.config import NS_PER_S
from ros2_deadline_monitor.core.parameters import ARRIVAL_TIMESTAMPS
from ros2_deadline_monitor.core.topic_selection import excluded_reason
from ros2_deadline_monitor.shell.bag_writer import BagWriter, InOrder, RecordError
from ros2_deadline_monitor.shell.stop_signals import StopSignals
from ros2_deadline_monitor.shell.usage import (
    check_ros_arguments,
    check_topic_names,
    EXIT_USAGE,
    init_rclpy,
    UsageError,
    UsageParser,
    without_ros_args,
)

__all__ = ['build_parser', 'CommandLine', 'main', 'parse_command_line', 'Recorder']

NODE_NAME = 'record'
CLOCK_TOPIC = '/clock'
TAKE_PERIOD_S = 0.1
"""The reader queues are emptied this often (steady time): 100 messages of a 1 kHz /clock."""
POLL_EVERY = 5
"""The graph is read every this many takes (0.5 s): topics that appeared are subscribed."""
TOPIC_DEPTH = 1000
"""Reader queue of a topic: ten take periods of a 1 kHz topic; a full one is reported."""
CLOCK_DEPTH = 1000
REORDER_NS = 200_000_000
"""Taken messages wait this long (log time, behind the newest one taken) before they are
written, in log-time order: two take periods, so a message that arrived just after a take
is still written before the later messages of the next one."""
EXIT_ERROR = 1

DESCRIPTION = """\
Record topics and /clock into an MCAP rosbag2 bag (a folder PATH holding PATH.mcap and
metadata.yaml), for analyze and ros2 bag alike, without the ros2 command: messages are
stored raw (never deserialized) with their message definitions.
"""
EPILOG = """\
/clock is always recorded once it has a publisher. A TOPIC without a publisher yet is
recorded from its first publisher on; the subscription's QoS follows the publishers
(reliable when they all are, transient local when they all are latched).

--all records every topic with a publisher, now or later, that monitor --all would monitor:
not infrastructure topics (/rosout, /parameter_events, /diagnostics*, /tf_static,
/robot_description, /events/write_split), hidden topics (a name part starting with _) or
the monitors' stats; name those as TOPICs to record them too.

Each message's log time is its middleware timestamp, the one the monitor takes as a
message's arrival (--log-time, the monitor's arrival_timestamp: source by default), so
analyze on the bag counts what the live monitor counted.

Examples:
  record /demo/cmd -o run1            (Ctrl-C to stop)
  analyze run1 --stamp start
  record --all /deadline_monitor/stats -o runs/$(date +%F_%H%M%S)

Exit status: 0 after SIGINT/SIGTERM (the bag is closed and complete), 1 when writing
failed, 2 for a bad command line or an output path that exists or cannot be created.
"""


def build_parser() -> argparse.ArgumentParser:
    """Build the command line of ``record`` (ROS arguments are removed before parsing)."""
    parser = UsageParser(prog='record', description=DESCRIPTION, epilog=EPILOG,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('topics', metavar='TOPIC', nargs='*',
                        help='a topic to record, e.g. /demo/cmd (any type; repeat for several)')
    parser.add_argument('--all', action='store_true', dest='all_topics',
                        help='also record every topic with a publisher in the graph, now or '
                             'later, except infrastructure and hidden topics (see below)')
    parser.add_argument('-o', '--output', metavar='PATH', required=True,
                        help='the bag folder to create (must not exist; parents are created)')
    parser.add_argument('--log-time', choices=tuple(ARRIVAL_TIMESTAMPS), default='source',
                        help="middleware timestamp logged with each message: 'source' (writer "
                             "side, the monitor's default arrival) or 'received' (reader "
                             'side); default: %(default)s')
    return parser


@dataclass(frozen=True)
class CommandLine:
    """What the (non-ROS) command line asked for."""

    output: str
    topics: tuple[str, ...] = ()
    all_topics: bool = False
    log_time: str = 'source'


def parse_command_line(argv: Sequence[str]) -> CommandLine:
    """Parse and check the arguments left after ``remove_ros_args`` (no program name).

    Raises ``UsageError`` for anything that must not start a recording.
    """
    args = build_parser().parse_args(list(argv))
    if not args.topics and not args.all_topics:
        raise UsageError('nothing to record: name the TOPICs (e.g. record /demo/cmd -o run1) '
                         'or give --all')
    check_topic_names(args.topics)
    return CommandLine(args.output, tuple(args.topics), args.all_topics, args.log_time)


def bag_qos(profile: Any) -> Any:
    """Return an rclpy ``QoSProfile`` as the ``rosbags`` ``Qos`` stored for ``ros2 bag play``.

    rclpy's and rosbags' policy enums share their values (both are rmw's); durations are
    stored as rosbag2 stores them (infinite: 9223372036 s 854775807 ns).
    """
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )

    def duration(value: Any) -> QosTime:
        return QosTime(*divmod(int(value.nanoseconds), NS_PER_S))

    return Qos(QosHistory(int(profile.history)), int(profile.depth),
               QosReliability(int(profile.reliability)), QosDurability(int(profile.durability)),
               duration(profile.deadline), duration(profile.lifespan),
               QosLiveliness(int(profile.liveliness)),
               duration(profile.liveliness_lease_duration),
               bool(profile.avoid_ros_namespace_conventions))


def _ignore(raw: bytes, info: dict[str, Any]) -> None:
    """Do nothing: the callback of a subscription no executor spins is never called."""


class RecordedTopic:
    """One topic to record: waiting for a publisher, then its raw subscription and connection.

    ``poll`` (every ``POLL_EVERY`` takes) looks at the publishers: it subscribes once they
    agree on a type that has a definition, and drops to best effort when a best effort
    publisher joins a reliable subscription. Each problem is logged once.
    """

    def __init__(self, node: Any, writer: BagWriter, topic: str, arrival_key: str,
                 depth: int, ordered: InOrder) -> None:
        """Prepare; subscribing waits for ``poll``."""
        self._node = node
        self._writer = writer
        self.topic = topic
        self._arrival_key = arrival_key
        self._depth = depth
        self._ordered = ordered
        self.type_name = ''
        self._connection: Any = None
        self._subscription: Any = None
        self._drain: Callable[[], int] | None = None
        self._reliable = False
        self._publishers = -1
        self._logged: set[str] = set()
        self.failed = False
        """True when the topic cannot be recorded (no definition, no message class)."""

    @property
    def subscribed(self) -> bool:
        """True while messages are recorded."""
        return self._drain is not None

    def _log_once(self, level: str, text: str) -> None:
        if text in self._logged:
            return
        self._logged.add(text)
        logger = self._node.get_logger()
        if level == 'info':
            logger.info(text)
        else:
            logger.warning(text)

    def poll(self) -> None:
        """Subscribe when the publishers allow it; downgrade to best effort when needed."""
        if self.failed:
            return
        count = self._node.count_publishers(self.topic)
        if self.subscribed and count == self._publishers:
            return
        self._publishers = count
        publishers = self._node.get_publishers_info_by_topic(self.topic)
        if not publishers:
            if not self.subscribed:
                self._log_once('info', f'waiting for a publisher on {self.topic}')
            return
        if not self.subscribed:
            self._subscribe(publishers)
            return
        from ros2_deadline_monitor.shell.qos import all_reliable

        if self._reliable and not all_reliable(publishers):
            self._log_once('info', f'a best effort publisher joined {self.topic}: recording it '
                                   'best effort')
            self.take()
            self._node.destroy_subscription(self._subscription)
            self._drain = self._subscription = None
            self._subscribe(publishers, reliable=False)

    def _subscribe(self, publishers: Sequence[Any], reliable: bool | None = None) -> None:
        from rclpy.event_handler import SubscriptionEventCallbacks
        from rclpy.qos import DurabilityPolicy

        from ros2_deadline_monitor.core.message_info import InfoFallback
        from ros2_deadline_monitor.shell.message_types import import_message, MessageTypeError
        from ros2_deadline_monitor.shell.qos import choose_qos
        from ros2_deadline_monitor.shell.subscriptions import make_drain

        types = sorted({p.topic_type for p in publishers})
        if len(types) > 1:
            self._log_once('warning', f'publishers on {self.topic} disagree on the type '
                                      f'({", ".join(types)}): not recorded until they agree')
            return
        if self.type_name and types[0] != self.type_name:
            self._log_once('warning', f'{self.topic} changed its type from {self.type_name} '
                                      f'to {types[0]}: not recorded until it is back')
            return
        try:
            msg_class = import_message(types[0])
            if self._connection is None:
                qos = []
                try:
                    qos = [bag_qos(p.qos_profile) for p in publishers]
                except (ValueError, TypeError, AttributeError):
                    pass  # an unknown policy value: the bag just stores no profile
                self._connection = self._writer.add_topic(self.topic, types[0], qos)
        except (MessageTypeError, RecordError) as err:
            self.failed = True
            self._node.get_logger().error(f'{self.topic} cannot be recorded: {err}')
            return
        self.type_name = types[0]
        choice = choose_qos(publishers, self._depth, None, reliable)
        profile = choice.profile
        if all(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
               for p in publishers):
            profile.durability = DurabilityPolicy.TRANSIENT_LOCAL  # latched: get the history
        connection, add = self._connection, self._ordered.add

        def record(arrival_ns: int, raw: bytes, sequence: int) -> None:
            add(connection, arrival_ns, raw)

        self._subscription = self._node.create_subscription(
            msg_class, self.topic, _ignore, profile,
            event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False), raw=True)
        self._drain = make_drain(self._subscription, record, self._arrival_key,
                                 InfoFallback(self._arrival_key))
        self._reliable = choice.reliable
        latched = ', transient local' if profile.durability == DurabilityPolicy.TRANSIENT_LOCAL \
            else ''
        self._node.get_logger().info(
            f'recording {self.topic} ({self.type_name}, '
            f'{"reliable" if choice.reliable else "best effort"}{latched})')

    def take(self) -> int:
        """Hand every queued message to the writer's ``InOrder``; return how many."""
        if self._drain is None:
            return 0
        count = self._drain()
        if count >= self._depth:
            self._log_once('warning', f'the reader queue of {self.topic} ({self._depth} '
                                      'messages) filled up between two takes: messages may '
                                      'have been dropped')
        return count

    def close(self) -> None:
        """Destroy the subscription (``Recorder.close`` takes what is queued first)."""
        if self._subscription is not None:
            self._node.destroy_subscription(self._subscription)
        self._drain = self._subscription = None


class Recorder:
    """The topics of one recording, taken in batches into one bag.

    ``take`` empties every reader queue and writes the messages that waited ``REORDER_NS``,
    in log-time order; ``poll`` reads the graph (and with ``all_topics`` adopts new topics).
    Both run on the caller's thread; nothing here spins an executor.
    """

    def __init__(self, node: Any, writer: BagWriter, topics: Sequence[str], *,
                 all_topics: bool = False, arrival_key: str = ARRIVAL_TIMESTAMPS['source']
                 ) -> None:
        """Record ``/clock`` and ``topics`` (resolved by ``node``) into ``writer``'s bag."""
        self._node = node
        self._writer = writer
        self._arrival_key = arrival_key
        self._all = all_topics
        self._ordered = InOrder(writer.write, REORDER_NS)
        self._clock = node.resolve_topic_name(CLOCK_TOPIC)
        self.topics: dict[str, RecordedTopic] = {}
        for topic in (self._clock, *topics):
            self._add(node.resolve_topic_name(topic))
        self._excluded: set[str] = set()
        self._own = node.get_fully_qualified_name()

    def _add(self, name: str) -> None:
        if name not in self.topics:
            depth = CLOCK_DEPTH if name == self._clock else TOPIC_DEPTH
            self.topics[name] = RecordedTopic(self._node, self._writer, name,
                                              self._arrival_key, depth, self._ordered)

    def poll(self) -> None:
        """Look at the graph: adopt new topics (``all_topics``), subscribe those that can be."""
        if self._all:
            for name, types in self._node.get_topic_names_and_types():
                if name in self.topics or name in self._excluded:
                    continue
                if excluded_reason(name, types, clock_topic=self._clock,
                                   own_namespace=self._own) is not None:
                    self._excluded.add(name)
                elif self._node.count_publishers(name) > 0:
                    self._add(name)
        for topic in self.topics.values():
            topic.poll()

    def take(self) -> int:
        """Take every queued message; write those that waited long enough; return how many."""
        for topic in self.topics.values():
            topic.take()
        return self._ordered.flush()

    def close(self) -> None:
        """Write what is still queued or waiting, then destroy the subscriptions."""
        try:
            self.take()
            self._ordered.flush(everything=True)
        finally:
            for topic in self.topics.values():
                topic.close()


def _error(text: str, stream: TextIO | None = None, code: int = EXIT_USAGE) -> int:
    print(f'ERROR: {text}', file=stream or sys.stderr)
    return code


def summary_line(writer: BagWriter) -> str:
    """Return the line printed at exit: the bag and its messages per topic."""
    counts = ', '.join(f'{topic} {count}' for topic, count in writer.counts.items())
    return (f'recorded {writer.message_count} messages into {writer.path}'
            f'{f" ({counts})" if counts else ": no topic had a publisher"}')


def main(argv: list[str] | None = None) -> int:
    """Record until SIGINT/SIGTERM; return the exit code (0, 1 write error, 2 usage)."""
    # As in ``monitor``: a Ctrl-C while rclpy is being imported stops, without a traceback.
    with StopSignals() as signals:
        return _run(list(sys.argv[1:] if argv is None else argv), signals)


def _run(args: list[str], signals: StopSignals) -> int:
    """Check the command line and the output path, then record until a stop signal."""
    try:
        check_ros_arguments(args)
        command = parse_command_line(without_ros_args('record', args))
    except UsageError as err:
        return _error(f'{err} (see record --help)')
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else EXIT_USAGE
    try:
        writer = BagWriter(command.output)
    except RecordError as err:
        return _error(str(err))
    stop = signals.stop
    if stop.is_set():
        return 0
    try:
        init_rclpy('record', args)
    except UsageError as err:
        return _error(f'invalid ROS arguments: {err}')
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rclpy.node import Node

    node = recorder = None
    code = 0
    try:
        node = Node(NODE_NAME, start_parameter_services=False)
        try:
            writer.open()
        except RecordError as err:
            return _error(str(err))
        recorder = Recorder(node, writer, command.topics, all_topics=command.all_topics,
                            arrival_key=ARRIVAL_TIMESTAMPS[command.log_time])
        node.get_logger().info(f'recording into {writer.path} (Ctrl-C to stop)')
        recorder.poll()
        takes = 0
        while not stop.wait(TAKE_PERIOD_S) and rclpy.ok():
            recorder.take()
            takes += 1
            if takes % POLL_EVERY == 0:
                recorder.poll()
        recorder.close()
        recorder = None
        writer.close()
        print(summary_line(writer), flush=True)
    except RecordError as err:
        code = _error(str(err), code=EXIT_ERROR)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        try:
            if recorder is not None:
                recorder.close()
        except RecordError:
            pass  # already reported; the bag is still closed below
        try:
            writer.close()
        except RecordError as err:
            code = _error(str(err), code=EXIT_ERROR)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code


if __name__ == '__main__':
    sys.exit(main())
