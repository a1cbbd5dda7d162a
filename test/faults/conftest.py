"""Fixtures of the fault suite: participants, beats, /clock and publisher processes.

The node fixtures (``observer``, ``start_monitor``, ``spin``, ``wait_for``, ``key_values``)
are the shared ones of ``test/plugins/node_fixtures.py``, so every suite drives the monitor
the same way; ``ros_context``, ``second_context``, ``processes`` and ``stop_process`` come
from ``test/conftest.py``. Faults are made with real rclpy over real DDS:
publishers that die (a node destroyed in its own Context, which is its own DDS participant,
like a process), /clock publishers that stall, pause or jump, processes that get signals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
import subprocess
import sys
import threading
import time
from typing import Any

from node_fixtures import Spinner  # test/plugins: test/conftest.py puts it on sys.path
from own_names import ros_args
import pytest

NS_PER_S = 1_000_000_000
MATCH_TIMEOUT_S = 20.0
"""How long a new participant's writer may take to match the monitor's reader: discovery on
a loaded 2-core machine (seen over 8 s once), kept apart from the conditions a test measures,
as ``test_clock_faults`` waits for its writers' match."""
OK, WARN, ERROR, STALE = 0, 1, 2, 3


class Participant:
    """A Context of its own with spinning nodes: another process, as far as DDS can tell.

    ``close()`` destroys the nodes and shuts the context down, so its publishers vanish from
    the graph the way a killed process's do (minus the lease timeout).
    """

    def __init__(self) -> None:
        import rclpy
        from rclpy.context import Context

        self.context = Context()
        rclpy.init(args=ros_args(), context=self.context)
        self.nodes: list[Any] = []
        self.spinner: Any = None

    def node(self, name: str, **kwargs: Any) -> Any:
        """Create a node in this participant (spun once ``start`` is called)."""
        from rclpy.node import Node

        node = Node(name, context=self.context, **kwargs)
        self.nodes.append(node)
        return node

    def start(self) -> None:
        """Spin every node created so far in a background thread."""
        self.spinner = Spinner(self.context, *self.nodes)

    def close(self) -> None:
        """Stop spinning, destroy the nodes and shut the context down (idempotent)."""
        import rclpy

        if self.spinner is not None:
            spinner, self.spinner = self.spinner, None
            spinner.stop()
        for node in self.nodes:
            node.destroy_node()
        self.nodes = []
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def participant() -> Iterator[Callable[[], Participant]]:
    """Return a function creating ``Participant``s; all are closed after the test."""
    created: list[Participant] = []

    def make() -> Participant:
        created.append(Participant())
        return created[-1]

    yield make
    for item in reversed(created):
        item.close()


class Beat:
    """Publishes ``std_msgs/Header`` on a topic from a timer and counts what it published.

    Publishes only while a subscription is matched, so its count is what a monitor can see.
    """

    def __init__(self, node: Any, topic: str, period_s: float, msg_type: Any = None) -> None:
        from rclpy.qos import QoSProfile
        from std_msgs.msg import Header

        self.msg_type = msg_type or Header
        self.topic = topic
        self.publisher = node.create_publisher(self.msg_type, topic, QoSProfile(depth=100))
        self.count = 0
        self.sent_ns: list[int] = []
        """Monotonic time of each publish: the producer's truth (its timer skips periods too)."""
        self.lock = threading.Lock()
        self.stopped = False
        self.node = node
        self.period_ns = round(period_s * 1e9)
        self.timer = node.create_timer(period_s, self._tick)

    def wait_matched(self, wait_for: Callable[..., Any]) -> None:
        """Wait until the monitor's reader matched this writer (it publishes from then on)."""
        wait_for(self.publisher.get_subscription_count, timeout=MATCH_TIMEOUT_S,
                 what=f'the monitor to match the writer of {self.topic}')

    def pause(self) -> None:
        """Stop publishing; the writer stays.

        Destroyed at once, it would take the messages still on their way along: ``count``
        would not be what reached the monitor.
        """
        with self.lock:
            self.stopped = True

    def stop(self) -> None:
        """Destroy the timer and the publisher: the writer leaves the graph, the node stays."""
        with self.lock:
            self.stopped = True
            self.node.destroy_timer(self.timer)
            self.node.destroy_publisher(self.publisher)

    def _tick(self) -> None:
        with self.lock:
            if self.stopped or not self.publisher.get_subscription_count():
                return
            self.sent_ns.append(time.monotonic_ns())
            self.publisher.publish(self.msg_type())
            self.count += 1

    def skipped_periods(self, first: int, last: int) -> int:
        """Periods its timer skipped between publishes ``first`` and ``last`` (0-based).

        rcl's rule (``count_cycles``, as the monitor replays it) on its publish times.
        """
        import numpy as np

        from ros2_deadline_monitor.analysis.cycles import count_cycles

        sent = np.array(self.sent_ns[first:last + 1], np.int64)
        return count_cycles(sent, sent, self.period_ns).skipped


@pytest.fixture
def make_beat() -> Callable[..., Beat]:
    """Return ``Beat``: ``make_beat(node, topic, period_s, msg_type=Header)``."""
    return Beat


def stamp_ns(msg: Any) -> int:
    """Return a message header's stamp in integer nanoseconds."""
    return msg.header.stamp.sec * NS_PER_S + msg.header.stamp.nanosec


def run_process(args: list[str], log_path: Path) -> subprocess.Popen:
    """Start a process writing stdout and stderr to ``log_path``."""
    log = open(log_path, 'w')  # noqa: SIM115 - closed by the fixture that owns the process
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, text=True)
    process.log = log  # type: ignore[attr-defined]
    return process


@pytest.fixture
def clock_process(installed_executable: Callable[[str], Path],
                  processes: list[subprocess.Popen]) -> Callable[..., subprocess.Popen]:
    """Return a function starting the installed ``sim_clock`` (a simulator stand-in)."""

    def start(rtf: float = 1.0, step_ms: float = 1.0) -> subprocess.Popen:
        process = subprocess.Popen(
            [str(installed_executable('sim_clock')), '--ros-args', '--log-level', 'warn',
             '-p', f'target_rtf:={float(rtf)}', '-p', f'step_ms:={float(step_ms)}',
             *ros_args()],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(process)
        return process

    return start


PUBLISHER_SCRIPT = """
import signal, sys, rclpy
from rclpy.signals import SignalHandlerOptions
import importlib
module, name = sys.argv[2].rsplit('.', 1)
msg_type = getattr(importlib.import_module(module), name)
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node(sys.argv[3])
publisher = node.create_publisher(msg_type, sys.argv[1], 100)
node.create_timer(float(sys.argv[4]), lambda: publisher.publish(msg_type()))
running = [True]
signal.signal(signal.SIGINT, lambda *_: running.__setitem__(0, False))
signal.signal(signal.SIGTERM, lambda *_: running.__setitem__(0, False))
while running[0]:
    rclpy.spin_once(node, timeout_sec=0.05)
node.destroy_node()
rclpy.try_shutdown()
"""


@pytest.fixture
def publisher_process(processes: list[subprocess.Popen],
                      stop_process: Callable[..., Any]) -> Callable[..., subprocess.Popen]:
    """Return ``start(topic, 'std_msgs.msg.Header', node_name, period_s)``: a publisher process.

    ``stop(process)`` (attribute of the returned function) ends it with SIGINT, cleanly.
    """

    def start(topic: str, msg_type: str, node_name: str = 'publisher',
              period_s: float = 0.02) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, '-c', PUBLISHER_SCRIPT, topic, msg_type, node_name, str(period_s),
             *ros_args()],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(process)
        return process

    start.stop = stop_process  # type: ignore[attr-defined]
    return start
