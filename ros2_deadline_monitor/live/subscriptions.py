"""One monitored topic: finding it in the graph, and its raw subscription.

The per-message path is the hot path (docs/design.md, Subscriptions): it hands the middleware
timestamp, the publication sequence number and the raw CDR bytes to the session's recorder, which
reads the size and (for types that start with a Header or Time) the stamp and stores the event.
Nothing is deserialized. Everything else (graph checks, analysis) runs on timers.

Two ways to get the messages (parameter ``take_period_s``):

- batched (the default): the subscription lives on a reader node that no executor spins,
  and a steady timer empties its queue with ``take_message`` (``make_drain``). rclpy's
  executor costs a few hundred µs of CPU per ready entity; a take loop costs a tenth of that.
  Handling later changes no figure, because every event carries the middleware's own
  timestamps. The queue depth covers several take periods (``qos.take_depth``); a take that
  finds the queue full counts a queue overflow, and the messages the full queue dropped are
  counted as lost from the publication sequence-number gaps like any other loss.
- per message (``take_period_s`` 0): a raw callback on the executor (``make_callback``).
  Topics with a middleware deadline QoS (``qos_deadline_ms``) always use this path: QoS
  events are waitables that need the executor, and rmw_fastrtps wakes a wait set holding a
  subscription's event whenever that subscription has unread data, so an event of a batched
  subscription on the spun node would keep the executor busy between two takes.
  Batched subscriptions get no event handlers at all (the default ones only log an
  incompatible QoS, which the QoS choice here avoids).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
import time
from typing import Any

from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.subscription import Subscription
from rclpy.time import Time
from rosgraph_msgs.msg import Clock as ClockMsg

from ros2_deadline_monitor.analysis.config import NS_PER_S, TopicConfig
from ros2_deadline_monitor.analysis.message_info import InfoFallback, RECEIVED, SOURCE
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.session import Recorder, Session, TopicState
from ros2_deadline_monitor.analysis.snapshot import Receive
from ros2_deadline_monitor.analysis.stamp_field import StampFieldError, StampRule
from ros2_deadline_monitor.live.graph_poll import NOT_SUBSCRIBED
from ros2_deadline_monitor.live.message_types import import_message, MessageTypeError
from ros2_deadline_monitor.live.qos import (
    all_reliable,
    all_transient_local,
    choose_qos,
    CLOCK_QOS,
    common_offered_deadline_ns,
    observed_stride,
    queue_depth,
    take_depth,
    take_stride,
)
from ros2_deadline_monitor.live.rosidl_layouts import laid_out_like_tf, stamp_rule_for_class

SEQUENCE_KEY = 'publication_sequence_number'
UNKNOWN_NODE = '_NODE_NAME_UNKNOWN_'
"""The node name rmw gives an endpoint whose node the graph does not know yet."""
_INT64_MAX = 2**63 - 1
"""rmw reports an unsupported sequence number as UINT64_MAX; it does not fit the int64 rings."""


class MessageCallback:
    """The raw ``(msg, info)`` callback of one topic: it only records the event.

    While the middleware fills the arrival timestamp and the sequence number, the event goes
    straight to the recorder (two dict reads and a comparison). The first message that lacks
    one hands this and every later message to the fallback (``analysis/message_info.py``): the
    received timestamp (then the take time) for a missing source timestamp, no sequence
    number (loss unknown) for a missing one, for the rest of the stream. Never a 0 interval.
    """

    __slots__ = ('_arrival_key', '_degraded', '_fallback', '_record')

    def __init__(self, record: Recorder, arrival_key: str,
                 fallback: InfoFallback | None = None) -> None:
        self._record = record
        self._arrival_key = arrival_key
        self._fallback = fallback if fallback is not None else InfoFallback(arrival_key)
        self._degraded = self._fallback.degraded

    def on_message(self, raw: bytes, info: dict[str, Any]) -> None:
        """Record one message with the middleware's timestamp and sequence number."""
        if not self._degraded:
            arrival = info[self._arrival_key]
            seq = info[SEQUENCE_KEY]
            if arrival and 0 < seq <= _INT64_MAX:
                self._fallback.complete += 1
                self._record(arrival, raw, seq)
                return
            self._degraded = True
        fb = self._fallback
        arrival = fb.arrival_ns(info.get(SOURCE), info.get(RECEIVED), time.time_ns())
        number = fb.sequence(info.get(SEQUENCE_KEY))
        self._record(arrival, raw, NO_VALUE if number is None or number > _INT64_MAX else number)


def make_callback(record: Recorder, arrival_key: str, fallback: InfoFallback | None = None
                  ) -> Callable[[bytes, dict[str, Any]], None]:
    """Return the raw ``(msg, info)`` callback of one topic (``MessageCallback``)."""
    return MessageCallback(record, arrival_key, fallback).on_message


class SkipLatched:
    """A ``transient_local`` subscription's callback: latched messages are not cycles.

    A message its writer published before the subscription existed (source timestamp, on
    the system clock like ``subscribed_ns``) was kept for late readers: ``latched`` counts
    it (``latched(raw, info)``: a /tf_static's transforms still count, as static ones), the
    cycle analysis never sees it. Only latched topics pay the comparison.
    """

    __slots__ = ('_latched', '_on_message', '_subscribed_ns')

    def __init__(self, on_message: Callable[[bytes, dict[str, Any]], None], subscribed_ns: int,
                 latched: Callable[[bytes, dict[str, Any]], None]) -> None:
        self._on_message = on_message
        self._subscribed_ns = subscribed_ns
        self._latched = latched

    def on_any(self, raw: bytes, info: dict[str, Any]) -> None:
        """Count a latched message, hand any other to the topic's callback."""
        if 0 < (info.get(SOURCE) or 0) < self._subscribed_ns:
            self._latched(raw, info)
            return
        self._on_message(raw, info)


def skip_latched(on_message: Callable[[bytes, dict[str, Any]], None], subscribed_ns: int,
                 latched: Callable[[bytes, dict[str, Any]], None]
                 ) -> Callable[[bytes, dict[str, Any]], None]:
    """Wrap a ``transient_local`` subscription's callback (``SkipLatched``)."""
    return SkipLatched(on_message, subscribed_ns, latched).on_any


class Drain:
    """The batch take of one topic: record every queued message, return how many.

    Each taken message goes through the same per-message callback as in the executor path.
    The subscription must not be spun by an executor (it would take the messages first).
    ``latched``: ``(subscribed_ns, count)`` of a ``transient_local`` one (``SkipLatched``).
    ``edges``: set to the first and last sequence numbers of each take that took any
    (``TopicMonitor.take`` counts its own queue's drops from them).
    """

    __slots__ = ('_edges', '_handle', '_msg_type', '_on_message')

    def __init__(self, subscription: Subscription, record: Recorder, arrival_key: str,
                 fallback: InfoFallback | None = None,
                 latched: tuple[int, Callable[[bytes, dict[str, Any]], None]] | None = None,
                 edges: list[int] | None = None) -> None:
        self._handle = subscription.handle
        self._msg_type = subscription.msg_type
        self._on_message = make_callback(record, arrival_key, fallback)
        if latched is not None:
            self._on_message = skip_latched(self._on_message, *latched)
        self._edges = edges

    def drain(self) -> int:
        """Take and record every queued message; return how many."""
        handle, msg_type, on_message, edges = (
            self._handle, self._msg_type, self._on_message, self._edges)
        take = handle.take_message
        count = 0
        last = None
        with handle:
            while (taken := take(msg_type, True)) is not None:
                on_message(*taken)
                if not count and edges is not None:
                    edges[0] = taken[1].get(SEQUENCE_KEY) or NO_VALUE
                last = taken
                count += 1
        if last is not None and edges is not None:
            edges[1] = last[1].get(SEQUENCE_KEY) or NO_VALUE
        return count


def make_drain(subscription: Subscription, record: Recorder, arrival_key: str,
               fallback: InfoFallback | None = None,
               latched: tuple[int, Callable[[bytes, dict[str, Any]], None]] | None = None,
               edges: list[int] | None = None) -> Callable[[], int]:
    """Return the batch take of one topic (``Drain.drain``)."""
    return Drain(subscription, record, arrival_key, fallback, latched, edges).drain


WAITING_NAMES = 10
"""Topic names in one "waiting for a publisher" or "monitoring" line; the rest are counted."""


def waiting_line(waiting: Sequence[tuple[str, str]]) -> str:
    """One log line for the topics (identifier, name) that started waiting for a publisher.

    A thousand configured topics start at once: one line names the first few, not a
    thousand lines.
    """
    if len(waiting) == 1:
        topic_id, topic = waiting[0]
        return f'{topic_id}: waiting for a publisher on {topic}'
    names = ', '.join(topic for _, topic in waiting[:WAITING_NAMES])
    more = len(waiting) - WAITING_NAMES
    return (f'waiting for a publisher on {len(waiting)} topics: {names}'
            f'{f" and {more} more" if more > 0 else ""}')


def monitoring_lines(started: Sequence[tuple[str, str]]) -> list[str]:
    """Return the info lines for the topics (name, line) whose subscriptions a look started.

    A few: their own lines (type, QoS, stamp). More than ``WAITING_NAMES`` (``--all`` on a
    robot): one line naming the first few. rclpy's logger looks up its caller's source file
    at every call, about 1 ms: a thousand lines held a thousand topics appearing together a
    second longer from their subscriptions.
    """
    if len(started) <= WAITING_NAMES:
        return [line for _, line in started]
    names = ', '.join(topic for topic, _ in started[:WAITING_NAMES])
    return [f'monitoring {len(started)} topics: {names} and {len(started) - WAITING_NAMES} '
            'more (a line each at debug level)']


def _ignore(raw: bytes, info: dict[str, Any]) -> None:
    """Do nothing: the callback of a subscription that no executor spins is never called."""


class TopicMonitor:
    """A configured topic's place in the graph and its subscription; the session analyzes.

    ``poll`` (on a steady timer) looks the topic up in the graph: it subscribes when the
    first publisher appears, moves to ERROR when publishers disagree on the type, recovers
    when they agree again, and drops to best effort when an unreliable publisher joins.
    Each distinct condition is logged once; ``report_status`` tells the session.

    With a ``reader`` node (never spun) and a ``take_period_ns``, messages are taken in
    batches by ``take``; without, a callback per message runs on ``node``'s executor.
    """

    def __init__(self, node: Node, session: Session, topic_id: str, stats_period_ns: int,
                 arrival_key: str, reader: Node | None = None, take_period_ns: int = 0,
                 take_queue_depth: int = 0) -> None:
        """Prepare; subscribing waits for ``poll``."""
        self._node = node
        self._session = session
        self.topic_id = topic_id
        self._reader = reader if take_period_ns > 0 else None
        self._take_period_ns = take_period_ns
        self._take_queue_depth = take_queue_depth
        self._drain: Callable[[], int] | None = None
        self._take_left: Callable[[], int] | None = None
        """Takes what a per-message subscription's queue still holds (``take_left``)."""
        self.depth = 0
        """History depth of the current subscription (0 before subscribing)."""
        self.queue_overflows = 0
        """Takes that found the reader queue full (its oldest messages may have been lost)."""
        self.lost_by_monitor = 0
        """Messages the reader queue dropped between two takes (``take``): the monitor's."""
        self._loss_unseen = ''
        """Why the queue's drops could not be counted (full at the subscription's first take)."""
        self._edges = [NO_VALUE, NO_VALUE]
        """First and last sequence numbers of the latest take (``make_drain``)."""
        self._last_seq: int | None = None
        """The last sequence number taken from the current subscription (None: none yet)."""
        self._stride = 1
        """Every how many take periods the queue is taken (``qos.take_stride``, and
        ``qos.observed_stride`` while the rate is not known)."""
        self.take_interval_ns = take_period_ns
        """How often the take timer needs to take this topic's queue: the stride's periods
        (an attribute, not a property: every report reads it for every topic)."""
        self._rate_known = False
        self._taken_ns = 0
        """Monotonic time of the previous take (``observed_stride``)."""
        self._logger = node.get_logger()
        self._stats_period_ns = stats_period_ns
        self._arrival_key = arrival_key
        self.state = TopicState.WAITING
        self.reason = f'waiting for a publisher on {self.config.topic}'
        self.type_name = ''
        self.stamp_rule: StampRule | None = None
        self.transforms = False
        """Whether the type is laid out like ``tf2_msgs/TFMessage``: figures per transform."""
        """Where the stamp is read from the raw bytes (None: the type has none)."""
        self.fallback = InfoFallback(arrival_key)
        """What the middleware leaves empty in this topic's message infos (the whole stream)."""
        self._publishers: tuple[str, ...] = ()
        self.settled = True
        """False when the last look found matched writers the graph could not name yet."""
        self._unreported = True
        """A look at the graph (or a change of subscription) the session was not told yet."""
        self._reported: tuple | None = None
        """What the session was told last (``report_status``)."""
        self._fallback_reported: tuple | None = None
        """The fallback's ``state_key`` the session was told last (``news``)."""
        self._offered_deadline_ns = 0
        """The deadline QoS every publisher offers, from the graph (0: none, or they differ)."""
        self._subscription: Subscription | None = None
        self._reliable: bool | None = None
        self._transient_local = False
        """The subscription receives what writers kept (every publisher offered it)."""
        self._latched: tuple[int, Callable[[bytes, dict[str, Any]], None]] | None = None
        """``(subscribed_ns, count)`` of a ``transient_local`` subscription (``skip_latched``)."""
        self._logged: set[str] = set()
        self.wait_unsaid = False
        """It started waiting for a publisher and nobody said so yet (``waiting_line``)."""
        self.started_unsaid = ''
        """The line of a subscription it started that nobody said yet (``monitoring_lines``)."""

    @property
    def config(self) -> TopicConfig:
        """The configuration in force (the session's)."""
        return self._session.config(self.topic_id)

    @property
    def writers(self) -> int:
        """Publishers matched by the subscription (0 before subscribing)."""
        if self._subscription is None:
            return 0
        return self._subscription.handle.get_publisher_count()

    @property
    def matched_writers(self) -> int:
        """Publishers matched by the subscription; ``graph_poll.NOT_SUBSCRIBED`` without one.

        Read from the handle: ``Subscription.get_publisher_count`` also enters the handle's
        context, which doubles the cost (every report asks every topic). Nothing else holds
        the handle: this node is spun by one thread, and only it destroys a subscription.
        """
        if self._subscription is None:
            return NOT_SUBSCRIBED
        return self._subscription.handle.get_publisher_count()

    def _set_stride(self, stride: int) -> None:
        """Take the queue every ``stride`` take periods."""
        self._stride = stride
        self.take_interval_ns = stride * self._take_period_ns

    @property
    def rate_known(self) -> bool:
        """True when the take stride follows a known period (``qos.take_stride``)."""
        return self._rate_known

    @property
    def batched(self) -> bool:
        """True while the messages are taken in batches (``take`` has something to do)."""
        return self._drain is not None

    @property
    def receive(self) -> Receive:
        """How this topic's messages are received now."""
        if self._drain is not None:
            return Receive('batched', self._take_period_ns, self.depth, self.queue_overflows,
                           self.lost_by_monitor, self._loss_unseen)
        return Receive('callback', 0, self.depth, 0)

    @property
    def news(self) -> bool:
        """True when something the session was not told yet may have changed without a refresh.

        A look at the graph (``poll``; the graph read looks at a topic whose matched writers
        changed), a change of subscription, a queue overflow or a change in what the
        middleware leaves empty (``take``). A report tells a topic whose snapshot stands only
        then (``MonitorNode.snapshot``).
        """
        return self._unreported

    def report_status(self) -> None:
        """Tell the session what the graph and the subscription say about this topic.

        Also sets how often the take timer takes this topic's queue (``qos.take_stride``),
        from the period the session knows now. Without a subscription nothing changes
        between two looks at the graph: the session is told once after each look.
        """
        if self._subscription is None:
            if not self._unreported:
                return
            writers = 0
        else:
            writers = self.matched_writers
        self._unreported = False
        timing = self._session.timing(self.topic_id) if self._drain is not None else None
        self._fallback_reported = self.fallback.state_key
        key = (self.state, self.reason, self.type_name, self._publishers, writers, self.depth,
               self.queue_overflows, self._offered_deadline_ns, self._fallback_reported,
               timing, self._drain is None)
        if key == self._reported:
            return  # the session knows all of it already
        self._reported = key
        if self._drain is not None:
            self._rate_known = timing is not None
            self._set_stride(take_stride(timing.period_ns if timing else None, self.depth,
                                         self._take_period_ns,
                                         timing.timeout_ns if timing else None))
        self._session.topic_status(
            self.topic_id, self.state, self.reason, type_name=self.type_name,
            publishers=self._publishers, writers=writers, receive=self.receive,
            offered_deadline_ns=self._offered_deadline_ns,
            fallback=self.fallback.status())

    def _log_once(self, level: str, text: str) -> None:
        # One call site per severity: rclpy refuses a severity change at one call site.
        if text in self._logged:
            return
        self._logged.add(text)
        if level == 'info':
            self._logger.info(text)
        elif level == 'warning':
            self._logger.warning(text)
        else:
            self._logger.error(text)

    def poll(self) -> None:
        """Check the graph and subscribe, fail or recover as the publishers say."""
        self._unreported = True
        topic = self.config.topic
        publishers = self._node.get_publishers_info_by_topic(topic)
        self._publishers = tuple(sorted(
            {f'{p.node_namespace.rstrip("/")}/{p.node_name}' for p in publishers}))
        # The subscription may match a writer before the graph knows its node: look again.
        self.settled = (len(publishers) >= self.writers
                        and not any(p.node_name == UNKNOWN_NODE for p in publishers))
        types = sorted({p.topic_type for p in publishers})
        if publishers:  # a publisher that left says nothing about the next one
            self._offered_deadline_ns = common_offered_deadline_ns(publishers)
        if not types:
            waiting = f'waiting for a publisher on {topic}'
            if self.state is TopicState.WAITING and waiting not in self._logged:
                self._logged.add(waiting)
                self.wait_unsaid = True  # said by the node, for all such topics in one line
            return
        if len(types) > 1:
            reason = f'publishers on {topic} disagree on the type: {", ".join(types)}'
            if self._subscription is not None and self.type_name in types:
                # A reader matches writers of its own type only: it goes on counting them.
                # Dropping it made a gap the monitor caused, counted as their loss and outage.
                self.state, self.reason = TopicState.ERROR, reason
                self._log_once('error', f'{self.config.name}: {reason}')
                return
            self._fail(reason)
            return
        if self.type_name and types[0] != self.type_name:
            # Sticky until the first type is back: two types' figures must not be mixed.
            self._fail(f'type of {topic} changed from {self.type_name} to {types[0]}; '
                       f'monitoring resumes when it is {self.type_name} again (set '
                       f'topic.{self.config.name}.name again or restart to take the new type)')
            return
        if self._subscription is not None and self.state is TopicState.ERROR:
            self.state, self.reason = TopicState.RECEIVING, ''  # the other type left
        if self._subscription is None:
            self._subscribe(types[0], publishers)
        elif self._reliable and not all_reliable(publishers):
            self._log_once('info', f'{self.config.name}: a best effort publisher joined '
                                   f'{topic}; subscribing best effort')
            self._resubscribe(publishers, reliable=False,
                              why='re-subscribed: reliability downgrade')
        elif self._transient_local and not all_transient_local(publishers):
            # A transient_local reader matches no volatile writer: the topic would fall silent.
            self._log_once('info', f'{self.config.name}: a volatile publisher joined '
                                   f'{topic}; subscribing volatile')
            self._resubscribe(publishers, reliable=self._reliable,
                              why='re-subscribed: durability change')

    def stamp_refusal(self, stamp: str, stamp_field: str) -> str | None:
        """Say why this topic's type cannot give the stamp these settings ask for, else None.

        Nothing to say before the type is known (checked when it subscribes) or when the
        settings do not need a stamp (``TopicConfig.stamp_required``).
        """
        config = replace(self.config, stamp=stamp, stamp_field=stamp_field)
        if not self.type_name or not config.stamp_required:
            return None
        try:
            stamp_rule_for_class(import_message(self.type_name), stamp_field)
        except (StampFieldError, MessageTypeError) as err:
            return f'{stamp_field} of {self.type_name} cannot be read: {err}'
        return None

    def _fail(self, reason: str) -> None:
        self._unsubscribe(f'refused: {reason.split("; ")[0]}')  # its first clause names it
        self.state = TopicState.ERROR
        self.reason = reason
        self._log_once('error', f'{self.config.name}: {reason}')

    def _subscribe(self, type_name: str, publishers: list, reliable: bool | None = None) -> None:
        try:
            msg_class = import_message(type_name)
        except MessageTypeError as err:
            self._fail(str(err))
            return
        config = self.config
        try:
            self.stamp_rule = stamp_rule_for_class(msg_class, config.stamp_field)
        except StampFieldError as err:
            self.stamp_rule = None
            if config.stamp_required:
                # A cycle start or a configured field that cannot be read: refuse, do not
                # guess from arrivals (the figures would mean something else).
                self.type_name = type_name
                self._fail(f'stamp_field {config.stamp_field} of {type_name} cannot be read: '
                           f'{err}')
                return
        self.type_name = type_name
        choice = choose_qos(publishers, 1, config.qos_deadline_ns, reliable)  # depth below
        if choice.deadline_note:
            self._log_once('warning', f'{config.name}: {choice.deadline_note}')
        profile = choice.profile
        batched = self._reader is not None and profile.deadline.nanoseconds == 0
        # A leading stamp's rule reads with ``read_stamp_ns``, exactly as fast as before.
        self.transforms = laid_out_like_tf(msg_class)
        record = self._session.recorder(
            self.topic_id, self.stamp_rule.read if self.stamp_rule else None,
            transforms=self.transforms, static=choice.transient_local)
        session, topic_id = self._session, self.topic_id
        subscribed_ns = time.time_ns()  # what arrives from now on is this subscription's
        arrival_key = self._arrival_key
        latched = ((subscribed_ns, lambda raw, info: session.latched(
            topic_id, info.get(arrival_key) or time.time_ns(), raw))
            if choice.transient_local else None)
        self._latched = latched
        if batched:
            profile.depth = take_depth(config.period_ns, self._take_period_ns,
                                       self._take_queue_depth)
            self._subscription = self._create_batched(msg_class, profile, record, latched)
        else:
            if self._reader is not None:
                self._log_once('info', f'{config.name}: QoS deadline events need the executor: '
                                       'one callback per message on this topic')
            profile.depth = queue_depth(config.period_ns, self._stats_period_ns)
            events = SubscriptionEventCallbacks()
            if profile.deadline.nanoseconds > 0:
                session, topic_id = self._session, self.topic_id
                events.deadline = lambda event: session.qos_deadline_missed(
                    topic_id, event.total_count_change)
            on_message = make_callback(record, self._arrival_key, self.fallback)
            if latched is not None:
                on_message = skip_latched(on_message, *latched)
            self._subscription = self._node.create_subscription(
                msg_class, config.topic, on_message, profile, event_callbacks=events, raw=True)
            self._take_left = make_drain(self._subscription, record, self._arrival_key,
                                         self.fallback, latched)
        self.depth = profile.depth
        self._reliable = choice.reliable
        self._transient_local = choice.transient_local
        self._logger.debug(
            f'{config.name}: subscribed to {config.topic}: '
            f'{"batched takes" if batched else "a callback per message"}, depth {profile.depth}, '
            f'{len(publishers)} publisher(s) in the graph')
        self.state = TopicState.RECEIVING
        self.reason = ''
        self._session.monitored(self.topic_id, subscribed_ns)  # ends a gap of its own, if any
        # The offered deadline reaches the session before any message of this subscription,
        # whenever the session processes them (a fast topic learns its period in 20 cycles).
        self._session.topic_status(self.topic_id, self.state, type_name=type_name,
                                   publishers=self._publishers,
                                   offered_deadline_ns=self._offered_deadline_ns)
        # In a user's words; where in the bytes the stamp is read is for a debug log.
        stamp = ('no stamp field' if self.stamp_rule is None
                 else f'stamp from {self.stamp_rule.path or "the message itself"}')
        self.started_unsaid = (
            f'{config.name}: monitoring {config.topic} ({type_name}, '
            f'{"reliable" if choice.reliable else "best effort"}'
            f'{", transient local" if choice.transient_local else ""}, {stamp})')
        if self.stamp_rule is not None:
            self._logger.debug(f'{config.name}: stamp read as {self.stamp_rule.describe()}')

    def _create_batched(self, msg_class: type, profile: QoSProfile, record: Recorder,
                        latched: tuple[int, Callable[[bytes, dict[str, Any]], None]] | None = None
                        ) -> Subscription:
        """Subscribe on the reader node, without event handlers (see the module docstring)."""
        assert self._reader is not None
        subscription = self._reader.create_subscription(
            msg_class, self.config.topic, _ignore, profile,
            event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False), raw=True)
        self._drain = make_drain(subscription, record, self._arrival_key, self.fallback,
                                 latched, self._edges)
        self._last_seq = None
        # Its rate is observed anew until the next report tells the stride from the period
        # (a new subscription with the same depth would otherwise leave the key of
        # ``report_status`` unchanged, and a 1 kHz topic taken every period for good).
        self._set_stride(1)
        self._rate_known, self._reported = False, None
        self._taken_ns = time.monotonic_ns()
        return subscription

    def take(self) -> int:
        """Record every message queued since the last take; return how many (batched mode).

        A take that returns a whole queue's worth counts as a (possible) queue overflow: the
        queue may have dropped its oldest messages, which the sequence numbers count as lost.
        """
        if self._drain is None:
            return 0
        count = self._drain()
        if not self._rate_known:
            now = time.monotonic_ns()
            self._set_stride(observed_stride(count, now - self._taken_ns, self._stride,
                                             self.depth, self._take_period_ns))
            self._taken_ns = now
        if self.fallback.state_key != self._fallback_reported:
            self._unreported = True  # rare: the stream degraded (or its first message came)
        if count >= self.depth:
            self.queue_overflows += 1
            self._unreported = True
            self._count_own_drops()
            self._log_once('warning', f'{self.config.name}: the reader queue ({self.depth} '
                                      'messages) filled up between two takes; what it dropped '
                                      "is counted as lost by the monitor's own queue (unknown "
                                      'at the first take; raise take_queue_depth or lower '
                                      'take_period_s)')
        if count:
            self._last_seq = self._edges[1]
        return count

    def take_left(self) -> int:
        """Take what a per-message subscription still holds; return how many (callback mode).

        Called where the executor does not spin (the final report, after the spin loop; a
        graph look, on the executor's own thread). With thousands of configured topics the
        executor lagged seconds behind the queues: a summary counted 460 of the 1,516
        messages received before SIGINT (issue 47). Its callback would find none of them.
        """
        return self._take_left() if self._take_left is not None else 0

    def _count_own_drops(self) -> None:
        """Count what the full queue dropped since the previous take: the monitor's loss.

        The gap between the previous take's last sequence number and this take's first,
        with one writer (several interleave their numbers). At the subscription's first take
        there is no number before: the drops are unknown, and so is the topic's loss.
        """
        first = self._edges[0] if self._edges[0] <= _INT64_MAX else NO_VALUE
        if self._last_seq is None:
            if first != NO_VALUE and first > 1:
                self._loss_unseen = (
                    f'the reader queue ({self.depth} messages) was full at its first take '
                    f'(first sequence number {first}): what it dropped before cannot be '
                    'told from what was published before the monitor subscribed')
        elif (self.writers <= 1 and first != NO_VALUE and self._last_seq != NO_VALUE
                and first > self._last_seq + 1):
            self.lost_by_monitor += first - self._last_seq - 1
            self._session.dropped_by_monitor(self.topic_id, first, first - self._last_seq - 1)

    def _unsubscribe(self, why: str = '') -> None:
        """Destroy the subscription; ``why`` (not closing) opens a gap of the monitor's own.

        From then until it subscribes again, what the producer publishes is not received:
        the session is told (``Session.unmonitored``), so that gap is never the producer's
        loss or outage.
        """
        subscription = self._subscription
        if subscription is None:
            return
        self._unreported = True
        if self._drain is not None and self._reader is not None:
            self.take()  # what is queued still counts
            stopped_ns = time.time_ns()
            self._drain = None
            self._reader.destroy_subscription(subscription)
        else:
            self.take_left()  # what the executor did not hand over yet still counts
            stopped_ns = time.time_ns()
            self._take_left = None
            self._node.destroy_subscription(subscription)
        self._subscription = None
        if why:
            self._session.unmonitored(self.topic_id, stopped_ns, why)

    def _resubscribe(self, publishers: list | None = None, reliable: bool | None = None,
                     why: str = 're-subscribed') -> None:
        if self._subscription is None:
            return
        if publishers is None:
            publishers = self._node.get_publishers_info_by_topic(self.config.topic)
        type_name = self.type_name
        self._unsubscribe(why)
        self._subscribe(type_name, publishers, reliable)

    def reconfigure(self, old: TopicConfig) -> None:
        """Remake the subscription when the new settings ask for another QoS deadline or stamp.

        A stamp that could not be read left no subscription: the next ``poll`` tries again
        with the new settings.
        """
        config = self.config
        restamp = config.stamp != old.stamp or config.stamp_field != old.stamp_field
        if config.qos_deadline_ns != old.qos_deadline_ns:
            self._resubscribe(reliable=self._reliable, why='re-subscribed: QoS deadline changed')
        elif restamp and not self._restamp():
            self._resubscribe(reliable=self._reliable, why='re-subscribed: stamp changed')

    def _restamp(self) -> bool:
        """Read the stamp by the new settings from the next take on; False if it cannot.

        A batched subscription keeps its reader: only the drain's rule changes (what is
        queued was taken under the old settings first). Re-subscribing would leave a gap
        the monitor made, which the sequence numbers would count as the producer's loss.
        """
        if self._drain is None or self._subscription is None or not self.type_name:
            return False
        config = self.config
        try:
            rule = stamp_rule_for_class(import_message(self.type_name), config.stamp_field)
        except (StampFieldError, MessageTypeError):
            return False  # re-subscribing says why (or falls back to arrivals)
        self.stamp_rule = rule
        record = self._session.recorder(self.topic_id, rule.read, transforms=self.transforms,
                                        static=self._transient_local)
        self._drain = make_drain(self._subscription, record, self._arrival_key, self.fallback,
                                 self._latched, self._edges)
        self._reported = None  # the session's topic may be new: tell it again
        self._unreported = True
        return True

    def close(self) -> None:
        """Destroy the subscription."""
        self._unsubscribe()


SIMULATOR_RTF_TYPES = ('std_msgs/msg/Float32', 'std_msgs/msg/Float64')


class SimulatorRtf:
    """The simulator's own RTF topic (``simulator_rtf_topic``), shown next to the measured one.

    Subscribed once its publisher appears with a ``Float32``/``Float64``; another type is
    reported once and the topic ignored.
    """

    def __init__(self, node: Node, topic: str, session: Session) -> None:
        """Watch ``topic`` ('' for none) for ``node``, feeding ``session``."""
        self._node = node
        self._topic = topic
        self._session = session
        self._subscription: Subscription | None = None

    def poll(self) -> None:
        """Subscribe when the topic has appeared with a usable type."""
        if not self._topic or self._subscription is not None:
            return
        types = {p.topic_type for p in self._node.get_publishers_info_by_topic(self._topic)}
        if len(types) != 1:
            return
        type_name = types.pop()
        try:
            if type_name not in SIMULATOR_RTF_TYPES:
                raise MessageTypeError(f'{self._topic} has type {type_name}; expected one of '
                                       f'{", ".join(SIMULATOR_RTF_TYPES)}: ignored')
            msg_class = import_message(type_name)
        except MessageTypeError as err:
            self._topic = ''
            self._node.get_logger().error(f'simulator_rtf_topic: {err}')
            return
        session = self._session
        self._subscription = self._node.create_subscription(
            msg_class, self._topic, lambda msg: session.simulator_rtf(msg.data), CLOCK_QOS)


class ClockInput:
    """/clock into the session, and the node's ROS time from it.

    With a ``reader`` node (batched mode) /clock is taken with the topics, first, so their
    events find the sim time they happened at (its queue holds a second of a 1 kHz clock),
    and the node's ROS time is set from the takes; without, a callback per sample. A sample
    is placed at the same middleware timestamp as every topic message (``arrival_key``), so
    a message's end falls into its /clock step by times taken on one side of the middleware.
    Sim-time resets are logged once per ``warn_period_ns()`` at most.
    """

    def __init__(self, node: Node, reader: Node | None, topic: str, session: Session,
                 arrival_key: str, warn_period_ns: Callable[[], int]) -> None:
        """Subscribe to ``topic`` on ``reader`` (batched) or ``node`` (callbacks)."""
        self._node = node
        self._session = session
        self._key = arrival_key
        self._warn_period_ns = warn_period_ns
        self._batched = reader is not None
        self._subscription = (reader or node).create_subscription(
            ClockMsg, topic, lambda msg, info: self._feed([(msg, info)]), CLOCK_QOS)
        self._logged_ns = -(1 << 62)
        self._unlogged = 0

    @property
    def matched_publishers(self) -> int:
        """/clock publishers this subscription matched (the graph may know more)."""
        return self._subscription.get_publisher_count()

    def take(self) -> int:
        """Take every queued sample (batched mode); return how many."""
        if not self._batched:
            return 0
        handle = self._subscription.handle
        samples = []
        while (sample := handle.take_message(ClockMsg, False)) is not None:
            samples.append(sample)
        self._feed(samples)
        if samples:
            latest = max(samples, key=lambda sample: sample[1]['received_timestamp'])
            self._node.get_clock().set_ros_time_override(Time.from_msg(latest[0].clock))
        return len(samples)

    def _feed(self, samples: list[tuple[ClockMsg, dict[str, Any]]]) -> None:
        resets = self._session.clock_samples(
            (info[self._key], msg.clock.sec * NS_PER_S + msg.clock.nanosec)
            for msg, info in samples)
        if not resets:
            return
        self._unlogged += resets
        now = time.monotonic_ns()
        if now - self._logged_ns >= self._warn_period_ns():
            more = (f' ({self._unlogged - 1} more since the last warning)'
                    if self._unlogged > 1 else '')
            sim_s = (self._session.clock.last_sim_ns or 0) / NS_PER_S
            self._node.get_logger().warning(
                f'sim time jumped back to {sim_s:.3f} s (simulator reset){more}: '
                'sim-time state of every topic was reset')
            self._logged_ns = now
            self._unlogged = 0
