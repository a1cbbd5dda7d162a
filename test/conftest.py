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
import importlib
import importlib.util
import os
from pathlib import Path
import signal
import subprocess
import sys
from typing import Any, TYPE_CHECKING

from hypothesis import settings
import pytest

if TYPE_CHECKING:
    from rclpy.context import Context

# Before anything imports rclpy: discovery stays on this machine, and the one RMW the PyPI
# wheels provide is used. scripts/dev also sets a ROS_DOMAIN_ID per run.
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')

# Property tests assert values, never time: Hypothesis' 200 ms deadline per example failed
# test_cdr::test_header once (276 ms) while live tests loaded both cores.
settings.register_profile('suite', deadline=None)
settings.load_profile('suite')

# Only 0-101 is safe on Linux: higher domains map DDS ports into the ephemeral port range.
DOMAIN_IDS = 101


def worker_domain_id(run_domain_id: int, worker: str) -> int:
    """Return the DDS domain of pytest-xdist worker ``worker`` ('gw0', 'gw1', ...).

    Workers run tests side by side; a domain each keeps one test's nodes out of another's
    graph and counts (a /clock publisher of one test would be a second clock in the other).
    """
    index = int(worker.removeprefix('gw'))
    return 1 + (run_domain_id - 1 + index) % DOMAIN_IDS


if 'PYTEST_XDIST_WORKER' in os.environ:
    os.environ['ROS_DOMAIN_ID'] = str(worker_domain_id(
        int(os.environ.get('ROS_DOMAIN_ID') or 0), os.environ['PYTEST_XDIST_WORKER']))

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = 'ros2_deadline_monitor'
TEST_MSGS = 'deadline_monitor_test_msgs'
TEST_MSG_DIR = REPO_ROOT / 'test' / 'interfaces' / TEST_MSGS / 'msg'


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

# Fixtures more than one folder uses: a monitor node driven over real DDS, synthesized bags,
# the tools run as subprocesses.
sys.path.insert(0, str(Path(__file__).resolve().parent / 'plugins'))
pytest_plugins = ('node_fixtures', 'bag_fixtures', 'tool_fixtures')

import own_names  # noqa: E402 - test/plugins, on sys.path from the line above


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


@pytest.fixture(autouse=True)
def own_namespace() -> str:
    """Give each test a ROS namespace of its own (``test/plugins/own_names.py``)."""
    return own_names.begin_test()


def _initialized_context() -> Iterator['Context']:
    """Yield a fresh rclpy Context whose nodes live in the test's namespace; shut it down after.

    Its nodes, their ``~/`` names and services, and /clock and /diagnostics are the test's own
    (``own_names.ros_args``): a neighbour on the same domain is not heard.
    """
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(args=own_names.ros_args(), context=context)
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


class SnapshotBuilder:
    """Hand-built snapshots for the sinks' tests: every figure measured unless changed.

    The reference scenario's figures (100 Hz, 20 misses, 10 skipped, max 22.5 ms) on a
    session that started at ``T0`` (system clock) and reports at ``T0 + 5.1 s``.
    """

    T0 = 1_796_106_837_000_000_000
    MS = 1_000_000
    S = 1_000_000_000

    def interval(self, clock: str, **changes):
        from ros2_deadline_monitor.analysis.reports import IntervalSummary

        values = dict(clock=clock, count=499, mean_ns=10.2e6, min_ns=7.4e6, max_ns=22.5e6,
                      max_at_ns=(self.T0 + 1_057_000_000 if clock == 'wall'
                                 else 1005 * self.S + 1_050_000_000),
                      p50_ns=10e6, p95_ns=10.1e6, p99_ns=22e6, tail_amplification=2.2,
                      over_period=20, over_period_plus_jitter=10, over_wall_budget=10)
        values.update(changes)
        return IntervalSummary(**values)

    def topic_report(self, **changes):
        from ros2_deadline_monitor.analysis.reports import TopicReport

        values = dict(
            name='imu', topic='/imu', rule='response', start_source='header',
            timer_clock='sim', period_learned=False, period_ns=10 * self.MS,
            deadline_ns=10 * self.MS, jitter_ns=500_000, wall_budget_ns=10_500_000,
            timeout_ns=1_005_500_000, window_wall_ns=5 * self.S, window_sim_ns=5 * self.S,
            messages_total=500, deadline_misses_total=20, skipped_periods_total=10,
            messages_lost_total=1, malformed_total=2, qos_deadline_events_total=3,
            resets_total=0, messages=500, deadline_misses=20,
            skipped_periods=10, messages_lost=1, loss_known=True, miss_ratio=0.04,
            rate_wall_hz=98.0, rate_sim_hz=98.5, interval_wall=self.interval('wall'),
            interval_sim=self.interval('sim', max_ns=22e6), lateness_mean_ns=1e5,
            lateness_max_ns=12.5e6, response_mean_ns=2e5, response_max_ns=22.6e6,
            response_p99_ns=22e6, size_mean_bytes=16.0, size_max_bytes=16.0,
            bandwidth_bytes_per_s=1600.0, age_mean_ns=0.3e6, age_max_ns=1.2e6,
            last_arrival_wall_ns=self.T0 + 5 * self.S, foreign_stamps_total=4, outages_total=1,
            outage_total_ns=9_700_000_000, outage_max_ns=9_700_000_000, producer_runs_total=3,
            producers=2, unattributed_total=5)
        values.update(changes)
        return TopicReport(**values)

    def topic(self, topic_id: str = 'imu', **changes):
        from ros2_deadline_monitor.analysis.reports import IntervalTotals, Level, RunTotals
        from ros2_deadline_monitor.analysis.snapshot import Receive, TopicSnapshot

        values = dict(
            topic_id=topic_id, topic='/imu', type_name='sensor_msgs/msg/Imu', level=Level.WARN,
            reason='20 misses (response rule), 10 skipped periods in window',
            report=self.topic_report(), publishers=('/imu_driver',),
            receive=Receive('batched', 50 * self.MS, 2000, 0),
            run=RunTotals(cycles=5000,
                          interval_wall=IntervalTotals('wall', 4999, 49_990 * self.MS, 30e6),
                          interval_sim=IntervalTotals('sim', 4999, 49_990 * self.MS, 25e6)))
        values.update(changes)
        return TopicSnapshot(**values)

    def clock_report(self, **changes):
        from ros2_deadline_monitor.analysis.reports import ClockReport

        values = dict(
            messages_total=5000, messages=1000, window_wall_ns=self.S,
            window_sim_ns=999_500_000, sim_time_ns=1005 * self.S, rtf=0.9995, rtf_total=1.0,
            rtf_bin_ns=100 * self.MS, rtf_bin_min=0.98,
            rtf_bin_min_at_ns=self.T0 + 4_500 * self.MS, rtf_bin_max=1.01, step_ns=1e6,
            max_wall_gap_ns=3e6,
            max_wall_gap_at_ns=self.T0 + 4_200 * self.MS, resets_total=1, resets=0,
            paused=False, last_wall_ns=self.T0 + 5 * self.S)
        values.update(changes)
        return ClockReport(**values)

    def clock(self, **changes):
        from ros2_deadline_monitor.analysis.reports import Level
        from ros2_deadline_monitor.analysis.snapshot import ClockSnapshot

        values = dict(topic='/clock', report=self.clock_report(), level=Level.OK,
                      reason='RTF 1.000', target_rtf=1.0, use_sim_time=True, publishers=1,
                      simulator_rtf=0.999)
        values.update(changes)
        return ClockSnapshot(**values)

    def host(self, **changes):
        from ros2_deadline_monitor.analysis.reports import HostReport, Level
        from ros2_deadline_monitor.analysis.snapshot import HostSnapshot

        values = dict(
            report=HostReport(cgroup_available=True, cgroup_nr_periods=10,
                              cgroup_nr_throttled=2, cgroup_throttled_ns=3_500_000,
                              cpu_fraction=0.052, minor_faults=7, max_rss_bytes=80_000_000),
            level=Level.WARN, reason='CPU throttled 2 times, 3.5 ms',
            stats_timer_late_ns=2 * self.MS)
        values.update(changes)
        return HostSnapshot(**values)

    def snapshot(self, topics=None, **changes):
        from ros2_deadline_monitor.analysis.snapshot import Snapshot

        values = dict(wall_ns=self.T0 + 5_100 * self.MS, start_wall_ns=self.T0,
                      arrival_timestamp='received_timestamp',
                      topics=(self.topic(),) if topics is None else tuple(topics),
                      clock=self.clock(), host=self.host())
        values.update(changes)
        return Snapshot(**values)


@pytest.fixture
def snapshots() -> SnapshotBuilder:
    """Return builders of hand-made snapshots (pure values, no ROS)."""
    return SnapshotBuilder()
@pytest.fixture(scope='session')
def test_msgs() -> Any:
    """Return the module ``deadline_monitor_test_msgs.msg``: the project's test interfaces.

    They are built by ``scripts/dev setup`` only (a plain ``colcon build`` skips a package
    nested in another), so the tests needing them skip elsewhere, e.g. in ``colcon test`` of a
    real ROS install. Under ``scripts/dev test`` (which sets
    ``DEADLINE_MONITOR_TEST_INTERFACES=required``) a missing build fails instead.
    """
    try:
        return importlib.import_module(f'{TEST_MSGS}.msg')
    except ImportError as err:
        reason = (f'the test interfaces {TEST_MSGS} are not built ({err}); scripts/dev setup '
                  'builds them from test/interfaces')
        if os.environ.get('DEADLINE_MONITOR_TEST_INTERFACES') == 'required':
            pytest.fail(reason)
        pytest.skip(reason)
