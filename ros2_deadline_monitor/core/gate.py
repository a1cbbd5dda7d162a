"""The live CI gate: whole-run figures of a session snapshot, and the final summary record.

``run_figures`` adapts a ``Snapshot`` to the neutral ``RunFigures`` that
``expectations.evaluate`` checks (the offline side adapts a ``BagResult`` in
``offline/check.py``). Whole-run figures only: counts are totals since start, the longest
interval and the rate come from every interval of the run (``TopicSnapshot.run``), the worst
RTF window is the worst of the run (``ClockReport.rtf_bin_min_run``), never the last window's.

``summary_record`` is the JSON object the monitor writes at shutdown (``summary_file``):
per-topic totals, the longest intervals, the RTF and the verdict with every expectation.
No ROS import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .expectations import (
    clock_figures,
    CLOCK_LIMITS,
    ClockFigures,
    known,
    Outcome,
    RunFigures,
    TOPIC_LIMITS,
    TopicFigures,
    Verdict,
)
from .snapshot import ClockSnapshot, Snapshot, TopicSnapshot
from .units import to_ms

__all__ = ['EXIT_CONFIG_ERROR', 'EXIT_FAILED', 'EXIT_OK', 'SUMMARY_FORMAT', 'SUMMARY_VERSION',
           'exit_code', 'outcome_record', 'run_figures', 'summary_record']

EXIT_OK = 0
EXIT_CONFIG_ERROR = 2
EXIT_FAILED = 3
SUMMARY_FORMAT = 'ros2_deadline_monitor/summary'
SUMMARY_VERSION = 1

_COUNTS = frozenset(spec.key for spec in TOPIC_LIMITS + CLOCK_LIMITS if spec.integer)
SEVERAL_WRITERS = ('several writers on the topic: sequence numbers of different writers '
                   'cannot be told apart, so loss is unknown')


def _topic_figures(topic: TopicSnapshot) -> TopicFigures:
    report = topic.report
    if report is None:
        why = f'not monitored: {topic.reason}'
        return TopicFigures(
            topic_id=topic.topic_id, topic=topic.topic or topic.topic_id, messages=0,
            deadline_misses=None, miss_ratio=None, skipped_periods=None, max_interval_ns=None,
            messages_lost=None, rate_hz=None,
            unknown={name: why for name in ('deadline_misses', 'miss_ratio', 'skipped_periods',
                                            'max_interval_ns', 'messages_lost', 'rate_hz')})
    unknown: dict[str, str] = {}
    run = topic.run
    learned = report.counts_known
    if not learned:
        if report.kind == 'event':
            why = 'event topic: no period, so no misses or skipped periods'
        elif report.messages_total == 0:
            why = 'no message received'
        else:
            why = report.counts_note or (
                f'the period was never learned ({report.messages_total} messages)')
        unknown.update(deadline_misses=why, miss_ratio=why, skipped_periods=why)
    elif run.cycles == 0:
        unknown['miss_ratio'] = 'no cycle was analyzed'
    intervals = run.interval_sim if report.timer_clock == 'sim' else run.interval_wall
    longest = known(intervals.max_ns) if intervals.count else None
    if (report.timer_clock == 'wall' and report.outages_total
            and report.producer_runs_total > 1):
        # Gaps are never hidden: an outage between two producers' runs (a restart) is no
        # interval of either, yet the longest silence all the same.
        longest = max(longest or 0, report.outage_max_ns)
    if longest is None:
        unknown['max_interval_ns'] = unknown['rate_hz'] = (
            f'no interval on the {report.timer_clock} clock')
    elif intervals.count == 0:
        unknown['rate_hz'] = f'no interval on the {report.timer_clock} clock'
    if not report.loss_known:
        unknown['messages_lost'] = SEVERAL_WRITERS
    return TopicFigures(
        topic_id=topic.topic_id, topic=report.topic, messages=report.messages_total,
        deadline_misses=report.deadline_misses_total if learned else None,
        miss_ratio=(report.deadline_misses_total / run.cycles
                    if learned and run.cycles else None),
        skipped_periods=report.skipped_periods_total if learned else None,
        max_interval_ns=longest,
        messages_lost=report.messages_lost_total if report.loss_known else None,
        rate_hz=known(intervals.rate_hz), interval_clock=report.timer_clock, unknown=unknown)


def _clock_figures(clock: ClockSnapshot) -> ClockFigures | None:
    report = clock.report
    if report.messages_total == 0:
        return None
    return clock_figures(clock.topic, report.rtf_total, report.rtf_bin_min_run,
                         report.rtf_bin_ns)


def run_figures(snapshot: Snapshot) -> RunFigures:
    """Whole-run figures of a session snapshot (the final one for the verdict)."""
    return RunFigures(topics=tuple(_topic_figures(t) for t in snapshot.topics),
                      clock=_clock_figures(snapshot.clock))


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


def _ms(value_ns: float | None) -> float | None:
    return _float(to_ms(value_ns))


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


def _topic_record(topic: TopicSnapshot) -> dict[str, Any]:
    record: dict[str, Any] = {'id': topic.topic_id, 'topic': topic.topic,
                              'type': topic.type_name, 'level': topic.level.name,
                              'reason': topic.reason}
    report = topic.report
    if report is None:
        return record
    run = topic.run
    record.update(
        rule=report.rule, timer_clock=report.timer_clock, start_source=report.start_source,
        period_ms=_ms(report.period_ns), period_learned=report.period_learned,
        messages=report.messages_total, cycles=run.cycles,
        deadline_misses=report.deadline_misses_total if not report.counts_note else None,
        skipped_periods=report.skipped_periods_total if not report.counts_note else None,
        timing_source=report.start_source, timing_reason=report.timing_reason,
        counts_note=report.counts_note,
        outages=report.outages_total,
        outage_max_ms=_ms(report.outage_max_ns) if report.outages_total else None,
        messages_lost=report.messages_lost_total if report.loss_known else None,
        messages_lost_by_monitor=report.lost_by_monitor_total,
        malformed=report.malformed_total, resets=report.resets_total,
        miss_ratio=report.deadline_misses_total / run.cycles if run.cycles else None,
        max_interval_wall_ms=_ms(run.interval_wall.max_ns),
        max_interval_sim_ms=_ms(run.interval_sim.max_ns),
        mean_interval_wall_ms=_ms(run.interval_wall.mean_ns),
        mean_interval_sim_ms=_ms(run.interval_sim.mean_ns),
        rate_wall_hz=_float(run.interval_wall.rate_hz),
        rate_sim_hz=_float(run.interval_sim.rate_hz),
        publishers=list(topic.publishers))
    return record


def _clock_record(clock: ClockSnapshot) -> dict[str, Any]:
    report = clock.report
    return {
        'topic': clock.topic, 'use_sim_time': clock.use_sim_time,
        'messages': report.messages_total, 'rtf_total': _float(report.rtf_total),
        'rtf_bin_s': report.rtf_bin_ns / 1e9, 'rtf_bin_min': _float(report.rtf_bin_min_run),
        'resets': report.resets_total, 'level': clock.level.name, 'reason': clock.reason,
    }


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
        'topics': [_topic_record(t) for t in snapshot.topics],
        'clock': _clock_record(snapshot.clock),
        'verdict': {
            'ok': verdict.ok,
            'passed': len(verdict.passed),
            'failed': len(verdict.failed),
            'expectations': [outcome_record(o) for o in verdict.outcomes],
        },
        'exit_code': exit_code(verdict),
    }
