"""Live: a /tf-like topic from two broadcasters in participants of their own, per transform.

``tf2_msgs`` is not installable from PyPI: ``scripts/dev setup`` builds its ``TFMessage`` from
the upstream definition among the test interfaces. A type of another name laid out alike
(``TFMessageLike``) is recognized by its layout. Counts per transform are exact against what
each broadcaster recorded publishing.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from own_names import ns  # test/plugins: the test's own names
import pytest

TOPIC = '/tf_test_two_broadcasters'
OK, WARN, ERROR = 0, 1, 2


class Broadcaster:
    """Publishes its transforms in one TFMessageLike per timer period, up to ``limit``.

    Publishes only while the monitor's reader is matched, so its record is what the monitor
    can see; ``sent`` counts each transform it published.
    """

    def __init__(self, node: Any, types: tuple[Any, Any], topic: str,
                 pairs: list[tuple[str, str]], period_s: float, limit: int) -> None:
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        self.node, self.pairs, self.limit = node, pairs, limit
        self.message, self.element = types
        self.publisher = node.create_publisher(
            self.message, topic,
            QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE))
        self.lock = threading.Lock()
        self.sent = dict.fromkeys(pairs, 0)
        self.timer = node.create_timer(period_s, self._tick)

    @property
    def done(self) -> bool:
        with self.lock:
            return min(self.sent.values()) >= self.limit

    def _tick(self) -> None:
        with self.lock:
            if (min(self.sent.values()) >= self.limit
                    or not self.publisher.get_subscription_count()):
                return
            stamp = self.node.get_clock().now().to_msg()
            transforms = []
            for parent, child in self.pairs:
                element = self.element(child_frame_id=child)
                element.header.stamp = stamp
                element.header.frame_id = parent
                element.transform.rotation.w = 1.0
                transforms.append(element)
            self.publisher.publish(self.message(transforms=transforms))
            for pair in self.pairs:
                self.sent[pair] += 1


def transform_values(status: Any) -> dict[str, str]:
    return {kv.key[len('transform '):]: kv.value for kv in status.values
            if kv.key.startswith('transform ')}


def messages_of(value: str) -> int:
    match = re.search(r'\bmessages (\d+)', value)
    assert match, value
    return int(match.group(1))


@pytest.fixture
def tf2_types() -> tuple[Any, Any]:
    """Return ``tf2_msgs/TFMessage`` and its element type (skip without the test interfaces)."""
    from geometry_msgs.msg import TransformStamped
    try:
        from tf2_msgs.msg import TFMessage
    except ImportError:
        pytest.skip('tf2_msgs is not built: run scripts/dev setup')
    return TFMessage, TransformStamped


def test_two_broadcasters_each_transform_counted_exactly(
        participant, observer, start_monitor, wait_for, key_values, tf2_types) -> None:
    start_monitor(topics=['tf'], topic__tf__name=ns(TOPIC), topic__tf__kind='event',
                  stats_period_s=0.2, topic__tf__expect__min_transform_rate_hz=5.0)
    robot, localization = participant(), participant()
    fast = Broadcaster(robot.node('tf_test_robot'), tf2_types, ns(TOPIC),
                       [('odom', 'base_link'), ('base_link', 'laser')], 0.02, 100)
    slow = Broadcaster(localization.node('tf_test_localization'), tf2_types, ns(TOPIC),
                       [('map', 'odom')], 0.1, 20)
    robot.start()
    localization.start()
    wait_for(lambda: fast.done and slow.done, timeout=60, what='both broadcasters done')
    sent = {**fast.sent, **slow.sent}

    def counted() -> Any:
        status = observer.status('topic tf')
        if status is None:
            return None
        values = transform_values(status)
        got = {name: messages_of(value) for name, value in values.items()}
        return (status, values) if got == {f'{p}->{c}': n for (p, c), n in sent.items()} \
            else None

    status, values = wait_for(counted, timeout=30,
                              what=lambda: f'the transforms counted as sent ({sent})')
    pairs = key_values(status)
    assert pairs['transforms'] == '3 tracked'
    # Two publishers, and neither a TFMessage nor the message info names its writer.
    assert pairs['transforms writer'].startswith('unknown: 2 publishers')
    assert 'rate (Hz)' in values['odom->base_link'] and 'mean age (ms)' in values['map->odom']
    assert pairs['expectations'] == '3 held, 0 failed'  # one per transform, 50, 50 and 10 Hz
    print(f'\ntransforms: {values}')


def test_one_broadcaster_is_the_named_writer(
        participant, observer, start_monitor, wait_for, test_msgs) -> None:
    topic = ns(TOPIC + '_one')
    start_monitor(topics=['tf'], topic__tf__name=topic, topic__tf__kind='event',
                  stats_period_s=0.2)
    part = participant()
    broadcaster = Broadcaster(part.node('tf_test_only_writer'),
                              (test_msgs.TFMessageLike, test_msgs.TransformStampedLike), topic,
                              [('world', 'robot')], 0.02, 30)
    part.start()
    wait_for(lambda: broadcaster.done, timeout=60, what='the broadcaster done')

    def named() -> Any:
        status = observer.status('topic tf')
        values = transform_values(status) if status is not None else {}
        value = values.get('world->robot', '')
        return value if value and messages_of(value) == 30 else None

    value = wait_for(named, timeout=30, what='30 transforms from one named writer')
    assert value.endswith(f'writer {ns("/tf_test_only_writer")}')


def test_latched_static_transforms_are_static_not_gaps(
        participant, observer, start_monitor, wait_for, key_values, tf2_types) -> None:
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    topic = ns('/tf_test_latched_transforms')  # static by its QoS, not by a tf_static name
    part = participant()
    node = part.node('tf_test_static_broadcaster')
    message, element = tf2_types
    latched = node.create_publisher(message, topic, QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL))
    transforms = []
    for child in ('imu', 'laser'):
        transform = element(child_frame_id=child)
        transform.header.frame_id = 'base_link'
        transform.header.stamp = node.get_clock().now().to_msg()
        transforms.append(transform)
    latched.publish(message(transforms=transforms))  # before the monitor exists
    part.start()
    start_monitor(topics=['tf'], topic__tf__name=topic, topic__tf__kind='event',
                  stats_period_s=0.2, topic__tf__expect__max_transform_gap_ms=1.0)

    def static() -> Any:
        status = observer.status('topic tf')
        values = transform_values(status) if status is not None else {}
        return status if set(values) == {'base_link->imu', 'base_link->laser'} else None

    status = wait_for(static, timeout=30, what='the two latched transforms')
    pairs = key_values(status)
    assert pairs['transforms'] == '2 static'
    for name in ('base_link->imu', 'base_link->laser'):
        value = transform_values(status)[name]
        assert messages_of(value) == 1
        assert 'rate' not in value and 'silent' not in value  # no rate, no gap expected
    assert status.level == bytes([OK])  # latched: never a gap, never waiting
    # A gap limit written for this topic cannot see a static transform: unknown, not passed.
    assert pairs['expectation failed: max_transform_gap_ms'].endswith(
        'unknown: only static transforms (a latched topic)')


def test_a_stopped_broadcaster_shows_as_its_frames_silence(
        participant, observer, start_monitor, wait_for, tf2_types) -> None:
    topic = TOPIC + '_stop'
    start_monitor(topics=['tf'], topic__tf__name=topic, topic__tf__kind='event',
                  stats_period_s=0.2)
    robot, localization = participant(), participant()
    fast = Broadcaster(robot.node('tf_test_stopping'), tf2_types, topic,
                       [('odom', 'base_link')], 0.02, 50)
    slow = Broadcaster(localization.node('tf_test_going_on'), tf2_types, topic,
                       [('map', 'odom')], 0.1, 200)
    robot.start()
    localization.start()
    wait_for(lambda: fast.done, timeout=60, what='the fast broadcaster done')

    def warned() -> Any:
        status = observer.status('topic tf')
        return status if status is not None and 'silent beyond' in status.message else None

    # Silent beyond 10 of its 20 ms intervals, at least 1 s, while the topic goes on.
    status = wait_for(warned, timeout=30, what='the stopped transform named in a WARN')
    assert status.level in (bytes([WARN]), bytes([ERROR]))
    assert '1 transform(s) silent beyond their timeout: odom->base_link' in status.message
    assert 'map->odom' not in status.message.split('silent beyond their timeout')[1]
    assert not slow.done  # the other broadcaster was still sending
    value = transform_values(status)['odom->base_link']
    assert messages_of(value) == fast.sent[('odom', 'base_link')] == 50


def test_gaps_stay_put_after_every_broadcaster_stopped(
        participant, observer, start_monitor, wait_for, tf2_types) -> None:
    """Two broadcasters at 100 Hz, then the whole topic stops (the run's end).

    That is the topic's silence, no gap of each transform: reports a second later say the same.
    """
    topic = ns(TOPIC + '_run_end')
    start_monitor(topics=['tf'], topic__tf__name=topic, stats_period_s=0.2)
    sim, controller = participant(), participant()
    bodies = Broadcaster(sim.node('tf_test_simulator'), tf2_types, topic,
                         [('world', 'pole'), ('world', 'cart')], 0.01, 150)
    reference = Broadcaster(controller.node('tf_test_controller'), tf2_types, topic,
                            [('world', 'reference')], 0.01, 150)
    sim.start()
    controller.start()
    wait_for(lambda: bodies.done and reference.done, timeout=60, what='both broadcasters done')
    sent = {f'{p}->{c}': n for (p, c), n in {**bodies.sent, **reference.sent}.items()}

    def counted() -> Any:
        status = observer.status('topic tf')
        values = transform_values(status) if status is not None else {}
        got = {name: messages_of(value) for name, value in values.items()}
        return values if got == sent else None

    values = wait_for(counted, timeout=30, what=lambda: f'the transforms counted as sent ({sent})')
    reports = len(observer.report_arrays())
    wait_for(lambda: len(observer.report_arrays()) >= reports + 6, timeout=30,
             what='six more reports (over a second)')
    status = observer.status('topic tf')
    # Nothing arrived since: the same silences (each up to the topic's last message), never
    # the time since the run ended, and no transform silent beyond its timeout.
    assert transform_values(status) == values
    assert 'silent beyond' not in status.message
