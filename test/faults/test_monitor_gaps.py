"""What the monitor itself does to a stream: its settings at run time, its own gaps.

A ``stamp_field`` that the subscribed topic's type cannot give was accepted at run time (the
README said refused): the topic's subscription failed, its messages went uncounted, and when
the field was repaired the gap was reported as the producer's loss and outage. The producer
is a process of its own (``publisher_process``); the monitor runs in the test process.
"""

from __future__ import annotations

TIMEOUT_S = 20.0


def test_a_stamp_field_the_type_cannot_give_is_refused_at_run_time(
        start_monitor, publisher_process, observer, wait_for):
    publisher_process('/fault/stamped', 'std_msgs.msg.Header', 'stamped_producer', 0.02)
    start_monitor(topics=['stamped'], topic__stamped__name='/fault/stamped',
                  stats_period_s=0.3)
    counted = wait_for(lambda: (t := observer.topic_stats('stamped')) and t.messages_total
                       and t.messages_total, timeout=TIMEOUT_S, what='the producer counted')
    for field, why in (('header.stump', 'stump'), ('frame_id', 'builtin_interfaces/Time')):
        (result,) = observer.set_parameters(topic__stamped__stamp_field=field)
        assert not result.successful, field
        assert result.reason.startswith(
            f'topic.stamped.stamp_field: {field} of std_msgs/msg/Header cannot be read: ')
        assert why in result.reason, result.reason
        assert observer.get_parameter('topic.stamped.stamp_field') == 'header.stamp'
    # A field the type has is taken; the topic goes on counting, nothing lost.
    (result,) = observer.set_parameters(topic__stamped__stamp_field='stamp')
    assert result.successful, result.reason
    wait_for(lambda: (t := observer.topic_stats('stamped')) and t.messages_total > counted + 20,
             timeout=TIMEOUT_S, what='the topic counting on')
    status = wait_for(lambda: observer.status(': topic stamped'), what='its status')
    assert 'cannot be read' not in status.message
    assert observer.topic_stats('stamped').messages_lost_total == 0
