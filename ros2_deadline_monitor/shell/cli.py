"""The ``monitor`` command: run the node until SIGINT/SIGTERM or ``duration_s``; exit 0/2/3."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

SPIN_TIMEOUT_S = 0.1
"""Longest wait before a SIGINT/SIGTERM is noticed."""
EXIT_CONFIG_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """Return the command line parser; settings are ROS parameters (-p, --params-file)."""
    return argparse.ArgumentParser(
        prog='monitor',
        description='Monitor deadline misses, skipped periods and intervals of ROS 2 topics '
                    'next to the real time factor; publishes ~/stats and /diagnostics.',
        epilog='Example: monitor --ros-args --params-file config/monitor.yaml '
               '-p use_sim_time:=true')


def main(argv: list[str] | None = None) -> int:
    """Run the monitor until SIGINT/SIGTERM or ``duration_s``; return the exit code.

    2 when the configuration is unusable, 3 when an expectation failed over the run, else 0.
    """
    # A Ctrl-C while rclpy is still being imported must stop the monitor, not print a
    # traceback: the handlers come first, the imports (about half a second) after.
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGINT, signal.SIGTERM)}
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions
    from rclpy.utilities import remove_ros_args

    from ros2_deadline_monitor.shell.monitor_node import MonitorNode, StartupError

    args = sys.argv if argv is None else [sys.argv[0], *argv]
    build_parser().parse_args(remove_ros_args(args)[1:])
    if stop.is_set():
        return 0
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = None
    code = 0
    try:
        try:
            node = MonitorNode()
        except StartupError as err:
            print(f'ERROR: {err}', file=sys.stderr)
            return EXIT_CONFIG_ERROR
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while not stop.is_set() and not node.expired and rclpy.ok():
            executor.spin_once(timeout_sec=SPIN_TIMEOUT_S)
        if rclpy.ok():
            code = node.finish().exit_code
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code


if __name__ == '__main__':
    sys.exit(main())
