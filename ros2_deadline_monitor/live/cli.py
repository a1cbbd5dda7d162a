"""``monitor``: the command line of the monitor node.

    monitor /demo/cmd /imu/data --period-ms 10 --stamp start
    monitor --ros-args --params-file config/monitor.yaml -p use_sim_time:=true
    monitor /demo/cmd --watch
    monitor --all --stamp start
    monitor --all --metrics-port 9469

Topics named on the command line are added to the parameter ``topics`` (their identifiers are
made from the names) and the per-topic flags are set on each of them. They reach the node as
constructor ``parameter_overrides``, so they behave exactly like ``-p`` and show in
``ros2 param get``; rclpy applies those after ``--ros-args`` (the params file and ``-p``), so an
explicit flag wins over a file. Everything is checked before anything starts: a bad command
line is one ``ERROR:`` line and exit code 2, never a traceback.

``--all`` sets the read-only parameter ``all_topics`` and puts the per-topic flags into the
``all_topics.*`` parameters, the settings of every topic found in the graph (see
``discovery.py``); explicit TOPICs get the flags too.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
import sys
from typing import Any, TextIO

from ros2_deadline_monitor.analysis.errors import os_error_text
from ros2_deadline_monitor.configuration.parameters import (
    ALL_TOPICS,
    template_param,
    topic_param,
    TOPICS,
)
from ros2_deadline_monitor.configuration.topic_flags import (
    add_topic_flags,
    topic_flags,
    topic_id,
    TopicFlags,
)
from ros2_deadline_monitor.configuration.usage import (
    check_topic_names,
    EXIT_USAGE,
    UsageError,
    UsageParser,
)
from ros2_deadline_monitor.live.rcl_arguments import init_rclpy, parse_checked, stderr_held
from ros2_deadline_monitor.live.stop_signals import SPIN_TIMEOUT_S, StopSignals

__all__ = ['add_arguments', 'build_parser', 'CommandLine', 'main', 'parse_command_line',
           'topic_overrides']

DESCRIPTION = """\
Monitor deadline misses, skipped timer periods and intervals of ROS 2 topics next to the
simulator's real time factor; publishes MonitorStats on ~/stats (/deadline_monitor/stats)
and one status per topic, the clock and the host on /diagnostics.
"""
EPILOG = """\
Topics and their settings can also come from ROS parameters: --ros-args --params-file
config/monitor.yaml (every parameter is documented there and in docs/parameters.md) or
-p topics:=[cmd] -p topic.cmd.name:=/demo/cmd -p topic.cmd.period_ms:=10.0.
Each TOPIC given here is added to those (a TOPIC already configured keeps its identifier),
and the per-topic flags apply to the TOPICs given here only (and with --all to every topic
found in the graph). Precedence: flags here, then -p, then the params file.

At every report (stats_period_s, 1 s by default) a line per topic goes to stdout, like
ros2 topic hz: rate, max interval, misses, skipped and lost over the rolling window ('last
N s'), then messages, misses, skipped and lost since start, the period in use and where it
came from (given, learned, the publishers' deadline QoS), and the level with its reason; '-'
where there is nothing to measure. Plain text when stdout is a pipe or a file. More than 10
topics: one summary line and the 10 worst that are not OK. --quiet prints none, --watch
shows the table instead.

--all leaves out infrastructure topics (/clock, /rosout, /parameter_events, /diagnostics*,
/tf_static, /robot_description, /events/write_split), hidden topics (a name part starting
with _, e.g. actions' _action/*), the monitor's own topics and other monitors' stats; a topic
is adopted once it has a publisher and stays monitored (and times out) when they vanish.

Examples:
  monitor /demo/cmd --period-ms 10 --stamp start
  monitor /demo/cmd --quiet --ros-args -p summary_file:=run.json
  monitor /demo/cmd --watch --ros-args -p use_sim_time:=true
  monitor --all --watch
  monitor --ros-args --params-file config/monitor.yaml --log-level deadline_monitor:=debug
  ros2 run ros2_deadline_monitor monitor /imu/data --rate-hz 200

Exit status: 0 after SIGINT/SIGTERM/SIGHUP or duration_s, 2 for a bad command line or
configuration, 3 when an expectation (topic.<id>.expect.*, clock.expect.*) failed.
"""


def build_parser() -> argparse.ArgumentParser:
    """Build the command line of ``monitor`` (ROS arguments are removed before parsing)."""
    parser = UsageParser(prog='monitor', description=DESCRIPTION, epilog=EPILOG,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``monitor`` to ``parser`` (also ``ros2 deadline monitor``'s)."""
    parser.add_argument('topics', metavar='TOPIC', nargs='*',
                        help='a topic to monitor, e.g. /demo/cmd (any type; repeat for several)')
    parser.add_argument('--all', action='store_true', dest='all_topics',
                        help='also monitor every topic with a publisher in the graph, now or '
                             'later, except infrastructure and hidden topics (see below)')
    per_topic = parser.add_argument_group(
        'per-topic settings (for every TOPIC above; the same flags as analyze)')
    add_topic_flags(per_topic, clock_default="'sim' with use_sim_time:=true, else 'wall'")
    view = parser.add_argument_group(
        'view (default: a line per topic at every report on stdout, like ros2 topic hz)')
    shown = view.add_mutually_exclusive_group()
    shown.add_argument('--watch', action='store_true',
                       help='show the live table of the watch executable in this terminal')
    shown.add_argument('--quiet', action='store_true',
                       help='print no line per report (the log and the summary remain)')
    served = parser.add_argument_group('Prometheus (the parameters metrics_port, metrics_bind)')
    served.add_argument('--metrics-port', type=int, metavar='PORT',
                        help='serve every figure on http://ADDR:PORT/metrics (1024-65535; '
                             'needs the Python package prometheus_client)')
    served.add_argument('--metrics-bind', metavar='ADDR',
                        help="address to listen on (default 127.0.0.1; '0.0.0.0' for a "
                             'Prometheus on another machine)')


@dataclass(frozen=True)
class CommandLine:
    """What the (non-ROS) command line asked for."""

    topics: tuple[str, ...] = ()
    flags: TopicFlags = TopicFlags()
    watch: bool = False
    all_topics: bool = False
    quiet: bool = False
    metrics: tuple[tuple[str, Any], ...] = ()
    """Monitor-wide parameters given as flags (``--metrics-port``), as (name, value)."""


def parse_command_line(argv: Sequence[str]) -> CommandLine:
    """Parse and check the arguments left after ``remove_ros_args`` (no program name).

    Raises ``UsageError`` for anything that must not start a monitor.
    """
    args = build_parser().parse_args(list(argv))
    flags = topic_flags(args)
    if flags.given() and not args.topics and not args.all_topics:
        raise UsageError(f'{", ".join(flags.given())} given but no TOPIC: name the topics '
                         'they are for (e.g. monitor /demo/cmd --period-ms 10), give --all, '
                         'or set -p topic.<id>.<setting> for topics of a params file')
    check_topic_names(args.topics)
    metrics = tuple((name, value) for name, value in (
        ('metrics_port', args.metrics_port), ('metrics_bind', args.metrics_bind))
        if value is not None)
    return CommandLine(tuple(args.topics), flags, args.watch, args.all_topics, args.quiet,
                       metrics)


def topic_overrides(command: CommandLine, configured: Mapping[str, str],
                    resolve: Callable[[str], str] = str) -> dict[str, Any]:
    """Return the parameter values (name -> value) the command line's topics stand for.

    ``configured`` maps the identifiers already listed in ``topics`` (by the params file or
    ``-p``) to their resolved topic names. A TOPIC already configured keeps its identifier
    and only gets the flags; a new one gets an identifier made from its name and is appended
    to ``topics``. Without topics, ``topics`` stays as configured. With ``--all``,
    ``all_topics`` is set and the flags also go to ``all_topics.*``.
    """
    values: dict[str, Any] = {}
    fields = command.flags.parameters()
    if command.all_topics:
        values[ALL_TOPICS] = True
        values.update((template_param(field), value) for field, value in fields.items())
    if not command.topics:
        return values
    by_name = {name: topic_id_ for topic_id_, name in configured.items()}
    taken = set(configured)
    ids = list(configured)
    for topic in command.topics:
        known = by_name.get(resolve(topic))
        if known is None:
            known = topic_id(topic, taken)
            ids.append(known)
            values[topic_param(known, 'name')] = topic
        for field, value in fields.items():
            values[topic_param(known, field)] = value
    values[TOPICS] = ids
    return values


@dataclass(frozen=True)
class Configured:
    """What the ROS arguments say before the monitor node exists (``configured_topics``)."""

    topics: dict[str, str]
    """``{id: resolved name}`` of the topics listed in ``topics``."""
    resolved: dict[str, str]
    """``{TOPIC: resolved name}`` of the command line's topics."""
    refused: dict[str, str]
    """``{name: reason}`` of rclpy's own parameters given with a wrong type."""


def configured_topics(node_name: str, topics: Sequence[str]) -> Configured:
    """Read ``topics`` and ``topic.<id>.name`` as the monitor will get them from ``--ros-args``.

    A short-lived node with the monitor's name sees the same params file entries, ``-p``
    values and remappings (``__node``, ``__ns``), and resolves names the way the monitor will;
    it declares none of the monitor's parameters. It declares every override as given, so
    rclpy's own parameters of a wrong type (``use_sim_time:=yes_please``), on which the
    monitor node would raise in ``Node.__init__``, are found here (``refused``).
    """
    from rclpy.node import Node

    from ros2_deadline_monitor.live.parameter_declarations import node_parameter_errors

    with stderr_held() as take:
        # rclpy logs "Invalid type for parameter 'use_sim_time'" for such a value: the
        # monitor says it once, in its own error line.
        probe = Node(node_name, automatically_declare_parameters_from_overrides=True,
                     start_parameter_services=False, enable_rosout=False)
        refused = node_parameter_errors(probe._parameter_overrides)  # no public getter
        if refused:
            take()

    def resolve(name: Any) -> str:
        try:
            return probe.resolve_topic_name(str(name))
        except Exception:  # noqa: BLE001 - rclpy raises several types; the node reports it
            return str(name)

    try:
        listed = probe.get_parameter(TOPICS).value if probe.has_parameter(TOPICS) else []
        configured: dict[str, str] = {}
        for topic_id_ in listed if isinstance(listed, (list, tuple)) else []:
            if not isinstance(topic_id_, str) or topic_id_ in configured:
                continue
            name_param = topic_param(topic_id_, 'name')
            name = (probe.get_parameter(name_param).value if probe.has_parameter(name_param)
                    else topic_id_)
            configured[topic_id_] = resolve(name)
        return Configured(configured, {topic: resolve(topic) for topic in topics}, refused)
    finally:
        probe.destroy_node()


def _error(text: str, stream: TextIO | None = None) -> int:
    print(f'ERROR: {text}', file=stream or sys.stderr)
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    """Run the monitor until SIGINT/SIGTERM/SIGHUP or ``duration_s``; return the exit code.

    2 for a bad command line or configuration, 3 when an expectation failed over the run,
    else 0.
    """
    # A Ctrl-C while rclpy is still being imported (about half a second) must stop the
    # monitor, not print a traceback: the handlers come first, the imports after.
    with StopSignals() as signals:
        return _run(list(sys.argv[1:] if argv is None else argv), signals)


class TerminalView:
    """The ``--watch`` view, which a closed terminal ends without ending the monitor.

    Writing to a hung-up terminal raises ``OSError`` (EIO): raised in the view's callback it
    would end the spin loop before the final report, and SIGHUP (the terminal closed) would
    cost the run its summary. The view stops; the monitor goes on to its final report.
    """

    def __init__(self, display: Any) -> None:
        """Show reports on ``display`` until writing to it fails."""
        self._display: Any = display

    def show(self, stats: Any) -> None:
        """Show one report, or nothing once the terminal is gone."""
        if self._display is None:
            return
        try:
            self._display.show(stats)
        except OSError:
            self._display = None

    def close(self) -> None:
        """Leave the terminal as it was, if it is still there."""
        display, self._display = self._display, None
        if display is not None:
            try:
                display.close()
            except OSError:
                pass


def _run(args: list[str], signals: StopSignals) -> int:
    """Check the command line, then run the monitor (and the view) until a stop signal."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    from ros2_deadline_monitor.live.monitor_node import MonitorNode, NODE_NAME, StartupError
    from ros2_deadline_monitor.live.parameter_declarations import NODE_PARAMETERS
    from ros2_deadline_monitor.live.watch import Display, make_display, StatsWatcher
    from ros2_deadline_monitor.outputs.report_lines import ReportPrinter

    command = parse_checked('monitor', args, parse_command_line)
    if isinstance(command, int):
        return command
    stop = signals.stop
    if stop.is_set():
        return 0
    try:
        init_rclpy('monitor', args)
    except UsageError as err:
        return _error(f'invalid ROS arguments: {err}')
    node = view_node = None
    executor: SingleThreadedExecutor | None = None
    display: Display | None = None
    printer: ReportPrinter | None = None
    code = 0
    try:
        try:
            found = configured_topics(NODE_NAME, command.topics)
            values = topic_overrides(command, found.topics,
                                     lambda t: found.resolved.get(t, t))
            values.update(command.metrics)
            # rclpy's defaults in place of wrong types, so the node is built and names them.
            values.update((name, NODE_PARAMETERS[name]) for name in found.refused)
            node = MonitorNode(parameter_overrides=[Parameter(name, value=value)
                                                    for name, value in values.items()],
                               refused=tuple(found.refused.values()))
        except StartupError as err:
            return _error(str(err))
        except OSError as err:  # a path no check foresaw (summary_file's name too long)
            return _error(os_error_text(err))
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        signals.wake(node)
        if command.watch:
            # Another node on the same executor, reading the monitor's published stats like
            # any other subscriber: the view cannot change what the monitor measures. Without
            # the global ROS arguments, or `-r __node:=x` would give it the monitor's name.
            view_node = Node(f'{node.get_name()}_watch', namespace=node.get_namespace(),
                             use_global_arguments=False, start_parameter_services=False)
            topic = node.resolve_topic_name('~/stats')
            display = TerminalView(make_display(
                sys.stdout, topic, screen=True,
                warn=lambda text: print(f'WARNING: {text}', file=sys.stderr)))
            StatsWatcher(view_node, topic, display)
            executor.add_node(view_node)
        elif not command.quiet:
            try:
                printer = ReportPrinter(sys.stdout)
            except (AttributeError, OSError, ValueError):  # no stdout (closed, `>&-`)
                printer = None
            else:
                node.report_sinks.append(printer.show)
        while not stop.is_set() and not node.expired and rclpy.ok():
            executor.spin_once(timeout_sec=SPIN_TIMEOUT_S)
        if display is not None:
            display.close()  # leave the alternate screen: the summary must stay readable
            display = None
        if printer is not None:
            printer.close()  # the last report's lines before the summary
            printer = None
        if rclpy.ok():
            code = node.finish(signal_name=signals.received_name).exit_code
            # The summary (file) names this exit code: no later signal may change it.
            signals.hold()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if display is not None:
            display.close()
        if printer is not None:
            printer.close()
        if executor is not None:
            # Shut down, not left to rclpy's Executor.__del__: destroying its SIGINT guard
            # condition there could raise at exit and print a traceback (seen under load).
            executor.shutdown(timeout_sec=0)
        for each in (view_node, node):
            if each is not None:
                each.destroy_node()
        rclpy.try_shutdown()
    return code


if __name__ == '__main__':
    sys.exit(main())
