"""`all_topics` (`monitor --all`) against real publishers in another DDS participant.

The publisher's own count is the ground truth: it publishes once the monitor's reader has
matched, so every message must be counted, no more, no fewer. Every topic means every topic
of the domain: a neighbour's are adopted too, so the test looks at those of its namespace.
"""

from __future__ import annotations

from own_names import namespace, ns  # test/plugins: the test's own names

from ros2_deadline_monitor.configuration.topic_flags import topic_id

STALE, ERROR = 3, 2
MESSAGES = 40


def own(topics) -> list:
    """Return the reported topics of the test's namespace (a neighbour's are adopted too)."""
    return [t for t in topics if t.topic.startswith(namespace() + '/')]


def test_a_topic_that_appears_after_start_is_monitored_with_exact_counts(
        observer, start_monitor, late_producer, wait_for):
    monitor = start_monitor(all_topics=True, all_topics__period_ms=10.0, stats_period_s=0.2)
    wait_for(lambda: observer.latest_stats() is not None, what='the first report')
    assert own(observer.latest_stats().topics) == []
    late = topic_id(ns('/all_test/late'), set())  # the identifier --all gives it

    # Infrastructure and hidden topics, published at the same time, must stay out; the
    # infrastructure topics are global names (the monitor's own /diagnostics is remapped).
    producer = late_producer('late_all_producer', ns('/all_test/late'), MESSAGES, others=(
        '/tf_static', ns('/all_test/_hidden'), ns('/all_test/nav/_action/status'),
        '/diagnostics_agg'))
    stats = wait_for(lambda: (t := observer.topic_stats(late))
                     and t.messages_total >= MESSAGES and t, timeout=15.0,
                     what='every message of the late topic counted')
    assert stats.topic == ns('/all_test/late')
    assert stats.type == 'std_msgs/msg/Header'
    assert stats.period_ms == 10.0  # the all_topics.* settings apply
    assert producer.sent == MESSAGES
    assert stats.messages_total == MESSAGES
    assert stats.messages_lost_total == 0
    topics = {t.topic for t in own(observer.latest_stats().topics)}
    assert topics == {ns('/all_test/late')}, 'only the late topic, nothing excluded'
    assert not {t.topic for t in observer.latest_stats().topics} & {
        '/tf_static', '/diagnostics_agg', ns('/diagnostics')}
    assert late in monitor.topic_monitors
    # One set of template parameters, none per discovered topic.
    assert observer.get_parameter('all_topics') is True
    assert observer.get_parameter('all_topics.period_ms') == 10.0
    assert not monitor.has_parameter(f'topic.{late}.name')

    # Its publisher goes away: the topic stays and times out (max(10 T, 1 s) = 1 s).
    producer.node.destroy_publisher(producer.publisher)
    gone = wait_for(lambda: (t := observer.topic_stats(late)) and t.level == ERROR
                    and t, timeout=15.0, what='the vanished topic to time out')
    assert gone.messages_total == MESSAGES
