"""Shared test set-up: ROS environment defaults, markers, and fixtures for ROS tests.

The suite runs against the *installed* package (`scripts/dev test` sources the colcon build),
because only the build has the generated `ros2_deadline_monitor.msg`. pytest runs with
`--import-mode=importlib` (setup.cfg) so it puts neither the repository root nor test/ on
sys.path; `python -m pytest` still adds the working directory, which is removed below.
Subprocesses should run the installed executables (`installed_executable`), not
`python -m ros2_deadline_monitor...` from the repository root, which would import the source
tree without the messages.
"""

from collections.abc import Callable, Generator, Iterator
import gc
import importlib.util
import os
from pathlib import Path
import signal
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from rclpy.context import Context

# Before anything imports rclpy: discovery stays on this machine, and the one RMW the PyPI
# wheels provide is used. scripts/dev also sets a ROS_DOMAIN_ID per run.
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = 'ros2_deadline_monitor'


def _is_repo_root(entry: str) -> bool:
    try:
        return Path(entry or os.curdir).resolve() == REPO_ROOT
    except OSError:
        return False


def _prefer_installed_package() -> None:
    """Import the installed package, not the source tree next to this file."""
    sys.path[:] = [entry for entry in sys.path if not _is_repo_root(entry)]
    if importlib.util.find_spec(PACKAGE) is None:
        # Nothing built or installed: the pure Python parts still work from the checkout.
        sys.path.append(str(REPO_ROOT))


_prefer_installed_package()


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers used in this suite."""
    config.addinivalue_line(
        'markers', 'slow: takes a minute or more (e.g. a full colcon build); runs by default')


ROS_FIXTURES = frozenset({'ros_context', 'second_context', 'participant'})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None
                            ) -> Generator[None, None, None]:
    """After a test with rclpy Contexts, collect them so their DDS participants end.

    ``rclpy.try_shutdown`` does not end a Context's DDS participant: that happens when the
    Context and every node of it are destroyed or garbage collected, and nodes and executors
    hold reference cycles. Until then the participant stays in the domain with every node,
    publisher and subscription it had, matched with the next tests' endpoints and counted in
    their graph queries (a later test saw an earlier test's 'clock_tracker' on /clock). The
    test's fixtures are released only after its teardown, hence a hook around the whole test.
    """
    yield
    if ROS_FIXTURES.intersection(getattr(item, 'fixturenames', ())):
        gc.collect()


def _initialized_context() -> Iterator['Context']:
    """Yield a fresh, initialized rclpy Context and shut it down afterwards."""
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        rclpy.try_shutdown(context=context)


@pytest.fixture
def ros_context() -> Iterator['Context']:
    """Yield a fresh, initialized rclpy Context and shut it down after the test."""
    yield from _initialized_context()


@pytest.fixture
def second_context() -> Iterator['Context']:
    """Yield another initialized Context: a second DDS participant, like another process."""
    yield from _initialized_context()


PROCESS_STOP_TIMEOUT_S = 10.0


def _stop_process(process: subprocess.Popen,
                  timeout: float = PROCESS_STOP_TIMEOUT_S) -> int | None:
    """End ``process`` like Ctrl-C, so it can clean up; kill it if it has not within ``timeout``.

    Returns its exit code (None only if it could not be reaped).
    """
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


@pytest.fixture
def stop_process() -> Callable[..., int | None]:
    """Return ``stop_process(process, timeout=10)``: SIGINT, wait, then SIGKILL."""
    return _stop_process


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen]]:
    """Collect started processes; each still running after the test gets SIGINT, then SIGKILL.

    A log file attached as ``process.log`` is closed after its process ended.
    """
    started: list[subprocess.Popen] = []
    yield started
    for process in started:
        _stop_process(process)
        log = getattr(process, 'log', None)
        if log is not None:
            log.close()


@pytest.fixture
def installed_executable() -> Callable[[str], Path]:
    """Return a function mapping an executable name to its path, as `ros2 run` finds it."""
    from ament_index_python.packages import get_package_prefix

    def find(name: str) -> Path:
        path = Path(get_package_prefix(PACKAGE)) / 'lib' / PACKAGE / name
        if not os.access(path, os.X_OK):
            pytest.fail(f'executable {name!r} is not installed at {path}')
        return path

    return find
