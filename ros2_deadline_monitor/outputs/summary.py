"""The one-screen summary logged when the monitor shuts down, read from the last snapshot.

Its columns are whole-run figures of the table (``analysis/figures.py``), headed and written
as every table writes them (``outputs/format.py`` ``cell``): '-' while unknown, 'n/a' where
a figure does not apply (an event topic's misses).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
import json
import os
from pathlib import Path
import tempfile
from typing import Any

from ros2_deadline_monitor.analysis.figures import (
    applies,
    CLOCK,
    Figure,
    find,
    RUN_CLOCK,
    RUN_TOPIC,
    TRANSFORM,
)
from ros2_deadline_monitor.analysis.snapshot import RemovedTopic, Snapshot, TopicSnapshot
from ros2_deadline_monitor.configuration.expectations import Verdict
from ros2_deadline_monitor.outputs.format import cell

COLUMNS: tuple[Figure, ...] = tuple(find(RUN_TOPIC, name) for name in (
    'messages', 'deadline misses', 'skipped periods', 'messages lost', 'max interval wall',
    'max interval sim', 'rule'))
"""The summary's columns after the topic (the rule last, left-aligned)."""
MISSES = COLUMNS[1]
TOPIC_WIDTH = 28
CLOCK_MESSAGES, RTF_OVERALL, RESETS = (find(RUN_CLOCK, name) for name in (
    'messages', 'RTF overall', 'sim resets'))
WINDOW_RTF = find(CLOCK, 'RTF')
TF_MESSAGES, TF_RATE, TF_GAP, TF_AGE = (find(TRANSFORM, name) for name in (
    'messages', 'rate', 'longest gap', 'mean age'))
"""What the summary says of each transform."""


def write_summary(path: str | os.PathLike[str], record: Any) -> None:
    """Write the summary JSON atomically (a temporary file renamed over ``path``), fsynced.

    A CI step reading the file never sees half of it, even if the monitor is killed.
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f'.{target.name}.', dir=target.resolve().parent)
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as stream:
            json.dump(record, stream, indent=1, allow_nan=False)
            stream.write('\n')
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def verdict_lines(verdict: Verdict) -> list[str]:
    """One line per failed expectation, then how many held; nothing without expectations."""
    if not verdict.outcomes:
        return []
    lines = [outcome.line() for outcome in verdict.failed]
    lines.append(f'expectations: {len(verdict.passed)} of {len(verdict.outcomes)} held'
                 + ('' if verdict.ok else ' (exit code 3)'))
    return lines


def _line(topic: str, cells: list[str]) -> str:
    """Return one line of the table: numbers right-aligned under their headers, the rule last."""
    numbers = ''.join(f' {text:>{max(len(figure.column), 6)}}'
                      for figure, text in zip(COLUMNS[:-1], cells[:-1], strict=True))
    return f'{topic:<{TOPIC_WIDTH}}{numbers}  {cells[-1]}'


TRANSFORMS_IN_SUMMARY = 50
"""Transforms the summary lists per /tf-like topic; the rest are counted."""


def transform_lines(snapshot: Snapshot, topic: TopicSnapshot) -> list[str]:
    """One line per transform of a /tf-like topic: rate, longest gap, age, writer."""
    transforms = topic.transforms
    assert transforms is not None
    lines = []
    for tf in transforms.transforms[:TRANSFORMS_IN_SUMMARY]:
        def text(figure: Figure, tf: Any = tf) -> str:
            return f'{cell(figure, snapshot, tf)}{" " + figure.unit if figure.unit else ""}'
        if tf.static:
            figures = f'static, {text(TF_MESSAGES)} messages, age {text(TF_AGE)}'
        else:
            figures = (f'{text(TF_MESSAGES)} messages, {text(TF_RATE)}, longest gap '
                       f'{text(TF_GAP)}, mean age {text(TF_AGE)}')
        writer = f', writer {tf.writer}' if tf.writer else ''
        lines.append(f'  {topic.topic} {tf.name}: {figures}{writer}')
    if transforms.writer_note:
        lines.append(f'  {topic.topic}: writer of its transforms unknown: '
                     f'{transforms.writer_note}')
    rest = len(transforms.transforms) - TRANSFORMS_IN_SUMMARY
    if rest > 0:
        lines.append(f'  {topic.topic}: {rest} more transforms (see the summary JSON)')
    return lines


def removed_lines(snapshot: Snapshot, removed: RemovedTopic) -> list[str]:
    """Return the lines of a topic removed at run time: its figures up to then, and when."""
    topic, at_ns = removed.topic, removed.removed_wall_ns
    at = replace(snapshot, wall_ns=at_ns)  # its figures as of its removal
    name = topic.topic or topic.topic_id
    when = datetime.fromtimestamp(at_ns / 1e9, timezone.utc).strftime('%Y-%m-%d %H:%M:%S.%f')
    return [_line(f'{name} (removed)', [cell(figure, at, topic) for figure in COLUMNS]),
            f'  {name}: removed from topics at {when[:-3]} UTC '
            f'({(at_ns - snapshot.start_wall_ns) / 1e9:.1f} s after start): totals up to then']


def summary_text(node_name: str, snapshot: Snapshot, verdict: Verdict | None = None) -> str:
    """Return totals per topic, the longest intervals ever seen and the RTF, as a table.

    Totals are cumulative since start; the max intervals are the longest of every report,
    not only the last window's. ``verdict`` adds a line per failed expectation.
    """
    lines = [f'{node_name} summary (totals since start):',
             _line('topic', [figure.column for figure in COLUMNS])]
    for topic in snapshot.topics:
        r = topic.report
        if r is None:
            lines.append(f'{topic.topic or topic.topic_id:<{TOPIC_WIDTH}} not monitored: '
                         f'{topic.reason}')
            continue
        # Unknown (no message, no period learned, /clock coarser than the topic, loss with
        # several writers) is '-', no 0 that passes; an event topic's misses 'n/a'.
        lines.append(_line(r.topic, [cell(figure, snapshot, topic) for figure in COLUMNS]))
        counted = applies(MISSES, topic)  # no period (an event topic): misses are n/a
        if not counted:
            lines.append(f'  {r.topic}: {MISSES.unknown(snapshot, topic)}')
        if topic.notes:  # several producers, foreign stamps, outages, fallbacks, /clock
            lines.append(f'  {r.topic}: ' + '; '.join(topic.notes))
        if topic.transforms is not None:
            lines += transform_lines(snapshot, topic)
        if not r.messages_total:
            lines.append(f'  {r.topic}: no message received: misses and skipped periods '
                         'unknown')
        elif r.timing_reason:  # which source times the cycles, and why
            timing = f'cycles timed by {r.start_source} ({r.timing_reason})'
            if r.counts_note and counted:
                timing += f'; misses and skipped periods unknown: {r.counts_note}'
            lines.append(f'  {r.topic}: {timing}')
    for removed in snapshot.removed:
        lines += removed_lines(snapshot, removed)
    if snapshot.removed_beyond:
        lines.append(f'({snapshot.removed_beyond} more removed topics, not kept)')
    if not snapshot.topics:
        lines.append('(no topics monitored)')
    clock = snapshot.clock
    if clock.report.messages_total:
        def text(figure: Figure) -> str:
            return cell(figure, snapshot, clock)
        note = clock.report.rtf_total_note
        why = f' ({note})' if note else ''
        lines.append(f'clock: {text(CLOCK_MESSAGES)} messages, RTF since start '
                     f'{text(RTF_OVERALL)}{why}, last window {text(WINDOW_RTF)}, '
                     f'sim resets {text(RESETS)}')
    else:
        lines.append('clock: no /clock received')
    if verdict is not None:
        lines += verdict_lines(verdict)
    return '\n'.join(lines)
