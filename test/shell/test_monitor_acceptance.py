"""Acceptance of the monitor node (issue 3): the reference scenario against ground truth.

A 100 Hz producer stalls 22 ms every 50th cycle, stamps each message with its cycle start
and publishes at the cycle end, next to a /clock process at RTF 1.0. It records its own
cycles; the core's ``count_cycles`` turns that record into the misses and skipped periods the
monitor must report exactly. The machine is noisy, so the comparison is with the record,
never with the nominal 20 and 10.

Where a cycle ends on the timer clock: on wall time, the system time when the message is
published. On sim time the producer cannot read it (its ROS time stands still while its
callback runs), so a separate clock tracker records every /clock sample with its receive
time, and the end is the sim time in force at the publish moment, the rule the monitor
applies at the message's arrival (DESIGN.md §2). The article's approximation, start plus
the wall execution time, is printed next to it: it agrees while the simulator advances
evenly and drifts from the sim-time truth when the machine stalls the simulator too.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

PERIOD_NS = 10_000_000
STALL_EVERY = 50
STALL_S = 0.022
RUN_NS = 5_000_000_000
OK, WARN, ERROR = 0, 1, 2


class ClockTracker:
    """Records ``(received wall time, sim time)`` of every /clock message, off the producer."""

    def __init__(self, context: Any) -> None:
        from rclpy.node import Node
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock

        self.node = Node('clock_tracker', context=context)
        self.wall: list[int] = []
        self.sim: list[int] = []
        self.node.create_subscription(
            Clock, '/clock', self._on_clock,
            QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT))

    def _on_clock(self, msg: Any, info: dict) -> None:
        self.sim.append(msg.clock.sec * 1_000_000_000 + msg.clock.nanosec)
        self.wall.append(info['received_timestamp'])

    def rtf(self) -> float:
        """Return the RTF the /clock process achieved, as received here."""
        return (self.sim[-1] - self.sim[0]) / (self.wall[-1] - self.wall[0])

    def sim_at(self, wall_ns: list[int]) -> np.ndarray:
        """Return the sim time in force at each wall time."""
        wall, sim = np.array(self.wall), np.array(self.sim)
        return sim[np.searchsorted(wall, np.array(wall_ns), side='right') - 1]


class Controller:
    """A timer on ROS time that stalls every Nth cycle and records its own cycles."""

    def __init__(self, context: Any, topic: str, use_sim_time: bool, stall: bool) -> None:
        from rclpy.node import Node
        from rclpy.parameter import Parameter
        from rclpy.qos import QoSProfile
        from std_msgs.msg import Header

        self.node = Node('controller', context=context, parameter_overrides=[
            Parameter('use_sim_time', value=use_sim_time)])
        self.publisher = self.node.create_publisher(Header, topic, QoSProfile(depth=100))
        self.stall = stall
        self.starts: list[int] = []
        self.ends_by_execution: list[int] = []
        self.ends_wall: list[int] = []
        self.done = threading.Event()
        self._header = Header
        self._timer = None

    def start(self) -> None:
        """Start the 100 Hz timer."""
        self._timer = self.node.create_timer(PERIOD_NS / 1e9, self._on_timer)

    def _on_timer(self) -> None:
        if self.done.is_set():
            return
        start = self.node.get_clock().now().nanoseconds
        start_mono = time.monotonic_ns()
        if self.stall and (len(self.starts) + 1) % STALL_EVERY == 0:
            time.sleep(STALL_S)
        msg = self._header()
        msg.stamp.sec, msg.stamp.nanosec = divmod(start, 1_000_000_000)
        end_wall = time.time_ns()
        self.publisher.publish(msg)
        self.starts.append(start)
        self.ends_by_execution.append(start + time.monotonic_ns() - start_mono)
        self.ends_wall.append(end_wall)
        if start - self.starts[0] >= RUN_NS:
            self.done.set()
            self._timer.cancel()


@pytest.mark.parametrize(('use_sim_time', 'stall'), [
    pytest.param(True, True, id='sim-stalls'),
    pytest.param(True, False, id='sim-no-stalls'),
    pytest.param(False, True, id='wall-stalls'),
])
def test_monitor_reports_the_producers_ground_truth(
        ros_context, spin, observer, start_monitor, clock_process, wait_for, key_values,
        use_sim_time, stall):
    from ros2_deadline_monitor.core.cycles import count_cycles

    if use_sim_time:
        tracker = ClockTracker(ros_context)
        spin(tracker.node)
        clock_process(rtf=1.0, step_ms=1.0)
    start_monitor(topics=['ctrl'], topic__ctrl__name='/ctrl', topic__ctrl__period_ms=10.0,
                  topic__ctrl__stamp='start', topic__ctrl__timeout_s=60.0,
                  use_sim_time=use_sim_time)
    controller = Controller(ros_context, '/ctrl', use_sim_time, stall)
    spin(controller.node)
    if use_sim_time:
        wait_for(lambda: controller.node.get_clock().now().nanoseconds > 0,
                 what='/clock at the controller')
    wait_for(lambda: controller.publisher.get_subscription_count() >= 1,
             what='the monitor to subscribe to /ctrl')
    controller.start()
    wait_for(controller.done.is_set, timeout=20.0, what='the controller to run 5 s')

    sent = len(controller.starts)
    ends = tracker.sim_at(controller.ends_wall) if use_sim_time else controller.ends_wall
    truth = count_cycles(controller.starts, ends, PERIOD_NS, PERIOD_NS, None, 'response')
    by_execution = count_cycles(controller.starts, controller.ends_by_execution, PERIOD_NS,
                                PERIOD_NS, None, 'response')
    assert truth.cycles == sent
    stats = wait_for(
        lambda: (t := observer.topic_stats('ctrl')) is not None and t.messages_total == sent
        and observer.latest_stats(), what=f'stats covering all {sent} messages')
    topic = next(t for t in stats.topics if t.name == 'ctrl')
    print(f'sent {sent}: truth misses {truth.misses} skipped {truth.skipped} (start + '
          f'execution: {by_execution.misses}, {by_execution.skipped}); monitor misses '
          f'{topic.deadline_misses_total} skipped {topic.skipped_periods_total}, max interval '
          f'wall {topic.interval_wall.max_ms:.3f} ms sim {topic.interval_sim.max_ms:.3f} ms, '
          f'RTF total {stats.clock.rtf_total:.4f}')

    assert topic.rule == 'response'
    assert topic.start_source == 'header'
    assert topic.timer_clock == ('sim' if use_sim_time else 'wall')
    assert topic.deadline_misses_total == truth.misses
    assert topic.skipped_periods_total == truth.skipped
    assert topic.messages_lost_total == 0
    if stall:
        assert truth.misses > 0 and truth.skipped > 0
        assert topic.level in (WARN, ERROR)
    elif truth.misses == 0 and truth.skipped == 0:
        assert topic.level == OK

    status = wait_for(lambda: (s := observer.status(': topic ctrl')) is not None
                      and key_values(s).get('messages total') == str(sent) and s,
                      what='the topic diagnostic covering all messages')
    values = key_values(status)
    assert values['deadline misses total'] == str(truth.misses)
    assert values['skipped periods total'] == str(truth.skipped)
    assert status.level == bytes([topic.level])

    clock_status = observer.status(': clock')
    if use_sim_time:
        print(f'RTF of the /clock process as received by the tracker: {tracker.rtf():.4f}')
        assert stats.clock.rtf_total == pytest.approx(tracker.rtf(), rel=0.01)
        assert stats.clock.rtf_total == pytest.approx(1.0, rel=0.01)
        assert stats.clock.messages_total > 0
        assert clock_status.level == bytes([OK]), clock_status.message
    else:
        assert stats.clock.messages_total == 0
