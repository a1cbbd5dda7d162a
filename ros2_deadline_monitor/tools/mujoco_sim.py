"""A real physics simulator in the loop: MuJoCo stepped at the model's timestep, paced to an RTF.

Step ``k`` of the physics is due at wall time ``w0 + k * timestep / target_rtf`` on the
monotonic clock, as sim_clock's steps are (its ``Pacer``): a step later than ``max_lag_ms``
(one step by default) re-anchors the schedule instead of bursting to catch up, so a machine
that cannot keep up shows as an RTF below the target, and the node says so. ``target_rtf`` 0
steps as fast as it can.

After each step the node publishes ``/clock`` from the physics time (``start_sim_s`` plus the
steps times the timestep, in int nanoseconds) every ``clock_publish_hz`` of sim time (0: every
step), ``sensor_msgs/JointState`` of the actuated joints, an ``sensor_msgs/Imu`` where the model
has an accelerometer and a gyro on one site, and the moving bodies on ``/tf`` (when
``tf2_msgs`` is importable), all stamped with the physics time. It applies the latest
``std_msgs/Float64MultiArray`` effort command (one value per actuator, like ros2_control's
forward effort controller) at every step, a zero-order hold, and counts the steps that ran on
a command older than ``command_timeout_ms`` of sim time.

The tracking error and the stale steps count up to the last command: once the controller
stops, the held command lets the model drift, which is no cost of the controller's misses
(the record gives those steps as ``steps_after_last_command``).

At exit it writes its own record (JSON): steps, sim and wall time, the RTF of every 100 ms of
wall time, and the tracking error of the actuated joints against the reference
(``tools/reference.py``), from the physics state itself. MuJoCo is the optional extra ``sim``:
the monitor and ``analyze`` never import this module.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
import math
from pathlib import Path
import sys
import threading
import time
from typing import Any

from geometry_msgs.msg import TransformStamped
import numpy as np
from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64, Float64MultiArray

from ros2_deadline_monitor.analysis.config import check_topic_name, NS_PER_MS, NS_PER_S
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.parameters import ParamSpec
from ros2_deadline_monitor.outputs import format as fmt
from ros2_deadline_monitor.tools.cycle_record import write_json
from ros2_deadline_monitor.tools.pacing import (
    Pacer,
    rtf_between,
    RTF_BIN_NS,
    RtfMeter,
    RtfSince,
    sleep_until,
)
from ros2_deadline_monitor.tools.reference import Reference, TrackingError
from ros2_deadline_monitor.tools.runtime import (
    check_output_path,
    declare_parameters,
    parameter_help,
    run_node,
)
from ros2_deadline_monitor.tools.waiting import wait_for_subscriptions

try:  # tf2_msgs is not on PyPI: without a ROS install (or the test interfaces) no /tf
    from tf2_msgs.msg import TFMessage
except ImportError:  # pragma: no cover - depends on the install
    TFMessage = None

MODELS = Path(__file__).resolve().parent / 'models'
DEFAULT_MODEL = MODELS / 'upright_pendulum.xml'
RECORD_FORMAT = 'ros2_deadline_monitor.mujoco_record'
MAX_RTF_BINS = 1_000_000
"""The record keeps the RTF of at most this many 100 ms windows (27 hours)."""
SLOW_FRACTION = 0.95
"""An RTF below this fraction of the target over a report period is logged as a slowdown."""
SENSOR_ACCELEROMETER = 1
SENSOR_GYRO = 3
OBJ_SITE = 6
TRN_JOINT = 0
JOINT_SLIDE, JOINT_HINGE = 2, 3

PARAMETERS: tuple[ParamSpec, ...] = (
    ParamSpec('model_path', '', 'MJCF model to load; empty for the shipped upright pendulum '
              '(tools/models/upright_pendulum.xml).', read_only=True),
    ParamSpec('target_rtf', 1.0, 'Real time factor to pace the physics to: sim time over wall '
              'time [1]; 0 steps as fast as it can.', 0.0, 1000.0, read_only=True),
    ParamSpec('clock_publish_hz', 0.0, 'Publish /clock this often [Hz] of sim time, in whole '
              "steps (10: Gazebo Classic's default); 0 publishes every step.", 0.0, 1e6,
              read_only=True),
    ParamSpec('joint_state_hz', 100.0, "Publish the actuated joints' JointState this often "
              '[Hz] of sim time, in whole steps; 0 every step.', 0.0, 1e6, read_only=True),
    ParamSpec('imu_hz', 100.0, 'Publish the Imu this often [Hz] of sim time, in whole steps, '
              'where the model has an accelerometer and a gyro on one site; 0 every step.',
              0.0, 1e6, read_only=True),
    ParamSpec('tf_hz', 100.0, 'Publish the moving bodies on /tf this often [Hz] of sim time, '
              'in whole steps; 0 every step.', 0.0, 1e6, read_only=True),
    ParamSpec('start_sim_s', 1.0, 'Sim time of the first /clock message [s]; above 0, since '
              'ROS time 0 means "not set yet" to nodes using sim time.', 0.0, 1e9,
              read_only=True),
    ParamSpec('duration_s', 0.0, 'Stop after this much wall time from the first step [s]; 0 '
              'runs until SIGINT or SIGTERM.', 0.0, 1e6, read_only=True),
    ParamSpec('command_topic', '/effort_controller/commands', 'std_msgs/Float64MultiArray of '
              "efforts, one per actuator in the model's order; the latest is held.",
              read_only=True),
    ParamSpec('joint_states_topic', '/joint_states', 'Topic of the sensor_msgs/JointState.',
              read_only=True),
    ParamSpec('imu_topic', '/imu', 'Topic of the sensor_msgs/Imu.', read_only=True),
    ParamSpec('command_timeout_ms', 15.0, 'A step runs on a stale command when the latest one '
              'arrived more than this long ago in sim time [ms].', 0.001, 1e6, read_only=True),
    ParamSpec('reference_amplitude_rad', 1.0, 'Swing of the reference every actuated joint is '
              'measured against: 0 to this and back [rad or m].', -1e3, 1e3, read_only=True),
    ParamSpec('reference_hz', 2.0, 'Frequency of the reference swing [Hz]; 0 holds it at 0.',
              0.0, 1e3, read_only=True),
    ParamSpec('tracking_settle_s', 0.2, 'Count the tracking error from this long after the '
              'first command [s of sim time], past the start-up transient.', 0.0, 1e6,
              read_only=True),
    ParamSpec('wait_for_subscribers', 0, 'Step nothing until /clock has this many '
              'subscriptions.', 0, 1000, read_only=True),
    ParamSpec('max_lag_ms', 0.0, 'Lateness up to which late steps still run on the old '
              'schedule, a bounded burst [ms]; 0 means one step. Later than that the schedule '
              're-anchors and the lost time shows as a lower RTF.', 0.0, 60000.0,
              read_only=True),
    ParamSpec('rtf_report_period_s', 1.0, 'Period of the achieved RTF on ~/rtf and in the log '
              '(a warning when below the target), on wall (steady) time [s].', 0.01, 3600.0,
              read_only=True),
    ParamSpec('record_path', '', "Write the simulator's own record (JSON) here at exit; "
              'empty for none.', read_only=True),
    ParamSpec('spin_us', 0, 'Sleep until this long before each step is due, then busy-wait '
              'for precision [us]; 0 only sleeps (less CPU, more jitter).', 0, 10000,
              read_only=True),
)


@dataclass(frozen=True)
class SimSettings:
    """Validated parameters in int nanoseconds (steps of the model where rates are given)."""

    model_path: str
    target_rtf: float
    clock_hz: float
    joint_state_hz: float
    imu_hz: float
    tf_hz: float
    start_sim_ns: int
    duration_ns: int
    command_topic: str
    joint_states_topic: str
    imu_topic: str
    command_timeout_ns: int
    reference: Reference
    settle_ns: int
    wait_for_subscribers: int
    max_lag_ns: int
    rtf_report_period_ns: int
    record_path: str
    spin_ns: int


def settings_from_values(values: dict[str, Any]) -> SimSettings:
    """Check parameter values; raise ConfigError naming the parameter."""
    for spec in PARAMETERS:
        value = values[spec.name]
        if spec.low is not None and spec.high is not None and \
                not spec.low <= value <= spec.high:
            raise ConfigError(f'{spec.name} = {value!r} is outside [{spec.low}, {spec.high}]')
    topics = {}
    for name in ('command_topic', 'joint_states_topic', 'imu_topic'):
        try:
            topics[name] = check_topic_name(values[name])
        except ConfigError as err:
            raise ConfigError(f'{name}: {err}') from err
    model_path = str(values['model_path']) or str(DEFAULT_MODEL)
    if not Path(model_path).is_file():
        raise ConfigError(f'model_path: no such file: {model_path!r}')
    return SimSettings(
        model_path=model_path,
        target_rtf=float(values['target_rtf']),
        clock_hz=float(values['clock_publish_hz']),
        joint_state_hz=float(values['joint_state_hz']),
        imu_hz=float(values['imu_hz']),
        tf_hz=float(values['tf_hz']),
        start_sim_ns=round(values['start_sim_s'] * NS_PER_S),
        duration_ns=round(values['duration_s'] * NS_PER_S),
        command_topic=topics['command_topic'],
        joint_states_topic=topics['joint_states_topic'],
        imu_topic=topics['imu_topic'],
        command_timeout_ns=round(values['command_timeout_ms'] * NS_PER_MS),
        reference=Reference(float(values['reference_amplitude_rad']),
                            float(values['reference_hz'])),
        settle_ns=round(values['tracking_settle_s'] * NS_PER_S),
        wait_for_subscribers=int(values['wait_for_subscribers']),
        max_lag_ns=round(values['max_lag_ms'] * NS_PER_MS),
        rtf_report_period_ns=round(values['rtf_report_period_s'] * NS_PER_S),
        record_path=check_output_path('record_path', str(values['record_path'])),
        spin_ns=int(values['spin_us']) * 1000,
    )


def steps_per(name: str, rate_hz: float, timestep_ns: int) -> int:
    """Return the whole steps between publications at ``rate_hz`` of sim time (0 Hz: 1).

    Rounded to the nearest step; a rate faster than the steps is refused, naming ``name``.
    """
    if not rate_hz:
        return 1
    steps = round(NS_PER_S / (rate_hz * timestep_ns))
    if steps < 1:
        raise ConfigError(f'{name} = {rate_hz:g} is faster than the model steps '
                          f'({NS_PER_S / timestep_ns:g} a second of sim time)')
    return steps


def load_model(path: str) -> Any:
    """Load an MJCF (or MJB) model; ConfigError naming the file if MuJoCo refuses it."""
    try:
        import mujoco
    except ImportError as err:
        raise ConfigError(f'MuJoCo is not installed ({err}): pip install mujoco, or the '
                          "package's extra 'sim'") from err
    try:
        if path.endswith('.mjb'):
            return mujoco.MjModel.from_binary_path(path)
        return mujoco.MjModel.from_xml_path(path)
    except (ValueError, mujoco.FatalError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConfigError(f'model_path: MuJoCo could not load {path!r}: {first}') from err


class RtfBins:
    """The RTF of every ``bin_ns`` of wall time since the first step, for the record."""

    def __init__(self, bin_ns: int = RTF_BIN_NS, limit: int = MAX_RTF_BINS) -> None:
        """Start empty; keep at most ``limit`` windows (the first ones)."""
        self.bin_ns = bin_ns
        self.limit = limit
        self.values: list[float] = []
        self._start: tuple[int, int] | None = None

    def add(self, wall_ns: int, sim_ns: int) -> None:
        """Take one (wall, sim) point; closes a window once it spans ``bin_ns``."""
        start = self._start
        if start is None:
            self._start = (wall_ns, sim_ns)
        elif wall_ns - start[0] >= self.bin_ns:
            if len(self.values) < self.limit:
                self.values.append((sim_ns - start[1]) / (wall_ns - start[0]))
            self._start = (wall_ns, sim_ns)


class MujocoSimNode(Node):
    """The simulator node; ``start`` launches the physics thread, ``close`` ends it."""

    def __init__(self, **kwargs: Any) -> None:
        """Declare and check parameters, load the model (ConfigError if either is invalid)."""
        super().__init__('mujoco_sim', **kwargs)
        s = self.settings = settings_from_values(declare_parameters(self, PARAMETERS))
        self.model = load_model(s.model_path)
        import mujoco
        self._mj = mujoco
        self.data = mujoco.MjData(self.model)
        m = self.model
        self.timestep_ns = round(m.opt.timestep * NS_PER_S)
        if self.timestep_ns <= 0:
            raise ConfigError(f"model_path: the model's timestep {m.opt.timestep!r} s is not "
                              'positive')
        self.clock_every = steps_per('clock_publish_hz', s.clock_hz, self.timestep_ns)
        self.joint_state_every = steps_per('joint_state_hz', s.joint_state_hz, self.timestep_ns)
        self.imu_every = steps_per('imu_hz', s.imu_hz, self.timestep_ns)
        self.tf_every = steps_per('tf_hz', s.tf_hz, self.timestep_ns)
        if s.target_rtf and self.timestep_ns / s.target_rtf < 1000:
            raise ConfigError(f'target_rtf = {s.target_rtf:g}: {self.timestep_ns / s.target_rtf:g}'
                              ' ns of wall time per step is too short to pace (minimum 1 us)')
        if self.get_parameter('use_sim_time').value:
            self.get_logger().warning('use_sim_time is ignored: mujoco_sim paces the physics on '
                                      'the monotonic clock and publishes /clock itself')
        self._joints = self._actuated_joints()
        self._imu = self._imu_sensors()
        self._bodies = [b for b in range(1, m.nbody) if self._moves(b)]
        self._quat = np.zeros(4)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._clock_pub = self.create_publisher(Clock, '/clock', reliable)
        self._clock_msg = Clock()
        self._joint_pub = self.create_publisher(JointState, s.joint_states_topic, reliable)
        self._imu_pub = self.create_publisher(Imu, s.imu_topic, reliable) \
            if self._imu is not None else None
        self._tf_pub = self.create_publisher(TFMessage, '/tf', QoSProfile(depth=100)) \
            if TFMessage is not None and self._bodies else None
        if TFMessage is None:
            self.get_logger().warning('tf2_msgs is not installed: no /tf')
        self._rtf_pub = self.create_publisher(Float64, '~/rtf', 10)
        self.create_subscription(Float64MultiArray, s.command_topic, self._on_command, reliable)
        self._steady = RosClock(clock_type=ClockType.STEADY_TIME)
        self._report_timer = self.create_timer(s.rtf_report_period_ns / NS_PER_S, self._report,
                                               clock=self._steady)
        self.meter = RtfMeter()
        self.bins = RtfBins()
        self.error = TrackingError()
        self._pending_error = TrackingError()  # since the last command: kept if another comes
        self._pending_stale = 0
        self.steps = 0
        self.commands = 0
        self.commands_rejected = 0
        self.stale_steps = 0
        self.steps_without_command = 0
        self.slow_reports = 0
        self.clock_messages = 0
        self._first_command_step: int | None = None
        self._last_command_step: int | None = None
        self._command: tuple[int, list[float]] | None = None  # (sequence, efforts)
        self._rejected_lengths: set[int] = set()
        self.pacer: Pacer | None = None
        self._first: tuple[int, int] | None = None
        self._last: tuple[int, int] | None = None
        self.finished = threading.Event()
        self._finished_guard = self.create_guard_condition(lambda: None)
        self._stop = threading.Event()
        self._since_report = RtfSince()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name='mujoco_physics', daemon=True)

    # -- the model -------------------------------------------------------------------------

    def _actuated_joints(self) -> list[tuple[str, int, int, int]]:
        """Return (name, actuator, qpos address, dof address) of each actuated hinge or slide."""
        m, mj = self.model, self._mj
        joints = []
        for actuator in range(m.nu):
            if m.actuator_trntype[actuator] != TRN_JOINT:
                continue
            joint = int(m.actuator_trnid[actuator][0])
            if m.jnt_type[joint] not in (JOINT_SLIDE, JOINT_HINGE):
                continue
            name = mj.mj_id2name(m, mj.mjtObj.mjOBJ_JOINT, joint) or f'joint{joint}'
            joints.append((name, actuator, int(m.jnt_qposadr[joint]), int(m.jnt_dofadr[joint])))
        return joints

    def _imu_sensors(self) -> tuple[str, int, int, int] | None:
        """Return (site name, site, accelerometer, gyro address) of the first site with both."""
        m, mj = self.model, self._mj
        found: dict[int, dict[int, int]] = {}
        for sensor in range(m.nsensor):
            if m.sensor_objtype[sensor] == OBJ_SITE and \
                    m.sensor_type[sensor] in (SENSOR_ACCELEROMETER, SENSOR_GYRO):
                site = int(m.sensor_objid[sensor])
                found.setdefault(site, {})[int(m.sensor_type[sensor])] = \
                    int(m.sensor_adr[sensor])
        for site, kinds in sorted(found.items()):
            if SENSOR_ACCELEROMETER in kinds and SENSOR_GYRO in kinds:
                name = mj.mj_id2name(m, mj.mjtObj.mjOBJ_SITE, site) or f'site{site}'
                return name, site, kinds[SENSOR_ACCELEROMETER], kinds[SENSOR_GYRO]
        return None

    def _moves(self, body: int) -> bool:
        """Return True if ``body`` or an ancestor has a joint (so its pose can change)."""
        m = self.model
        while body > 0:
            if m.body_jntnum[body] > 0:
                return True
            body = int(m.body_parentid[body])
        return False

    def _body_name(self, body: int) -> str:
        mj = self._mj
        return 'world' if body == 0 else (
            mj.mj_id2name(self.model, mj.mjtObj.mjOBJ_BODY, body) or f'body{body}')

    # -- running -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the physics thread (after ``wait_for_subscribers`` subscriptions on /clock)."""
        s, m = self.settings, self.model
        rtf = f'target RTF {s.target_rtf:g}' if s.target_rtf else 'as fast as it can'
        self.get_logger().info(
            f'{Path(s.model_path).name}: {m.nu} actuators, {len(self._joints)} actuated joints, '
            f'step {self.timestep_ns / NS_PER_MS:g} ms, {rtf}, /clock every '
            f'{self.clock_every} step(s)'
            + (f', IMU on site {self._imu[0]}' if self._imu else '')
            + (f', for {s.duration_ns / NS_PER_S:g} s' if s.duration_ns else ''))
        self._thread.start()

    def _on_command(self, msg: Any) -> None:
        efforts = list(msg.data)
        if len(efforts) != self.model.nu:
            self.commands_rejected += 1
            if len(efforts) not in self._rejected_lengths:
                self._rejected_lengths.add(len(efforts))
                self.get_logger().warning(
                    f'{self.settings.command_topic}: ignored a command of {len(efforts)} '
                    f'values: the model has {self.model.nu} actuators')
            return
        sequence = self._command[0] + 1 if self._command is not None else 1
        self._command = (sequence, efforts)  # one assignment: the physics thread sees either

    def _run(self) -> None:
        try:
            if wait_for_subscriptions(self._clock_pub, '/clock',
                                      self.settings.wait_for_subscribers, self._stop,
                                      self.get_logger()):
                self._step_loop()
        except Exception as err:  # noqa: BLE001 - the context may be gone under us
            if self.context.ok():
                self.get_logger().error(f'physics stopped: {err!r}')
        finally:
            self.finished.set()
            if self.context.ok():
                self._finished_guard.trigger()

    def _step_loop(self) -> None:
        s, m, d, mj = self.settings, self.model, self.data, self._mj
        step_wall_ns = self.timestep_ns / s.target_rtf if s.target_rtf else 0.0
        applied = 0  # sequence of the command in d.ctrl
        command_step = 0
        now = time.monotonic_ns()
        self.pacer = pacer = Pacer(step_wall_ns, now, s.max_lag_ns) if s.target_rtf else None
        mj.mj_forward(m, d)  # the sensors of step 0 (mj_step computes them for later steps)
        self._publish(0, now)
        first_ns = now
        while not self._stop.is_set():
            step = self.steps + 1
            if pacer is not None and not sleep_until(pacer.due_ns(step), s.spin_ns, self._stop):
                break
            now = time.monotonic_ns()
            if s.duration_ns and now - first_ns >= s.duration_ns:
                break
            if pacer is not None:
                pacer.publishing(step, now)
            command = self._command
            if command is not None and command[0] != applied:
                applied = command[0]
                d.ctrl[:] = command[1]
                command_step = self.steps
                self.commands += 1
                self.error.merge(self._pending_error)
                self._pending_error = TrackingError()
                self.stale_steps += self._pending_stale
                self._pending_stale = 0
                if self._first_command_step is None:
                    self._first_command_step = self.steps
                self._last_command_step = self.steps
            if command is None:
                self.steps_without_command += 1
            elif (self.steps - command_step) * self.timestep_ns > s.command_timeout_ns:
                self._pending_stale += 1
            mj.mj_step(m, d)
            self.steps = step
            self._publish(step, time.monotonic_ns())

    def _publish(self, step: int, wall_ns: int) -> None:
        """Publish what is due after ``step`` and account for it (the physics thread)."""
        s = self.settings
        sim_ns = s.start_sim_ns + step * self.timestep_ns
        if self._first is None:
            self._first = (wall_ns, sim_ns)
        self._last = (wall_ns, sim_ns)
        self.bins.add(wall_ns, sim_ns)
        self._track(step, sim_ns)
        if step % self.clock_every == 0:
            msg = self._clock_msg
            msg.clock.sec, msg.clock.nanosec = divmod(sim_ns, NS_PER_S)
            self._clock_pub.publish(msg)
            self.meter.add(wall_ns, sim_ns)
            self.clock_messages += 1
        if self._joints and step % self.joint_state_every == 0:
            self._publish_joints(sim_ns)
        if self._imu_pub is not None and step % self.imu_every == 0:
            self._publish_imu(sim_ns)
        if self._tf_pub is not None and step % self.tf_every == 0:
            self._publish_tf(sim_ns)

    def _track(self, step: int, sim_ns: int) -> None:
        first = self._first_command_step
        if first is None or (step - first) * self.timestep_ns < self.settings.settle_ns:
            return
        target, _, _ = self.settings.reference.at(sim_ns)
        qpos = self.data.qpos
        for _, _, address, _ in self._joints:
            self._pending_error.add(target - float(qpos[address]), sim_ns)

    def _publish_joints(self, sim_ns: int) -> None:
        d = self.data
        msg = JointState()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(sim_ns, NS_PER_S)
        msg.name = [name for name, _, _, _ in self._joints]
        msg.position = [float(d.qpos[q]) for _, _, q, _ in self._joints]
        msg.velocity = [float(d.qvel[v]) for _, _, _, v in self._joints]
        msg.effort = [float(d.actuator_force[a]) for _, a, _, _ in self._joints]
        self._joint_pub.publish(msg)

    def _publish_imu(self, sim_ns: int) -> None:
        name, site, accel, gyro = self._imu
        d, mj = self.data, self._mj
        msg = Imu()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(sim_ns, NS_PER_S)
        msg.header.frame_id = name
        quat = self._quat
        mj.mju_mat2Quat(quat, d.site_xmat[site])
        msg.orientation.w, msg.orientation.x, msg.orientation.y, msg.orientation.z = (
            float(v) for v in quat)
        sensors = d.sensordata
        msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z = (
            float(v) for v in sensors[accel:accel + 3])
        msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = (
            float(v) for v in sensors[gyro:gyro + 3])
        self._imu_pub.publish(msg)

    def _publish_tf(self, sim_ns: int) -> None:
        m, d, mj = self.model, self.data, self._mj
        transforms = []
        inverse, relative, offset = self._quat, np.zeros(4), np.zeros(3)
        for body in self._bodies:
            parent = int(m.body_parentid[body])
            mj.mju_negQuat(inverse, d.xquat[parent])
            mj.mju_mulQuat(relative, inverse, d.xquat[body])
            mj.mju_rotVecQuat(offset, d.xpos[body] - d.xpos[parent], inverse)
            transform = TransformStamped()
            transform.header.stamp.sec, transform.header.stamp.nanosec = divmod(sim_ns, NS_PER_S)
            transform.header.frame_id = self._body_name(parent)
            transform.child_frame_id = self._body_name(body)
            t = transform.transform
            t.translation.x, t.translation.y, t.translation.z = (float(v) for v in offset)
            t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z = (float(v) for v in relative)
            transforms.append(transform)
        self._tf_pub.publish(TFMessage(transforms=transforms))

    def _report(self) -> None:
        """Publish and log the RTF since the previous report; warn when below the target."""
        self.meter.fold()
        since = self._since_report.take(self._first, self._last)
        if since is None:
            return
        rtf, wall_s = since
        self._rtf_pub.publish(Float64(data=rtf))
        target = self.settings.target_rtf
        text = (f'RTF {rtf:.4f} over the last {wall_s:.2f} s '
                f'({_fmt(self.rtf)} since start, target {target:g}), {self.steps} steps, '
                f'{self.stale_steps} on a stale command')
        if target and rtf < SLOW_FRACTION * target:
            self.slow_reports += 1
            self.get_logger().warning(f'running slower than the target: {text}; the machine '
                                      'cannot keep up, and the physics does not burst to '
                                      'catch up')
        else:
            self.get_logger().info(text)

    @property
    def rtf(self) -> float:
        """Sim time over wall time from the first step to the last (NaN before two)."""
        return rtf_between(self._first, self._last)

    def record(self) -> dict[str, Any]:
        """Return the simulator's own record (units in the keys; null when unknown)."""
        s = self.settings
        first, last = self._first, self._last
        wall_ns = last[0] - first[0] if first and last else 0
        sim_ns = self.steps * self.timestep_ns
        bins = self.bins.values
        return {
            'format': RECORD_FORMAT, 'version': 1,
            'model': s.model_path, 'timestep_ms': self.timestep_ns / NS_PER_MS,
            'target_rtf': s.target_rtf, 'steps': self.steps,
            'start_sim_s': s.start_sim_ns / NS_PER_S,
            'sim_s': sim_ns / NS_PER_S, 'wall_s': wall_ns / NS_PER_S,
            'rtf': _json_float(self.rtf),
            'rtf_100ms': bins,
            # The worst and best fixed 100 ms windows of the /clock it published, by the
            # monitor's own analyzer: the same figures the monitor gives from the same stream.
            'rtf_100ms_min': _json_float(self.meter.bin_min),
            'rtf_100ms_max': _json_float(self.meter.bin_max),
            'slow_reports': self.slow_reports,
            'reanchors': self.pacer.reanchors if self.pacer is not None else 0,
            'clock_messages': self.clock_messages,
            'publish_period_ms': self.clock_every * self.timestep_ns / NS_PER_MS,
            'commands': self.commands, 'commands_rejected': self.commands_rejected,
            'steps_without_command': self.steps_without_command,
            'stale_steps': self.stale_steps,
            'steps_after_last_command': self.steps - self._last_command_step
            if self._last_command_step is not None else 0,
            'command_timeout_ms': s.command_timeout_ns / NS_PER_MS,
            'tracking_joints': [name for name, _, _, _ in self._joints],
            'tracking_samples': self.error.samples,
            'tracking_error_rms_rad': _json_float(self.error.rms),
            'tracking_error_max_rad': _json_float(self.error.max_abs),
            'tracking_error_max_at_s': None if self.error.max_at_ns is None
            else self.error.max_at_ns / NS_PER_S,
            'reference': {'amplitude_rad': s.reference.amplitude_rad,
                          'frequency_hz': s.reference.frequency_hz},
        }

    def close(self) -> None:
        """Stop the physics thread and write the record; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)
        self.meter.fold()
        record = self.record()
        self.get_logger().info(
            f'{record["steps"]} steps: {record["sim_s"]:g} s sim in {record["wall_s"]:.3f} s '
            f'wall, RTF {_fmt(record["rtf"])}, worst 100 ms {_fmt(record["rtf_100ms_min"])}, '
            f'{record["stale_steps"]} steps on a stale command, tracking error RMS '
            f'{_fmt(record["tracking_error_rms_rad"])} max '
            f'{_fmt(record["tracking_error_max_rad"])}')
        if self.settings.record_path:
            write_json(self.settings.record_path, record)


def _json_float(value: float) -> float | None:
    """Return a finite float as it is, NaN as None (null: unknown)."""
    return None if value is None or math.isnan(value) else float(value)


def build_parser() -> argparse.ArgumentParser:
    """Return the parser for the (ROS-free) command line: only --help, listing parameters."""
    return argparse.ArgumentParser(
        prog='mujoco_sim',
        description='Step a MuJoCo model paced to a target real time factor, publishing /clock, '
                    'joint states, IMU and /tf, and holding the latest effort command.',
        epilog=parameter_help(PARAMETERS),
        formatter_class=argparse.RawDescriptionHelpFormatter)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``mujoco_sim``: none (its settings are ROS parameters)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the simulator until ``duration_s``, SIGINT or SIGTERM; 2 for invalid parameters."""
    return run_node('mujoco_sim', build_parser(), MujocoSimNode, argv)


_fmt = partial(fmt.number, digits=4, missing='-')
if __name__ == '__main__':
    sys.exit(main())
