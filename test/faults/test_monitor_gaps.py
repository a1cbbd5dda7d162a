"""What the monitor itself does to a stream: its settings at run time, its own gaps.

A ``stamp_field`` that the subscribed topic's type cannot give was accepted at run time (the
README said refused): the topic's subscription failed, its messages went uncounted, and when
the field was repaired the gap was reported as the producer's loss and outage. The producer
is a process of its own (``publisher_process``); the monitor runs in the test process.
"""

from __future__ import annotations

from typing import Any

from own_names import ns, ros_args  # test/plugins: the test's own names

TIMEOUT_S = 20.0


def test_a_stamp_field_the_type_cannot_give_is_refused_at_run_time(
        start_monitor, publisher_process, observer, wait_for):
    publisher_process(ns('/fault/stamped'), 'std_msgs.msg.Header', 'stamped_producer', 0.02)
    start_monitor(topics=['stamped'], topic__stamped__name=ns('/fault/stamped'),
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

    from ros2_deadline_monitor.live.monitor_node import MonitorNode

    producer = subprocess.Popen([sys.executable, '-c', BURST_PRODUCER, ns('/fault/burst'),
                                 str(BURST), *ros_args()], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
    processes.append(producer)
    values = {'topics': ['burst'], 'topic.burst.name': ns('/fault/burst'), 'take_period_s': 1.0,
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
    start_monitor(topics=['shared'], topic__shared__name=ns('/fault/shared'), stats_period_s=0.2)
    from rclpy.qos import QoSProfile
    from std_msgs.msg import Header

    producer = participant()
    beat = make_beat(producer.node('shared_producer'), ns('/fault/shared'), 0.02)
    producer.start()
    beat.wait_matched(wait_for)  # it counts from the monitor's match on
    # Another reader keeps the producer publishing (a Beat publishes only while matched)
    # whether the monitor is subscribed or not: as a real producer does.
    witness = participant()
    witness.node('witness').create_subscription(Header, ns('/fault/shared'), lambda _: None,
                                                QoSProfile(depth=10))
    witness.start()
    wait_for(lambda: beat.publisher.get_subscription_count() >= 2, timeout=TIMEOUT_S,
             what='the witness matched')
    wait_for(lambda: (t := observer.topic_stats('shared')) and t.messages_total > 10,
             timeout=TIMEOUT_S, what='the first producer counted')
    other = publisher_process(ns('/fault/shared'), 'std_msgs.msg.Float64', 'other_type', 0.02)
    wait_for(lambda: (s := observer.status(': topic shared')) and 'disagree on the type'
             in s.message, timeout=60.0, what='the two types reported')
    publisher_process.stop(other)
    wait_for(lambda: (s := observer.status(': topic shared'))
             and 'disagree' not in s.message, timeout=60.0, what='the other type gone')
    beat.pause()  # every message on its way still arrives
    stats = wait_for(lambda: (t := observer.topic_stats('shared'))
                     and t.messages_total == beat.count and t, timeout=TIMEOUT_S,
                     what=lambda: f'{beat.count} messages counted, as published; counted '
                                  f'{observer.topic_stats("shared").messages_total}')
    assert stats.messages_lost_total == 0
    assert stats.outages_total == 0


SLOT_PRODUCER = """
import sys, time, rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import Header
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node('slot_producer')
publisher = node.create_publisher(
    Header, sys.argv[1], QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
count, period_ns = int(sys.argv[2]), int(sys.argv[3])
while not publisher.get_subscription_count():  # its first message reaches the monitor
    time.sleep(0.01)
print('matched', flush=True)
start = time.time_ns()
for i in range(count):
    # Stamped with its slot on the grid (a late cycle keeps its slot): no skipped period,
    # no interval miss, whatever the load. It publishes whether a reader listens or not.
    slot = start + i * period_ns
    time.sleep(max(0, slot - time.time_ns()) / 1e9)
    msg = Header()
    msg.stamp.sec, msg.stamp.nanosec = divmod(slot, 1_000_000_000)
    publisher.publish(msg)
    if (i + 1) % 10 == 0:
        print(f'at {i + 1}', flush=True)
print(f'published {count}', flush=True)
time.sleep(1.0)  # a best-effort reader still gets the last ones before the writer goes
node.destroy_node()
rclpy.try_shutdown()
"""
SLOTS = 300
SLOT_PERIOD_MS = 20.0
SILENT_BEST_EFFORT = """
import signal, sys, time, rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import Header
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node('best_effort_joiner')
node.create_publisher(Header, sys.argv[1],
                      QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
running = [True]
signal.signal(signal.SIGINT, lambda *_: running.__setitem__(0, False))
print('up', flush=True)
while running[0]:
    time.sleep(0.05)
node.destroy_node()
rclpy.try_shutdown()
"""


def _slot_producer(processes, topic: str) -> Any:
    import subprocess
    import sys

    producer = subprocess.Popen(
        [sys.executable, '-c', SLOT_PRODUCER, topic, str(SLOTS),
         str(round(SLOT_PERIOD_MS * 1_000_000)), *ros_args()], stdout=subprocess.PIPE, text=True)
    processes.append(producer)
    return producer


def _gap_case(start_monitor, observer, wait_for, key_values, processes, topic_id, cause,
              why):
    """Run a clean producer (truth: 0 lost, skipped, missed) while the monitor re-subscribes.

    ``cause()`` makes the monitor re-subscribe while the producer runs. Every message is
    either received or published while the monitor was not subscribed; none is the
    producer's loss, and the gap is no outage, no skipped period, no miss; the status
    names it (``why``). The timeout (2 s) is far above a stall of the producer's on a
    loaded host (0.3 s seen), which would be a real outage.
    """
    topic = ns(f'/gaps/{topic_id}')
    start_monitor(topics=[topic_id], **{
        f'topic__{topic_id}__name': topic, f'topic__{topic_id}__period_ms': SLOT_PERIOD_MS,
        f'topic__{topic_id}__stamp': 'start', f'topic__{topic_id}__rule': 'interval',
        f'topic__{topic_id}__timeout_s': 2.0}, stats_period_s=0.3)
    producer = _slot_producer(processes, topic)
    assert producer.stdout.readline().strip() == 'matched'
    wait_for(lambda: (t := observer.topic_stats(topic_id)) and t.messages_total >= 50,
             timeout=TIMEOUT_S, what='50 messages counted')
    cause()
    assert [line for line in producer.stdout if not line.startswith('at ')] == [
        f'published {SLOTS}\n']
    assert producer.wait(timeout=TIMEOUT_S) == 0

    def covered() -> Any:
        status = observer.status(f': topic {topic_id}')
        stats = observer.topic_stats(topic_id)
        if status is None or stats is None:
            return None
        values = key_values(status)
        unseen = int(values.get('unmonitored messages total', '-1'))
        return (values.get('messages total') == str(stats.messages_total)
                and stats.messages_total + unseen == SLOTS and (stats, values, status))

    stats, values, status = wait_for(
        covered, timeout=TIMEOUT_S, what=lambda: f'received + unmonitored to cover all '
        f'{SLOTS} published: {observer.topic_stats(topic_id)}, '
        f'{observer.status(f": topic {topic_id}")}')
    assert stats.messages_lost_total == 0 and stats.messages_lost_by_monitor_total == 0
    assert stats.outages_total == 0
    assert stats.skipped_periods_total == 0 and stats.deadline_misses_total == 0
    assert values['unmonitored gaps total'] == '1'
    assert f"after start ({why}): 1 gap(s) of the monitor's own" in status.message
    assert 'not monitored from ' in status.message
    print(f'\n{why}: received {stats.messages_total}, published while not monitored '
          f'{values["unmonitored messages total"]}, not monitored for '
          f'{values["unmonitored total (s)"]} s')


def test_a_qos_deadline_change_at_run_time_is_a_gap_of_the_monitors_own(
        start_monitor, observer, wait_for, key_values, processes):
    def change() -> None:
        (result,) = observer.set_parameters(topic__deadline__qos_deadline_ms=500.0)
        assert result.successful, result.reason

    _gap_case(start_monitor, observer, wait_for, key_values, processes, 'deadline', change,
              're-subscribed: QoS deadline changed')


def test_a_best_effort_publisher_joining_is_a_gap_of_the_monitors_own(
        start_monitor, observer, wait_for, key_values, processes, stop_process):
    import subprocess
    import sys

    def join() -> None:
        joiner = subprocess.Popen([sys.executable, '-c', SILENT_BEST_EFFORT,
                                   ns('/gaps/downgrade')], stdout=subprocess.PIPE, text=True)
        processes.append(joiner)
        assert joiner.stdout.readline().strip() == 'up'
        wait_for(lambda: (s := observer.status(': topic downgrade'))
                 and 'not monitored from' in s.message, timeout=TIMEOUT_S,
                 what='the re-subscription')
        stop_process(joiner)

    _gap_case(start_monitor, observer, wait_for, key_values, processes, 'downgrade', join,
              're-subscribed: reliability downgrade')


def test_a_refused_topic_is_not_monitored_meanwhile_never_the_producers_loss(
        ros_context, processes):
    """A topic refused for a second while its producer goes on, then monitored again.

    The issue: after a refusal (a bad ``stamp_field``) was lifted, the gap was reported as
    4,714 lost and a 47 s outage. The monitor is not spun: this test drives its graph look
    (``_poll``), its takes and its reports, and refuses the topic through the monitor's own
    refusal path (``TopicMonitor._fail``), so the gap lasts as long as the test says (at
    least 150 of the producer's cycles, 3 s: beyond the 2 s timeout). Truth: the producer
    published ``SLOTS`` messages stamped on their grid slots (0 lost, skipped, missed).
    """
    import threading
    import time

    from rclpy.parameter import Parameter

    from ros2_deadline_monitor.live.monitor_node import MonitorNode

    producer = _slot_producer(processes, ns('/gaps/refused'))
    published = [0]

    def follow() -> None:
        for line in producer.stdout:
            if line.startswith('at '):
                published[0] = int(line.split()[1])
            elif line.startswith('published '):
                published[0] = int(line.split()[1])

    values = {'topics': ['refused'], 'topic.refused.name': ns('/gaps/refused'),
              'topic.refused.period_ms': SLOT_PERIOD_MS, 'topic.refused.stamp': 'start',
              'topic.refused.rule': 'interval', 'topic.refused.timeout_s': 2.0,
              'take_period_s': 0.05}
    node = MonitorNode(context=ros_context, parameter_overrides=[
        Parameter(name, value=value) for name, value in values.items()])
    try:
        monitor = node.topic_monitors['refused']
        deadline = time.monotonic() + TIMEOUT_S

        def until(condition, what: str) -> None:
            while not condition():
                node._poll()
                node.take_all()
                assert time.monotonic() < deadline + 60, what
                time.sleep(0.02)

        until(lambda: monitor.writers, 'the producer matched')
        assert producer.stdout.readline().strip() == 'matched'
        threading.Thread(target=follow, daemon=True).start()
        until(lambda: published[0] >= 50, '50 published')
        monitor._fail('refused by the test')
        refused_at = published[0]
        while published[0] < refused_at + 150:  # the producer goes on, nobody listens
            assert time.monotonic() < deadline + 60, 'the producer went on'
            time.sleep(0.02)
        until(lambda: monitor.writers, 'subscribed again')
        until(lambda: producer.poll() is not None, 'the producer done')
        node.take_all()
        topic = node.snapshot(final=True).topics[0]
    finally:
        node.destroy_node()
    report = topic.report
    assert published[0] == SLOTS
    # The producer's truth first: it lost nothing, never fell silent, skipped nothing.
    assert report.messages_lost_total == 0 and report.lost_by_monitor_total == 0
    assert report.outages_total == 0, (report.outage_max_ns, report.outage_max_at_ns,
                                       report.unmonitored_gap)
    assert report.skipped_periods_total == 0 and report.deadline_misses_total == 0
    # Every message was received or published while the monitor did not listen.
    assert report.unmonitored_total == 1
    # At least 150 published after the refusal, but for the up to 9 the producer had not
    # said yet when it came (it says its count every 10 messages).
    assert report.unmonitored_messages_total >= 150 - 9
    assert report.messages_total + report.unmonitored_messages_total == SLOTS
    assert "(refused: refused by the test): 1 gap(s) of the monitor's own" in topic.reason
    print(f'\nrefused: received {report.messages_total}, published while not monitored '
          f'{report.unmonitored_messages_total}, {report.unmonitored_ns / 1e9:.2f} s')
