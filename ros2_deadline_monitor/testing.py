"""Deadline expectations in your own tests (pytest, launch_testing).

Two ways to check a system under test:

- **run** a monitor: ``MonitorProcess`` starts the installed ``monitor`` executable in a
  subprocess with the given topics, parameters and expectations, and stops it (SIGINT) or
  lets ``duration_s`` end it; the result carries its exit code (0 held, 3 failed, 2 bad
  configuration) and the summary JSON it wrote. ``run_monitor`` does both in one call.
- **watch** a running monitor (one your launch file started): ``watch_monitor`` subscribes
  to its ``~/stats`` for a while and judges the expectations from what it reported.

Either result's ``assert_ok()`` raises ``AssertionError`` naming each failed expectation
(topic, figure, measured value, limit), as the monitor prints them. ``assert_summary(path)``
does the same for a summary file a monitor wrote (after a launch_testing run).

Expectations are given as ``{topic identifier: {key: limit}}`` and ``{key: limit}`` for the
clock, with the keys of ``topic.<id>.expect.*`` and ``clock.expect.*`` (``max_misses``,
``max_miss_ratio``, ``max_skipped``, ``max_interval_ms``, ``max_lost``, ``min_rate_hz``;
``min_rtf``, ``min_rtf_bin``). Imports rclpy only to watch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
import json
import os
from pathlib import Path
import re
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any

from ros2_deadline_monitor.analysis.snapshot import Snapshot
from ros2_deadline_monitor.analysis.stats_fold import StatsFold
from ros2_deadline_monitor.configuration.expectations import (
    CLOCK_PREFIX,
    evaluate,
    expectations_from,
    topic_expectation_prefix,
    Verdict,
)
from ros2_deadline_monitor.outputs.gate import EXIT_FAILED, EXIT_OK

__all__ = ['assert_summary', 'expectation_parameters', 'find_monitor', 'MonitorProcess',
           'MonitorResult', 'run_monitor', 'watch_monitor', 'WatchResult']

PACKAGE = 'ros2_deadline_monitor'
READY = re.compile(r': monitoring \d+ topic\(s\), stats every ')
"""The line the monitor logs once its subscriptions and timers exist."""
STOP_TIMEOUT_S = 20.0

TopicLimits = Mapping[str, Mapping[str, float]]


def expectation_parameters(expect: TopicLimits | None = None,
                           clock_expect: Mapping[str, float] | None = None) -> dict[str, float]:
    """Turn ``{id: {key: limit}}`` and ``{key: limit}`` into monitor parameters.

    >>> expectation_parameters({'cmd': {'max_misses': 0}}, {'min_rtf': 0.9})
    {'topic.cmd.expect.max_misses': 0, 'clock.expect.min_rtf': 0.9}
    """
    params: dict[str, float] = {}
    for topic_id, limits in (expect or {}).items():
        for key, limit in limits.items():
            params[f'{topic_expectation_prefix(topic_id)}{key}'] = limit
    for key, limit in (clock_expect or {}).items():
        params[f'{CLOCK_PREFIX}{key}'] = limit
    return params


def find_monitor() -> str:
    """Return the installed ``monitor`` executable (ament index first, then PATH)."""
    try:
        from ament_index_python.packages import get_package_prefix, PackageNotFoundError
    except ImportError:  # pragma: no cover - ament_index_python comes with every ROS install
        pass
    else:
        try:
            path = Path(get_package_prefix(PACKAGE)) / 'lib' / PACKAGE / 'monitor'
        except PackageNotFoundError:
            path = None
        if path is not None and path.exists():
            return str(path)
    found = shutil.which('monitor')
    if found is None:
        raise FileNotFoundError(f'no installed monitor executable: source the workspace that '
                                f'installs {PACKAGE}')
    return found


def _failed_lines(summary: Mapping[str, Any]) -> list[str]:
    return [o['line'] for o in summary.get('verdict', {}).get('expectations', [])
            if not o['passed']]


@dataclass(frozen=True)
class MonitorResult:
    """What a monitor run ended with: exit code, summary JSON (None if none) and its output."""

    exit_code: int | None
    summary: dict[str, Any] | None
    output: str

    @property
    def failures(self) -> list[str]:
        """One line per failed expectation, as the monitor prints them."""
        return _failed_lines(self.summary) if self.summary is not None else []

    @property
    def ok(self) -> bool:
        """True when the monitor exited 0 and every expectation held."""
        return self.exit_code == EXIT_OK and self.summary is not None and not self.failures

    def topic(self, topic_id: str) -> dict[str, Any]:
        """Return the summary's figures of one topic (by identifier)."""
        assert self.summary is not None, 'the monitor wrote no summary'
        return next(t for t in self.summary['topics'] if t['id'] == topic_id)

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` with every failed expectation (or why the run failed)."""
        if self.ok:
            return
        if self.summary is None or self.exit_code not in (EXIT_OK, EXIT_FAILED):
            tail = '\n'.join(self.output.strip().splitlines()[-10:])
            raise AssertionError(f'the monitor exited with {self.exit_code} and '
                                 f'{"no" if self.summary is None else "a"} summary:\n{tail}')
        raise AssertionError('deadline expectations failed:\n' + '\n'.join(self.failures))


def assert_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a monitor's ``summary_file``; raise ``AssertionError`` if an expectation failed.

    For a launch_testing post-shutdown test, next to checking the monitor's exit code.
    Returns the summary.
    """
    summary = json.loads(Path(path).read_text(encoding='utf-8'))
    failures = _failed_lines(summary)
    if failures:
        raise AssertionError('deadline expectations failed:\n' + '\n'.join(failures))
    return summary


class MonitorProcess:
    """The installed ``monitor`` in a subprocess, with a summary file in a temporary folder.

    ``topics`` maps identifiers to topic names; ``params`` holds any other parameter
    (``{'topic.cmd.period_ms': 10.0, 'use_sim_time': True}``); ``duration_s`` > 0 lets the
    monitor stop itself; ``ros_args`` are more ROS arguments (``['--ros-args', '-r',
    '__ns:=/robot1']``: a namespace, remappings). A context manager: leaving it stops the
    monitor (SIGINT) and keeps the ``result``.
    """

    def __init__(self, topics: Mapping[str, str] | None = None, *,
                 expect: TopicLimits | None = None,
                 clock_expect: Mapping[str, float] | None = None,
                 params: Mapping[str, Any] | None = None, duration_s: float = 0.0,
                 params_file: str | os.PathLike[str] | None = None,
                 node_name: str | None = None, executable: str | None = None,
                 env: Mapping[str, str] | None = None,
                 ros_args: Sequence[str] = ()) -> None:
        """Prepare the command line; ``start`` runs it."""
        self._dir = tempfile.TemporaryDirectory(prefix='deadline_monitor_')
        self.summary_path = Path(self._dir.name) / 'summary.json'
        """Where the monitor writes its summary (``params['summary_file']`` if given)."""
        self.log_path = Path(self._dir.name) / 'monitor.log'
        values: dict[str, Any] = {}
        if topics:
            values['topics'] = list(topics)
            values.update({f'topic.{i}.name': name for i, name in topics.items()})
        values.update(params or {})
        values.update(expectation_parameters(expect, clock_expect))
        if duration_s:
            values['duration_s'] = float(duration_s)
        values.setdefault('summary_file', str(self.summary_path))
        self.summary_path = Path(values['summary_file'])
        self.command = [executable or find_monitor(), '--ros-args']
        if node_name:
            self.command += ['-r', f'__node:={node_name}']
        if params_file is not None:
            self.command += ['--params-file', str(params_file)]
        for name, value in values.items():
            self.command += ['-p', f'{name}:={_param_text(value)}']
        if ros_args:
            self.command += ['--', *ros_args]
        self._env = dict(env) if env is not None else None
        self.process: subprocess.Popen | None = None
        self.result: MonitorResult | None = None

    def start(self) -> MonitorProcess:
        """Start the monitor; return self."""
        with open(self.log_path, 'w', encoding='utf-8') as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT,
                                            env=self._env)
        return self

    def output(self) -> str:
        """Return what the monitor printed so far."""
        return self.log_path.read_text(encoding='utf-8', errors='replace')

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Wait until the monitor runs (its start-up line); raise if it exited or timed out."""
        deadline = time.monotonic() + timeout_s
        assert self.process is not None, 'start() first'
        while not READY.search(self.output()):
            if self.process.poll() is not None:
                raise AssertionError(f'the monitor exited with {self.process.returncode} '
                                     f'before it ran:\n{self.output()}')
            if time.monotonic() > deadline:
                raise AssertionError(f'the monitor did not start within {timeout_s:g} s')
            time.sleep(0.05)

    def wait(self, timeout_s: float | None = None) -> MonitorResult:
        """Wait for the monitor to exit by itself (``duration_s``); return the result."""
        assert self.process is not None, 'start() first'
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f'the monitor did not exit within {timeout_s:g} s') from None
        return self._finish()

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> MonitorResult:
        """Stop the monitor with SIGINT (unless it exited already); return the result."""
        assert self.process is not None, 'start() first'
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        return self.wait(timeout_s)

    def _finish(self) -> MonitorResult:
        assert self.process is not None
        summary = None
        if self.summary_path.exists():
            summary = json.loads(self.summary_path.read_text(encoding='utf-8'))
        self.result = MonitorResult(self.process.returncode, summary, self.output())
        return self.result

    def __enter__(self) -> MonitorProcess:
        """Start the monitor and wait until it runs."""
        self.start()
        self.wait_ready()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the monitor (the result stays in ``result``)."""
        if self.process is not None and self.result is None:
            self.stop()


def _param_text(value: Any) -> str:
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_param_text(v) for v in value) + ']'
    return str(value)


def run_monitor(topics: Mapping[str, str] | None = None, *, duration_s: float,
                timeout_s: float | None = None, **kwargs: Any) -> MonitorResult:
    """Run a monitor for ``duration_s`` and return its result (see ``MonitorProcess``)."""
    monitor = MonitorProcess(topics, duration_s=duration_s, **kwargs).start()
    return monitor.wait(timeout_s if timeout_s is not None else duration_s + 60.0)


# -- watching a running monitor ----------------------------------------------------------------

@dataclass(frozen=True)
class WatchResult:
    """What ``watch_monitor`` saw: how many reports, the last one, and the verdict."""

    reports: int
    last: Any
    """The last ``MonitorStats`` received (None if none arrived)."""
    verdict: Verdict
    snapshot: Snapshot = field(repr=False)
    """The watched reports folded into one snapshot (``analysis/stats_fold.py``): what the
    verdict read, through the whole-run figure tables."""

    @property
    def failures(self) -> list[str]:
        """One line per failed expectation."""
        return [o.line() for o in self.verdict.failed]

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` with every failed expectation."""
        if self.reports == 0:
            raise AssertionError('no report from the monitor arrived')
        if not self.verdict.ok:
            raise AssertionError('deadline expectations failed:\n' + '\n'.join(self.failures))


def watch_monitor(expect: TopicLimits | None = None,
                  clock_expect: Mapping[str, float] | None = None, *, duration_s: float,
                  stats_topic: str = 'deadline_monitor/stats', context: Any = None,
                  until: Callable[[Any], bool] | None = None,
                  first_report_timeout_s: float = 30.0) -> WatchResult:
    """Watch a running monitor's ``~/stats`` and judge the expectations from its reports.

    Watches for ``duration_s`` after the first report arrived (or until ``until(stats)`` is
    true). The reports are folded into one snapshot (``analysis/stats_fold.py``) and checked like
    the monitor checks its own: counts are the monitor's totals since its start (summed over
    restarts), the longest interval and the mean rate are the whole run's (the rate is not
    the lowest window's), the miss ratio misses / cycles, the worst RTF window the worst of
    the watched reports. Uses ``context`` (an initialized rclpy ``Context``) or initializes
    and shuts down its own. A relative ``stats_topic`` lies in the context's namespace (its
    ``__ns`` remapping; the root by default): the monitor beside it, not another one.
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile

    from ros2_deadline_monitor.msg import MonitorStats

    own = context is None
    if own:
        context = rclpy.context.Context()
        rclpy.init(context=context)
    fold = StatsFold()
    received: list[Any] = []

    def on_stats(stats: Any) -> None:
        received.append(stats)
        fold.add(stats)

    node = rclpy.create_node('deadline_expectations_watcher', context=context,
                             start_parameter_services=False)
    executor = SingleThreadedExecutor(context=context)
    try:
        node.create_subscription(MonitorStats, stats_topic, on_stats, QoSProfile(depth=100))
        executor.add_node(node)
        deadline = time.monotonic() + first_report_timeout_s
        while not received and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        end = time.monotonic() + duration_s
        while received and time.monotonic() < end and not (until and until(received[-1])):
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.shutdown()
        node.destroy_node()
        if own:
            rclpy.try_shutdown(context=context)
    return judge_watched(fold, received[-1] if received else None, expect, clock_expect)


def judge_watched(fold: StatsFold, last: Any, expect: TopicLimits | None = None,
                  clock_expect: Mapping[str, float] | None = None) -> WatchResult:
    """Check the expectations against folded reports (``watch_monitor``'s verdict)."""
    snapshot = fold.snapshot()
    ids: Sequence[str] = list({**{t.topic_id: None for t in snapshot.topics},
                               **(expect or {})})
    expectations = expectations_from(expectation_parameters(expect, clock_expect), ids)
    return WatchResult(fold.messages, last, evaluate(expectations, snapshot), snapshot)
