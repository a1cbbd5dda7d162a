"""A topic whose snapshot stands still learns what the graph says about it.

A report does not ask a standing topic for its matched writers (``MonitorNode.snapshot``):
the graph read does, and a topic whose writers changed has news for the next report. A
topic whose writer sends nothing stands until its first message, so only that path can
bring a second writer into its status here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from own_names import ns  # test/plugins: the test's own names

TOPIC = '/standing_silent'
"""The test's own is ns(TOPIC) (own_names)."""


def test_a_second_writer_reaches_a_standing_topic(
        ros_context: Any, second_context: Any, spin: Callable[..., Any], observer: Any,
        start_monitor: Callable[..., Any], wait_for: Callable[..., Any]) -> None:
    from rclpy.node import Node
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Header

    monitor = start_monitor(topics=['silent'], topic__silent__name=ns(TOPIC),
                            topic__silent__period_ms=100.0, stats_period_s=0.2)
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    first = Node('standing_first_writer', context=second_context)
    first.create_publisher(Header, ns(TOPIC), qos)  # subscribed to, never sends
    spin(first, context=second_context, destroy=True)

    def subscribed_and_standing() -> bool:
        status = observer.status('silent')
        return (status is not None and 'standing_first_writer' in publishers_value(status)
                and 'silent' in monitor.reporter.stood)  # the topics that stood at the last report

    wait_for(subscribed_and_standing, timeout=30.0, what='the silent topic to stand')
    assert 'standing_second_writer' not in publishers_value(observer.status('silent'))

    second = Node('standing_second_writer', context=second_context)
    second.create_publisher(Header, ns(TOPIC), qos)
    spin(second, context=second_context, destroy=True)
    wait_for(lambda: 'standing_second_writer' in publishers_value(observer.status('silent')),
             timeout=15.0, what='the second writer in the status')
    assert monitor.topic_monitors['silent'].matched_writers == 2


def publishers_value(status: Any) -> str:
    """Return the ``publishers`` value of a topic's diagnostic status ('' before any)."""
    return next((kv.value for kv in status.values if kv.key == 'publishers'), '')
