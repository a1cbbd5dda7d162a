"""demo_controller: its messages against its own cycle record, over real DDS.

The controller (and, for sim time, sim_clock) run as subprocesses of the same package this
test imported; the test subscribes in a fresh Context. Counts and stamps are compared exactly;
the only time check is that a stalled cycle lasted at least the sleep it contained.
"""

from __future__ import annotations

from collections.abc import Iterator
import json
from pathlib import Path
import signal
import subprocess
from typing import Any

import numpy as np
import pytest
from tool_fixtures import ListeningNode  # test/plugins

from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.tools.cycle_record import CycleRecord
from ros2_deadline_monitor.tools.demo_controller import (
    is_stall_cycle,
    PARAMETERS,
    settings_from_values,
)
from ros2_deadline_monitor.tools.waiting import WARN_AFTER_S

MS = 1_000_000
S = 1_000_000_000
TOPIC = 'demo_test/cmd'
"""Relative: in the test's namespace, for the controller and the subscriber alike."""


def test_stall_rule_is_the_reference_measurements():
    assert [i for i in range(200) if is_stall_cycle(i, 50)] == [24, 74, 124, 174]
    assert [i for i in range(30) if is_stall_cycle(i, 10)] == [4, 14, 24]
    assert all(is_stall_cycle(i, 1) for i in range(5))
    assert not any(is_stall_cycle(i, 0) for i in range(100))


def _values(**changes: Any) -> dict[str, Any]:
    values = {spec.name: spec.default for spec in PARAMETERS}
    values.update(changes)
    return values


def test_settings_convert_units():
    settings = settings_from_values(_values(rate_hz=250.0, stall_ms=22.0, duration_s=1.5))
    assert settings.period_ns == 4 * MS
    assert settings.stall_ns == 22 * MS
    assert settings.duration_ns == 1500 * MS


def test_pd_settings_hold_the_law_and_the_reference():
    settings = settings_from_values(_values(control='pd', kp=50.0, kd=2.0,
                                            reference_amplitude_rad=0.5, reference_hz=1.0))
    assert settings.control == 'pd'
    assert (settings.law.kp, settings.law.kd) == (50.0, 2.0)
    assert settings.reference.at(500 * MS)[0] == pytest.approx(0.5)
    assert settings_from_values(_values()).control == 'none', 'the open loop stays the default'


@pytest.mark.parametrize('changes, name', [
    ({'reliability': 'sometimes'}, 'reliability'),
    ({'topic': 'not a topic'}, 'topic'),
    ({'rate_hz': 0.0}, 'rate_hz'),
    ({'record_path': '/nonexistent/dir/record.json'}, 'record_path'),
    ({'control': 'lqr'}, 'control'),
    ({'command_topic': 'two words'}, 'command_topic'),
    ({'joint_states_topic': ''}, 'joint_states_topic'),
    ({'kp': -1.0}, 'kp'),
])
def test_settings_reject_invalid_values_naming_the_parameter(changes, name):
    with pytest.raises(ConfigError, match=name):
        settings_from_values(_values(**changes))


class Receiver(ListeningNode):
    """A test node keeping the header of every controller message, in arrival order."""

    def __init__(self, context: Any) -> None:
        from geometry_msgs.msg import TwistStamped
        from rclpy.qos import QoSProfile

        super().__init__(context, 'demo_controller_receiver')
        self.stamps: list[int] = []
        self.frames: set[str] = set()
        self.node.create_subscription(TwistStamped, TOPIC, self._on_message,
                                      QoSProfile(depth=1000))

    def _on_message(self, msg: Any) -> None:
        self.stamps.append(msg.header.stamp.sec * S + msg.header.stamp.nanosec)
        self.frames.add(msg.header.frame_id)


@pytest.fixture
def receiver(ros_context: Any) -> Iterator[Receiver]:
    node = Receiver(ros_context)
    yield node
    node.close()


def _run_controller(tools: Any, receiver: Receiver,
                    record_path: Path, **params: Any) -> CycleRecord:
    """Run the controller to its end; return its record once every message is in."""
    process = tools.start('demo_controller', topic=TOPIC, wait_for_subscribers=1,
                          record_path=str(record_path), **params)
    receiver.spin_until(lambda: process.poll() is not None, 15.0, 'demo_controller to exit')
    _, stderr = process.communicate(timeout=5)
    assert process.returncode == 0, stderr
    record = CycleRecord.load(record_path)
    receiver.spin_until(lambda: len(receiver.stamps) >= len(record), 5.0,
                        f'{len(record)} messages (have {len(receiver.stamps)})')
    return record


def _check_messages_match_record(receiver: Receiver, record: CycleRecord,
                                 stall_ns: int) -> None:
    assert len(receiver.stamps) == len(record)
    assert np.array_equal(np.array(receiver.stamps, np.int64), record.start_timer_ns)
    assert receiver.frames == {'demo'}
    stalled = record.injected
    assert np.all(record.end_mono_ns[stalled] - record.start_mono_ns[stalled] >= stall_ns)
    indices = np.flatnonzero(stalled)
    assert indices.tolist() == [i for i in range(len(record)) if is_stall_cycle(i, 10)]


def test_messages_match_the_record_on_wall_time(tools, receiver, tmp_path):
    record = _run_controller(tools, receiver, tmp_path / 'cycles.json', rate_hz=100.0,
                             stall_ms=15.0, stall_every=10, duration_s=1.5)
    assert record.timer_clock == 'wall'
    assert record.period_ns == 10 * MS
    assert len(record) > 20
    _check_messages_match_record(receiver, record, 15 * MS)
    # On wall time the timer clock is the system clock: a stall shows on it too.
    stalled = record.injected
    assert np.all(record.end_timer_ns[stalled] - record.start_timer_ns[stalled] >= 15 * MS)


def test_messages_match_the_record_on_sim_time(tools, receiver, tmp_path):
    summary_path = tmp_path / 'sim_clock.json'
    clock = tools.start('sim_clock', step_ms=1.0, start_sim_s=5.0, wait_for_subscribers=1,
                        summary_path=str(summary_path))
    record = _run_controller(tools, receiver, tmp_path / 'cycles.json', use_sim_time=True,
                             rate_hz=100.0, stall_ms=15.0, stall_every=10, duration_s=1.5)
    clock.send_signal(signal.SIGTERM)
    _, stderr = clock.communicate(timeout=10)
    assert clock.returncode == 0, stderr
    summary = json.loads(summary_path.read_text())
    assert record.timer_clock == 'sim'
    assert len(record) > 0
    _check_messages_match_record(receiver, record, 15 * MS)
    starts = record.start_timer_ns
    assert np.all(starts >= 5 * S)
    assert np.all(starts <= 5 * S + round(summary['sim_s'] * S))
    assert np.all((starts - 5 * S) % MS == 0), 'ROS time is always a /clock value'
    assert np.all(np.diff(starts) > 0)


def test_invalid_parameter_exits_2_naming_it(tools):
    result = subprocess.run(tools.command('demo_controller', reliability='sometimes'),
                            env=tools.env(), capture_output=True, text=True, timeout=15)
    assert result.returncode == 2, result.stderr
    assert 'ERROR' in result.stderr
    assert 'reliability' in result.stderr


def test_a_start_that_hangs_says_at_warn_what_it_waits_for(tools, tmp_path):
    # Nobody subscribes to this topic. The demo's processes log at WARN: the warning is what
    # says which of the controller's waits hung (here at INFO, so the first line shows too).
    log = tmp_path / 'controller.log'
    process = tools.start_logging('demo_controller', log, topic='/nobody/listens',
                                  wait_for_subscribers=1)
    wait = '1 subscription(s) on /nobody/listens'
    text = tools.wait_for_log(log, f'still waiting for {wait} after', WARN_AFTER_S + 15)
    assert f']: waiting for {wait}' in text.split('[INFO] [', 1)[1]
    assert f']: still waiting for {wait} after' in text.split('[WARN] [', 1)[1]
    assert 'cycles at' not in text
    assert process.poll() is None, text
    # What run_phase does to a controller that hangs: every thread's stack, and it runs on.
    process.send_signal(signal.SIGUSR1)
    # faulthandler writes the stacks frame by frame, the main thread's outermost frame
    # ('<module>') last of it: wait for that, not for the first line (read between the two,
    # the log held only that line). Where in its spin loop the signal found the main thread
    # (inside spin_once, or at the loop's condition on a loaded machine) is chance.
    text = tools.wait_for_log(log, 'in <module>', 15.0)
    assert '(most recent call first)' in text, text
    assert 'in run_node' in text, text
    assert process.poll() is None, text
