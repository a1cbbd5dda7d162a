"""Which monitored topics a graph read must look at: those the graph says changed.

A full look at a topic (``TopicMonitor.poll``: ``get_publishers_info_by_topic``) costs about
40 µs; a thousand topics every 0.5 s would be 8 % of a core. The graph is read once per poll
instead (``get_topic_names_and_types``), and a topic is looked at when its types in the graph
or the publishers its subscription matched (``get_publisher_count``, about 1 µs) changed. A
publisher the subscription cannot match (a best effort one joining a reliable subscription)
changes neither: ``count_publishers`` catches it, for ``ROTATION`` subscribed topics per read
in turn, so with many topics such a publisher is noticed within ``topics / ROTATION`` reads
(20 s for a thousand topics, whose graph is read every 2 s while nothing changes:
``read_every``). A topic without a subscription is counted at every read while the graph
holds its name (maybe by subscribers only), and looked at every read while it has
publishers (a look can race the graph: it finds no publisher info yet); one the graph does
not hold costs a dictionary lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

ROTATION = 100
"""Subscribed topics whose publishers are counted in the graph per read, in turn."""
TOPICS_PER_READ = 250
"""Up to this many monitored topics the graph is read at every poll."""
MAX_READ_EVERY = 4
"""With more, a graph where nothing changed is read at most every this many polls (2 s)."""

Graph = Mapping[str, Iterable[str]]
"""Topic name -> its types, from one ``get_topic_names_and_types()``."""
NOT_SUBSCRIBED = -1
"""The matched-writers value of a topic without a subscription."""


def names_needed(discovering: bool, monitors: Mapping[str, tuple[str, int, bool]],
                 anything_due: bool) -> bool:
    """Tell whether the next graph read needs the graph's names and types.

    They serve the discovery (``--all``) and the topics without a subscription, which a new
    name may concern. A subscribed topic changes in the graph only with its publishers: the
    writers its subscription matched, or one it cannot match (another type, another QoS),
    which ``GraphGate``'s counts find; the names and types of the last read stand for them.
    A read that found a topic due, or a look that could not name every writer, reads them
    again next time. ``monitors`` as ``GraphGate.due`` takes them. Reading them costs about
    8 ms with a thousand topics, half of a read.
    """
    return discovering or anything_due or any(
        writers == NOT_SUBSCRIBED or not settled for _, writers, settled in monitors.values())


def read_every(topics: int) -> int:
    """Return every how many polls a graph where nothing changed is read (1: every poll).

    A read costs about 10 µs per topic (the names and types of the whole graph, then each
    topic's matched writers): 1,000 topics read every 0.5 s would cost 2 % of a core. A read
    that finds a change brings the next one back to the next poll.
    """
    return max(1, min(MAX_READ_EVERY, 1 + topics // TOPICS_PER_READ))


class GraphGate:
    """Remembers what the graph said about each topic at its last full look."""

    def __init__(self, count_publishers: Callable[[str], int]) -> None:
        """Count a topic's publishers in the graph with ``count_publishers(name)``."""
        self._count = count_publishers
        self._keys: dict[str, tuple] = {}
        self._counts: dict[str, int] = {}
        self._turn = 0

    def due(self, monitors: Mapping[str, tuple[str, int, bool]], graph: Graph) -> list[str]:
        """Return the identifiers to look at, in ``monitors`` order.

        ``monitors`` maps an identifier to its topic name, the writers its subscription
        matched (``NOT_SUBSCRIBED`` without one) and whether its last look was settled
        (False: it saw writers the graph could not name yet, so it looks again). A topic
        seen for the first time is due.
        """
        subscribed = [topic_id for topic_id, (_, writers, _) in monitors.items()
                      if writers != NOT_SUBSCRIBED]
        turn: set[str] = set()
        if subscribed:
            start = self._turn % len(subscribed)
            turn = {subscribed[(start + i) % len(subscribed)]
                    for i in range(min(ROTATION, len(subscribed)))}
            self._turn = start + len(turn)
        due = []
        keys = self._keys
        for topic_id, (topic, writers, settled) in monitors.items():
            types = graph.get(topic)
            count = None
            if types is None:
                pass  # not in the graph: nothing to subscribe to
            elif writers == NOT_SUBSCRIBED:
                count = self._count(topic)  # in the graph, maybe by subscribers only
            else:
                count = self._counts.get(topic_id)
                if count is None or topic_id in turn:
                    count = self._counts[topic_id] = self._count(topic)
            key = (topic, tuple(types or ()), writers, count)
            # Publishers and still no subscription (the look raced the graph, or their types
            # conflict): looked at again at every poll, as before the gate.
            unsubscribed_with_publishers = writers == NOT_SUBSCRIBED and bool(count)
            if keys.get(topic_id) != key or not settled or unsubscribed_with_publishers:
                keys[topic_id] = key
                due.append(topic_id)
        if len(keys) > len(monitors):
            for gone in set(keys) - set(monitors):
                del keys[gone]
                self._counts.pop(gone, None)
        return due
