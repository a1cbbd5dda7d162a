"""mujoco_sim: settings and the model on their own, then the node as a process over real DDS.

What the simulator does in the loop with the controller and the monitor is in
test/live/test_mujoco_live.py and in the demo's MuJoCo phases (test_demo.py).
"""

from __future__ import annotations

from collections.abc import Iterator
import json
import math
import subprocess
import time
from typing import Any

import numpy as np
import pytest
from tool_fixtures import ListeningNode  # test/plugins

from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.tools.mujoco_sim import (
    DEFAULT_MODEL,
    load_model,
    PARAMETERS,
    RtfBins,
    settings_from_values,
    steps_per,
)

pytest.importorskip('mujoco')  # scripts/requirements.txt installs it: CI runs all of this

MS = 1_000_000
S = 1_000_000_000


def _values(**changes: Any) -> dict[str, Any]:
    values = {spec.name: spec.default for spec in PARAMETERS}
    values.update(changes)
    return values


# --- pure logic ------------------------------------------------------------------------------

def test_settings_default_to_the_shipped_model_and_convert_units():
    settings = settings_from_values(_values(duration_s=2.5, command_timeout_ms=12.5))
    assert settings.model_path == str(DEFAULT_MODEL)
    assert settings.duration_ns == 2500 * MS
    assert settings.command_timeout_ns == 12_500_000
    assert settings.start_sim_ns == S


@pytest.mark.parametrize('rate_hz, timestep_ns, steps', [
    (0.0, MS, 1),  # every step
    (10.0, MS, 100),  # Gazebo Classic's default /clock
    (100.0, 2 * MS, 5),
    (300.0, MS, 3),  # 3.33 steps: the nearest whole number
    (1000.0, MS, 1),
])
def test_rates_are_whole_steps_of_sim_time(rate_hz, timestep_ns, steps):
    assert steps_per('clock_publish_hz', rate_hz, timestep_ns) == steps


def test_a_rate_faster_than_the_steps_is_refused_by_name():
    with pytest.raises(ConfigError, match='imu_hz'):
        steps_per('imu_hz', 5000.0, MS)


@pytest.mark.parametrize('changes, name', [
    ({'model_path': '/nonexistent/robot.xml'}, 'model_path'),
    ({'target_rtf': -1.0}, 'target_rtf'),
    ({'command_topic': 'bad topic'}, 'command_topic'),
    ({'joint_state_hz': -5.0}, 'joint_state_hz'),
    ({'record_path': '/nonexistent/dir/record.json'}, 'record_path'),
])
def test_settings_reject_invalid_values_naming_the_parameter(changes, name):
    with pytest.raises(ConfigError, match=name):
        settings_from_values(_values(**changes))


def test_the_shipped_model_has_what_the_closed_loop_needs():
    model = load_model(str(DEFAULT_MODEL))
    assert model.opt.timestep == pytest.approx(0.001)
    assert model.nu == 1 and model.njnt == 1
    assert model.nsensor == 2  # accelerometer and gyro on one site: an IMU


def test_a_model_mujoco_refuses_is_a_config_error_naming_the_file(tmp_path):
    path = tmp_path / 'broken.xml'
    path.write_text('<mujoco><worldbody><body><geom type="nonsense"/></body></worldbody>'
                    '</mujoco>')
    with pytest.raises(ConfigError, match='broken.xml'):
        load_model(str(path))


def test_rtf_bins_close_a_window_every_100_ms_of_wall_time():
    bins = RtfBins()
    for k in range(1001):  # 1 ms of sim per 2 ms of wall for 1 s, then a 300 ms freeze
        bins.add(k * 2 * MS, S + k * MS)
    bins.add(2000 * MS + 300 * MS, S + 1001 * MS)
    assert bins.values[:19] == pytest.approx([0.5] * 19)
    assert bins.values[-1] == pytest.approx(1 / 300)  # 1 ms of sim in 300 ms
    assert len(bins.values) == 21


def test_rtf_bins_are_bounded():
    bins = RtfBins(bin_ns=1, limit=3)
    for k in range(10):
        bins.add(k, k)
    assert len(bins.values) == 3


# --- the node as a process ---------------------------------------------------------------------

class ClockListener(ListeningNode):
    """Keeps every /clock sim time, reliable and deep, so none is lost at 10 Hz."""

    def __init__(self, context: Any) -> None:
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import Imu, JointState

        super().__init__(context, 'mujoco_sim_clock_listener')
        self.sim_ns: list[int] = []
        self.joint_states: list[Any] = []
        self.imu: list[Any] = []
        reliable = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(Clock, '/clock', self._on_clock, reliable)
        self.node.create_subscription(JointState, '/test_mujoco_sim/joint_states',
                                      self.joint_states.append, reliable)
        self.node.create_subscription(Imu, '/test_mujoco_sim/imu', self.imu.append, reliable)

    def _on_clock(self, msg: Any) -> None:
        self.sim_ns.append(msg.clock.sec * S + msg.clock.nanosec)


@pytest.fixture
def listener(ros_context: Any) -> Iterator[ClockListener]:
    node = ClockListener(ros_context)
    yield node
    node.close()


def _run(tools: Any, listener: ClockListener, tmp_path: Any, **params: Any) -> dict[str, Any]:
    """Run mujoco_sim to its end; return its record after checking rc 0."""
    record_path = tmp_path / 'record.json'
    process = tools.start('mujoco_sim', wait_for_subscribers=1, record_path=str(record_path),
                          joint_states_topic='/test_mujoco_sim/joint_states',
                          imu_topic='/test_mujoco_sim/imu',
                          command_topic='/test_mujoco_sim/commands', **params)
    listener.spin_until(lambda: process.poll() is not None, 60.0, 'mujoco_sim to exit')
    listener.spin_until(lambda: True, 0.0, '')
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:  # what is still on its way
        listener.executor.spin_once(timeout_sec=0.02)
    _, stderr = process.communicate(timeout=5)
    assert process.returncode == 0, stderr
    return json.loads(record_path.read_text())


def test_clock_is_the_physics_time_at_10_hz(tools, listener, tmp_path):
    record = _run(tools, listener, tmp_path, clock_publish_hz=10.0, start_sim_s=2.0,
                  duration_s=2.0)
    sim = np.array(listener.sim_ns, np.int64)
    # Every /clock message went out (reliable, matched before the first step) and each is the
    # physics time of a step: 2 s + 100 steps of 1 ms per message, from step 0.
    assert len(sim) == record['clock_messages'] > 1
    assert np.array_equal(sim, 2 * S + 100 * MS * np.arange(len(sim))), sim
    assert record['publish_period_ms'] == 100.0
    assert record['steps'] // 100 == len(sim) - 1, 'the last message is the last whole 100'
    assert record['sim_s'] == pytest.approx(record['steps'] * 0.001)
    # Joint states (100 Hz of sim time) are stamped on the same physics time.
    stamps = np.array([m.header.stamp.sec * S + m.header.stamp.nanosec
                       for m in listener.joint_states], np.int64)
    assert len(stamps) and np.all((stamps - 2 * S) % (10 * MS) == 0)
    assert listener.joint_states[0].name == ['hinge']
    assert listener.imu and listener.imu[0].header.frame_id == 'imu'
    # Upright and at rest without a command: gravity along the site's z, up.
    assert listener.imu[0].linear_acceleration.z == pytest.approx(9.81, abs=0.05)
    assert record['commands'] == 0 and record['steps_without_command'] == record['steps']
    assert record['tracking_error_rms_rad'] is None, 'no command, no tracking: unknown'


def test_clock_at_every_step_is_each_physics_step(tools, listener, tmp_path):
    record = _run(tools, listener, tmp_path, duration_s=1.0)
    sim = np.array(listener.sim_ns, np.int64)
    assert len(sim) > 1
    assert np.all((sim - S) % MS == 0) and np.all(np.diff(sim) > 0)
    assert sim[-1] <= S + record['steps'] * MS
    assert len(sim) <= record['clock_messages'] == record['steps'] + 1
    if len(sim) == record['clock_messages']:
        assert np.array_equal(sim, S + MS * np.arange(len(sim)))
    bins = record['rtf_100ms']
    assert bins and all(math.isfinite(v) and v > 0 for v in bins)
    # The worst fixed window of the published /clock, as the monitor's analyzer bins it.
    assert 0 < record['rtf_100ms_min'] <= record['rtf_100ms_max']


@pytest.mark.parametrize('params, name', [
    ({'model_path': '/nonexistent/robot.xml'}, 'model_path'),
    ({'target_rtf': -1.0}, 'target_rtf'),
    ({'clock_publish_hz': 5000.0}, 'clock_publish_hz'),
])
def test_invalid_input_is_one_error_line_and_exit_2(tools, params, name):
    result = subprocess.run(tools.command('mujoco_sim', **params), env=tools.env(),
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if 'ERROR' in line]
    assert len(errors) == 1 and name in errors[0], result.stderr
    assert 'Traceback' not in result.stderr


def test_a_model_mujoco_refuses_exits_2_naming_it(tools, tmp_path):
    path = tmp_path / 'broken.xml'
    path.write_text('<mujoco><worldbody><body name="a"><joint type="bogus"/></body></worldbody>'
                    '</mujoco>')
    result = subprocess.run(tools.command('mujoco_sim', model_path=str(path)), env=tools.env(),
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if 'ERROR' in line]
    assert len(errors) == 1 and 'broken.xml' in errors[0], result.stderr


def test_help_lists_every_parameter(tools):
    result = tools.help('mujoco_sim', timeout_s=30)
    assert result.returncode == 0
    for spec in PARAMETERS:
        assert spec.name in result.stdout
