"""Each report's ``MonitorStats``, reusing what was made from an unchanged topic.

The ``Reporter`` (``outputs/reporter.py``) hands out the very ``TopicSnapshot`` object of a
topic's previous refresh while it stands. Here what was made from it is kept: its
``TopicStats`` (``TopicStatsCache``) and the CDR bytes of the report
(``serialized.Assembler``), reused by identity (``outputs/reuse.py``); the statuses are kept
by ``diagnostics.DiagnosticsOutput`` the same way. Without reuse (parameter
``reuse_reports`` false) every message is built by the plain conversion functions and
published as an object.
"""

from __future__ import annotations

from std_msgs.msg import Header

from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot
from ros2_deadline_monitor.msg import MonitorStats, TopicStats
from ros2_deadline_monitor.outputs import conversions
from ros2_deadline_monitor.outputs.reuse import Reuse
from ros2_deadline_monitor.outputs.serialized import Assembler


class TopicStatsCache:
    """The ``TopicStats`` of the previous report, reused for a topic whose snapshot is the same.

    The reporter hands out the same ``TopicSnapshot`` object while its snapshot stands; its
    message is then reused (``outputs/reuse.py``). Every message made here carries the cache's
    one ``Header``, restamped in place at each report, so a reused message carries the new
    report's stamp at no cost per topic. (A message is serialized when it is published:
    restamping changes nothing already sent.)
    """

    def __init__(self) -> None:
        """Start empty."""
        self.header = Header()
        """The header of every message made here and of their report."""
        self._messages: Reuse[TopicSnapshot, TopicStats] = Reuse()

    def messages(self, snapshot: Snapshot) -> list[TopicStats]:
        """Return the ``TopicStats`` of every topic with a report; restamp ``header``."""
        self.header.stamp = conversions.stamp(snapshot.wall_ns)
        wall_ns, arrival, shared = snapshot.wall_ns, snapshot.arrival_timestamp, self.header
        return self._messages(
            [topic for topic in snapshot.topics if topic.report is not None],
            lambda topic: conversions.topic_stats(topic, wall_ns, arrival, shared))


class StatsOutput:
    """Builds each report's ``MonitorStats`` as published, reusing unchanged parts or not."""

    def __init__(self, reuse: bool) -> None:
        """Keep what reports made (``reuse``), or build everything afresh at every report."""
        self.reuse = reuse
        self.assembler: Assembler | None = None
        """Assembles the published bytes from kept parts (None: messages are published)."""
        if reuse:
            assembler = Assembler()
            self.assembler = assembler if assembler.check() else None
        self._cache = TopicStatsCache() if reuse else None

    def message(self, snapshot: Snapshot) -> MonitorStats:
        """Return the report's ``MonitorStats`` message."""
        cache = self._cache
        if cache is None:
            return conversions.monitor_stats(snapshot)
        return conversions.monitor_stats(snapshot, cache.messages(snapshot), cache.header)

    def payload(self, snapshot: Snapshot) -> MonitorStats | bytes:
        """Return what to publish: the message, or its bytes assembled from kept parts."""
        stats = self.message(snapshot)
        return stats if self.assembler is None else self.assembler.payload(stats)
