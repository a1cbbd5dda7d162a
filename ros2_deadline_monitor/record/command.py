"""``record``: topics and ``/clock`` into an MCAP rosbag2 bag, raw, without the ``ros2`` CLI.

    record /demo/cmd -o run1
    record --all -o run1
    analyze run1

For users of the PyPI set-up, who have no ``ros2 bag``: the bag is what ``analyze`` reads, and
``ros2 bag info/play`` too (every connection stores its message definition, see ``bag_writer.py``).
Messages are never deserialized (docs/design.md, Subscriptions): ``recorder.py`` takes the raw
reader queues in batches every ``TAKE_PERIOD_S`` from the main thread, as the monitor takes its
queues, and writes them in log-time order. No executor spins; a stop signal ends the wait.

The log time of a message is the middleware timestamp the live monitor takes as its arrival
(``--log-time``, the monitor's ``arrival_timestamp``: the writer-side source timestamp by
default), so ``analyze`` on the bag counts what the live monitor counted.

A bad command line or an output path that cannot be used is one ``ERROR:`` line and exit code
2, before anything subscribes. SIGINT and SIGTERM take what is queued and close the bag.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
import sys
from typing import TextIO

from ros2_deadline_monitor.configuration.parameters import ARRIVAL_TIMESTAMPS
from ros2_deadline_monitor.configuration.usage import (
    check_topic_names,
    EXIT_USAGE,
    UsageError,
    UsageParser,
)
from ros2_deadline_monitor.live.rcl_arguments import init_rclpy, parse_checked
from ros2_deadline_monitor.live.stop_signals import StopSignals
from ros2_deadline_monitor.record.bag_writer import BagWriter, RecordError

__all__ = ['add_arguments', 'build_parser', 'CommandLine', 'main', 'parse_command_line']

NODE_NAME = 'record'
TAKE_PERIOD_S = 0.1
"""The reader queues are emptied this often (steady time): 100 messages of a 1 kHz /clock."""
POLL_EVERY = 5
"""The graph is read every this many takes (0.5 s): topics that appeared are subscribed."""
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
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``record`` to ``parser`` (also ``ros2 deadline record``'s)."""
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
    command = parse_checked('record', args, parse_command_line)
    if isinstance(command, int):
        return command
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

    from ros2_deadline_monitor.record.recorder import Recorder

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
            if recorder is not None:  # after a write error no more is written
                recorder.close(write=code == 0)
        except RecordError as err:
            code = _error(str(err), code=EXIT_ERROR)
        try:
            writer.close()
        except RecordError as err:
            if code == 0:  # one line: the first error says what went wrong
                code = _error(str(err), code=EXIT_ERROR)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code


if __name__ == '__main__':
    sys.exit(main())
