"""What the tool nodes share: their parameters, their --help, and how they run and stop.

``sim_clock`` and ``demo_controller`` are small ROS nodes with a ``--help`` of their own
(the parameters they take), one ``ERROR:`` line for an invalid parameter, and a stop that
still writes their summary on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
import faulthandler
from pathlib import Path
import signal
import sys
from typing import Any

import rclpy
from rclpy.exceptions import InvalidParameterTypeException, ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.utilities import remove_ros_args

from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.parameters import ParamSpec
from ros2_deadline_monitor.live.parameter_declarations import descriptor as parameter_descriptor
from ros2_deadline_monitor.live.stop_signals import SPIN_TIMEOUT_S, StopSignals


def parameter_help(specs: Sequence[ParamSpec]) -> str:
    """List ROS parameters with their defaults and ranges for a node's --help."""
    lines = ['ROS parameters (--ros-args -p name:=value):']
    for spec in specs:
        bounds = f' [{spec.low:g}, {spec.high:g}]' if spec.low is not None and \
            spec.high is not None else ''
        choices = f' one of {", ".join(spec.choices)};' if spec.choices else ''
        lines.append(f'  {spec.name} = {spec.default!r}{bounds}:{choices} {spec.description}')
    return '\n'.join(lines)


def declare_parameters(node: Node, specs: Sequence[ParamSpec]) -> dict[str, Any]:
    """Declare ``specs`` on ``node`` and return their values (ParameterException if invalid)."""
    values = {}
    for spec in specs:
        descriptor = parameter_descriptor(spec, spec.name)
        if isinstance(spec.default, list):
            descriptor.dynamic_typing = True  # an empty default has no element type
        values[spec.name] = node.declare_parameter(spec.name, spec.default, descriptor).value
    return values


def parameter_error(program: str, err: Exception) -> str:
    """Return the one-line ``ERROR: ...`` for an invalid parameter."""
    hint = ''
    if isinstance(err, InvalidParameterTypeException) and "expecting type 'DOUBLE'" in str(err):
        hint = ' (write floating point values with a decimal point, e.g. 10.0)'
    return f'ERROR: {program}: invalid parameter: {err}{hint}'


def run_node(program: str, parser: argparse.ArgumentParser, make_node: Callable[[], Any],
             argv: Sequence[str] | None) -> int:
    """Spin a tool node until its ``finished`` event, SIGINT or SIGTERM, then ``close`` it.

    ``argv`` excludes the program name (``sys.argv[1:]`` when None). Returns 0 after a normal
    or signalled stop, 2 for invalid parameters, 1 when ``close`` cannot write its file.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    parser.parse_args(remove_ros_args([program, *args])[1:])
    # `kill -USR1 <pid>` prints every thread's Python stack: what a hung demo phase shows.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    # Our own handlers only set an event: rclpy's would shut the context down at once, so
    # close() would log its summary through a dead rosout publisher ("publisher's context is
    # invalid"), and a second SIGINT (ros2 run forwards Ctrl-C, the terminal sends it too)
    # would raise KeyboardInterrupt inside close() and lose the summary line.
    with StopSignals() as signals:
        rclpy.init(args=[program, *args], signal_handler_options=SignalHandlerOptions.NO)
        return _spin_node(program, make_node, signals)


def _spin_node(program: str, make_node: Callable[[], Any], signals: StopSignals) -> int:
    """Spin the node until it is finished or a stop signal comes; close it (``run_node``)."""
    node = None
    executor: SingleThreadedExecutor | None = None
    status = 0
    try:
        node = make_node()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        signals.wake(node)
        node.start()
        while not node.finished.is_set() and not signals.stop.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=SPIN_TIMEOUT_S)
    except (ConfigError, ParameterException) as err:
        print(parameter_error(program, err), file=sys.stderr)
        status = 2
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if executor is not None:
            executor.shutdown(timeout_sec=0)  # not left to its __del__ (live/cli.py)
        if node is not None:
            try:
                node.close()
            except OSError as err:
                print(f'ERROR: {program}: {err}', file=sys.stderr)
                status = 1
            node.destroy_node()
        rclpy.try_shutdown()
    return status


def check_output_path(name: str, path: str) -> str:
    """Return ``path`` if a file can be created there (checked at start, not at exit)."""
    if path and not Path(path).resolve().parent.is_dir():
        raise ConfigError(f'{name}: directory of {path!r} does not exist')
    return path
