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
    yield add, thread
    executor.shutdown()
    for node in nodes:
        node.destroy_node()


def test_probe_counts_what_the_callback_itself_records(ros_context, spinning):
    add, thread = spinning
    node = add(Node('probed', context=ros_context))
    truth = []
    state = {'i': 0}

    def on_timer():
        start_ros = node.get_clock().now().nanoseconds
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
        for _ in range(30):
            with probe.cycle():
                pass
        report = probe.report()
        assert report.messages_total == 30
        assert report.period_ns == 10 * MS
    finally:
        node.destroy_node()
