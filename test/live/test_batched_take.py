"""Batched takes (``take_period_s`` > 0): exact counts, queue overflows, same figures as callbacks.

The publishers run in a second Context (another DDS participant, like another process) from a
plain thread, so the counts are compared with what was really sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import threading
import time
from typing import Any

from own_names import ns  # test/plugins: the test's own names
import pytest

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000


def test_take_depth_covers_a_second_or_four_take_periods():
    from ros2_deadline_monitor.live.qos import (
        take_depth,
        TAKE_MAX_DEPTH,
        TAKE_MIN_DEPTH,
        TAKE_UNKNOWN_RATE_DEPTH,
    )

    assert take_depth(NS_PER_MS, 50 * NS_PER_MS) == 1000  # 1 kHz: a second of messages
    assert take_depth(NS_PER_MS, 500 * NS_PER_MS) == 2000  # 4 take periods of 500 ms
    assert take_depth(100 * NS_PER_MS, 50 * NS_PER_MS) == TAKE_MIN_DEPTH
    assert take_depth(1000, 1000 * NS_PER_MS) == TAKE_MAX_DEPTH
    assert take_depth(None, 50 * NS_PER_MS) == TAKE_UNKNOWN_RATE_DEPTH
    assert take_depth(NS_PER_MS, 50 * NS_PER_MS, override=7) == 7


def test_a_slow_topic_is_taken_as_often_as_its_queue_needs_with_room_to_spare():
    from ros2_deadline_monitor.live.qos import take_depth, TAKE_MAX_STRIDE, take_stride

    take = 50 * NS_PER_MS
    assert take_stride(None, 1000, take) == 1  # unknown rate: every take
    assert take_stride(NS_PER_MS, take_depth(NS_PER_MS, take), take) == 2  # 1 kHz: 100 ms
    assert take_stride(1000 * NS_PER_MS, 50, take) == TAKE_MAX_STRIDE  # 1 Hz: 4 s
    for period_ms in (1, 2, 5, 10, 20, 100, 1000):
        period = period_ms * NS_PER_MS
        depth = take_depth(period, take)
        stride = take_stride(period, depth, take)
        # Between two takes the queue fills to a tenth at most: a burst of 10x still fits.
        assert stride * take * 10 <= depth * period
    assert take_stride(NS_PER_MS, 1000, 0) == 1


def test_a_strided_queue_is_taken_well_within_its_timeout():
    from ros2_deadline_monitor.analysis.config import resolve_timing, TopicConfig
    from ros2_deadline_monitor.live.qos import TAKE_MAX_STRIDE, take_stride

    take, depth = 50 * NS_PER_MS, 1000  # a learned period keeps the unknown-rate depth
    for period_ms in (150, 200, 500, 1000, 5000):
        timing = resolve_timing(TopicConfig(name='t', topic='/t'), period_ms * NS_PER_MS,
                                True, 1.0)
        stride = take_stride(timing.period_ns, depth, take, timing.timeout_ns)
        # The last message taken is never older than the timeout at a report (plus a
        # period and a late take timer), so a standing topic is not refreshed as silent.
        assert stride * take <= 0.75 * timing.timeout_ns, period_ms
        assert stride == min(TAKE_MAX_STRIDE, int(0.75 * timing.timeout_ns) // take)
    # 1 Hz (timeout 10 s): the longest stride; 5 Hz (timeout 2 s): every 1.5 s.
    assert take_stride(NS_PER_S, depth, take, 10 * NS_PER_S) == TAKE_MAX_STRIDE
    assert take_stride(200 * NS_PER_MS, depth, take, 2 * NS_PER_S) == 30
    assert take_stride(200 * NS_PER_MS, depth, take, 100 * NS_PER_MS) == 1


def test_a_queue_of_unknown_rate_is_taken_as_often_as_its_takes_show_it_needs():
    from ros2_deadline_monitor.live.qos import (
        observed_stride,
        TAKE_MAX_STRIDE,
        take_stride,
        TAKE_UNKNOWN_RATE_DEPTH,
    )

    take, depth = 50 * NS_PER_MS, TAKE_UNKNOWN_RATE_DEPTH
    # Found empty: half as often each time, up to the longest stride.
    strides = [1]
    for _ in range(8):
        strides.append(observed_stride(0, strides[-1] * take, strides[-1], depth, take))
    assert strides == [1, 2, 4, 8, 16, 32, 64, TAKE_MAX_STRIDE, TAKE_MAX_STRIDE]
    # Found holding messages: the stride a known period of that rate gets.
    for period_ms in (1, 2, 5, 10, 20, 100, 1000):
        period = period_ms * NS_PER_MS
        for stride in (1, 3, TAKE_MAX_STRIDE):
            elapsed = stride * take
            taken = elapsed // period
            if taken and elapsed % period == 0:  # else the rate seen is another one
                assert observed_stride(taken, elapsed, stride, depth, take) == take_stride(
                    period, depth, take), (period_ms, stride)
    # Whatever was found, the next take comes before a tenth of the queue fills at that rate.
    for taken in (1, 7, 50, 333, depth):
        for elapsed in (take // 2, take, 7 * take, 2 * TAKE_MAX_STRIDE * take):
            stride = observed_stride(taken, elapsed, TAKE_MAX_STRIDE, depth, take)
            assert 1 <= stride <= TAKE_MAX_STRIDE
            assert stride == 1 or stride * take * taken * 10 <= depth * elapsed
    assert observed_stride(depth, take, 8, depth, take) == 1  # a full queue: every take
    assert observed_stride(5, take, 4, depth, 0) == 1  # takes off (callbacks)


def test_take_period_is_validated():
    from ros2_deadline_monitor.analysis.errors import ConfigError
    from ros2_deadline_monitor.configuration.parameters import settings_from

    assert settings_from({}).take_period_ns == 50 * NS_PER_MS
    assert settings_from({'take_period_s': 0.0}).take_period_ns == 0
    assert settings_from({'take_queue_depth': 9}).take_queue_depth == 9
    with pytest.raises(ConfigError, match='take_period_s'):
        settings_from({'take_period_s': -0.1})


class Publisher:
    """Publishes ``std_msgs/Header`` on a topic from its own participant, paced by a thread."""

    def __init__(self, context: Any, topic: str, reliable: bool = True) -> None:
        from rclpy.node import Node
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from std_msgs.msg import Header

        self.node = Node('batched_publisher', context=context)
        qos = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE if reliable
                         else ReliabilityPolicy.BEST_EFFORT)
        self.publisher = self.node.create_publisher(Header, topic, qos)
        self.header = Header()
        self.sent = 0

    def publish(self, count: int = 1, period_ns: int = 0,
                pause: Callable[[int], int] = lambda i: 0) -> None:
        """Publish ``count`` messages every ``period_ns`` (0: at once) plus ``pause(i)`` ns."""
        next_ns = time.monotonic_ns()
        for i in range(count):
            next_ns += pause(i)
            delay = next_ns - time.monotonic_ns()
            if delay > 0:
                time.sleep(delay / 1e9)
            self.publisher.publish(self.header)
            self.sent += 1
            next_ns += period_ns

    def publish_in_thread(self, *args: Any, **kwargs: Any) -> threading.Thread:
        """Run ``publish`` in a thread and return it (already started)."""
        thread = threading.Thread(target=self.publish, args=args, kwargs=kwargs, daemon=True)
        thread.start()
        return thread


@pytest.fixture
def publisher(second_context: Any) -> Iterator[Callable[..., Publisher]]:
    """Return a function creating a ``Publisher`` in the second context."""
    made: list[Publisher] = []

    def make(topic: str, reliable: bool = True) -> Publisher:
        pub = Publisher(second_context, topic, reliable)
        made.append(pub)
        return pub

    yield make
    for pub in made:
        pub.node.destroy_node()


class StatsListener:
    """Keeps the newest ``TopicStats`` of one monitor node (in the test's namespace)."""

    def __init__(self, context: Any, monitor_name: str) -> None:
        from rclpy.node import Node
        from rclpy.qos import QoSProfile

        from ros2_deadline_monitor.msg import MonitorStats

        self.node = Node(f'{monitor_name}_listener', context=context)
        self.lock = threading.Lock()
        self.latest: dict[str, Any] = {}
        self.node.create_subscription(MonitorStats, f'{monitor_name}/stats', self._on_stats,
                                      QoSProfile(depth=100))

    def _on_stats(self, msg: Any) -> None:
        with self.lock:
            for topic in msg.topics:
                self.latest[topic.name] = topic

    def topic(self, name: str) -> Any:
        """Return the newest stats of identifier ``name``, or None."""
        with self.lock:
            return self.latest.get(name)


def _subscribed(node: Any, topic_id: str) -> bool:
    monitor = node.topic_monitors.get(topic_id)
    return monitor is not None and monitor.depth > 0


def test_exact_counts_at_1khz_for_2s(ros_context, spin, observer, start_monitor, publisher,
                                     wait_for, key_values):
    monitor = start_monitor(topics=['hz'], topic__hz__name=ns('/hz'), topic__hz__rate_hz=1000.0,
                            stats_period_s=0.2, take_queue_depth=2000)
    pub = publisher(ns('/hz'))
    wait_for(lambda: pub.publisher.get_subscription_count() >= 1, what='the monitor to match')
    wait_for(lambda: _subscribed(monitor, 'hz'), what='the monitor to subscribe')
    pub.publish(2000, period_ns=NS_PER_MS)

    stats = wait_for(lambda: (t := observer.topic_stats('hz')) is not None
                     and t.messages_total == pub.sent and t,
                     what=f'stats covering all {pub.sent} messages')
    assert stats.messages_lost_total == 0
    assert stats.malformed_total == 0
    topic = monitor.topic_monitors['hz']
    assert topic.depth == 2000
    assert topic.queue_overflows == 0
    # ... and no warning says it filled up (the log names what happened, not every take).
    assert not [text for text in topic._logged if 'filled up' in text]
    status = wait_for(lambda: (s := observer.status(': topic hz')) is not None
                      and key_values(s).get('messages total') == str(pub.sent) and s,
                      what='the topic diagnostic covering all messages')
    values = key_values(status)
    assert values['receive'] == 'batched every 50 ms'
    assert values['reader queue depth'] == '2000'
    assert values['queue overflows total'] == '0'


def test_tiny_queue_overflows_and_lost_is_sent_minus_received(
        ros_context, spin, observer, start_monitor, publisher, wait_for, key_values):
    monitor = start_monitor(topics=['burst'], topic__burst__name=ns('/burst'),
                            topic__burst__rate_hz=1000.0, stats_period_s=0.2,
                            take_period_s=0.2, take_queue_depth=5)
    pub = publisher(ns('/burst'))
    wait_for(lambda: pub.publisher.get_subscription_count() >= 1, what='the monitor to match')
    wait_for(lambda: _subscribed(monitor, 'burst'), what='the monitor to subscribe')
    # A first message on its own: losses are counted from the first sequence number seen.
    pub.publish(1)
    wait_for(lambda: (t := observer.topic_stats('burst')) is not None and t.messages_total == 1,
             what='the first message')
    pub.publish(1000)  # at once: far more than 5 messages between two takes 200 ms apart

    # The newest messages always stay queued, so the last one sent is received.
    def settled():
        t = observer.topic_stats('burst')
        return t is not None and (t.messages_total + t.messages_lost_total
                                  + t.messages_lost_by_monitor_total == pub.sent) and t

    stats = wait_for(settled, what='received + lost to cover every message sent')
    # Every message not received was dropped by the monitor's own queue, none by the network.
    assert stats.messages_lost_by_monitor_total == pub.sent - stats.messages_total
    assert stats.messages_lost_by_monitor_total > 0 and stats.messages_lost_total == 0
    topic = monitor.topic_monitors['burst']
    assert topic.depth == 5
    assert topic.queue_overflows > 0
    assert [text for text in topic._logged if 'filled up' in text]
    status = wait_for(lambda: (s := observer.status(': topic burst')) is not None
                      and int(key_values(s).get('queue overflows total', '0')) > 0 and s,
                      what='the overflow in the diagnostics')
    assert key_values(status)['messages lost by monitor total'] == str(
        stats.messages_lost_by_monitor_total)


def test_batched_and_callback_modes_report_the_same_figures(
        ros_context, spin, observer, start_monitor, publisher, wait_for):
    from rclpy.parameter import Parameter

    from ros2_deadline_monitor.live.monitor_node import MonitorNode

    # Source timestamps are the writer's: both monitors see the very same stream of times.
    settings = dict(topics=['stream'], topic__stream__name=ns('/stream'),
                    topic__stream__period_ms=10.0, arrival_timestamp='source',
                    stats_period_s=0.2)
    batched = start_monitor(**settings)
    listener = StatsListener(ros_context, 'classic_monitor')
    spin(listener.node, destroy=True)
    overrides = [Parameter(k.replace('__', '.'), value=v) for k, v in settings.items()]
    classic = MonitorNode('classic_monitor', context=ros_context, parameter_overrides=[
        *overrides, Parameter('take_period_s', value=0.0)])
    spin(classic, destroy=True)
    pub = publisher(ns('/stream'))
    wait_for(lambda: pub.publisher.get_subscription_count() >= 2,
             what='both monitors to match')
    wait_for(lambda: _subscribed(batched, 'stream') and _subscribed(classic, 'stream'),
             what='both monitors to subscribe')
    # 100 Hz with a 25 ms pause every 20th message: misses and skipped periods.
    pub.publish(300, period_ns=10 * NS_PER_MS,
                pause=lambda i: 25 * NS_PER_MS if i % 20 == 19 else 0)

    def both_done():
        a, b = observer.topic_stats('stream'), listener.topic('stream')
        return (a is not None and b is not None and a.messages_total == pub.sent
                and b.messages_total == pub.sent and (a, b))

    a, b = wait_for(both_done, what=f'both monitors to count all {pub.sent} messages')
    assert a.deadline_misses_total == b.deadline_misses_total
    assert a.skipped_periods_total == b.skipped_periods_total
    assert a.messages_lost_total == b.messages_lost_total == 0
    assert a.interval_wall.max_ms == b.interval_wall.max_ms
    assert a.deadline_misses_total >= 300 // 20 - 1
    assert batched.topic_monitors['stream'].depth > 0
    assert classic.topic_monitors['stream'].receive.mode == 'callback'
    assert batched.topic_monitors['stream'].receive.mode == 'batched'


def test_an_event_topic_is_taken_less_often_while_quiet_and_a_burst_is_counted_exactly(
        ros_context, spin, observer, start_monitor, publisher, wait_for):
    from ros2_deadline_monitor.live.qos import TAKE_MAX_STRIDE, TAKE_UNKNOWN_RATE_DEPTH

    monitor = start_monitor(topics=['ev'], topic__ev__name=ns('/ev'), topic__ev__kind='event',
                            stats_period_s=0.2)
    pub = publisher(ns('/ev'))
    wait_for(lambda: pub.publisher.get_subscription_count() >= 1, what='the monitor to match')
    wait_for(lambda: _subscribed(monitor, 'ev'), what='the monitor to subscribe')
    topic = monitor.topic_monitors['ev']
    assert topic.depth == TAKE_UNKNOWN_RATE_DEPTH  # an event topic has no rate to size it by
    pub.publish(1)
    wait_for(lambda: (t := observer.topic_stats('ev')) is not None and t.messages_total == 1,
             what='the first message')
    # Quiet: its queue is found empty again and again, and taken ever less often.
    wait_for(lambda: topic.take_interval_ns == TAKE_MAX_STRIDE * 50 * NS_PER_MS,
             what='the quiet queue taken at the longest stride')
    # A burst after the quiet spell waits in the queue for the next take: none is lost.
    pub.publish(600)
    stats = wait_for(lambda: (t := observer.topic_stats('ev')) is not None
                     and t.messages_total == pub.sent and t,
                     what=f'stats covering all {pub.sent} messages')
    assert stats.messages_lost_total == 0
    assert topic.queue_overflows == 0


def test_a_new_subscription_is_taken_at_its_period_s_stride_again(
        ros_context, spin, observer, start_monitor, publisher, wait_for):
    from ros2_deadline_monitor.live.qos import take_stride

    monitor = start_monitor(topics=['ten'], topic__ten__name=ns('/ten'), topic__ten__rate_hz=10.0,
                            stats_period_s=0.2)
    pub = publisher(ns('/ten'))
    wait_for(lambda: pub.publisher.get_subscription_count() >= 1, what='the monitor to match')
    wait_for(lambda: _subscribed(monitor, 'ten'), what='the monitor to subscribe')
    topic = monitor.topic_monitors['ten']
    expected = take_stride(100 * NS_PER_MS, topic.depth, 50 * NS_PER_MS, NS_PER_S) * 50 * NS_PER_MS
    assert expected > 50 * NS_PER_MS
    wait_for(lambda: topic.take_interval_ns == expected, what='the stride of its period')
    subscription = topic._subscription
    # A QoS deadline asks for a new subscription, the same depth and period as before.
    (result,) = observer.set_parameters(topic__ten__qos_deadline_ms=500.0)
    assert result.successful, result.reason
    wait_for(lambda: topic._subscription is not subscription, what='the new subscription')
    wait_for(lambda: topic.take_interval_ns == expected,
             what='the new subscription taken at the stride of its period again')
