"""The kind of a topic and the level settings on the node: parameters, descriptors, summary."""

from __future__ import annotations

from types import SimpleNamespace

from own_names import ns  # test/plugins: the test's own names

from ros2_deadline_monitor.live.qos import common_offered_deadline_ns
from ros2_deadline_monitor.outputs.summary import summary_text

INFINITE_NS = 9_223_372_036_854_775_807
"""What the graph reports for a publisher without a deadline (rmw's infinite duration)."""


def _publisher(deadline_ns: int) -> SimpleNamespace:
    """Return what the monitor reads of a ``TopicEndpointInfo``: its offered deadline."""
    return SimpleNamespace(qos_profile=SimpleNamespace(
        deadline=SimpleNamespace(nanoseconds=deadline_ns)))


def test_the_period_from_the_graph_needs_every_publisher_to_offer_the_same_deadline():
    ms = 1_000_000
    assert common_offered_deadline_ns([_publisher(100 * ms)]) == 100 * ms
    assert common_offered_deadline_ns([_publisher(100 * ms), _publisher(100 * ms)]) == 100 * ms
    assert common_offered_deadline_ns([_publisher(100 * ms), _publisher(200 * ms)]) == 0
    assert common_offered_deadline_ns([_publisher(100 * ms), _publisher(INFINITE_NS)]) == 0
    assert common_offered_deadline_ns([_publisher(0)]) == 0
    assert common_offered_deadline_ns([]) == 0


def test_summary_shows_na_for_what_an_event_topic_does_not_have(snapshots):
    report = snapshots.topic_report(kind='event', deadline_misses_total=0,
                                    skipped_periods_total=0, period_ns=None)
    text = summary_text('m', snapshots.snapshot(topics=[snapshots.topic(report=report)]))
    lines = text.splitlines()
    # No period: misses, skipped periods and the miss rule do not apply; a line says why.
    assert lines[2].split() == ['/imu', '500', 'n/a', 'n/a', '1', '30.00', '25.00', 'n/a']
    assert lines[3] == '  /imu: event topic: no period, so no misses or skipped periods'


def test_kind_and_level_settings_are_described_and_checked_live(
        ros_context, spin, observer, start_monitor, wait_for, key_values):
    from rclpy.node import Node
    from rclpy.qos import QoSProfile
    from std_msgs.msg import Header

    monitor = start_monitor(topics=['plan'], topic__plan__name=ns('/plan'), stats_period_s=0.2)
    described = monitor.describe_parameters(['topic.plan.kind', 'level_rise_windows', 'grace_s'])
    assert described[0].additional_constraints == 'one of: timer, event'
    assert described[1].integer_range[0].from_value == 1
    assert described[2].floating_point_range[0].from_value == 0.0
    node = Node('planner', context=ros_context)
    publisher = node.create_publisher(Header, ns('/plan'), QoSProfile(depth=10))
    node.create_timer(0.05, lambda: publisher.publish(Header()))
    spin(node)
    wait_for(lambda: (t := observer.topic_stats('plan')) and t.messages_total > 0,
             what='messages on /plan')

    (bad,) = observer.set_parameters(topic__plan__kind='periodic')
    assert not bad.successful and 'topic.plan.kind must be one of timer, event' in bad.reason
    for name, value in (('level_rise_windows', 0), ('level_fall_windows', 1001),
                        ('grace_s', -1.0)):
        (result,) = observer.set_parameters(**{name: value})
        assert not result.successful, name
    results = observer.set_parameters(topic__plan__kind='event', grace_s=2.0,
                                      level_fall_windows=3)
    assert all(r.successful for r in results), [r.reason for r in results]
    assert observer.get_parameter('level_fall_windows') == 3
    status = wait_for(lambda: (s := observer.status(': topic plan'))
                      and key_values(s).get('kind') == 'event' and s,
                      what='the topic reported as an event topic')
    assert key_values(status)['deadline misses'] == 'n/a'
    assert status.message.startswith('event topic: ')
    node.destroy_node()
