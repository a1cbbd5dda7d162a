"""A control loop stand-in: a timer that stalls on purpose and records its own cycles.

Each cycle stamps its start on the timer's clock (ROS time: sim time under ``use_sim_time``,
else the system clock), sleeps ``stall_ms`` if it is a stalled cycle, and publishes a
``geometry_msgs/TwistStamped`` carrying that stamp at its end, as a controller publishes the
command it computed. The cycle record it writes at exit (``tools/cycle_record.py``) is the
ground truth the monitor's figures are compared with.

Stalled cycles follow the reference measurement's rule: cycle ``i`` (counted from 0) stalls
when ``(i + 1) % stall_every == stall_every // 2``, so with ``stall_every`` 50 cycles 24, 74,
124, ... stall, ten in a 5 s phase at 100 Hz even though each stall skips a period.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
import sys
import threading
import time
from typing import Any

from geometry_msgs.msg import TwistStamped
from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy

from ros2_deadline_monitor.analysis.config import check_topic_name, NS_PER_MS, NS_PER_S
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.parameters import ParamSpec
from ros2_deadline_monitor.tools.cycle_record import CycleRecord, CycleRow
from ros2_deadline_monitor.tools.runtime import (
    check_output_path,
    declare_parameters,
    parameter_help,
    run_node,
)
from ros2_deadline_monitor.tools.waiting import log_wait, WaitNotice

FRAME_ID = 'demo'
POLL_S = 0.01
ACK_TIMEOUT_S = 2.0
RELIABILITY = {'reliable': ReliabilityPolicy.RELIABLE,
               'best_effort': ReliabilityPolicy.BEST_EFFORT}

# Every parameter is read only: each one shapes the whole run.
PARAMETERS: tuple[ParamSpec, ...] = (
    ParamSpec('rate_hz', 100.0, 'Timer rate [Hz] on the node clock: sim time under '
              'use_sim_time, else the system clock.', 0.01, 10000.0, read_only=True),
    ParamSpec('stall_ms', 0.0, 'How long a stalled cycle sleeps before it publishes, on the '
              'wall clock [ms].', 0.0, 60000.0, read_only=True),
    ParamSpec('stall_every', 0, 'Stall cycle i (from 0) when (i + 1) % stall_every == '
              'stall_every // 2, the reference rule (50: cycles 24, 74, ...); 0 never.',
              0, 1_000_000, read_only=True),
    ParamSpec('topic', '/demo/cmd', 'Topic of the geometry_msgs/TwistStamped published at the '
              'end of each cycle, stamped with the cycle start on the timer clock.',
              read_only=True),
    ParamSpec('duration_s', 0.0, 'Stop after this much wall time from the first cycle [s]; 0 '
              'runs until SIGINT or SIGTERM.', 0.0, 1e6, read_only=True),
    ParamSpec('wait_for_subscribers', 0, 'Start the timer only once the topic has this many '
              'subscriptions (and, under use_sim_time, once /clock arrived).', 0, 1000,
              read_only=True),
    ParamSpec('record_path', '', 'Write the cycle record (JSON, tools/cycle_record.py) here at '
              'exit; empty for none.', read_only=True),
    ParamSpec('reliability', 'reliable', 'QoS reliability of the publisher.',
              choices=tuple(RELIABILITY), read_only=True),
    ParamSpec('qos_depth', 100, 'QoS history depth (keep last) of the publisher.', 1, 100_000,
              read_only=True),
)


@dataclass(frozen=True)
class ControllerSettings:
    """Validated parameters in int nanoseconds."""

    period_ns: int = 10_000_000
    stall_ns: int = 0
    stall_every: int = 0
    topic: str = '/demo/cmd'
    duration_ns: int = 0
    wait_for_subscribers: int = 0
    record_path: str = ''
    reliability: str = 'reliable'
    qos_depth: int = 100


def settings_from_values(values: dict[str, Any]) -> ControllerSettings:
    """Check parameter values; raise ConfigError naming the parameter."""
    for spec in PARAMETERS:
        value = values[spec.name]
        if spec.low is not None and spec.high is not None and \
                not spec.low <= value <= spec.high:
            raise ConfigError(f'{spec.name} = {value!r} is outside [{spec.low}, {spec.high}]')
        if spec.choices and value not in spec.choices:
            raise ConfigError(f'{spec.name} must be one of {", ".join(spec.choices)}, '
                              f'got {value!r}')
    try:
        topic = check_topic_name(values['topic'])
    except ConfigError as err:
        raise ConfigError(f'topic: {err}') from err
    return ControllerSettings(
        period_ns=round(NS_PER_S / values['rate_hz']),
        stall_ns=round(values['stall_ms'] * NS_PER_MS),
        stall_every=int(values['stall_every']),
        topic=topic,
        duration_ns=round(values['duration_s'] * NS_PER_S),
        wait_for_subscribers=int(values['wait_for_subscribers']),
        record_path=check_output_path('record_path', str(values['record_path'])),
        reliability=values['reliability'],
        qos_depth=int(values['qos_depth']),
    )


def is_stall_cycle(index: int, stall_every: int) -> bool:
    """Return True if cycle ``index`` (from 0) stalls: ``(i + 1) % N == N // 2``."""
    return stall_every > 0 and (index + 1) % stall_every == stall_every // 2


def build_parser() -> argparse.ArgumentParser:
    """Return the parser for the (ROS-free) command line: only --help, listing parameters."""
    return argparse.ArgumentParser(
        prog='demo_controller',
        description='A timer that stalls on purpose, publishing a stamped message per cycle '
                    'and recording its own cycles.',
        epilog=parameter_help(PARAMETERS),
        formatter_class=argparse.RawDescriptionHelpFormatter)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``demo_controller``: none (its settings are ROS parameters)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the controller until ``duration_s``, SIGINT or SIGTERM; 2 for invalid parameters."""
    return run_node('demo_controller', build_parser(), DemoControllerNode, argv)


class DemoControllerNode(Node):
    """The controller node; cycles start once its subscribers (and /clock) are there."""

    def __init__(self, **kwargs: Any) -> None:
        """Declare and check parameters (ConfigError or ParameterException if invalid)."""
        super().__init__('demo_controller', **kwargs)
        self.settings = settings_from_values(declare_parameters(self, PARAMETERS))
        s = self.settings
        self.sim_time = bool(self.get_parameter('use_sim_time').value)
        self._publisher = self.create_publisher(TwistStamped, s.topic, QoSProfile(
            depth=s.qos_depth, reliability=RELIABILITY[s.reliability]))
        self._clock = self.get_clock()
        self._steady = RosClock(clock_type=ClockType.STEADY_TIME)
        self.rows: list[CycleRow] = []  # kept only with a record_path: memory grows per cycle
        self.finished = threading.Event()
        self._cycles = 0
        self.published = 0
        self.stalled = 0
        self._msg = TwistStamped()
        self._msg.header.frame_id = FRAME_ID
        self._first_mono_ns: int | None = None
        self._timer: Any = None
        self._stopper: Any = None
        self._starter: Any = None
        self._waiting = WaitNotice()
        self._closed = False

    def start(self) -> None:
        """Poll on steady time until the subscribers, the clock and the first cycle are there."""
        self._starter = self.create_timer(POLL_S, self._start_when_ready, clock=self._steady)

    def _start_when_ready(self) -> None:
        s = self.settings
        clock = 'sim' if self.sim_time else 'wall'
        if self._timer is not None:
            waiting = f'the first cycle on {clock} time'
        elif self._publisher.get_subscription_count() < s.wait_for_subscribers:
            waiting = f'{s.wait_for_subscribers} subscription(s) on {s.topic}'
        elif self.sim_time and self._clock.now().nanoseconds == 0:
            waiting = '/clock (use_sim_time is true)'
        else:
            waiting = None
        said = self._waiting.update(waiting, time.monotonic_ns(),
                                    say_start=self._timer is None)  # a cycle is due at once
        if said is not None and self.sim_time:
            sim_s = self._clock.now().nanoseconds / NS_PER_S
            log_wait(self.get_logger(), said, f' (sim time {sim_s:.3f} s)')
        else:
            log_wait(self.get_logger(), said)
        if waiting is not None:
            return
        self._timer = self.create_timer(s.period_ns / NS_PER_S, self._cycle)
        stall = ''
        if s.stall_every and s.stall_ns:
            first = [i for i in range(2 * s.stall_every) if is_stall_cycle(i, s.stall_every)]
            stall = (f', stalling {s.stall_ns / NS_PER_MS:g} ms in cycles '
                     f'{", ".join(map(str, first))}, ... (every {s.stall_every})')
        self.get_logger().info(
            f'cycles at {NS_PER_S / self._timer.timer_period_ns:g} Hz on '
            f'{clock} time, publishing on {s.topic}{stall}')

    def _cycle(self) -> None:
        start_mono = time.monotonic_ns()
        start_system = time.time_ns()
        start_timer = self._clock.now().nanoseconds
        s = self.settings
        if self._first_mono_ns is None:
            self._first_mono_ns = start_mono
            self._starter.cancel()  # it watched for this first cycle
            self.destroy_timer(self._starter)
            if s.duration_ns:
                self._stopper = self.create_timer(s.duration_ns / NS_PER_S, self._finish,
                                                  clock=self._steady)
        elif s.duration_ns and start_mono - self._first_mono_ns >= s.duration_ns:
            self._finish()
            return
        injected = bool(s.stall_ns) and is_stall_cycle(self._cycles, s.stall_every)
        self._cycles += 1
        if injected:
            time.sleep(s.stall_ns / NS_PER_S)
        msg = self._msg
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(start_timer, NS_PER_S)
        end_timer = self._clock.now().nanoseconds
        end_system = time.time_ns()
        end_mono = time.monotonic_ns()
        try:
            self._publisher.publish(msg)
        except Exception:  # noqa: BLE001 - a signal shut the context down mid-cycle
            if self.context.ok():
                raise
            return  # not published, so not a cycle anyone could have seen
        self.published += 1
        self.stalled += injected
        if s.record_path:
            self.rows.append(CycleRow(start_timer, start_system, start_mono, end_system,
                                      end_mono, end_timer, injected))

    def _finish(self) -> None:
        """Stop cycling after ``duration_s`` of wall time."""
        for timer in (self._timer, self._stopper):
            if timer is not None:
                timer.cancel()
        self.finished.set()

    def record(self) -> CycleRecord:
        """Return the cycles so far as a ``CycleRecord``."""
        period_ns = self._timer.timer_period_ns if self._timer is not None \
            else self.settings.period_ns
        return CycleRecord('sim' if self.sim_time else 'wall', period_ns, tuple(self.rows))

    def close(self) -> None:
        """Stop, write the record, and give reliable readers time to take the last messages."""
        if self._closed:
            return
        self._closed = True
        self._finish()
        self.get_logger().info(f'{self.published} cycles, {self.stalled} stalled')
        if self.settings.record_path:
            self.record().save(self.settings.record_path)
        if self.settings.reliability == 'reliable' and self.context.ok():
            try:
                self._publisher.wait_for_all_acked(Duration(seconds=ACK_TIMEOUT_S))
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass


if __name__ == '__main__':
    sys.exit(main())
