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
    applies,
    CLOCK,
    CONFIGURATION,
    Figure,
    find,
    not_applicable,
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
    elif not applies(MISSES, topic):  # no period: the one n/a rule says why
        parts.append(not_applicable(topic))
    elif report.counts_note and not facts.notes and report.counts_note not in topic.notes:
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


TABLE_FIGURES: tuple[Figure, ...] = tuple(find(RUN_TOPIC, name) for name in (
    'messages', 'rate wall', 'period', 'timer clock', 'mean interval wall', 'max interval wall',
    'p99 interval wall', 'mean interval sim', 'max interval sim', 'p99 interval sim',
    'deadline misses', 'rule', 'skipped periods', 'messages lost'))
"""The topic table's columns after the topic: whole-run figures, headed and written as the
table of figures says (``Figure.column``, ``outputs/format.py`` ``cell``)."""
MISSES = find(RUN_TOPIC, 'deadline misses')
RECORDED_FIGURES: tuple[Figure, ...] = tuple(find(RUN_TOPIC, name) for name in (
    'messages', 'deadline misses', 'skipped periods', 'max interval', 'rate', 'messages lost',
    'rule', 'timer clock', 'period'))
"""The recorded topics' whole-run columns (the worst window figures follow)."""
RECORDED_WORST: tuple[Figure, ...] = tuple(f for f in WORST_TOPIC if 'p95' not in f.name)


def _align_by_cells(cells: list[str]) -> str:
    """Return 'r' for a column of numbers (unknown or n/a among them), else 'l' (words)."""
    def number(text: str) -> bool:
        try:
            float(text.replace(',', ''))
        except ValueError:
            return text in (fmt.UNKNOWN, fmt.NOT_AVAILABLE)
        return True
    return 'r' if all(number(text) for text in cells) else 'l'


def align(figure: Figure) -> str:
    """Return how a figure's column aligns: words left ('l'), numbers right ('r')."""
    return 'l' if figure.group == CONFIGURATION and not figure.unit else 'r'


def topic_cells(result: BagResult, topic: TopicSnapshot) -> list[str]:
    """Return the cells of one topic (after its name), in ``TABLE_FIGURES`` order."""
    cells = []
    for figure in TABLE_FIGURES:
        text = fmt.cell(figure, result.snapshot, topic)
        if figure.name == 'period' and topic.report is not None and topic.report.period_learned:
            text += '*'
        cells.append(text)
    return cells


def _topic_rows(result: BagResult) -> str:
    header = [('topic', 'l'), *((figure.column, align(figure)) for figure in TABLE_FIGURES)]
    rows = [[topic.topic, *topic_cells(result, topic)] for topic, _ in result.topics]
    return render(header, rows)


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


def recorded_table(recorded: RecordedStats) -> tuple[list[tuple[str, str]], list[list[str]]]:
    """Return the header (name, 'l' or 'r') and the rows of the recorded topics' table.

    Its columns are the whole-run figures ``RECORDED_FIGURES``, then the worst window figures
    (``RECORDED_WORST``), the reports and restarts, and the worst level.
    """
    header = [('topic', 'l'), ('reports', 'r'),
              *[(f.column, align(f)) for f in RECORDED_FIGURES],
              *[(f'worst {f.key}', 'r') for f in RECORDED_WORST],
              ('restarts', 'r'), ('worst level', 'l')]
    snapshot, rows = recorded.snapshot, []
    for topic in snapshot.topics:
        _, reports, restarts = recorded.reports[topic.topic_id]
        rows.append([topic.topic, f'{reports:,}',
                     *[fmt.cell(f, snapshot, topic) for f in RECORDED_FIGURES + RECORDED_WORST],
                     f'{restarts:,}', topic.level.name])
    return header, rows


RTF_OVERALL, RTF_BIN, WORST_RTF_BIN, CLOCK_MESSAGES, CLOCK_RESETS = (
    find(RUN_CLOCK, name) for name in ('RTF overall', 'RTF bin', 'worst RTF window', 'messages',
                                       'sim resets'))
WORST_RTF, WORST_GAP = find(CLOCK, 'RTF'), find(CLOCK, 'max wall gap')
"""The recorded clock line's figures: the run's, and the worst report window's."""


def recorded_clock_line(recorded: RecordedStats, since: Any) -> str | None:
    """Return the recorded clock in one line (``since(ns)`` shows a point in time)."""
    if not recorded.clock_reports:
        return None
    snapshot = recorded.snapshot
    clock = snapshot.clock

    def text(figure: Figure) -> str:
        return fmt.cell(figure, snapshot, clock)
    bin_ms = fmt.number(RTF_BIN.get(snapshot, clock) * 1e3, 0, '-')
    return (f'Recorded clock: RTF {text(RTF_OVERALL)} overall (last report); worst '
            f'{bin_ms} ms window {text(WORST_RTF_BIN)} at '
            f'{since(clock.report.rtf_bin_min_run_at_ns)}, worst report window '
            f'{text(WORST_RTF)}; longest gap {text(WORST_GAP)} {WORST_GAP.unit}; '
            f'{text(CLOCK_MESSAGES)} /clock messages; resets {text(CLOCK_RESETS)}; worst '
            f'level {clock.level.name}')


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
    rows = [[fmt.cell(f, snapshot, tf) for f in _TRANSFORM_COLUMNS]
            for tf in transforms.transforms]
    header = [(f.column, _align_by_cells([row[i] for row in rows]))
              for i, f in enumerate(_TRANSFORM_COLUMNS)]
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

