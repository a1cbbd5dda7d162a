"""Fixtures that drive a monitor node: real rclpy over real DDS, one Context per test.

Shared by every suite that runs a node (live, outputs, record, faults; registered in
``test/conftest.py``). Each node under test spins in its own executor thread, as in a real
system where the monitor and the monitored nodes are separate processes: a node's ROS time
stands still while its single-threaded executor is busy, so a stalling producer must not
share one with anything. Tests wait on conditions with timeouts and never assert on timing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import threading
import time
from typing import Any

from own_names import ros_args
import pytest

DEFAULT_TIMEOUT_S = 10.0


def _wait_for(condition: Callable[[], Any], timeout: float = DEFAULT_TIMEOUT_S,
              what: str | Callable[[], str] = 'a condition') -> Any:
    """Poll ``condition`` until it returns something truthy; fail the test on timeout.

    ``what`` may be a function: it is called at the timeout, to say what was seen then.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            text = what() if callable(what) else what
            pytest.fail(f'timed out after {timeout:g} s waiting for {text}')
        time.sleep(0.02)


class Spinner:
    """Spin some nodes in a background thread with their own executor.

    ``stop`` ends the spin loop and joins the thread before it shuts the executor down: Jazzy's
    ``Executor.shutdown`` does not wait for the spinning thread (its wait for running callbacks
    is skipped) and destroys the guard condition that thread triggers after each callback, so
    shutting down from another thread mid-spin makes the spinning thread raise
    ``InvalidHandle``. With ``destroy`` the nodes are destroyed by ``stop`` too, after the
    thread ended, for the same reason: rclpy adds the QoS event handlers of a destroyed
    publisher or subscription to the wait set of a spinning executor and raises there.
    """

    def __init__(self, context: Any, *nodes: Any, destroy: bool = False) -> None:
        from rclpy.executors import SingleThreadedExecutor

        self.executor = SingleThreadedExecutor(context=context)
        self.nodes = list(nodes)
        self.destroy = destroy
        self.stopped = False
        self._stop = threading.Event()
        for node in nodes:
            self.executor.add_node(node)
        self.errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._spin, args=(context,), daemon=True)
        self._thread.start()

    def _spin(self, context: Any) -> None:
        from rclpy.executors import ExternalShutdownException

        try:
            while not self._stop.is_set() and context.ok():
                # A wake-up alone does not end a wait, a timeout does: stop() waits <= 0.1 s.
                self.executor.spin_once(timeout_sec=0.1)
        except ExternalShutdownException:
            pass
        except BaseException as err:  # surfaced by stop() so a test sees callback errors
            self.errors.append(err)

    def stop(self) -> None:
        """Stop spinning, join the thread, destroy owned nodes, re-raise a callback's error.

        Only the first call does anything.
        """
        if self.stopped:
            return
        self.stopped = True
        self._stop.set()
        # A callback of these tests takes milliseconds; 10 s covers a starved machine.
        self._thread.join(timeout=10.0)
        if self._thread.is_alive():
            raise RuntimeError('the spinning thread did not stop within 10 s')
        self.executor.shutdown(timeout_sec=0)
        if self.destroy:
            for node in self.nodes:
                node.destroy_node()
        if self.errors:
            raise self.errors[0]


class Observer:
    """A test node that keeps what the monitor publishes and can set its parameters.

    Names are relative: in the test's namespace, the test's own monitor (``own_names``).
    """

    def __init__(self, context: Any, monitor_name: str = 'deadline_monitor') -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.node import Node
        from rclpy.parameter_client import AsyncParameterClient
        from rclpy.qos import QoSProfile

        from ros2_deadline_monitor.msg import MonitorStats

        self.node = Node('observer', context=context)
        self.lock = threading.Lock()
        self.stats: list[Any] = []
        self.arrays: list[Any] = []
        self.stats_subscription = self.node.create_subscription(
            MonitorStats, f'{monitor_name}/stats', self._on_stats, QoSProfile(depth=100))
        # /diagnostics is remapped into the test's namespace, like the monitor's.
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics,
                                      QoSProfile(depth=100))
        self.params = AsyncParameterClient(self.node, monitor_name)

    def _on_stats(self, msg: Any) -> None:
        with self.lock:
            self.stats.append(msg)

    def _on_diagnostics(self, msg: Any) -> None:
        with self.lock:
            self.arrays.append(msg)

    def latest_stats(self) -> Any:
        """Return the newest MonitorStats, or None."""
        with self.lock:
            return self.stats[-1] if self.stats else None

    def topic_stats(self, name: str) -> Any:
        """Return the newest TopicStats of identifier ``name``, or None."""
        stats = self.latest_stats()
        if stats is None:
            return None
        return next((t for t in stats.topics if t.name == name), None)

    def report_arrays(self) -> list[Any]:
        """Return every diagnostic array received so far, oldest first."""
        with self.lock:
            return list(self.arrays)

    def status(self, suffix: str) -> Any:
        """Return the newest diagnostic status whose name ends with ``suffix``, or None."""
        with self.lock:
            arrays = list(self.arrays)
        for array in reversed(arrays):
            for status in array.status:
                if status.name.endswith(suffix):
                    return status
        return None

    def set_parameters(self, **values: Any) -> list[Any]:
        """Set monitor parameters through its parameter service; return the results."""
        from rclpy.parameter import Parameter

        assert self.params.wait_for_services(timeout_sec=DEFAULT_TIMEOUT_S)
        future = self.params.set_parameters(
            [Parameter(name.replace('__', '.'), value=value) for name, value in values.items()])
        _wait_for(future.done, what='the set_parameters response')
        return list(future.result().results)

    def list_parameters(self, prefix: str) -> list[str]:
        """Return the names of the monitor's parameters under ``prefix`` (``ros2 param list``)."""
        assert self.params.wait_for_services(timeout_sec=DEFAULT_TIMEOUT_S)
        future = self.params.list_parameters([prefix], 10)
        _wait_for(future.done, what='the list_parameters response')
        return list(future.result().result.names)

    def get_parameter(self, name: str) -> Any:
        """Get one monitor parameter value through its parameter service."""
        from rclpy.parameter import parameter_value_to_python

        assert self.params.wait_for_services(timeout_sec=DEFAULT_TIMEOUT_S)
        future = self.params.get_parameters([name])
        _wait_for(future.done, what='the get_parameters response')
        return parameter_value_to_python(future.result().values[0])


def _key_values(status: Any) -> dict[str, str]:
    """Return a status's key/value pairs as a dict."""
    return {kv.key: kv.value for kv in status.values}


@pytest.fixture
def wait_for() -> Callable[..., Any]:
    """Return ``wait_for(condition, timeout=10, what=...)``: poll until truthy, else fail."""
    return _wait_for


@pytest.fixture
def key_values() -> Callable[[Any], dict[str, str]]:
    """Return a function giving a diagnostic status's key/value pairs as a dict."""
    return _key_values


def _stop_all(spinners: list[Spinner]) -> None:
    """Stop every spinner, the last started first, then re-raise the first error."""
    errors = []
    for spinner in reversed(spinners):
        try:
            spinner.stop()
        except BaseException as err:
            errors.append(err)
    if errors:
        raise errors[0]


@pytest.fixture
def spin(ros_context: Any) -> Iterator[Callable[..., Spinner]]:
    """Return ``spin(*nodes, context=None, destroy=False)``: spin nodes in a background thread.

    All spinners stop after the test; with ``destroy`` their nodes are destroyed then.
    """
    spinners: list[Spinner] = []

    def start(*nodes: Any, context: Any = None, destroy: bool = False) -> Spinner:
        spinner = Spinner(context or ros_context, *nodes, destroy=destroy)
        spinners.append(spinner)
        return spinner

    yield start
    _stop_all(spinners)


@pytest.fixture
def observer(ros_context: Any, spin: Callable[..., Spinner]) -> Iterator[Observer]:
    """Yield a spinning ``Observer`` of the default-named monitor."""
    obs = Observer(ros_context)
    spin(obs.node, destroy=True)
    yield obs


@pytest.fixture
def start_monitor(ros_context: Any, spin: Callable[..., Spinner]) -> Callable[..., Any]:
    """Return a function creating a spinning in-process MonitorNode from parameter values.

    Keyword names use ``__`` for ``.`` (``topic__imu__period_ms=10.0``).
    """
    from rclpy.parameter import Parameter

    from ros2_deadline_monitor.live.monitor_node import MonitorNode

    def start(**values: Any) -> Any:
        overrides = [Parameter(name.replace('__', '.'), value=value)
                     for name, value in values.items()]
        node = MonitorNode(context=ros_context, parameter_overrides=overrides)
        spin(node, destroy=True)
        return node

    return start


@pytest.fixture
def run_tool(installed_executable: Callable[[str], Any], tmp_path: Any,
             processes: list[Any]) -> Callable[..., Any]:
    """Return ``run_tool(name, **params)``: start an installed tool, logging to tmp_path."""
    import subprocess

    def start(name: str, **params: Any) -> subprocess.Popen:
        args = [str(installed_executable(name)), '--ros-args']
        for key, value in params.items():
            if isinstance(value, bool):
                value = 'true' if value else 'false'
            args += ['-p', f'{key}:={value}']
        args += ['--', *ros_args()]
        log = open(tmp_path / f'{name}.log', 'w')  # noqa: SIM115 - closed by `processes`
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        process.log = log
        processes.append(process)
        return process

    return start


@pytest.fixture
def full_disk(tmp_path: Any) -> Iterator[Any]:
    """Yield a folder on a 64 KiB tmpfs: a full disk (skipped where mounting is not allowed)."""
    import subprocess

    folder = tmp_path / 'small'
    folder.mkdir()
    mounted = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f'cannot mount a small tmpfs: {mounted.stderr.strip()}')
    try:
        yield folder
    finally:
        # Lazy: a file a failed test left open must not keep the mount.
        subprocess.run(['umount', '--lazy', str(folder)], check=True)
