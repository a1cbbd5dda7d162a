"""A simulator stand-in: publishes /clock in fixed sim steps paced to a target RTF.

Step ``k`` carries sim time ``start_sim_s + k * step`` and is due at wall time
``w0 + k * step / target_rtf`` on the monotonic clock. With ``publish_rate_hz`` (Gazebo's
``publish_rate``) sim time still advances in whole steps on that schedule but only the step
current at each publication goes out: publication ``n`` carries step
``floor(n * target_rtf / (publish_rate_hz * step))``, so ``step_ms:=1 publish_rate_hz:=10``
publishes /clock 100 ms of sim time apart at RTF 1, as Gazebo Classic does by default.

A publication late by more than one publication interval (or ``max_lag_ms``) does not trigger
a burst to catch up: the schedule re-anchors at the late step (``w0`` moves), so a slowdown
stays visible as a lower RTF, as in a real simulator. Injected stalls freeze /clock for a
given wall time, then the schedule re-anchors the same way.

Pacing runs in its own thread on the monotonic clock, never on an rclpy timer: the node's own
ROS clock plays no part in it. The RTF the node actually achieved (sim time advanced over wall
time between its own publications) is published on ``~/rtf`` and written to a JSON summary at
exit, so a demo can put the publisher's RTF next to the deadline misses it did not reveal.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
import math
import sys
import threading
import time
from typing import Any

from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Float64

from ros2_deadline_monitor.analysis.config import NS_PER_MS, NS_PER_S
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.parameters import ParamSpec
from ros2_deadline_monitor.outputs import format as fmt
from ros2_deadline_monitor.tools.cycle_record import write_json
from ros2_deadline_monitor.tools.pacing import Pacer, RtfMeter, RtfSince, sleep_until
from ros2_deadline_monitor.tools.runtime import (
    check_output_path,
    declare_parameters,
    parameter_help,
    run_node,
)
from ros2_deadline_monitor.tools.waiting import wait_for_subscriptions

# Every parameter is read only: each one shapes the whole run.
PARAMETERS: tuple[ParamSpec, ...] = (
    ParamSpec('step_ms', 1.0, 'Sim time advanced per /clock message [ms].', 0.001, 1000.0,
              read_only=True),
    ParamSpec('target_rtf', 1.0, 'Real time factor to pace to: sim time over wall time [1].',
              0.001, 1000.0, read_only=True),
    ParamSpec('publish_rate_hz', 0.0, 'Publish /clock at this rate [Hz] of wall time at the '
              "target RTF, apart from the step (Gazebo's publish_rate): sim time advances in "
              'whole steps, each message carries the current one, so messages are '
              'target_rtf / publish_rate_hz of sim time apart (in whole steps, rounded down). '
              '0 publishes every step; at most one message per step.', 0.0, 1e6,
              read_only=True),
    ParamSpec('start_sim_s', 1.0, 'Sim time of the first /clock message [s]; above 0, since '
              'ROS time 0 means "not set yet" to nodes using sim time.', 0.0, 1e9,
              read_only=True),
    ParamSpec('duration_s', 0.0, 'Stop after this much wall time from the first message [s]; '
              '0 runs until SIGINT or SIGTERM.', 0.0, 1e6, read_only=True),
    ParamSpec('stall_ms', 0.0, 'Length of each injected stall: /clock frozen for this wall '
              'time [ms].', 0.0, 60000.0, read_only=True),
    ParamSpec('stall_every_s', 0.0, 'Inject a stall every this much wall time after the first '
              'message [s]; 0 never.', 0.0, 1e6, read_only=True),
    ParamSpec('stall_at_s', [], 'Also inject a stall at each of these wall times after the '
              'first message [s] (a list of numbers).', read_only=True),
    ParamSpec('max_lag_ms', 0.0, 'Lateness up to which late steps are still published on the '
              'old schedule, a bounded burst [ms]; 0 means one publication interval (one step '
              'unless publish_rate_hz). Later than that the schedule re-anchors and the lost '
              'time shows as a lower RTF.', 0.0, 60000.0, read_only=True),
    ParamSpec('wait_for_subscribers', 0, 'Publish nothing until /clock has this many '
              'subscriptions.', 0, 1000, read_only=True),
    ParamSpec('rtf_report_period_s', 1.0, 'Period of the achieved RTF on ~/rtf and in the log, '
              'on wall (steady) time [s].', 0.01, 3600.0, read_only=True),
    ParamSpec('summary_path', '', 'Write a JSON summary of the achieved RTF here at exit; '
              'empty for none.', read_only=True),
    ParamSpec('spin_us', 200, 'Sleep until this long before each step is due, then busy-wait '
              'for precision [us]; 0 only sleeps (less CPU, more jitter).', 0, 10000,
              read_only=True),
)


@dataclass(frozen=True)
class SimClockSettings:
    """Validated parameters in int nanoseconds; floats only where they are ratios."""

    step_ns: int = 1_000_000
    target_rtf: float = 1.0
    steps_per_publish: Fraction = Fraction(1)
    start_sim_ns: int = NS_PER_S
    duration_ns: int = 0
    stall_ns: int = 0
    stall_every_ns: int = 0
    stall_at_ns: tuple[int, ...] = ()
    max_lag_ns: int = 0
    wait_for_subscribers: int = 0
    rtf_report_period_ns: int = NS_PER_S
    summary_path: str = ''
    spin_ns: int = 200_000

    @property
    def step_wall_ns(self) -> float:
        """Wall time between two steps at the target RTF."""
        return self.step_ns / self.target_rtf

    @property
    def publish_wall_ns(self) -> float:
        """Wall time between two publications at the target RTF."""
        return float(self.steps_per_publish * self.step_ns) / self.target_rtf

    @property
    def lag_tolerance_ns(self) -> float:
        """Lateness of a publication beyond which the schedule re-anchors."""
        return max(self.max_lag_ns, self.publish_wall_ns)

    def step_of(self, publication: int) -> int:
        """Return the step (from 0) that publication ``publication`` (from 0) carries."""
        return math.floor(publication * self.steps_per_publish)

    @property
    def stalls_enabled(self) -> bool:
        """True when any stall is scheduled and it has a length."""
        return self.stall_ns > 0 and (self.stall_every_ns > 0 or bool(self.stall_at_ns))


def settings_from_values(values: dict[str, Any]) -> SimClockSettings:
    """Check parameter values beyond their ranges; raise ConfigError naming the parameter."""
    for spec in PARAMETERS:
        value = values[spec.name]
        if spec.low is not None and spec.high is not None and \
                not spec.low <= value <= spec.high:
            raise ConfigError(f'{spec.name} = {value!r} is outside [{spec.low}, {spec.high}]')
    step_ns = round(values['step_ms'] * NS_PER_MS)
    stall_ns = round(values['stall_ms'] * NS_PER_MS)
    stall_every_ns = round(values['stall_every_s'] * NS_PER_S)
    stall_at_ns = tuple(sorted(round(s * NS_PER_S) for s in _seconds_list(values['stall_at_s'])))
    if stall_every_ns and stall_ns >= stall_every_ns:
        raise ConfigError(f'stall_ms = {values["stall_ms"]} must be shorter than stall_every_s '
                          f'= {values["stall_every_s"]} s, or /clock never runs')
    if step_ns / values['target_rtf'] < 1000:
        raise ConfigError(f'step_ms / target_rtf = {step_ns / values["target_rtf"] / 1e6:g} ms '
                          'per step is too short to pace (minimum 1 us)')
    return SimClockSettings(
        step_ns=step_ns,
        target_rtf=float(values['target_rtf']),
        steps_per_publish=_steps_per_publish(values, step_ns),
        start_sim_ns=round(values['start_sim_s'] * NS_PER_S),
        duration_ns=round(values['duration_s'] * NS_PER_S),
        stall_ns=stall_ns,
        stall_every_ns=stall_every_ns,
        stall_at_ns=stall_at_ns,
        max_lag_ns=round(values['max_lag_ms'] * NS_PER_MS),
        wait_for_subscribers=int(values['wait_for_subscribers']),
        rtf_report_period_ns=round(values['rtf_report_period_s'] * NS_PER_S),
        summary_path=check_output_path('summary_path', str(values['summary_path'])),
        spin_ns=int(values['spin_us']) * 1000,
    )


def _steps_per_publish(values: dict[str, Any], step_ns: int) -> Fraction:
    """Return the steps between publications, exact for the decimal values the user wrote."""
    rate_hz = values['publish_rate_hz']
    if not rate_hz:
        return Fraction(1)
    # From the decimal text of each float: 0.3 is 3/10, so 0.3 s of sim is 300 whole 1 ms
    # steps, not 299 and a bit.
    steps = (Fraction(repr(float(values['target_rtf']))) * NS_PER_S
             / (Fraction(repr(float(rate_hz))) * step_ns))
    if steps < 1:
        step_rate_hz = float(values['target_rtf']) * NS_PER_S / step_ns
        raise ConfigError(f'publish_rate_hz = {rate_hz:g} is faster than the steps: step_ms = '
                          f'{values["step_ms"]:g} at target_rtf = {values["target_rtf"]:g} '
                          f'makes {step_rate_hz:g} steps a second, and each step is published '
                          'at most once')
    return steps


def _seconds_list(value: Any) -> list[float]:
    """Accept a list of numbers (or one number, or nothing) as wall times in seconds."""
    if value is None:
        return []
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, float)) \
                or not math.isfinite(item) or item < 0:
            raise ConfigError(f'stall_at_s must be a list of seconds >= 0, got {value!r}')
    return [float(item) for item in items]


class StallPlan:
    """Which moments (wall ns after the first message) get an injected stall."""

    def __init__(self, every_ns: int = 0, at_ns: Sequence[int] = ()) -> None:
        """Stall every ``every_ns`` (0 never) and at each of ``at_ns``."""
        self.every_ns = every_ns
        self._next_every = every_ns if every_ns > 0 else None
        self._at = sorted(at_ns, reverse=True)

    def due(self, elapsed_ns: int) -> bool:
        """Return True, once per scheduled moment, when one is at or before ``elapsed_ns``."""
        if self._at and self._at[-1] <= elapsed_ns:
            self._at.pop()
            return True
        if self._next_every is not None and self._next_every <= elapsed_ns:
            self._next_every = (elapsed_ns // self.every_ns + 1) * self.every_ns
            return True
        return False


def summary_of(settings: SimClockSettings, meter: RtfMeter, stalls: int,
               reanchors: int) -> dict[str, Any]:
    """Return the JSON summary (times in the units their keys name; null when unknown)."""
    first, last = meter.first, meter.last
    steps = 0 if first is None or last is None else (last[1] - first[1]) // settings.step_ns
    wall_ns = 0 if first is None or last is None else last[0] - first[0]
    return {
        'target_rtf': settings.target_rtf,
        'step_ms': settings.step_ns / NS_PER_MS,
        'publish_period_ms': float(settings.steps_per_publish * settings.step_ns) / NS_PER_MS,
        'start_sim_s': settings.start_sim_ns / NS_PER_S,
        'messages': meter.points,
        'steps': steps,
        'wall_s': wall_ns / NS_PER_S,
        'sim_s': steps * settings.step_ns / NS_PER_S,
        'rtf': _finite(meter.rtf),
        'rtf_100ms_min': _finite(meter.bin_min),
        'rtf_100ms_max': _finite(meter.bin_max),
        'rtf_100ms_min_at_s': None if meter.bin_min_at_ns is None or first is None
        else (meter.bin_min_at_ns - first[0]) / NS_PER_S,
        'stalls': stalls,
        'stall_ms': settings.stall_ns / NS_PER_MS,
        'reanchors': reanchors,
        'max_lag_ms': settings.lag_tolerance_ns / NS_PER_MS,
        'max_wall_gap_ms': meter.max_gap_ns / NS_PER_MS,
    }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def build_parser() -> argparse.ArgumentParser:
    """Return the parser for the (ROS-free) command line: only --help, listing parameters."""
    return argparse.ArgumentParser(
        prog='sim_clock',
        description='Publish /clock in fixed sim steps paced to a target real time factor.',
        epilog=parameter_help(PARAMETERS),
        formatter_class=argparse.RawDescriptionHelpFormatter)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``sim_clock``: none (its settings are ROS parameters)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the node until ``duration_s``, SIGINT or SIGTERM; 2 for invalid parameters."""
    return run_node('sim_clock', build_parser(), SimClockNode, argv)


class SimClockNode(Node):
    """The /clock publisher node; ``start`` launches the pacing thread, ``close`` ends it."""

    def __init__(self, **kwargs: Any) -> None:
        """Declare and check parameters (ConfigError or ParameterException if invalid)."""
        super().__init__('sim_clock', **kwargs)
        self.settings = settings_from_values(declare_parameters(self, PARAMETERS))
        if self.get_parameter('use_sim_time').value:
            self.get_logger().warning('use_sim_time is ignored: sim_clock paces /clock on the '
                                      'monotonic clock')
        self._clock_pub = self.create_publisher(
            Clock, '/clock', QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
        self._rtf_pub = self.create_publisher(Float64, '~/rtf', 10)
        self._steady = RosClock(clock_type=ClockType.STEADY_TIME)
        self._report_timer = self.create_timer(
            self.settings.rtf_report_period_ns / NS_PER_S, self._report, clock=self._steady)
        self.meter = RtfMeter()
        self.stalls = 0
        self.pacer: Pacer | None = None
        self.finished = threading.Event()
        # Set by the pacing thread: the guard ends the executor's wait (``run_node``).
        self._finished_guard = self.create_guard_condition(lambda: None)
        self._stop = threading.Event()
        self._since_report = RtfSince()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name='sim_clock_pacer', daemon=True)

    def start(self) -> None:
        """Start pacing /clock (after ``wait_for_subscribers`` subscriptions appear)."""
        s = self.settings
        every = s.steps_per_publish * s.step_ns / NS_PER_MS
        self.get_logger().info(
            f'/clock: step {s.step_ns / NS_PER_MS:g} ms, target RTF {s.target_rtf:g}, from sim '
            f'{s.start_sim_ns / NS_PER_S:g} s'
            + (f', published every {float(every):g} ms of sim time'
               if s.steps_per_publish != 1 else '')
            + (f', stall {s.stall_ns / NS_PER_MS:g} ms' if s.stalls_enabled else '')
            + (f', for {s.duration_ns / NS_PER_S:g} s' if s.duration_ns else ''))
        self._thread.start()

    def close(self) -> None:
        """Stop the pacing thread and write the summary; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)
        self.meter.fold()
        summary = summary_of(self.settings, self.meter, self.stalls, self.reanchors)
        self.get_logger().info(
            f'published {summary["messages"]} /clock messages: {summary["sim_s"]:g} s sim in '
            f'{summary["wall_s"]:.3f} s wall, achieved RTF {_fmt(summary["rtf"])}, worst '
            f'100 ms {_fmt(summary["rtf_100ms_min"])}, {self.stalls} stalls, '
            f'{self.reanchors} re-anchors')
        if self.settings.summary_path:
            write_json(self.settings.summary_path, summary)

    @property
    def reanchors(self) -> int:
        """Times the schedule restarted because a step was too late."""
        return self.pacer.reanchors if self.pacer is not None else 0

    def _run(self) -> None:
        try:
            if wait_for_subscriptions(self._clock_pub, '/clock',
                                      self.settings.wait_for_subscribers, self._stop,
                                      self.get_logger()):
                self._pace()
        except Exception as err:  # noqa: BLE001 - the context may be gone under us
            if self.context.ok():
                self.get_logger().error(f'pacing stopped: {err!r}')
        finally:
            self.finished.set()
            if self.context.ok():  # else the executor's wait has ended already
                self._finished_guard.trigger()

    def _pace(self) -> None:
        s = self.settings
        msg = Clock()
        plan = StallPlan(s.stall_every_ns, s.stall_at_ns) if s.stalls_enabled else None
        first_ns = time.monotonic_ns()
        self.pacer = pacer = Pacer(s.step_wall_ns, first_ns, s.lag_tolerance_ns)
        publication = 0
        while not self._stop.is_set():
            step = s.step_of(publication)
            if step:
                if not sleep_until(pacer.due_ns(step), s.spin_ns, self._stop):
                    break
            now = time.monotonic_ns()
            if s.duration_ns and now - first_ns >= s.duration_ns:
                break
            if plan is not None and plan.due(now - first_ns):
                if self._stop.wait(s.stall_ns / NS_PER_S):
                    break
                self.stalls += 1
                now = time.monotonic_ns()
                pacer.restart(step, now)
            else:
                pacer.publishing(step, now)
            sim_ns = s.start_sim_ns + step * s.step_ns
            msg.clock.sec, msg.clock.nanosec = divmod(sim_ns, NS_PER_S)
            wall_ns = time.monotonic_ns()
            # Measured on the system clock, the clock of the middleware's source timestamps
            # the monitor measures /clock by: its fixed 100 ms bins then have the same edges
            # as the monitor's. On the monotonic clock's grid a stall shorter than a bin could
            # sit in one bin here and be split over two there (worst window 0.14 against 0.37).
            system_ns = time.time_ns()
            self._clock_pub.publish(msg)
            if step == 0:
                first_ns = wall_ns
                pacer.restart(0, wall_ns)
            self.meter.add(system_ns, sim_ns)
            publication += 1

    def _report(self) -> None:
        """Publish and log the RTF achieved since the previous report (wall, steady timer)."""
        self.meter.fold()
        since = self._since_report.take(self.meter.first, self.meter.last)
        if since is None:
            return
        rtf, wall_s = since
        self._rtf_pub.publish(Float64(data=rtf))
        self.get_logger().info(
            f'achieved RTF {rtf:.4f} over the last {wall_s:.2f} s '
            f'({_fmt(self.meter.rtf)} since start, target {self.settings.target_rtf:g})'
            + (f', {self.stalls} stalls' if self.stalls else '')
            + (f', {self.reanchors} re-anchors' if self.reanchors else ''))


_fmt = partial(fmt.number, digits=4)
if __name__ == '__main__':
    sys.exit(main())
