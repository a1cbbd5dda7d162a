import threading
import time

import numpy as np
from own_names import ns  # test/plugins: the test's own names
import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from ros2_deadline_monitor.analysis.cycles import count_cycles
from ros2_deadline_monitor.probe import DeadlineProbe

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
    add, thread, executor = spinning
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
    measured = probe.wrap(on_timer)
    wrapped_runs = []  # each call of the probe's wrapper, from before it to after it

    def outer():
        before = time.monotonic_ns()
        measured()
        wrapped_runs.append(time.monotonic_ns() - before)

    timer.callback = outer
    from ros2_deadline_monitor.msg import TopicStats
    received = []
    listener = add(Node('listener', context=ros_context))
    listener.create_subscription(TopicStats, ns('/probed/deadline_probe'), received.append, 10)
    thread.start()
    assert wait_for(lambda: len(truth) >= 150)
    timer.cancel()
    # A callback in flight when the timer was cancelled still lands in both records.
    assert wait_for(lambda: any(m.messages_total == len(truth) for m in received))
    # Stop spinning before reading the probe from this thread (its stats timer reads it too).
    executor.shutdown()
    thread.join(timeout=10)
    assert len(wrapped_runs) == len(truth)
    starts, ends = np.array(truth).T
    expected = count_cycles(starts, ends, 10 * MS)
    # The probe ends a cycle a little after the callback's own end, and before its wrapper
    # returns: preempted in between, a cycle can miss by the probe's count only.
    wrapped = count_cycles(starts, starts + np.array(wrapped_runs), 10 * MS)
    report = probe.report()
    assert report.messages_total == len(truth)
    assert report.timer_clock == 'wall' and report.rule == 'response'
    assert expected.misses <= report.deadline_misses_total <= wrapped.misses
    assert expected.misses >= 15
    assert report.skipped_periods_total == expected.skipped >= 15
    assert report.interval_wall.max_ns >= 20 * MS
    last = next(m for m in reversed(received) if m.messages_total == len(truth))
    assert last.deadline_misses_total == report.deadline_misses_total
    assert last.topic == ns('/probed/control')


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
    """A controller checked from inside (probe) and from its output topic (monitor).

    The probe ends a cycle when the callback returns, the monitor when the cycle's message
    left (its source timestamp, read here by a raw reader too). A controller preempted
    between the two can miss by the probe's count only, so the probe's misses lie between
    its cycles ended right after ``publish`` and ended after the probe's wrapper returned;
    the monitor's are exactly the count by the times the messages left.
    """
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rclpy.serialization import deserialize_message
    from rclpy.time import Time
    from std_msgs.msg import Header

    from ros2_deadline_monitor.live.monitor_node import MonitorNode

    add, thread, executor = spinning
    monitor = MonitorNode(context=ros_context, parameter_overrides=[
        Parameter('topics', value=['control']),
        Parameter('topic.control.name', value=ns('/probed/out')),
        Parameter('topic.control.period_ms', value=10.0),
        Parameter('topic.control.stamp', value='start'),
        Parameter('stats_period_s', value=0.2)])
    controller = Node('probed', context=ros_context)
    publisher = controller.create_publisher(Header, ns('/probed/out'), 100)
    # Not spun with the others: its queue holds every message until it is read at the end.
    listener = Node('listener', context=ros_context)
    sent = []  # (stamp, source timestamp) of each message

    def on_message(raw, info):
        stamp = deserialize_message(raw, Header).stamp
        sent.append((Time.from_msg(stamp).nanoseconds, info['source_timestamp']))

    listener.create_subscription(
        Header, ns('/probed/out'), on_message,
        QoSProfile(depth=10_000, reliability=ReliabilityPolicy.RELIABLE), raw=True)
    state = {'i': 0}
    after_publish = []  # (start, end just after publish) of each cycle
    wrapped_runs = []  # each call of the probe's wrapper, from before it to after it

    def on_timer():
        start, start_mono = probe.cycle_start_ns, time.monotonic_ns()
        msg = Header()
        msg.stamp = Time(nanoseconds=start).to_msg()  # the probe's start
        state['i'] += 1
        if state['i'] % 10 == 5:
            time.sleep(0.022)
        publisher.publish(msg)  # at the end of the cycle
        after_publish.append((start, start + time.monotonic_ns() - start_mono))

    timer = controller.create_timer(0.01, on_timer)
    probe = DeadlineProbe(controller, 'control', timer=timer, stats_period_s=None)
    measured = probe.wrap(on_timer)

    def outer():
        before = time.monotonic_ns()
        measured()
        wrapped_runs.append(time.monotonic_ns() - before)

    timer.callback = outer
    # The controller starts once the monitor and the listener listen: all see every cycle.
    timer.cancel()
    add(monitor)
    add(controller)
    thread.start()
    assert wait_for(lambda: publisher.get_subscription_count() >= 2)
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

    reader = SingleThreadedExecutor(context=ros_context)
    reader.add_node(listener)
    try:
        assert wait_for(lambda: reader.spin_once(timeout_sec=0.01) or len(sent) >= cycles)
    finally:
        reader.shutdown()
        listener.destroy_node()
    assert wait_for(lambda: monitor_report().messages_total == cycles)
    inside = probe.report()
    outside = monitor_report()
    assert inside.messages_total == outside.messages_total == cycles
    assert inside.skipped_periods_total == outside.skipped_periods_total >= 10
    assert len(after_publish) == len(wrapped_runs) == cycles
    starts, ends = np.array(after_publish, np.int64).T
    stamps, left = np.array(sent, np.int64).T
    assert np.array_equal(stamps, starts), 'the listener saw the messages out of order'
    as_sent = count_cycles(starts, left, 10 * MS).misses
    low = count_cycles(starts, ends, 10 * MS).misses
    high = count_cycles(starts, starts + np.array(wrapped_runs, np.int64), 10 * MS).misses
    assert outside.deadline_misses_total == as_sent >= 20
    # Equal to the monitor's unless a cycle crossed its deadline after its message left.
    assert low <= inside.deadline_misses_total <= high


def test_probe_levels_follow_the_session_rules(ros_context):
    """The probe reports through the monitor's session: its level hysteresis holds here too."""
    from ros2_deadline_monitor.analysis.config import AnalysisConfig, Thresholds
    from ros2_deadline_monitor.analysis.levels import Level

    node = Node('probed_levels', context=ros_context)
    try:
        probe = DeadlineProbe(node, 'loop', period_s=0.01, stats_period_s=None,
                              analysis=AnalysisConfig(thresholds=Thresholds(level_rise_windows=2)))
        for _ in range(5):
            with probe.cycle():
                pass
        clean = probe.snapshot(final=True)
        assert clean.level is Level.OK and clean.report.deadline_misses_total == 0
        for i in range(10):
            with probe.cycle():
                if i == 5:
                    time.sleep(0.025)  # a stall of 2.5 periods: this cycle misses its deadline
        first = probe.snapshot(final=True)
        assert first.report.deadline_misses_total >= 1
        assert first.level is Level.OK
        second = probe.snapshot(final=True)
        assert second.level > Level.OK and 'held' not in second.reason
        assert f'held (1 of 2 reports at {second.level.name})' in first.reason
    finally:
        node.destroy_node()


def test_a_sim_time_probe_counts_skips_on_the_sim_grid(ros_context, spinning, tools):
    """Under use_sim_time the probe's ROS time reads are its /clock: skips come exactly."""
    from rclpy.parameter import Parameter

    add, thread, executor = spinning
    tools.start('sim_clock', step_ms=1.0, start_sim_s=5.0, wait_for_subscribers=1)
    node = add(Node('probed_sim', context=ros_context,
                    parameter_overrides=[Parameter('use_sim_time', value=True)]))
    truth = []
    state = {'i': 0}

    def on_timer():
        start_ros = probe.cycle_start_ns
        state['i'] += 1
        if state['i'] % 10 == 5:
            time.sleep(0.05)  # on a loaded machine sim_clock runs slower: still > 1 period
        truth.append(start_ros)

    timer = node.create_timer(0.01, on_timer)
    probe = DeadlineProbe(node, 'control', timer=timer, stats_period_s=None)
    timer.callback = probe.wrap(on_timer)
    thread.start()
    assert wait_for(lambda: len(truth) >= 100, timeout_s=30)
    timer.cancel()
    executor.shutdown()
    thread.join(timeout=10)
    starts = np.array(truth)
    assert np.all(starts >= 5_000 * MS), 'cycles ran on sim time'
    expected = count_cycles(starts, starts, 10 * MS)
    report = probe.report()
    assert report.timer_clock == 'sim'
    assert report.messages_total == len(truth)
    assert report.skipped_periods_total == expected.skipped >= 1
    assert report.deadline_misses_total >= 1
