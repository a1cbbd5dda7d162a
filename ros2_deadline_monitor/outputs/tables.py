"""The analysis as a text table, a JSON document and CSV rows.

Inside, times are nanoseconds; here, at the edge, they become ms (durations), s (spans and
points in time, seconds on the clock they were measured with) and Hz, with the unit in every
key, as in the live node's messages. NaN ("nothing measured") becomes JSON null and an empty
CSV cell.
"""

from __future__ import annotations

import csv
from dataclasses import fields, is_dataclass
from functools import partial
import math
from typing import Any, TextIO

from ros2_deadline_monitor.analysis.figures import (
    CONFIGURATION,
    Figure,
    known,
    record,
    RUN_CLOCK,
    RUN_TOPIC,
    TRANSFORM,
)
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot
from ros2_deadline_monitor.outputs import format as fmt
from ros2_deadline_monitor.outputs.bag_result import (
    BagResult,
    ClockFacts,
    RecordedStats,
    TopicFacts,
)
from ros2_deadline_monitor.outputs.recorded_stats import WORST_TOPIC

__all__ = ['JSON_FORMAT', 'JSON_VERSION', 'format_table', 'recorded_clock_line', 'recorded_table',
           'to_json', 'topic_note', 'write_csv']

JSON_FORMAT = 'ros2_deadline_monitor/analyze'
"""``format`` of the JSON document ``analyze --json`` writes (``--baseline`` checks it)."""
JSON_VERSION = 2
"""``version`` of that document: raised when a key changes meaning or disappears (2: one
flat object per topic and for the clock, keys from the figure table ``analysis.figures``)."""

LEVELS = {int(level): level.name for level in Level} | {-1: '-'}
"""Level names by value (``Level`` names them once); -1: no level (nothing analyzed)."""
_POINT_FIELDS = ('_at_ns', 'first_arrival_ns', 'last_arrival_ns', 'start_ns')
_SPAN_FIELDS = ('_span_ns', 'duration_ns')


def _unit_key(name: str, value: Any) -> tuple[str, Any]:
    """Rename ``*_ns`` to ``*_s`` (spans, points in time) or ``*_ms`` and scale the value."""
    if not name.endswith('_ns'):
        return name, value
    base = name[:-3]
    if any(name.endswith(s) for s in _POINT_FIELDS + _SPAN_FIELDS):
        return f'{base}_s', None if value is None else value / 1e9
    return f'{base}_ms', None if value is None else value / 1e6


def _plain(value: Any) -> Any:
    """JSON-ready value: dataclasses as dicts with units in the keys, NaN as None."""
    if is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in fields(value):
            if f.name == 'series':
                continue
            key, item = _unit_key(f.name, getattr(value, f.name))
            out[key] = _plain(item)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def topic_note(topic: TopicSnapshot, facts: TopicFacts) -> str:
    """Return one line of what a topic's figures need read with: the session's words and the bag's.

    Why the counts are unknown (``counts_note``), the bag's own facts, then the session's
    notes (several producers, foreign stamps, outages, cycles no grid saw ...).
    """
    report = topic.report
    parts: list[str] = []
    if report is None:
        parts.append(topic.reason)
    elif report.kind == 'event':
        parts.append('event topic: no period, so no misses or skipped periods')
    elif report.counts_note and not facts.notes:
        parts.append(f'misses and skipped periods unknown: {report.counts_note}')
    return '; '.join([*parts, *facts.notes, *topic.notes])


def topic_record(result: BagResult, topic: TopicSnapshot, facts: TopicFacts) -> dict[str, Any]:
    """Return one analyzed topic as a flat JSON object: the figure table's keys plus bag facts."""
    return {'name': topic.topic_id, 'topic': topic.topic, 'msgtype': facts.msgtype,
            'stamp': facts.stamp, 'clock_choice': facts.clock_choice,
            'kind': topic.report.kind if topic.report else None,
            **record(RUN_TOPIC, result.snapshot, topic),
            'note': topic_note(topic, facts),
            **transforms_record(result.snapshot, topic)}


def transforms_record(snapshot: Snapshot, topic: TopicSnapshot) -> dict[str, Any]:
    """Return ``{'transforms': [...]}`` of a /tf-like topic (one object per transform), else {}.

    Each object has the keys of ``TRANSFORM`` (``analysis/figures.py``); next to them what
    was not tracked or read, and why the writer or some ages are unknown.
    """
    transforms = topic.transforms
    if transforms is None:
        return {}
    return {'transforms': [record(TRANSFORM, snapshot, tf) for tf in transforms.transforms],
            'transforms_static': transforms.static,
            'transforms_untracked': transforms.untracked,
            'transforms_malformed': transforms.malformed,
            'transforms_writer_note': transforms.writer_note,
            'transforms_age_note': transforms.age_note}


def clock_record(result: BagResult, facts: ClockFacts) -> dict[str, Any]:
    """Return the /clock stream as a flat JSON object: the figure table's keys plus bag facts."""
    clock = result.snapshot.clock
    return {**record(RUN_CLOCK, result.snapshot, clock),
            **{k: v for k, v in _plain(facts).items()},
            'max_wall_gap_at_s': _since(facts.max_wall_gap_at_ns, result)}


def _since(at_ns: int | None, result: BagResult) -> float | None:
    """Return a wall time of the bag as seconds after its start (None while unknown)."""
    return None if at_ns is None else (at_ns - result.bag.start_ns) / 1e9


def to_json(result: BagResult) -> dict[str, Any]:
    """Return the whole result as a JSON-ready dict, led by its ``format`` and ``version``."""
    return {'format': JSON_FORMAT, 'version': JSON_VERSION, 'bag': _plain(result.bag),
            'topics': [_plain(topic_record(result, t, f)) for t, f in result.topics],
            'clock': None if result.clock is None else _plain(clock_record(result,
                                                                           result.clock)),
            'recorded': None if result.recorded is None else _plain(result.recorded.to_json()),
            'percentile_method': result.percentile_method,
            'notes': list(result.notes)}


# -- CSV ------------------------------------------------------------------------------------

def _flat(prefix: str, value: Any) -> dict[str, Any]:
    plain = _plain(value)
    out: dict[str, Any] = {}
    for key, item in plain.items():
        if isinstance(item, dict):
            out.update({f'{key}_{k}': v for k, v in _flat('', item).items()})
        else:
            out[f'{prefix}{key}'] = item
    return out


def csv_rows(result: BagResult) -> list[dict[str, Any]]:
    """One row per analyzed topic, per recorded topic and for the clock."""
    rows: list[dict[str, Any]] = []
    for topic, facts in result.topics:
        row = topic_record(result, topic, facts)
        transforms = row.pop('transforms', ())
        rows.append({'source': 'bag', **_flat('', row)})
        rows += [{'source': 'transform', 'name': topic.topic_id, 'topic': topic.topic,
                  **_flat('transform_', tf)} for tf in transforms]
    if result.clock is not None:
        rows.append({'source': 'clock', **_flat('', clock_record(result, result.clock))})
    if result.recorded is not None:
        for topic in result.recorded.topic_records():
            rows.append({'source': 'recorded', **_flat('', topic)})
        clock = result.recorded.clock_record()
        if clock is not None:
            rows.append({'source': 'recorded_clock', **_flat('', clock)})
    return rows


def write_csv(result: BagResult, stream: TextIO) -> None:
    """Write ``csv_rows`` with the union of their columns (empty where not applicable)."""
    rows = csv_rows(result)
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    writer = csv.DictWriter(stream, fieldnames=list(columns), lineterminator='\n')
    writer.writeheader()
    for row in rows:
        writer.writerow({k: '' if v is None else v for k, v in row.items()})


# -- text table ----------------------------------------------------------------------------

_ms = partial(fmt.ms, missing='-')
_num = partial(fmt.number, missing='-')
_rel_s = partial(fmt.since_s, digits=2, missing='-')
def render(header: list[tuple[str, str]], rows: list[list[str]],
           groups: tuple[tuple[int, int, str], ...] = ()) -> str:
    """Align ``rows`` under ``header`` (name, 'l' or 'r'), column 0 always left-aligned.

    ``groups`` puts a label such as ``interval wall [ms]`` over columns ``first..last``.
    """
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, (h, _) in enumerate(header)]
    for first, last, label in groups:
        span = sum(widths[first:last + 1]) + 2 * (last - first)
        if span < len(label) + 2:
            widths[last] += len(label) + 2 - span
    lines = []
    if groups:
        line = ''
        for first, last, label in groups:
            start = sum(widths[:first]) + 2 * first
            span = sum(widths[first:last + 1]) + 2 * (last - first)
            line = line.ljust(start) + f' {label} '.center(span, '-')
        lines.append(line)
    for row in [[h for h, _ in header], *rows]:
        cells = [cell.ljust(widths[j]) if j == 0 or header[j][1] == 'l'
                 else cell.rjust(widths[j]) for j, cell in enumerate(row)]
        lines.append('  '.join(cells).rstrip())
    return '\n'.join(lines)


_BY_JSON = {figure.json: figure for figure in RUN_TOPIC if figure.json}
TABLE_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ('messages', 'msgs', 0), ('rate_wall_hz', 'rate Hz', 1), ('period_ms', 'period ms', 3),
    ('timer_clock', 'clock', 0), ('mean_interval_wall_ms', 'mean', 2),
    ('max_interval_wall_ms', 'max', 2), ('p99_interval_wall_ms', 'p99', 2),
    ('mean_interval_sim_ms', 'mean', 2), ('max_interval_sim_ms', 'max', 2),
    ('p99_interval_sim_ms', 'p99', 2), ('deadline_misses', 'misses', 0), ('rule', 'rule', 0),
    ('skipped_periods', 'skipped', 0), ('messages_lost', 'lost', 0))
"""The topic table: figure (its ``json`` key in ``analysis.figures.RUN_TOPIC``), header, digits."""
TIMER_ONLY = ('deadline_misses', 'rule', 'skipped_periods')
"""Cells that mean nothing for an event topic (no period): they read 'n/a' there."""


def _cell(value: Any, digits: int) -> str:
    """Show a figure as the table does: '-' while unknown (never a good-looking 0)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return '-'
    if isinstance(value, bool) or isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return f'{value:,}'
    return f'{value:.{digits}f}'


def topic_cells(result: BagResult, topic: TopicSnapshot) -> list[str]:
    """Return the cells of one topic (after its name), in ``TABLE_COLUMNS`` order."""
    event = topic.report is not None and topic.report.kind == 'event'
    cells = []
    for key, _, digits in TABLE_COLUMNS:
        if event and key in TIMER_ONLY:
            cells.append('n/a')
            continue
        cell = _cell(_BY_JSON[key].get(result.snapshot, topic), digits)
        if key == 'period_ms' and topic.report is not None and topic.report.period_learned:
            cell += '*'
        cells.append(cell)
    return cells


def _topic_rows(result: BagResult) -> str:
    header = [('topic', 'l'), *((name, 'l' if key in ('timer_clock', 'rule') else 'r')
                                for key, name, _ in TABLE_COLUMNS)]
    groups = ((5, 7, 'interval wall [ms]'), (8, 10, 'interval sim [ms]'))
    rows = [[topic.topic, *topic_cells(result, topic)] for topic, _ in result.topics]
    return render(header, rows, groups)


def _clock_line(result: BagResult, clock: ClockFacts, t0_ns: int) -> str:
    snapshot = result.snapshot.clock
    report = snapshot.report
    rtf = _num(report.rtf_total, 3)
    parts = [f'Clock {snapshot.topic}: {report.messages_total:,} messages, RTF {rtf} overall '
             f'(sim {clock.sim_span_ns / 1e9:.2f} s / wall {clock.wall_span_ns / 1e9:.2f} s)',
             f'worst {report.rtf_bin_ns / 1e6:g} ms window {_num(report.rtf_bin_min_run, 3)} '
             f'at {_rel_s(report.rtf_bin_min_run_at_ns, t0_ns)}, best '
             f'{_num(clock.rtf_bin_max, 3)}',
             f'step {_ms(clock.step_ns, 3)} ms, longest gap {_ms(clock.max_wall_gap_ns, 1)} ms '
             f'at {_rel_s(clock.max_wall_gap_at_ns, t0_ns)}',
             f'resets {report.resets_total}']
    if report.resets_total:
        parts[0] += ' (RTF overall since the last reset)'
    if clock.paused_windows:
        parts.append(f'paused in {clock.paused_windows} report windows')
    return ';\n  '.join(parts)


def _recorded_cell(figure: Figure, snapshot: Snapshot, part: Any) -> str:
    """Return a figure as a table shows it: '-' while unknown."""
    if known(figure.get(snapshot, part)) is None:
        return '-'
    return fmt.figure_text(figure, snapshot, part) or '-'


def recorded_table(recorded: RecordedStats) -> tuple[list[tuple[str, str]], list[list[str]]]:
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
    worst = [f for f in WORST_TOPIC if 'p95' not in f.name]
    snapshot, rows = recorded.snapshot, []
    for topic in snapshot.topics:
        _, reports, restarts = recorded.reports[topic.topic_id]
        rows.append([topic.topic, f'{reports:,}',
                     *[_recorded_cell(f, snapshot, topic) for f in run + worst],
                     f'{restarts:,}', topic.level.name])
    return header, rows


def recorded_clock_line(recorded: RecordedStats, since: Any) -> str | None:
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


def _recorded_table(recorded: RecordedStats, t0_ns: int) -> str:
    header, rows = recorded_table(recorded)
    lines = [f'Recorded monitor stats ({", ".join(recorded.stats_topics)}: '
             f'{recorded.messages:,} reports):']
    lines.append(render(header, rows) if rows else '(no topics in the reports)')
    clock = recorded_clock_line(recorded, lambda at_ns: _rel_s(at_ns, t0_ns))
    if clock is not None:
        lines.append(clock)
    if recorded.malformed:
        lines.append(f'{recorded.malformed} stats messages could not be decoded')
    return '\n'.join(lines)


_TRANSFORM_COLUMNS = tuple(f for f in TRANSFORM if f.column)


def transforms_table(snapshot: Snapshot, topic: TopicSnapshot) -> str:
    """Return a /tf-like topic's transforms as a table: one row per parent->child pair."""
    transforms = topic.transforms
    assert transforms is not None
    kind = 'static transforms' if transforms.static else 'transforms'
    lines = [f'{topic.topic}: {len(transforms.transforms)} {kind} in '
             f'{transforms.messages:,} messages']
    header = [(f.column, 'l' if f.json in ('parent', 'child', 'writer') else 'r')
              for f in _TRANSFORM_COLUMNS]
    rows = [[_recorded_cell(f, snapshot, tf) for f in _TRANSFORM_COLUMNS]
            for tf in transforms.transforms]
    if rows:
        lines.append(render(header, rows))
    notes = [f'writer unknown: {transforms.writer_note}' if transforms.writer_note else '',
             f'age unknown: {transforms.age_note}' if transforms.age_note else '',
             f'{transforms.untracked:,} transforms of pairs beyond those tracked'
             if transforms.untracked else '',
             f'{transforms.malformed:,} messages without a readable TFMessage'
             if transforms.malformed else '']
    lines += [f'  {note}' for note in notes if note]
    return '\n'.join(lines)


def format_table(result: BagResult) -> str:
    """Return the human-readable summary printed by ``analyze``."""
    bag = result.bag
    out = [f'Bag {bag.path} ({bag.storage}, {bag.duration_ns / 1e9:.2f} s, '
           f'{bag.message_count:,} messages in {bag.topic_count} topics)']
    if result.topics:
        out += ['', _topic_rows(result)]
        # The footnote of the '*' only where a period was learned, not given.
        learned = ('* period learned from the first intervals. '
                   if any(t.report and t.report.period_learned for t, _ in result.topics)
                   else '')
        legend = [f'{learned}Misses per rule: response = end - scheduled slot > deadline; '
                  'interval = interval > period + jitter.']
        for t, facts in result.topics:
            r, run = t.report, t.run
            if r is None:
                legend.append(f'{t.topic_id}: {t.reason}')
                continue
            timing = f'{r.start_source} ({r.timing_reason})' if r.timing_reason else (
                r.start_source)
            details = (f'{t.topic}: deadline {_ms(r.deadline_ns, 3)} ms, jitter '
                       f'{_ms(r.jitter_ns, 3)} ms, start from {timing}, timer clock '
                       f'{r.timer_clock} ({facts.clock_choice}), lateness max '
                       f'{_ms(run.lateness_max_ns, 2)} ms, response max '
                       f'{_ms(run.response_max_ns, 2)} ms')
            note = topic_note(t, facts)
            if note:
                details += f'; {note}'
            legend.append(details)
        out += legend
        if not all(t.run.percentiles_exact in (True, None) for t, _ in result.topics):
            out.append(f'p99: {result.percentile_method}')
    for topic, _ in result.topics:
        if topic.transforms is not None:
            out += ['', transforms_table(result.snapshot, topic)]
    if result.clock is not None:
        out += ['', _clock_line(result, result.clock, bag.start_ns)]
    elif result.topics:
        out += ['', 'Clock: no /clock in the bag (sim figures unavailable)']
    if result.recorded is not None:
        out += ['', _recorded_table(result.recorded, bag.start_ns)]
    for note in result.notes:
        out.append(f'note: {note}')
    return '\n'.join(out)

