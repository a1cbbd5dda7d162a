"""What the monitor itself does to a stream: its settings at run time, its own gaps.

A ``stamp_field`` that the subscribed topic's type cannot give was accepted at run time (the
README said refused): the topic's subscription failed, its messages went uncounted, and when
the field was repaired the gap was reported as the producer's loss and outage. The producer
is a process of its own (``publisher_process``); the monitor runs in the test process.
"""

from __future__ import annotations

from typing import Any

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


BURST = 3000
BURST_PRODUCER = """
import sys, time, rclpy, rclpy.duration
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import Header
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node('burst_producer')
publisher = node.create_publisher(
    Header, sys.argv[1], QoSProfile(depth=int(sys.argv[2]),
                                    reliability=ReliabilityPolicy.RELIABLE))
while not publisher.get_subscription_count():
    time.sleep(0.01)
print('matched', flush=True)
for line in sys.stdin:  # one burst per line
    for _ in range(int(sys.argv[2])):
        publisher.publish(Header())
    # Every sample reached the reader's queue (kept or pushed out of it) before the take.
    assert publisher.wait_for_all_acked(rclpy.duration.Duration(seconds=20))
    print('sent', flush=True)
node.destroy_node()
rclpy.try_shutdown()
"""


def test_drops_of_the_monitors_own_queue_are_its_loss_or_unknown(ros_context, processes):
    """3,000 messages in one burst, twice, into a reader queue of 1,000, taken after each.

    The monitor is not spun: this test takes (``take_all``) once the producer's writer knows
    every sample reached the reader's queue. What the queue dropped before the
    subscription's first take has no number before it: the loss is unknown and the status
    says why (it was "lost 0"). Drops between two takes are counted exactly, as the
    monitor's own loss, apart from the producer's.
    """
    import subprocess
    import sys
    import time

    from rclpy.parameter import Parameter

    from ros2_deadline_monitor.shell.monitor_node import MonitorNode

    producer = subprocess.Popen([sys.executable, '-c', BURST_PRODUCER, '/fault/burst',
                                 str(BURST)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True)
    processes.append(producer)
    values = {'topics': ['burst'], 'topic.burst.name': '/fault/burst', 'take_period_s': 1.0,
              'take_queue_depth': 1000}
    node = MonitorNode(context=ros_context, parameter_overrides=[
        Parameter(name, value=value) for name, value in values.items()])
    try:
        monitor = node.topic_monitors['burst']
        deadline = time.monotonic() + TIMEOUT_S
        while not monitor.writers:
            node._poll()  # the graph read that subscribes (the poll timer's work)
            assert time.monotonic() < deadline, 'the producer never matched'
            time.sleep(0.05)
        assert producer.stdout.readline().strip() == 'matched'

        def burst() -> tuple[int, Any]:
            producer.stdin.write('go\n')
            producer.stdin.flush()
            assert producer.stdout.readline().strip() == 'sent'
            node.take_all()
            topic = node.snapshot().topics[0]
            return topic.report.messages_total, topic

        taken, topic = burst()
        assert taken == 1000 and monitor.queue_overflows == 1
        assert not topic.report.loss_known  # it said 0
        assert topic.report.loss_note == (
            'the reader queue (1000 messages) was full at its first take (first sequence '
            'number 2001): what it dropped before cannot be told from what was published '
            'before the monitor subscribed')
        taken, topic = burst()
        assert taken == 2000 and monitor.lost_by_monitor == 2000  # seq 3001..5000
        assert topic.receive.lost_by_monitor_total == 2000
        assert topic.report.lost_by_monitor_total == 2000
        assert topic.report.messages_lost_total == 0  # the producer lost none
        assert "2000 messages dropped by the monitor's own reader queue (full between two " \
               "takes): the monitor's loss" in topic.reason
    finally:
        producer.stdin.close()
        node.destroy_node()


def test_a_producer_of_another_type_joining_costs_the_first_producer_nothing(
        participant, make_beat, publisher_process, observer, start_monitor, wait_for):
    """A second producer of another type on the topic for a while: the topic is ERROR then.

    The monitor dropped its subscription meanwhile and reported the first producer, which
    never paused, as 300 messages lost and a 6 s outage. Its reader matches writers of its
    own type only: it keeps counting them, exactly as many as were published.
    """
    start_monitor(topics=['shared'], topic__shared__name='/fault/shared', stats_period_s=0.2)
    from rclpy.qos import QoSProfile
    from std_msgs.msg import Header

    producer = participant()
    beat = make_beat(producer.node('shared_producer'), '/fault/shared', 0.02)
    producer.start()
    beat.wait_matched(wait_for)  # it counts from the monitor's match on
    # Another reader keeps the producer publishing (a Beat publishes only while matched)
    # whether the monitor is subscribed or not: as a real producer does.
    witness = participant()
    witness.node('witness').create_subscription(Header, '/fault/shared', lambda _: None,
                                                QoSProfile(depth=10))
    witness.start()
    wait_for(lambda: beat.publisher.get_subscription_count() >= 2, timeout=TIMEOUT_S,
             what='the witness matched')
    wait_for(lambda: (t := observer.topic_stats('shared')) and t.messages_total > 10,
             timeout=TIMEOUT_S, what='the first producer counted')
    other = publisher_process('/fault/shared', 'std_msgs.msg.Float64', 'other_type', 0.02)
    wait_for(lambda: (s := observer.status(': topic shared')) and 'disagree on the type'
             in s.message, timeout=60.0, what='the two types reported')
    publisher_process.stop(other)
    wait_for(lambda: (s := observer.status(': topic shared'))
             and 'disagree' not in s.message, timeout=60.0, what='the other type gone')
    beat.stop()
    stats = wait_for(lambda: (t := observer.topic_stats('shared'))
                     and t.messages_total == beat.count and t, timeout=TIMEOUT_S,
                     what=lambda: f'{beat.count} messages counted, as published; counted '
                                  f'{observer.topic_stats("shared").messages_total}')
    assert stats.messages_lost_total == 0
    assert stats.outages_total == 0
