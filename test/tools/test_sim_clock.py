"""sim_clock: its steps, stalls and summary on synthetic times, then the node over real DDS.

The node runs as a subprocess (its own rclpy context, its own signal handling) of the same
package this test imported; the test subscribes in a fresh Context. No timing assertions: a
stall is checked as a gap at least as long as the sleep that made it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import functools
import json
import math
import signal
import subprocess
import time
from typing import Any

import numpy as np
import pytest
from tool_fixtures import ListeningNode  # test/plugins

from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.tools.pacing import Pacer, RtfMeter
from ros2_deadline_monitor.tools.sim_clock import (
    PARAMETERS,
    settings_from_values,
    SimClockSettings,
    StallPlan,
    summary_of,
)
from ros2_deadline_monitor.tools.waiting import WARN_AFTER_S

MS = 1_000_000
S = 1_000_000_000
SUMMARY_KEYS = {'target_rtf', 'step_ms', 'steps', 'wall_s', 'sim_s', 'rtf', 'rtf_100ms_min',
                'rtf_100ms_max', 'rtf_100ms_min_at_s', 'stalls', 'max_wall_gap_ms'}


# --- pure logic ------------------------------------------------------------------------------

def test_stall_plan_every_and_at():
    plan = StallPlan(every_ns=1 * S, at_ns=[int(0.3 * S)])
    fired = [t for t in range(0, 3 * S, 10 * MS) if plan.due(t)]
    assert fired == [int(0.3 * S), 1 * S, 2 * S]


def test_stall_plan_fires_once_per_moment_even_when_late():
    plan = StallPlan(every_ns=100 * MS)
    assert plan.due(350 * MS)
    assert not plan.due(360 * MS)
    assert plan.due(400 * MS)


def test_summary_counts_steps_from_the_first_message():
    settings = SimClockSettings(step_ns=2 * MS)
    meter = RtfMeter()
    for k in range(11):
        meter.add(k * 2 * MS, S + k * 2 * MS)
    meter.fold()
    summary = summary_of(settings, meter, stalls=0, reanchors=0)
    assert SUMMARY_KEYS <= summary.keys()
    assert summary['messages'] == 11
    assert summary['steps'] == 10
    assert summary['sim_s'] == pytest.approx(0.02)
    assert summary['rtf'] == pytest.approx(1.0)


def _values(**changes: Any) -> dict[str, Any]:
    values = {spec.name: spec.default for spec in PARAMETERS}
    values.update(changes)
    return values


def test_settings_convert_units():
    settings = settings_from_values(_values(step_ms=0.5, stall_at_s=[2, 0.5], duration_s=3.0))
    assert settings.step_ns == 500_000
    assert settings.stall_at_ns == (S // 2, 2 * S)
    assert settings.duration_ns == 3 * S


def test_every_step_is_published_by_default():
    settings = settings_from_values(_values())
    assert [settings.step_of(n) for n in range(4)] == [0, 1, 2, 3]
    assert settings.lag_tolerance_ns == 1 * MS


@pytest.mark.parametrize('changes, steps', [
    # Gazebo Classic's default: physics in 1 ms steps, /clock at 10 Hz.
    ({'step_ms': 1.0, 'publish_rate_hz': 10.0}, [0, 100, 200, 300, 400]),
    # Not a whole number of steps apart: the current step, rounded down, exact over time.
    ({'step_ms': 1.0, 'publish_rate_hz': 30.0}, [0, 33, 66, 100, 133]),
    # 10 Hz of wall time at RTF 0.3 is 30 ms of sim time (3/10 exactly, not 0.29999...).
    ({'step_ms': 1.0, 'publish_rate_hz': 10.0, 'target_rtf': 0.3}, [0, 30, 60, 90, 120]),
    ({'step_ms': 2.0, 'publish_rate_hz': 10.0, 'target_rtf': 2.0}, [0, 100, 200, 300, 400]),
    # As fast as the steps: every step.
    ({'step_ms': 1.0, 'publish_rate_hz': 1000.0}, [0, 1, 2, 3, 4]),
])
def test_publish_rate_publishes_the_current_step(changes, steps):
    settings = settings_from_values(_values(**changes))
    assert [settings.step_of(n) for n in range(5)] == steps


def test_publish_rate_paces_and_tolerates_lateness_per_publication():
    settings = settings_from_values(_values(step_ms=1.0, publish_rate_hz=10.0))
    assert settings.step_wall_ns == 1 * MS
    assert settings.publish_wall_ns == 100 * MS
    # Late by less than a publication interval bursts nothing (the steps in between are
    # not published), so it keeps the schedule.
    assert settings.lag_tolerance_ns == 100 * MS
    pacer = Pacer(settings.step_wall_ns, 0, settings.lag_tolerance_ns)
    pacer.publishing(settings.step_of(1), 100 * MS + 30 * MS)
    assert pacer.reanchors == 0
    assert pacer.due_ns(settings.step_of(2)) == 200 * MS


def test_summary_gives_the_publish_period_in_sim_time():
    settings = settings_from_values(_values(step_ms=1.0, publish_rate_hz=10.0))
    meter = RtfMeter()
    for n in range(11):
        meter.add(n * 100 * MS, S + settings.step_of(n) * MS)
    meter.fold()
    summary = summary_of(settings, meter, stalls=0, reanchors=0)
    assert summary['messages'] == 11
    assert summary['steps'] == 1000
    assert summary['publish_period_ms'] == 100.0
    assert summary['max_lag_ms'] == 100.0


@pytest.mark.parametrize('changes, name', [
    ({'target_rtf': -1.0}, 'target_rtf'),
    ({'publish_rate_hz': -1.0}, 'publish_rate_hz'),
    ({'step_ms': 10.0, 'publish_rate_hz': 200.0}, 'publish_rate_hz'),
    ({'stall_at_s': [1.0, -0.5]}, 'stall_at_s'),
    ({'stall_at_s': ['x']}, 'stall_at_s'),
    ({'stall_ms': 500.0, 'stall_every_s': 0.2}, 'stall_ms'),
])
def test_settings_reject_invalid_values_naming_the_parameter(changes, name):
    with pytest.raises(ConfigError, match=name):
        settings_from_values(_values(**changes))


# --- the node over real DDS ------------------------------------------------------------------

@pytest.fixture
def sim_clock(tools: Any) -> Callable[..., subprocess.Popen]:
    """Return ``start(**params)``: a sim_clock process, stopped after the test if still running."""
    return functools.partial(tools.start, 'sim_clock')


class Listener(ListeningNode):
    """A test node keeping every /clock sim time and every ~/rtf value it receives."""

    def __init__(self, context: Any) -> None:
        from rclpy.qos import QoSProfile
        from rosgraph_msgs.msg import Clock
        from std_msgs.msg import Float64

        super().__init__(context, 'sim_clock_listener')
        self.sim_ns: list[int] = []
        self.rtf: list[float] = []
        self.node.create_subscription(Clock, '/clock', self._on_clock, QoSProfile(depth=1000))
        self.node.create_subscription(Float64, 'sim_clock/rtf',  # in the test's namespace
                                      lambda msg: self.rtf.append(msg.data), 10)

    def _on_clock(self, msg: Any) -> None:
        self.sim_ns.append(msg.clock.sec * S + msg.clock.nanosec)

    def drain(self, seconds: float) -> None:
        """Take what is still on its way (messages sent just before the publisher exited)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)


@pytest.fixture
def listener(ros_context: Any) -> Iterator[Listener]:
    node = Listener(ros_context)
    yield node
    node.close()


def _finish(process: subprocess.Popen, listener: Listener, timeout_s: float = 15.0) -> str:
    """Spin the listener until the process exits; return its stderr after checking rc 0."""
    listener.spin_until(lambda: process.poll() is not None, timeout_s, 'sim_clock to exit')
    listener.drain(0.2)
    _, stderr = process.communicate(timeout=5)
    assert process.returncode == 0, stderr
    return stderr


def test_clock_advances_in_whole_steps_and_summary_matches(sim_clock, listener, tmp_path):
    summary_path = tmp_path / 'summary.json'
    process = sim_clock(step_ms=2.0, start_sim_s=3.0, duration_s=1.5, wait_for_subscribers=1,
                        rtf_report_period_s=0.2, summary_path=str(summary_path))
    _finish(process, listener)
    summary = json.loads(summary_path.read_text())
    assert SUMMARY_KEYS <= summary.keys()
    assert summary['steps'] > 0
    assert summary['messages'] == summary['steps'] + 1
    assert summary['sim_s'] == pytest.approx(summary['steps'] * summary['step_ms'] / 1000)
    sim = np.array(listener.sim_ns, np.int64)
    assert len(sim) > 0
    offsets = sim - 3 * S
    assert np.all(offsets % (2 * MS) == 0), 'every sim time is a whole number of steps'
    assert np.all(np.diff(sim) > 0), 'strictly increasing, no duplicates'
    assert offsets.max() <= summary['steps'] * 2 * MS
    assert len(sim) <= summary['messages']
    assert listener.rtf and all(math.isfinite(v) and v > 0 for v in listener.rtf)


def test_publish_rate_publishes_every_100_ms_of_sim_time(sim_clock, listener, tmp_path):
    # Gazebo Classic's default /clock: 1 ms physics steps, published at 10 Hz.
    summary_path = tmp_path / 'summary.json'
    process = sim_clock(step_ms=1.0, publish_rate_hz=10.0, start_sim_s=2.0, duration_s=2.0,
                        wait_for_subscribers=1, summary_path=str(summary_path))
    stderr = _finish(process, listener)
    summary = json.loads(summary_path.read_text())
    assert summary['publish_period_ms'] == 100.0
    # Every message the node published arrived (reliable, matched before the first one).
    sim = np.array(listener.sim_ns, np.int64)
    assert len(sim) == summary['messages'], stderr
    assert np.array_equal(sim, 2 * S + 100 * MS * np.arange(len(sim))), sim
    assert summary['steps'] == 100 * (len(sim) - 1)
    if summary['reanchors'] == 0:
        # On schedule: one message at 0, 0.1, ..., 1.9 s of wall; none at 2.0 s (the end).
        assert len(sim) == 20
    else:
        # A publication late by over 100 ms (a starved machine) moved the schedule on.
        assert 0 < len(sim) < 20


def test_injected_stall_shows_as_a_wall_gap(sim_clock, listener, tmp_path):
    summary_path = tmp_path / 'summary.json'
    process = sim_clock(duration_s=2.0, stall_ms=300.0, stall_at_s=[0.8], wait_for_subscribers=1,
                        summary_path=str(summary_path))
    _finish(process, listener)
    summary = json.loads(summary_path.read_text())
    assert summary['stalls'] == 1
    assert summary['max_wall_gap_ms'] > 250
    sim = np.array(listener.sim_ns, np.int64)
    assert np.all(np.diff(sim) > 0)
    assert np.all((sim - S) % MS == 0), 'a stall freezes sim time, it does not skip any'


def test_sigterm_stops_cleanly_and_writes_the_summary(sim_clock, listener, tmp_path):
    summary_path = tmp_path / 'summary.json'
    process = sim_clock(wait_for_subscribers=1, summary_path=str(summary_path))
    listener.spin_until(lambda: len(listener.sim_ns) >= 100, 15.0, '100 /clock messages')
    process.send_signal(signal.SIGTERM)
    _finish(process, listener)
    summary = json.loads(summary_path.read_text())
    assert summary['messages'] >= 100


@pytest.mark.parametrize('params, name', [
    ({'target_rtf': -1.0}, 'target_rtf'),
    ({'step_ms': 0.0}, 'step_ms'),
    ({'stall_at_s': [-1.0]}, 'stall_at_s'),
    ({'step_ms': 10.0, 'publish_rate_hz': 1000.0}, 'publish_rate_hz'),
])
def test_invalid_parameter_exits_2_naming_it(tools, params, name):
    result = subprocess.run(tools.command('sim_clock', **params), env=tools.env(),
                            capture_output=True, text=True, timeout=15)
    assert result.returncode == 2, result.stderr
    assert 'ERROR' in result.stderr
    assert name in result.stderr


def test_help_lists_every_parameter(tools):
    result = tools.help('sim_clock', timeout_s=15)
    assert result.returncode == 0
    for spec in PARAMETERS:
        assert spec.name in result.stdout


def test_a_start_that_hangs_says_at_warn_how_many_subscriptions_it_has(tools, tmp_path):
    # Nothing in the suite makes 50 /clock subscriptions. The demo's processes log at WARN:
    # the warning is what says that sim_clock's wait hung (at INFO, the first line shows too).
    log = tmp_path / 'sim_clock.log'
    process = tools.start_logging('sim_clock', log, wait_for_subscribers=50)
    wait = '50 subscription(s) on /clock'
    text = tools.wait_for_log(log, f'still waiting for {wait} after', WARN_AFTER_S + 15)
    assert f']: waiting for {wait} (0 so far)' in text
    assert 'so far)' in text.split('[WARN] [', 1)[1]
    assert 'pacing stopped' not in text
    assert process.poll() is None, text
