"""The clock side of the monitor, and middleware deadline QoS events.

Sim resets, the simulator's own RTF, STALE without /clock; deadline QoS events counted next to
the monitor's own figures.
"""

from __future__ import annotations

import math
import threading
import time

from own_names import ns  # test/plugins: the test's own names

STALE = 3


class SimClock:
    """Publishes /clock from a timer, 2 ms of sim per 2 ms of wall; can jump back."""

    STEP_NS = 2_000_000

    def __init__(self, context) -> None:
        from rclpy.node import Node
        from rclpy.qos import QoSProfile
        from rosgraph_msgs.msg import Clock

        self.node = Node('test_clock', context=context)
        self.publisher = self.node.create_publisher(Clock, '/clock', QoSProfile(depth=10))
        self.sim_ns = 500_000_000_000
        self.jump = threading.Event()
        self._msg = Clock()
        self.node.create_timer(self.STEP_NS / 1e9, self._tick)

    def _tick(self) -> None:
        if self.jump.is_set():
            self.jump.clear()
            self.sim_ns -= 100_000_000_000
        self.sim_ns += self.STEP_NS
        self._msg.clock.sec, self._msg.clock.nanosec = divmod(self.sim_ns, 1_000_000_000)
        self.publisher.publish(self._msg)


def test_sim_reset_simulator_rtf_and_timer_lateness(ros_context, spin, observer, start_monitor,
                                                   wait_for, capfd):
    from rclpy.node import Node
    from rclpy.qos import QoSProfile
    from std_msgs.msg import Float64, Header

    clock = SimClock(ros_context)
    spin(clock.node)
    start_monitor(topics=['beat'], topic__beat__name=ns('/beat'), use_sim_time=True,
                  simulator_rtf_topic=ns('/sim_rtf'), stats_period_s=0.2)
    producer = Node('producer', context=ros_context)
    beat = producer.create_publisher(Header, ns('/beat'), QoSProfile(depth=10))
    rtf = producer.create_publisher(Float64, ns('/sim_rtf'), QoSProfile(depth=10))
    producer.create_timer(0.01, lambda: beat.publish(Header()))
    producer.create_timer(0.05, lambda: rtf.publish(Float64(data=0.97)))
    spin(producer)

    stats = wait_for(lambda: (s := observer.latest_stats()) and s.clock.simulator_rtf == 0.97
                     and s.topics[0].messages_total > 20 and s,
                     what="the simulator's RTF and messages")
    assert stats.topics[0].timer_clock == 'sim'
    assert stats.clock.resets_total == 0
    assert math.isfinite(stats.host.stats_timer_late_max_ms)
    assert stats.host.stats_timer_late_max_ms >= 0

    clock.jump.set()
    stats = wait_for(lambda: (s := observer.latest_stats()) and s.clock.resets_total == 1 and s,
                     what='the reset to be reported')
    assert stats.topics[0].resets_total == 1
    assert 'sim time jumped back' in capfd.readouterr().err


def test_clock_is_stale_under_sim_time_without_clock(ros_context, observer, start_monitor,
                                                     wait_for):
    start_monitor(use_sim_time=True, stats_period_s=0.2)
    stats = wait_for(observer.latest_stats, what='stats')
    assert stats.clock.level == STALE
    assert stats.clock.messages_total == 0
    assert math.isnan(stats.clock.rtf)
    status = wait_for(lambda: observer.status(': clock'), what='the clock status')
    assert status.level == bytes([STALE])


def test_middleware_deadline_events_are_counted_when_publishers_offer_one(
        ros_context, spin, observer, start_monitor, wait_for, capfd):
    from rclpy.duration import Duration
    from rclpy.node import Node
    from rclpy.qos import QoSProfile
    from std_msgs.msg import Header

    start_monitor(topics=['offered', 'plain'], topic__offered__name=ns('/offered'),
                  topic__offered__qos_deadline_ms=50.0, topic__plain__name=ns('/plain'),
                  topic__plain__qos_deadline_ms=50.0, stats_period_s=0.2)
    producer = Node('producer', context=ros_context)
    offered = producer.create_publisher(
        Header, ns('/offered'), QoSProfile(depth=10, deadline=Duration(nanoseconds=20_000_000)))
    plain = producer.create_publisher(Header, ns('/plain'), QoSProfile(depth=10))
    sent = {'count': 0}

    def publish() -> None:
        # Ten messages at 100 Hz, then silence: the requested 50 ms deadline passes unmet.
        if sent['count'] < 10:
            sent['count'] += 1
            offered.publish(Header())
        plain.publish(Header())

    spin(producer)
    wait_for(lambda: offered.get_subscription_count() and plain.get_subscription_count(),
             what='the monitor to subscribe')
    producer.create_timer(0.01, publish)
    offered_stats = wait_for(
        lambda: (t := observer.topic_stats('offered')) and t.qos_deadline_events_total >= 2
        and t, what='requested-deadline-missed events')
    assert offered_stats.messages_total == 10
    plain_stats = wait_for(lambda: (t := observer.topic_stats('plain')) and t.messages_total > 10
                           and t, what='messages on the topic without an offered deadline')
    assert plain_stats.qos_deadline_events_total == 0
    assert 'qos_deadline_ms 50 not requested' in capfd.readouterr().err


def test_batched_clock_sets_ros_time_without_a_second_clock_subscription(
        ros_context, spin, observer, start_monitor, wait_for):
    clock = SimClock(ros_context)
    spin(clock.node)
    monitor = start_monitor(use_sim_time=True, stats_period_s=0.2)
    # Only the reader node takes /clock: rclpy's per-message TimeSource subscription is gone.
    # A graph count is not remapped: the test's own /clock by its resolved name.
    wait_for(lambda: monitor.count_subscribers(ns('/clock')) >= 1, what='the monitor on /clock')
    readers = {i.node_name for i in monitor.get_subscriptions_info_by_topic('/clock')}
    assert readers == {'deadline_monitor_reader'}
    # The node's ROS time still follows /clock.
    wait_for(lambda: monitor.get_clock().now().nanoseconds >= 500_000_000_000,
             what="the monitor's ROS time at the first /clock")
    assert monitor.get_clock().now().nanoseconds <= clock.sim_ns
    # Diagnostics, like ~/stats, are stamped with the report's wall (system) time.
    before_ns = time.time_ns()
    array = wait_for(lambda: (a := observer.arrays[-1:]) and a[0].header.stamp.sec > 0
                     and a[0].header.stamp.sec * 1_000_000_000 + a[0].header.stamp.nanosec
                     >= before_ns and a[0], what='diagnostics stamped after this moment')
    stamp_ns = array.header.stamp.sec * 1_000_000_000 + array.header.stamp.nanosec
    assert before_ns <= stamp_ns <= time.time_ns()
