"""Subscription QoS that matches the publishers found in the graph (docs/design.md, Subscriptions).

A volatile reader matches every writer. A reliable reader matches only reliable writers, but
it gets retransmissions, so sequence-number gaps then mean real losses; the monitor is
reliable when every publisher is, best effort otherwise. Messages are only stored by the
callback, so the queue has to cover the executor's latency, not the analysis: a depth worth
two stats periods of messages is plenty.

When messages are taken in batches (``take_period_s`` > 0) the reader queue holds every
message between two takes, so its depth follows from the rate and the take period, with a
safety factor for a late take (``take_depth``). A take that empties a full queue may have
lost the oldest messages; their publication sequence numbers tell how many.

A latched topic (a map: one message, published before the monitor started, kept by its
``transient_local`` writer) reaches only a ``transient_local`` reader, which matches only
``transient_local`` writers: the monitor's reader is ``transient_local`` when every publisher
offers it, volatile otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.topic_endpoint_info import TopicEndpointInfo

MIN_DEPTH = 10
MAX_DEPTH = 1000
UNKNOWN_RATE_DEPTH = 100
"""Depth while the period is still to be learned."""
CLOCK_DEPTH = 1000
"""/clock at 1 kHz for one second: every sample counts for the RTF and the clock mapping."""
STATS_DEPTH = 10
TAKE_MIN_DEPTH = 50
TAKE_MAX_DEPTH = 10_000
TAKE_UNKNOWN_RATE_DEPTH = 1000
"""Batched depth while the period is still to be learned: 20 kHz for a 50 ms take period."""
TAKE_SAFETY_FACTOR = 4
"""Queue room for this many take periods: a take may come late when the process is busy."""
TAKE_QUEUE_NS = 1_000_000_000
"""Queue room for at least a second of messages: the monitor's process may be starved."""

STATS_QOS = QoSProfile(depth=STATS_DEPTH, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)
CLOCK_QOS = QoSProfile(depth=CLOCK_DEPTH, reliability=ReliabilityPolicy.BEST_EFFORT,
                       durability=DurabilityPolicy.VOLATILE)


@dataclass(frozen=True)
class QosChoice:
    """The profile to subscribe with, and why the requested deadline was dropped if it was."""

    profile: QoSProfile
    deadline_note: str | None = None

    @property
    def reliable(self) -> bool:
        """Tell whether the profile is reliable."""
        return self.profile.reliability == ReliabilityPolicy.RELIABLE

    @property
    def transient_local(self) -> bool:
        """Tell whether the profile receives what writers kept from before it matched."""
        return self.profile.durability == DurabilityPolicy.TRANSIENT_LOCAL


def queue_depth(period_ns: int | None, stats_period_ns: int) -> int:
    """Return the history depth: two stats periods' worth of messages, within bounds."""
    if period_ns is None:
        return UNKNOWN_RATE_DEPTH
    return max(MIN_DEPTH, min(MAX_DEPTH, math.ceil(2 * stats_period_ns / period_ns)))


def take_depth(period_ns: int | None, take_period_ns: int, override: int = 0) -> int:
    """Return the reader depth for batched takes: a second or 4 take periods of messages.

    ``override`` > 0 (the ``take_queue_depth`` parameter) is used as it is.
    """
    if override > 0:
        return override
    if period_ns is None:
        return TAKE_UNKNOWN_RATE_DEPTH
    wanted = math.ceil(max(TAKE_QUEUE_NS, TAKE_SAFETY_FACTOR * take_period_ns) / period_ns)
    return max(TAKE_MIN_DEPTH, min(TAKE_MAX_DEPTH, wanted))


def all_reliable(publishers: Sequence[TopicEndpointInfo]) -> bool:
    """Tell whether every publisher is reliable (False when there is none)."""
    return bool(publishers) and all(
        p.qos_profile.reliability == ReliabilityPolicy.RELIABLE for p in publishers)


def all_transient_local(publishers: Sequence[TopicEndpointInfo]) -> bool:
    """Tell whether every publisher keeps its messages for late readers (False when none)."""
    return bool(publishers) and all(
        p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in publishers)


def offered_deadline_ns(publisher: TopicEndpointInfo) -> int | None:
    """Return the publisher's offered deadline, None when it offers none (infinite)."""
    ns = publisher.qos_profile.deadline.nanoseconds
    if ns <= 0 or ns >= 2**62:
        return None
    return ns


def common_offered_deadline_ns(publishers: Sequence[TopicEndpointInfo]) -> int:
    """Return the deadline every publisher offers, 0 when one offers none or they differ.

    With no period configured, that deadline is the topic's expected period: a publisher
    promising a message at least every D is a timer of period D as far as the monitor can
    tell. Publishers that disagree promise nothing common, so the period is learned.
    """
    offered = {offered_deadline_ns(p) for p in publishers}
    if len(offered) == 1 and None not in offered:
        return offered.pop() or 0
    return 0


def choose_qos(publishers: Sequence[TopicEndpointInfo], depth: int,
               deadline_ns: int | None, reliable: bool | None = None) -> QosChoice:
    """Pick reliability from the publishers, and add the deadline only where it can match.

    A requested deadline matches only writers that offer one at least as short; against a
    writer without a deadline the reader would match nothing and the topic would fall
    silent, so the deadline is then left out and the reason returned. ``reliable`` forces the
    reliability (used to keep a once-downgraded subscription best effort). Durability is
    ``transient_local`` when every publisher offers it (a latched message reaches the
    monitor), else volatile.
    """
    if reliable is None:
        reliable = all_reliable(publishers)
    durability = (DurabilityPolicy.TRANSIENT_LOCAL if all_transient_local(publishers)
                  else DurabilityPolicy.VOLATILE)
    profile = QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=depth,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=durability)
    note = None
    if deadline_ns is not None:
        offered = [offered_deadline_ns(p) for p in publishers]
        if offered and all(o is not None and o <= deadline_ns for o in offered):
            profile.deadline = Duration(nanoseconds=deadline_ns)
        else:
            note = (f'qos_deadline_ms {deadline_ns / 1e6:g} not requested: a publisher offers '
                    'no deadline or a longer one, and the subscription would match nothing')
    return QosChoice(profile, note)


TAKE_MAX_STRIDE = 80
"""A slow topic's queue is taken at most every this many take periods (4 s by default): more
than a report period, so between reports the timer leaves it. Taking a queue costs ~13 µs
beyond its messages (the topic's state is cold by then): a thousand topics at 1 Hz taken
every 2 s spent 3.4 ms a second more of the Python thread than every 4 s."""
TAKE_STRIDE_HEADROOM = 10
"""Between two takes of a strided topic its queue still holds this many times its rate."""
TAKE_TIMEOUT_SHARE = 0.75
"""A strided topic is taken at least every this share of its timeout: the silence a standing
snapshot is checked for (``Reporter._stands``) counts from the last message taken."""


def take_stride(period_ns: int | None, depth: int, take_period_ns: int,
                timeout_ns: int | None = None) -> int:
    """Return every how many take periods a topic's queue needs taking (1: every one).

    Visiting a queue costs about 13 µs beyond its messages (its topic's state is cold; the
    empty take that ends it about 1 µs), so a thousand slow topics taken every 50 ms cost
    a quarter of a core for nothing. A topic whose period is known is taken only as often as
    its queue needs with ``TAKE_STRIDE_HEADROOM`` to spare (a burst of ten times its rate
    still fits), at most every ``TAKE_MAX_STRIDE`` take periods, and at least every
    ``TAKE_TIMEOUT_SHARE`` of its ``timeout_ns``: a message the queue still holds must not
    look like silence. A report takes the queues of the topics it refreshes, and each event
    carries the middleware's timestamps, so no figure changes; an unknown rate is taken
    every time.
    """
    if period_ns is None or take_period_ns <= 0:
        return 1
    fits = depth * period_ns // (TAKE_STRIDE_HEADROOM * take_period_ns)
    if timeout_ns is not None:
        fits = min(fits, int(TAKE_TIMEOUT_SHARE * timeout_ns) // take_period_ns)
    return int(max(1, min(TAKE_MAX_STRIDE, fits)))


def observed_stride(taken: int, elapsed_ns: int, stride: int, depth: int,
                    take_period_ns: int) -> int:
    """Return the next stride of a queue whose rate is not known, from its last take.

    An event topic never has a period, and a timer topic has none until it is learned: taken
    every take period, a thousand of them cost 20,000 empty takes a second (~5 % of a core).
    A take that found the queue empty doubles the stride (up to ``TAKE_MAX_STRIDE``); one
    that found ``taken`` messages gathered over ``elapsed_ns`` sets it as ``take_stride``
    would for that rate, ``TAKE_STRIDE_HEADROOM`` to spare. A burst after a quiet spell waits
    at most the longest stride (and every report takes every such queue): a queue of unknown rate
    holds ``TAKE_UNKNOWN_RATE_DEPTH`` messages, and one found full counts as an overflow.
    """
    if take_period_ns <= 0:
        return 1
    if taken == 0:
        return min(TAKE_MAX_STRIDE, 2 * stride)
    fits = depth * max(0, elapsed_ns) // (TAKE_STRIDE_HEADROOM * taken * take_period_ns)
    return int(max(1, min(TAKE_MAX_STRIDE, fits)))
