"""``watch``: a live table of a running monitor's ``~/stats``, refreshed on every report.

It only subscribes to ``MonitorStats``, so it works next to any monitor (started by hand, by
``ros2 launch`` or inside ``monitor --watch``). In a terminal it draws a ``rich`` table, levels
in colour, worst topic first; when stdout is not a terminal (or with ``--plain``) it prints
plain lines, one block per report, that a file or ``grep`` can take. When reports stop coming
(the monitor exited, crashed or is starved) it says so: ``no report for 12 s: monitor gone?``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import sys
import threading
import time
from typing import Any, Protocol, TextIO

from ros2_deadline_monitor.analysis.config import check_topic_name
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.usage import (
    check_ros_arguments,
    EXIT_USAGE,
    UsageError,
    UsageParser,
)
from ros2_deadline_monitor.live.rcl_arguments import init_rclpy, without_ros_args
from ros2_deadline_monitor.live.stop_signals import SPIN_TIMEOUT_S, StopSignals
from ros2_deadline_monitor.outputs import terminal_view

NODE_NAME = 'deadline_monitor'
"""Default name of the monitor whose stats are shown (``monitor_node.NODE_NAME``)."""


class Display(Protocol):
    """Where reports go: a live table or plain lines."""

    def show(self, stats: Any) -> None:
        """Show one ``MonitorStats`` message."""

    def silent(self, text: str) -> None:
        """Say that reports stopped coming (``terminal_view.silence_line``)."""

    def close(self) -> None:
        """Leave the terminal as it was."""


class PlainDisplay:
    """One block of plain lines per report, flushed at once (a pipe sees every report)."""

    def __init__(self, stream: TextIO, source: str) -> None:
        """Write to ``stream``; ``source`` names the stats topic in each block's title."""
        self._stream = stream
        self._source = source
        self._said_silent = False

    def show(self, stats: Any) -> None:
        """Print the report and a blank line."""
        lines = terminal_view.plain_lines(terminal_view.view_of(stats, self._source))
        self._stream.write('\n'.join(lines) + '\n\n')
        self._stream.flush()
        self._said_silent = False

    def silent(self, text: str) -> None:
        """Print the silence once (a log must not fill with it); again after a report."""
        if not self._said_silent:
            self._stream.write(text + '\n\n')
            self._stream.flush()
            self._said_silent = True

    def close(self) -> None:
        """Nothing to restore."""


class LiveDisplay:
    """A ``rich`` table redrawn in place on every report."""

    def __init__(self, stream: TextIO, source: str, *, screen: bool = False) -> None:
        """Start the live area; ``screen`` uses the alternate screen.

        The alternate screen is for ``monitor --watch``: the monitor's own log lines are
        written to the same terminal, and a full-screen redraw paints over them instead of
        scrolling the table away.
        """
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        self._source = source
        self._table: Any = None
        self._live = Live(Text(f'waiting for {source} ...'), console=Console(file=stream),
                          auto_refresh=False, screen=screen, transient=False)
        self._live.start(refresh=True)

    def show(self, stats: Any) -> None:
        """Redraw the table with this report."""
        view = terminal_view.view_of(stats, self._source)
        self._table = terminal_view.rich_table(view)
        self._live.update(self._table, refresh=True)

    def silent(self, text: str) -> None:
        """Put the silence above the last table, in red (redrawn as the seconds go by)."""
        from rich.console import Group
        from rich.text import Text

        warning = Text(text, style='bold red')
        self._live.update(warning if self._table is None else Group(warning, self._table),
                          refresh=True)

    def close(self) -> None:
        """Stop redrawing; the last table stays on the terminal (unless on the alt screen)."""
        self._live.stop()


def make_display(stream: TextIO, source: str, *, plain: bool = False,
                 screen: bool = False, warn: Callable[[str], None] | None = None) -> Display:
    """Pick the display: live in a terminal when rich is there, else plain lines."""
    if plain or not stream.isatty():
        return PlainDisplay(stream, source)
    if not terminal_view.rich_available():
        if warn is not None:
            warn(terminal_view.RICH_MISSING)
        return PlainDisplay(stream, source)
    return LiveDisplay(stream, source, screen=screen)


class StatsWatcher:
    """Subscribe ``node`` to a monitor's stats topic and pass each report to a display."""

    def __init__(self, node: Any, topic: str, display: Display, count: int = 0) -> None:
        """``count`` > 0: set ``done`` after that many reports (for scripts and tests)."""
        from ros2_deadline_monitor.live.qos import STATS_QOS
        from ros2_deadline_monitor.msg import MonitorStats

        self.display = display
        self.count = count
        self.received = 0
        self.silence = terminal_view.Silence()
        self._last_wall_s: float | None = None
        self.done = threading.Event()
        self._subscription = node.create_subscription(MonitorStats, topic, self._on_stats,
                                                      STATS_QOS)

    def _on_stats(self, msg: Any) -> None:
        if self.done.is_set():
            return
        self.received += 1
        self.silence.report(time.monotonic_ns())
        stamp = msg.header.stamp
        self._last_wall_s = stamp.sec + stamp.nanosec * 1e-9 or None
        self.display.show(msg)
        if self.count and self.received >= self.count:
            self.done.set()

    def check(self, now_ns: int | None = None) -> None:
        """Tell the display when reports stopped coming (call it every second or so)."""
        silent = self.silence.silent_ns(time.monotonic_ns() if now_ns is None else now_ns)
        if silent is not None:
            self.display.silent(terminal_view.silence_line(silent, self._last_wall_s))


def stats_topic(namespace: str, node_name: str) -> str:
    """Return the fully qualified ``~/stats`` of a monitor: ``/<namespace>/<node>/stats``."""
    parts = [part for part in namespace.split('/') if part]
    topic = '/' + '/'.join([*parts, node_name, 'stats'])
    check_topic_name(topic)
    return topic


def build_parser() -> argparse.ArgumentParser:
    """Build the command line of ``watch``."""
    parser = UsageParser(
        prog='watch',
        description="Show a running deadline monitor's figures as a live table: the clock "
                    '(RTF over the window and since start, worst bin, sim time) above one '
                    'row per topic (rate, max interval wall/sim, misses, skipped, lost, '
                    'level and its reason), worst first. Reads <namespace>/<node>/stats '
                    '(MonitorStats).',
        epilog='Counts read "20 (2)": 20 since the monitor started, 2 of them in its rolling '
               'window (the last 10 s; a line under the table says so). A figure reads "-" '
               'while unknown (lost with several writers, misses before the period is '
               'known) and "n/a" where it does not apply (misses of an event topic). Each '
               'row ends with the reason of its level. '
               'When reports stop coming, the view says "no report for N s: monitor '
               'gone?". Plain lines when stdout is not a terminal. Example: watch '
               '--namespace robot1')
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``watch`` to ``parser`` (also ``ros2 deadline watch``'s)."""
    parser.add_argument('--namespace', default='', metavar='NS',
                        help="namespace of the monitor (default: '', the root)")
    parser.add_argument('--node', default=NODE_NAME, metavar='NAME',
                        help=f'name of the monitor node (default: {NODE_NAME})')
    parser.add_argument('--plain', action='store_true',
                        help='print plain lines even in a terminal')
    parser.add_argument('--count', type=int, default=0, metavar='N',
                        help='exit after N reports (default: run until Ctrl-C)')


def main(argv: list[str] | None = None) -> int:
    """Show the reports until SIGINT/SIGTERM (or ``--count``); 2 for a bad command line."""
    import rclpy
    from rclpy.exceptions import ParameterException
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.node import Node

    args_in = list(sys.argv[1:] if argv is None else argv)
    try:
        check_ros_arguments(args_in)
        args = build_parser().parse_args(without_ros_args('watch', args_in))
        if args.count < 0:
            raise UsageError(f'--count must be >= 0, got {args.count}')
        topic = stats_topic(args.namespace, args.node)
    except UsageError as err:
        print(f'ERROR: {err} (see watch --help)', file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as err:
        print(f'ERROR: --namespace/--node: {err}', file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0)

    try:
        init_rclpy('watch', args_in)
    except UsageError as err:
        print(f'ERROR: invalid ROS arguments: {err}', file=sys.stderr)
        return EXIT_USAGE
    signals = StopSignals()
    node = None
    executor: SingleThreadedExecutor | None = None
    display: Display | None = None
    try:
        node = Node('deadline_monitor_watch', start_parameter_services=False)
        display = make_display(sys.stdout, topic, plain=args.plain,
                               warn=lambda text: print(f'WARNING: {text}', file=sys.stderr))
        if isinstance(display, PlainDisplay):
            print(f'waiting for {topic} ...', file=sys.stderr, flush=True)
        watcher = StatsWatcher(node, topic, display, count=args.count)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        signals.wake(node)
        while not signals.stop.is_set() and not watcher.done.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=SPIN_TIMEOUT_S)
            watcher.check()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except BrokenPipeError:
        return 1
    except ParameterException as err:  # rclpy's own, e.g. -p use_sim_time:=yes_please
        print(f'ERROR: invalid parameter value: {err}', file=sys.stderr)
        return EXIT_USAGE
    finally:
        if display is not None:
            display.close()
        signals.close()
        if executor is not None:
            executor.shutdown(timeout_sec=0)  # not left to its __del__ (live/cli.py)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
