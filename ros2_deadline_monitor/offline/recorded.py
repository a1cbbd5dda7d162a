"""Recorded ``ros2_deadline_monitor/msg/MonitorStats`` messages, folded into one snapshot.

When a run was recorded with the monitor's ``~/stats`` topic, the bag already holds the live
figures, one message per stats period. They are folded like ``testing.watch_monitor`` folds
the messages it watches (``core/stats_fold.py``): the monitor's final cumulative counters
(summed over monitor restarts), its whole-run figures, and the worst window figure of any
period. Outputs read the folded snapshot through the figure tables (``core/figures.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ros2_deadline_monitor.core.figures import (
    CLOCK,
    CONFIGURATION,
    Figure,
    known,
    record,
    RUN_CLOCK,
    RUN_TOPIC,
    TOPIC,
)
from ros2_deadline_monitor.core.snapshot import Snapshot
from ros2_deadline_monitor.core.stats_fold import CLOCK_WORST_FIELDS, StatsFold, WORST_FIELDS

__all__ = ['RecordedStats', 'RecordedSummary', 'WORST_CLOCK', 'WORST_TOPIC', 'clock_line',
           'table']

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


def _cell(figure: Figure, snapshot: Snapshot, part: Any) -> str:
    """Return a figure as a table shows it: '-' while unknown."""
    if known(figure.get(snapshot, part)) is None:
        return '-'
    return figure.text(snapshot, part) or '-'


def table(recorded: RecordedStats) -> tuple[list[tuple[str, str]], list[list[str]]]:
    """Return the header (name, 'l' or 'r') and the rows of the recorded topics' table.

    Its columns are the whole-run figures with a ``column`` in ``RUN_TOPIC``, then the worst
    window figures (``WORST_TOPIC``), the reports and restarts, and the worst level.
    """
    run = [f for f in RUN_TOPIC if f.column]
    header = [('topic', 'l'), ('reports', 'r'),
              *[(f.column, 'l' if f.group == CONFIGURATION and not f.unit else 'r')
                for f in run],
              *[(f'worst {f.key}', 'r') for f in WORST_TOPIC if 'p95' not in f.name],
              ('restarts', 'r'), ('worst level', 'l')]
    snapshot, rows = recorded.snapshot, []
    for topic in snapshot.topics:
        _, reports, restarts = recorded.reports[topic.topic_id]
        rows.append([topic.topic, f'{reports:,}', *[_cell(f, snapshot, topic) for f in run],
                     *[_cell(f, snapshot, topic) for f in WORST_TOPIC if 'p95' not in f.name],
                     f'{restarts:,}', topic.level.name])
    return header, rows


def clock_line(recorded: RecordedStats, since: Any) -> str | None:
    """Return the recorded clock in one line (``since(ns)`` shows a point in time)."""
    record = recorded.clock_record()
    if record is None:
        return None
    report = recorded.snapshot.clock.report
    worst = record['worst_window']

    def num(value: float | None, digits: int) -> str:
        return '-' if value is None else f'{value:.{digits}f}'
    return (f'Recorded clock: RTF {num(record["rtf_total"], 3)} overall (last report); worst '
            f'{record["rtf_bin_s"] * 1e3:g} ms window {num(record["rtf_bin_min"], 3)} at '
            f'{since(report.rtf_bin_min_run_at_ns)}, worst report window '
            f'{num(worst["rtf"], 3)}; longest gap {num(worst["max_wall_gap_ms"], 1)} ms; '
            f'{record["messages"]:,} /clock messages; resets {record["resets"]}; worst level '
            f'{record["worst_level"]}')


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
