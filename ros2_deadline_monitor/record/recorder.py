"""The live half of ``record``: raw subscriptions taken in batches into one bag.

Topics are found as the monitor finds them: named ones wait for their first publisher;
``all_topics`` adopts every topic ``monitor --all`` would
(``configuration/excluded_topics.py``). The QoS follows the publishers (``qos.choose_qos``); a
latched topic is subscribed transient local to get its history. Each subscription is raw, on a
node no executor spins, and its queue is taken every take period by
``subscriptions.make_drain``, as the monitor takes its queues, with the same fallback when the
middleware leaves a timestamp empty (``analysis/message_info.py``). Taken messages go to
``bag_writer.InOrder``, which writes them in log-time order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from rosbags.interfaces import (
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)

from ros2_deadline_monitor.analysis.config import NS_PER_S
from ros2_deadline_monitor.analysis.message_info import InfoFallback
from ros2_deadline_monitor.configuration.excluded_topics import excluded_reason
from ros2_deadline_monitor.configuration.parameters import ARRIVAL_TIMESTAMPS
from ros2_deadline_monitor.live.message_types import import_message, MessageTypeError
from ros2_deadline_monitor.live.qos import all_reliable, choose_qos
from ros2_deadline_monitor.live.subscriptions import make_drain
from ros2_deadline_monitor.record.bag_writer import BagWriter, InOrder, RecordError

__all__ = ['bag_qos', 'CLOCK_TOPIC', 'TopicRecorder', 'Recorder', 'REORDER_NS']

CLOCK_TOPIC = '/clock'
TOPIC_DEPTH = 1000
"""Reader queue of a topic: ten take periods of a 1 kHz topic; a full one is reported."""
CLOCK_DEPTH = 1000
REORDER_NS = 200_000_000
"""Taken messages wait this long (log time, behind the newest one taken) before they are
written, in log-time order: two take periods of ``record``, so a message that arrived just
after a take is still written before the later messages of the next one."""


def bag_qos(profile: QoSProfile) -> Qos:
    """Return an rclpy ``QoSProfile`` as the ``rosbags`` ``Qos`` stored for ``ros2 bag play``.

    rclpy's and rosbags' policy enums share their values (both are rmw's); durations are
    stored as rosbag2 stores them (infinite: 9223372036 s 854775807 ns).
    """
    def duration(value: Any) -> QosTime:
        return QosTime(*divmod(int(value.nanoseconds), NS_PER_S))

    return Qos(QosHistory(int(profile.history)), int(profile.depth),
               QosReliability(int(profile.reliability)), QosDurability(int(profile.durability)),
               duration(profile.deadline), duration(profile.lifespan),
               QosLiveliness(int(profile.liveliness)),
               duration(profile.liveliness_lease_duration),
               bool(profile.avoid_ros_namespace_conventions))


def _ignore(raw: bytes, info: dict[str, Any]) -> None:
    """Do nothing: the callback of a subscription no executor spins is never called."""


class TopicRecorder:
    """One topic to record: waiting for a publisher, then its raw subscription and connection.

    ``poll`` (every ``POLL_EVERY`` takes) looks at the publishers: it subscribes once they
    agree on a type that has a definition, and drops to best effort when a best effort
    publisher joins a reliable subscription. Each problem is logged once.
    """

    def __init__(self, node: Node, writer: BagWriter, topic: str, arrival_key: str,
                 depth: int, ordered: InOrder) -> None:
        """Prepare; subscribing waits for ``poll``."""
        self._node = node
        self._writer = writer
        self.topic = topic
        self._arrival_key = arrival_key
        self._depth = depth
        self._ordered = ordered
        self.type_name = ''
        self._connection: Any = None
        self._subscription: Any = None
        self._drain: Callable[[], int] | None = None
        self._reliable = False
        self._publishers = -1
        self._logged: set[str] = set()
        self.failed = False
        """True when the topic cannot be recorded (no definition, no message class)."""

    @property
    def subscribed(self) -> bool:
        """True while messages are recorded."""
        return self._drain is not None

    def _log_once(self, level: str, text: str) -> None:
        if text in self._logged:
            return
        self._logged.add(text)
        logger = self._node.get_logger()
        if level == 'info':
            logger.info(text)
        else:
            logger.warning(text)

    def poll(self) -> None:
        """Subscribe when the publishers allow it; downgrade to best effort when needed."""
        if self.failed:
            return
        count = self._node.count_publishers(self.topic)
        if self.subscribed and count == self._publishers:
            return
        self._publishers = count
        publishers = self._node.get_publishers_info_by_topic(self.topic)
        if not publishers:
            if not self.subscribed:
                self._log_once('info', f'waiting for a publisher on {self.topic}' + (
                    ' (recorded once a simulator publishes it)' if self.topic == CLOCK_TOPIC
                    else ''))
            return
        if not self.subscribed:
            self._subscribe(publishers)
            return
        if self._reliable and not all_reliable(publishers):
            self._log_once('info', f'a best effort publisher joined {self.topic}: recording it '
                                   'best effort')
            self.take()
            self._node.destroy_subscription(self._subscription)
            self._drain = self._subscription = None
            self._subscribe(publishers, reliable=False)

    def _subscribe(self, publishers: Sequence[Any], reliable: bool | None = None) -> None:
        types = sorted({p.topic_type for p in publishers})
        if len(types) > 1:
            self._log_once('warning', f'publishers on {self.topic} disagree on the type '
                                      f'({", ".join(types)}): not recorded until they agree')
            return
        if self.type_name and types[0] != self.type_name:
            self._log_once('warning', f'{self.topic} changed its type from {self.type_name} '
                                      f'to {types[0]}: not recorded until it is back')
            return
        try:
            msg_class = import_message(types[0])
            if self._connection is None:
                qos = []
                try:
                    qos = [bag_qos(p.qos_profile) for p in publishers]
                except (ValueError, TypeError, AttributeError):
                    pass  # an unknown policy value: the bag just stores no profile
                self._connection = self._writer.add_topic(self.topic, types[0], qos)
        except (MessageTypeError, RecordError) as err:
            self.failed = True
            self._node.get_logger().error(f'{self.topic} cannot be recorded: {err}')
            return
        self.type_name = types[0]
        choice = choose_qos(publishers, self._depth, None, reliable)
        profile = choice.profile
        if all(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
               for p in publishers):
            profile.durability = DurabilityPolicy.TRANSIENT_LOCAL  # latched: get the history
        connection, add = self._connection, self._ordered.add

        def record(arrival_ns: int, raw: bytes, sequence: int) -> None:
            add(connection, arrival_ns, raw)

        self._subscription = self._node.create_subscription(
            msg_class, self.topic, _ignore, profile,
            event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False), raw=True)
        self._drain = make_drain(self._subscription, record, self._arrival_key,
                                 InfoFallback(self._arrival_key))
        self._reliable = choice.reliable
        latched = ', transient local' if profile.durability == DurabilityPolicy.TRANSIENT_LOCAL \
            else ''
        self._node.get_logger().info(
            f'recording {self.topic} ({self.type_name}, '
            f'{"reliable" if choice.reliable else "best effort"}{latched})')

    def take(self) -> int:
        """Hand every queued message to the writer's ``InOrder``; return how many."""
        if self._drain is None:
            return 0
        count = self._drain()
        if count >= self._depth:
            self._log_once('warning', f'the reader queue of {self.topic} ({self._depth} '
                                      'messages) filled up between two takes: messages may '
                                      'have been dropped')
        return count

    def close(self) -> None:
        """Destroy the subscription (``Recorder.close`` takes what is queued first)."""
        if self._subscription is not None:
            self._node.destroy_subscription(self._subscription)
        self._drain = self._subscription = None


class Recorder:
    """The topics of one recording, taken in batches into one bag.

    ``take`` empties every reader queue and writes the messages that waited ``REORDER_NS``,
    in log-time order; ``poll`` reads the graph (and with ``all_topics`` adopts new topics).
    Both run on the caller's thread; nothing here spins an executor.
    """

    def __init__(self, node: Node, writer: BagWriter, topics: Sequence[str], *,
                 all_topics: bool = False, arrival_key: str = ARRIVAL_TIMESTAMPS['source']
                 ) -> None:
        """Record ``/clock`` and ``topics`` (resolved by ``node``) into ``writer``'s bag."""
        self._node = node
        self._writer = writer
        self._arrival_key = arrival_key
        self._all = all_topics
        self._ordered = InOrder(writer.write, REORDER_NS)
        self._clock = node.resolve_topic_name(CLOCK_TOPIC)
        self.topics: dict[str, TopicRecorder] = {}
        for topic in (self._clock, *topics):
            self._add(node.resolve_topic_name(topic))
        self._excluded: set[str] = set()
        self._own = node.get_fully_qualified_name()

    def _add(self, name: str) -> None:
        if name not in self.topics:
            depth = CLOCK_DEPTH if name == self._clock else TOPIC_DEPTH
            self.topics[name] = TopicRecorder(self._node, self._writer, name,
                                              self._arrival_key, depth, self._ordered)

    def poll(self) -> None:
        """Look at the graph: adopt new topics (``all_topics``), subscribe those that can be."""
        if self._all:
            for name, types in self._node.get_topic_names_and_types():
                if name in self.topics or name in self._excluded:
                    continue
                if excluded_reason(name, types, clock_topic=self._clock,
                                   own_namespace=self._own) is not None:
                    self._excluded.add(name)
                elif self._node.count_publishers(name) > 0:
                    self._add(name)
        for topic in self.topics.values():
            topic.poll()

    def take(self) -> int:
        """Take every queued message; write those that waited long enough; return how many."""
        for topic in self.topics.values():
            topic.take()
        return self._ordered.flush()

    def close(self, write: bool = True) -> None:
        """Write what is still queued or waiting (unless not ``write``); end the subscriptions."""
        try:
            if write:
                self.take()
                self._ordered.flush(everything=True)
        finally:
            for topic in self.topics.values():
                topic.close()
