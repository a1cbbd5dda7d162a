import threading
import time

import numpy as np
import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from ros2_deadline_monitor.core.cycles import count_cycles
from ros2_deadline_monitor.tools.probe import DeadlineProbe

MS = 1_000_000


def wait_for(condition, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def spinning(ros_context):
    nodes = []
    executor = SingleThreadedExecutor(context=ros_context)

    def add(node):
        nodes.append(node)
        executor.add_node(node)
        return node

    thread = threading.Thread(target=executor.spin, daemon=True)
    yield add, thread, executor
    executor.shutdown()
    for node in nodes:
        node.destroy_node()


def test_probe_counts_what_the_callback_itself_records(ros_context, spinning):
    add, thread, _ = spinning
    node = add(Node('probed', context=ros_context))
    truth = []
    state = {'i': 0}

    def on_timer():
        # The probe's own start read: a second clock read microseconds later could fall on
        # the other side of a grid boundary (a skipped period more or less).
        start_ros = probe.cycle_start_ns
        start_mono = time.monotonic_ns()
        state['i'] += 1
        if state['i'] % 10 == 5:
            time.sleep(0.022)
        truth.append((start_ros, start_ros + time.monotonic_ns() - start_mono))

    timer = node.create_timer(0.01, on_timer)
    probe = DeadlineProbe(node, 'control', timer=timer, stats_period_s=0.2)
    timer.callback = probe.wrap(on_timer)
    from ros2_deadline_monitor.msg import TopicStats
    received = []
    listener = add(Node('listener', context=ros_context))
    listener.create_subscription(TopicStats, '/probed/deadline_probe', received.append, 10)
    thread.start()
    assert wait_for(lambda: len(truth) >= 150)
    timer.cancel()
    # A callback in flight when the timer was cancelled still lands in both records.
    assert wait_for(lambda: any(m.messages_total == len(truth) for m in received))
    starts, ends = np.array(truth).T
    expected = count_cycles(starts, ends, 10 * MS)
    report = probe.report()
    assert report.messages_total == len(truth)
    assert report.timer_clock == 'wall' and report.rule == 'response'
    assert report.deadline_misses_total == expected.misses >= 15
    assert report.skipped_periods_total == expected.skipped >= 15
    assert report.interval_wall.max_ns >= 20 * MS
    last = next(m for m in reversed(received) if m.messages_total == len(truth))
    assert last.deadline_misses_total == expected.misses
    assert last.topic == '/probed/control'


def test_probe_as_context_manager_without_publishing(ros_context):
    node = Node('probed_cm', context=ros_context)
    try:
        probe = DeadlineProbe(node, 'loop', period_s=0.01, stats_period_s=None)
        starts = []
        for _ in range(30):
            with probe.cycle():
                starts.append(probe.cycle_start_ns)
        assert probe.cycle_start_ns is None
        assert None not in starts and starts == sorted(set(starts))
        report = probe.report()
        assert report.messages_total == 30
        assert report.period_ns == 10 * MS
    finally:
        node.destroy_node()


def test_probe_and_monitor_agree_on_the_same_controller(ros_context, spinning):
    """A controller checked from inside (probe) and from its output topic (monitor)."""
    from rclpy.parameter import Parameter
    from rclpy.time import Time
    from std_msgs.msg import Header

    from ros2_deadline_monitor.shell.monitor_node import MonitorNode

    add, thread, executor = spinning
    monitor = MonitorNode(context=ros_context, parameter_overrides=[
        Parameter('topics', value=['control']),
        Parameter('topic.control.name', value='/probed/out'),
        Parameter('topic.control.period_ms', value=10.0),
        Parameter('topic.control.stamp', value='start'),
        Parameter('stats_period_s', value=0.2)])
    controller = Node('probed', context=ros_context)
    publisher = controller.create_publisher(Header, '/probed/out', 100)
    state = {'i': 0}

    def on_timer():
        msg = Header()
        msg.stamp = Time(nanoseconds=probe.cycle_start_ns).to_msg()  # the probe's start
        state['i'] += 1
        if state['i'] % 10 == 5:
            time.sleep(0.022)
        publisher.publish(msg)  # at the end of the cycle

    timer = controller.create_timer(0.01, on_timer)
    probe = DeadlineProbe(controller, 'control', timer=timer, stats_period_s=None)
    timer.callback = probe.wrap(on_timer)
    # The controller starts once the monitor listens, so both see every cycle.
    timer.cancel()
    add(monitor)
    add(controller)
    thread.start()
    assert wait_for(lambda: publisher.get_subscription_count() >= 1)
    timer.reset()
    assert wait_for(lambda: state['i'] >= 150)
    timer.cancel()
    # Stop spinning before reading both analyzers from this thread (they are not
    # thread-safe); a cycle in flight finishes first. Then take what is still on its way.
    executor.shutdown()
    thread.join(timeout=10)
    cycles = state['i']

    def monitor_report():
        return monitor.snapshot(final=True).topics[0].report

    assert wait_for(lambda: monitor_report().messages_total == cycles)
    inside = probe.report()
    outside = monitor_report()
    assert inside.messages_total == outside.messages_total == cycles
    assert inside.skipped_periods_total == outside.skipped_periods_total >= 10
    assert inside.deadline_misses_total == outside.deadline_misses_total >= 20
