"""The one-screen summary logged when the monitor shuts down, read from the last snapshot."""

from __future__ import annotations

import json
import os
from pathlib import Path
import tempfile
from typing import Any

from ros2_deadline_monitor.analysis.figures import record, RUN_TOPIC, TRANSFORM
from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot
from ros2_deadline_monitor.configuration.expectations import Verdict
from ros2_deadline_monitor.outputs import format as fmt


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


def _count(value: int | None) -> str:
    return '-' if value is None else str(value)


def _ms(value: float | None) -> str:
    return fmt.NOT_AVAILABLE if value is None else f'{value:.2f}'


TRANSFORMS_IN_SUMMARY = 50
"""Transforms the summary lists per /tf-like topic; the rest are counted."""


def transform_lines(snapshot: Snapshot, topic: TopicSnapshot) -> list[str]:
    """One line per transform of a /tf-like topic: rate, longest gap, age, writer."""
    transforms = topic.transforms
    assert transforms is not None
    lines = []
    for tf in transforms.transforms[:TRANSFORMS_IN_SUMMARY]:
        run = record(TRANSFORM, snapshot, tf)
        if tf.static:
            figures = f'static, {run["messages"]} messages, age {_ms(run["mean_age_ms"])} ms'
        else:
            figures = (f'{run["messages"]} messages, {fmt.number(run["rate_hz"], 2)} Hz, '
                       f'longest gap {_ms(run["longest_gap_ms"])} ms, mean age '
                       f'{_ms(run["mean_age_ms"])} ms')
        writer = f', writer {tf.writer}' if tf.writer else ''
        lines.append(f'  {topic.topic} {tf.name}: {figures}{writer}')
    if transforms.writer_note:
        lines.append(f'  {topic.topic}: writer of its transforms unknown: '
                     f'{transforms.writer_note}')
    rest = len(transforms.transforms) - TRANSFORMS_IN_SUMMARY
    if rest > 0:
        lines.append(f'  {topic.topic}: {rest} more transforms (see the summary JSON)')
    return lines


def summary_text(node_name: str, snapshot: Snapshot, verdict: Verdict | None = None) -> str:
    """Return totals per topic, the longest intervals ever seen and the RTF, as a table.

    Totals are cumulative since start; the max intervals are the longest of every report,
    not only the last window's. ``verdict`` adds a line per failed expectation.
    """
    lines = [f'{node_name} summary (totals since start):']
    lines.append(f'{"topic":<28} {"messages":>9} {"misses":>7} {"skipped":>8} {"lost":>6} '
                 f'{"max wall ms":>11} {"max sim ms":>10}  rule')
    for topic in snapshot.topics:
        r = topic.report
        if r is None:
            lines.append(f'{topic.topic or topic.topic_id:<28} not monitored: {topic.reason}')
            continue
        event = r.kind == 'event'  # no period: misses and skipped periods do not apply
        # The whole-run figures of the table: unknown (no message, no period learned, /clock
        # coarser than the topic, loss with several writers) is '-', no 0 that passes.
        run = record(RUN_TOPIC, snapshot, topic)
        misses = fmt.NOT_AVAILABLE if event else _count(run['deadline_misses'])
        skipped = fmt.NOT_AVAILABLE if event else _count(run['skipped_periods'])
        lines.append(
            f'{r.topic:<28} {run["messages"]:>9} {misses:>7} {skipped:>8} '
            f'{_count(run["messages_lost"]):>6} {_ms(run["max_interval_wall_ms"]):>11} '
            f'{_ms(run["max_interval_sim_ms"]):>10}  {"event" if event else r.rule}')
        if topic.notes:  # several producers, foreign stamps, outages, fallbacks, /clock
            lines.append(f'  {r.topic}: ' + '; '.join(topic.notes))
        if topic.transforms is not None:
            lines += transform_lines(snapshot, topic)
        if not r.messages_total:
            lines.append(f'  {r.topic}: no message received: misses and skipped periods '
                         'unknown')
        elif r.timing_reason:  # which source times the cycles, and why
            timing = f'cycles timed by {r.start_source} ({r.timing_reason})'
            if r.counts_note and not event:
                timing += f'; misses and skipped periods unknown: {r.counts_note}'
            lines.append(f'  {r.topic}: {timing}')
    if not snapshot.topics:
        lines.append('(no topics monitored)')
    clock = snapshot.clock.report
    if clock.messages_total:
        why = f' ({clock.rtf_total_note})' if clock.rtf_total_note else ''
        lines.append(f'clock: {clock.messages_total} messages, RTF since start '
                     f'{fmt.number(clock.rtf_total, 4)}{why}, last window '
                     f'{fmt.number(clock.rtf, 4)}, sim resets {clock.resets_total}')
    else:
        lines.append('clock: no /clock received')
    if verdict is not None:
        lines += verdict_lines(verdict)
    return '\n'.join(lines)
