"""Two live monitors on the same producer, ``reuse_reports`` on and off: the same final figures.

With reuse on, the slow topics stand between refreshes (``outputs/reporter.py``); with it off,
every report is made afresh. Both take every message the producer sent (reliable, acked)
before their final report, whose figures, and the summary made from them, must be the same,
and equal to the producer's count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from own_names import ns  # test/plugins: the test's own names

TOPICS = ('a', 'b', 'c')
MESSAGES = 30
PERIOD_S = 0.2
SAME = ('level', 'messages', 'cycles', 'deadline_misses', 'skipped_periods', 'outages',
        'messages_lost', 'malformed', 'resets', 'period_ms', 'max_interval_wall_ms',
        'mean_interval_wall_ms', 'rate_wall_hz', 'publishers')


def test_reuse_on_and_off_end_with_the_same_summary(
        ros_context: Any, second_context: Any, spin: Callable[..., Any],
        wait_for: Callable[..., Any]) -> None:
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Header

    from ros2_deadline_monitor.live.monitor_node import MonitorNode

    def monitor(name: str, reuse: bool) -> MonitorNode:
        values = {'topics': list(TOPICS), 'stats_period_s': 0.2, 'reuse_reports': reuse,
                  'use_diagnostic_updater': False}
        for topic_id in TOPICS:
            values[f'topic.{topic_id}.name'] = ns(f'/reuse_test/{topic_id}')
            values[f'topic.{topic_id}.period_ms'] = PERIOD_S * 1e3
        return MonitorNode(name, context=ros_context, parameter_overrides=[
            Parameter(key, value=value) for key, value in values.items()])

    reusing, fresh = monitor('monitor_reusing', True), monitor('monitor_fresh', False)
    spinner = spin(reusing, fresh)
    producer = Node('reuse_test_producer', context=second_context)
    qos = QoSProfile(depth=MESSAGES, reliability=ReliabilityPolicy.RELIABLE)
    publishers = [producer.create_publisher(Header, ns(f'/reuse_test/{t}'), qos)
                  for t in TOPICS]
    wait_for(lambda: all(p.get_subscription_count() >= 2 for p in publishers), timeout=30.0,
             what='both monitors to subscribe')
    sent = [0]

    def publish() -> None:
        if sent[0] < MESSAGES:
            stamp = producer.get_clock().now().to_msg()
            for publisher in publishers:
                publisher.publish(Header(stamp=stamp))
            sent[0] += 1

    producer.create_timer(PERIOD_S, publish)
    spin(producer, context=second_context, destroy=True)
    standing_seen = set()

    def done() -> bool:
        standing_seen.update(reusing.reporter.stood)  # the topics that stood at its last report
        assert not fresh.reporter.stood  # reuse off: nothing ever stands
        return sent[0] == MESSAGES

    wait_for(done, timeout=MESSAGES * PERIOD_S + 30.0, what='the producer to send them all')
    for publisher in publishers:  # in both monitors' reader queues
        assert publisher.wait_for_all_acked(rclpy_duration(10.0))
    assert standing_seen == set(TOPICS), standing_seen  # reuse did happen
    spinner.stop()
    try:
        records = [node.finish().summary for node in (reusing, fresh)]
    finally:
        for node in (reusing, fresh):
            node.destroy_node()
    with_reuse, without = ({t['id']: t for t in record['topics']} for record in records)
    for topic_id in TOPICS:
        assert with_reuse[topic_id]['messages'] == MESSAGES  # the producer's truth
        assert ({key: with_reuse[topic_id][key] for key in SAME}
                == {key: without[topic_id][key] for key in SAME}), topic_id
    assert records[0]['verdict'] == records[1]['verdict']


def rclpy_duration(seconds: float) -> Any:
    from rclpy.duration import Duration

    return Duration(seconds=seconds)
