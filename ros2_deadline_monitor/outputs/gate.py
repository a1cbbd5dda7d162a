"""The live CI gate's outputs: the exit code and the final summary record.

The verdict is ``expectations.evaluate`` on the session's final snapshot: whole-run figures
only, read through the tables ``RUN_TOPIC`` / ``RUN_CLOCK`` of ``analysis/figures.py`` (counts
are totals since start, the longest interval and the rate come from every interval of the
run, the worst RTF window is the worst of the run, never the last window's).

``summary_record`` is the JSON object the monitor writes at shutdown (``summary_file``):
each topic's and the clock's whole-run figures under their ``json`` keys, and the verdict
with every expectation. No ROS import.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ros2_deadline_monitor.analysis.figures import known, record, RUN_CLOCK, RUN_TOPIC
from ros2_deadline_monitor.analysis.snapshot import (
    ClockSnapshot,
    RemovedTopic,
    Snapshot,
    TopicSnapshot,
)
from ros2_deadline_monitor.configuration.expectations import (
    CLOCK_LIMITS,
    Outcome,
    TOPIC_LIMITS,
    Verdict,
)
from ros2_deadline_monitor.outputs.tables import transforms_record

__all__ = ['EXIT_CONFIG_ERROR', 'EXIT_FAILED', 'EXIT_OK', 'SUMMARY_FORMAT', 'SUMMARY_VERSION',
           'exit_code', 'outcome_record', 'summary_record']

EXIT_OK = 0
EXIT_CONFIG_ERROR = 2
EXIT_FAILED = 3
SUMMARY_FORMAT = 'ros2_deadline_monitor/summary'
SUMMARY_VERSION = 3
"""2: the topic records carry ``max_interval_ms`` and ``rate_hz`` (on the timer clock, what
the gate checks); counts that are no figure (an event topic, no period) are null, never 0.
3: ``removed_topics``, the topics removed at run time with their figures up to then."""

_COUNTS = frozenset(spec.key for spec in TOPIC_LIMITS + CLOCK_LIMITS if spec.integer)


@dataclass(frozen=True)
class FinalReport:
    """What the monitor reports at shutdown: the summary, the verdict and the exit code."""

    text: str
    """The one-screen summary (also logged)."""
    verdict: Verdict
    """Every expectation checked over the whole run."""
    exit_code: int
    """0 when every expectation held (or none was set), 3 when one failed."""
    summary: dict[str, Any]
    """The JSON summary (``summary_record``), also written to ``summary_file``."""


def exit_code(verdict: Verdict) -> int:
    """0 when every expectation held (or there were none), 3 when one failed."""
    return EXIT_OK if verdict.ok else EXIT_FAILED


def _float(value: float | None) -> float | None:
    """JSON has no NaN: an unknown figure is null."""
    return None if value is None else known(float(value))


def outcome_record(outcome: Outcome) -> dict[str, Any]:
    """One checked expectation as JSON: subject, figure, measured, limit, status.

    Counts (``max_misses``, ...) are integers; an unknown figure is null with the reason.
    """
    measured, limit = _float(outcome.measured), outcome.limit
    if outcome.key in _COUNTS:
        measured = None if measured is None else int(measured)
        limit = int(limit)
    return {
        'topic_id': outcome.topic_id, 'topic': outcome.topic, 'key': outcome.key,
        'figure': outcome.figure, 'bound': outcome.bound, 'unit': outcome.unit,
        'measured': measured, 'limit': limit,
        'passed': outcome.passed, 'reason': outcome.reason, 'line': outcome.line(),
    }


def _topic_record(snapshot: Snapshot, topic: TopicSnapshot) -> dict[str, Any]:
    identity: dict[str, Any] = {'id': topic.topic_id, 'topic': topic.topic,
                                'type': topic.type_name, 'level': topic.level.name,
                                'reason': topic.reason}
    if topic.report is None:
        return identity
    return {**identity, **record(RUN_TOPIC, snapshot, topic),
            'publishers': list(topic.publishers), **transforms_record(snapshot, topic)}


def removed_record(snapshot: Snapshot, removed: RemovedTopic) -> dict[str, Any]:
    """Return a topic removed at run time as JSON: its figures as of its removal, and when.

    Read as a snapshot of the removal's moment (figures relative to the report's time).
    """
    at = replace(snapshot, wall_ns=removed.removed_wall_ns)
    return {**_topic_record(at, removed.topic), 'removed': True,
            'removed_wall_ns': removed.removed_wall_ns,
            'removed_after_s': (removed.removed_wall_ns - snapshot.start_wall_ns) / 1e9}


def _clock_record(snapshot: Snapshot, clock: ClockSnapshot) -> dict[str, Any]:
    return {**record(RUN_CLOCK, snapshot, clock), 'level': clock.level.name,
            'reason': clock.reason}


def summary_record(snapshot: Snapshot, verdict: Verdict, *, node: str,
                   stopped_by: str) -> dict[str, Any]:
    """Return the final summary as one JSON object; ``stopped_by`` names what ended the run.

    Times are system-clock ns; figures in the units their names end with; an unknown figure
    is null. ``verdict.expectations`` lists every expectation checked, passed or failed.
    """
    return {
        'format': SUMMARY_FORMAT,
        'version': SUMMARY_VERSION,
        'node': node,
        'stopped_by': stopped_by,
        'start_wall_ns': snapshot.start_wall_ns,
        'end_wall_ns': snapshot.wall_ns,
        'duration_s': (snapshot.wall_ns - snapshot.start_wall_ns) / 1e9,
        'arrival_timestamp': snapshot.arrival_timestamp,
        'topics': [_topic_record(snapshot, t) for t in snapshot.topics],
        'removed_topics': [removed_record(snapshot, r) for r in snapshot.removed],
        'removed_topics_beyond': snapshot.removed_beyond,
        'clock': _clock_record(snapshot, snapshot.clock),
        'verdict': {
            'ok': verdict.ok,
            'passed': len(verdict.passed),
            'failed': len(verdict.failed),
            'expectations': [outcome_record(o) for o in verdict.outcomes],
        },
        'exit_code': exit_code(verdict),
    }
