"""Recorded ``ros2_deadline_monitor/msg/MonitorStats`` messages, folded into one snapshot.

When a run was recorded with the monitor's ``~/stats`` topic, the bag already holds the live
figures, one message per stats period. They are folded like ``testing.watch_monitor`` folds
the messages it watches (``analysis/stats_fold.py``): the monitor's final cumulative counters
(summed over monitor restarts), its whole-run figures, and the worst window figure of any
period. Outputs read the folded snapshot through the figure tables (``analysis/figures.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ros2_deadline_monitor.analysis.figures import (
    CLOCK,
    Figure,
    known,
    record,
    RUN_CLOCK,
    RUN_TOPIC,
    TOPIC,
)
from ros2_deadline_monitor.analysis.snapshot import Snapshot
from ros2_deadline_monitor.analysis.stats_fold import CLOCK_WORST_FIELDS, StatsFold, WORST_FIELDS

__all__ = ['RecordedStats', 'RecordedSummary', 'WORST_CLOCK', 'WORST_TOPIC']

WORST_TOPIC: tuple[Figure, ...] = tuple(f for f in TOPIC if f.field in WORST_FIELDS)
"""The window figures of a topic whose folded value is the worst of any report."""
WORST_CLOCK: tuple[Figure, ...] = tuple(f for f in CLOCK if f.field in CLOCK_WORST_FIELDS)


def worst_key(figure: Figure) -> str:
    """Return the JSON key of a worst window figure: its field, e.g. ``interval_wall_max_ms``."""
    assert figure.field is not None
    return figure.field.replace('.', '_')


def _worst(figures: tuple[Figure, ...], snapshot: Snapshot, part: Any) -> dict[str, Any]:
    out = {}
    for figure in figures:
        value = known((figure.message or figure.get)(snapshot, part))
        out[worst_key(figure)] = None if value is None else value / figure.field_scale
    return out


@dataclass(frozen=True)
class RecordedStats:
    """The MonitorStats messages found in a bag, folded into one ``snapshot``.

    ``reports`` gives, per topic identifier, the stats topic it was recorded on, the number
    of reports and of monitor restarts; ``clock_reports`` how many reports carried /clock.
    """

    stats_topics: tuple[str, ...]
    messages: int
    malformed: int
    snapshot: Snapshot
    reports: Mapping[str, tuple[str, int, int]]
    clock_reports: int

    def topic_records(self) -> list[dict[str, Any]]:
        """Return one JSON object per topic: whole-run figures, the worst window's."""
        snapshot, out = self.snapshot, []
        for topic in snapshot.topics:
            stats_topic, reports, restarts = self.reports[topic.topic_id]
            out.append({'id': topic.topic_id, 'topic': topic.topic, 'type': topic.type_name,
                        'stats_topic': stats_topic, 'reports': reports,
                        'monitor_restarts': restarts, 'worst_level': topic.level.name,
                        'status': topic.reason, **record(RUN_TOPIC, snapshot, topic),
                        'worst_window': _worst(WORST_TOPIC, snapshot, topic)})
        return out

    def clock_record(self) -> dict[str, Any] | None:
        """Return the clock as one JSON object, None when no report carried /clock."""
        if not self.clock_reports:
            return None
        snapshot, clock = self.snapshot, self.snapshot.clock
        return {'reports': self.clock_reports, 'worst_level': clock.level.name,
                **record(RUN_CLOCK, snapshot, clock),
                'worst_window': _worst(WORST_CLOCK, snapshot, clock)}

    def to_json(self) -> dict[str, Any]:
        """Return the whole summary as one JSON object (first and last report: system-clock s)."""
        return {'stats_topics': list(self.stats_topics), 'messages': self.messages,
                'malformed': self.malformed,
                'first_report_s': self.snapshot.start_wall_ns / 1e9,
                'last_report_s': self.snapshot.wall_ns / 1e9,
                'topics': self.topic_records(), 'clock': self.clock_record()}


class RecordedSummary:
    """Accumulates decoded MonitorStats messages, one call per message."""

    def __init__(self) -> None:
        """Start empty."""
        self._fold = StatsFold()
        self.malformed = 0

    @property
    def messages(self) -> int:
        """Stats messages taken so far."""
        return self._fold.messages

    def add(self, stats_topic: str, msg: Any) -> None:
        """Take one decoded ``MonitorStats`` recorded on ``stats_topic``."""
        self._fold.add(msg, stats_topic)

    def result(self) -> RecordedStats:
        """Return the summary so far."""
        fold = self._fold
        return RecordedStats(stats_topics=tuple(fold.sources), messages=fold.messages,
                             malformed=self.malformed, snapshot=fold.snapshot(),
                             reports=fold.reports(), clock_reports=fold.clock_reports)
