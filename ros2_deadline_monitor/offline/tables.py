"""The analysis as a text table, a JSON document and CSV rows.

Inside, times are nanoseconds; here, at the edge, they become ms (durations), s (spans and
points in time, seconds on the clock they were measured with) and Hz, with the unit in every
key, as in the live node's messages. NaN ("nothing measured") becomes JSON null and an empty
CSV cell.
"""

from __future__ import annotations

import csv
from dataclasses import fields, is_dataclass, replace
from functools import partial
import math
from typing import Any, TextIO

from ros2_deadline_monitor.core import format as fmt
from ros2_deadline_monitor.core.reports import IntervalSummary

from .recorded import clock_line as recorded_clock_line
from .recorded import table as recorded_table
from .results import BagResult, ClockResult, RecordedStats, TopicResult

__all__ = ['JSON_FORMAT', 'JSON_VERSION', 'format_table', 'to_json', 'write_csv']

JSON_FORMAT = 'ros2_deadline_monitor/analyze'
"""``format`` of the JSON document ``analyze --json`` writes (``--baseline`` checks it)."""
JSON_VERSION = 1
"""``version`` of that document: raised when a key changes meaning or disappears."""

LEVELS = {0: 'OK', 1: 'WARN', 2: 'ERROR', 3: 'STALE', -1: '-'}
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


def to_json(result: BagResult) -> dict[str, Any]:
    """Return the whole result as a JSON-ready dict, led by its ``format`` and ``version``."""
    recorded = result.recorded
    return {'format': JSON_FORMAT, 'version': JSON_VERSION,
            **_plain(replace(result, recorded=None)),
            'recorded': _plain(recorded.to_json()) if recorded is not None else None}


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
    for topic in result.topics:
        rows.append({'source': 'bag', **_flat('', topic)})
    if result.clock is not None:
        rows.append({'source': 'clock', **_flat('', result.clock)})
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


def _timer_only(t: TopicResult, *cells: str) -> list[str]:
    """Cells that mean nothing for an event topic (no period) read 'n/a' there."""
    return ['n/a'] * len(cells) if t.kind == 'event' else list(cells)


def count_cell(value: int | None) -> str:
    """Show a count, or '-' while it is unknown (no period learned): never a good-looking 0."""
    return '-' if value is None else f'{value:,}'


def _topic_rows(topics: tuple[TopicResult, ...]) -> str:
    header = [('topic', 'l'), ('msgs', 'r'), ('rate Hz', 'r'), ('period ms', 'r'),
              ('clock', 'l'), ('mean', 'r'), ('max', 'r'), ('p99', 'r'), ('mean', 'r'),
              ('max', 'r'), ('p99', 'r'), ('misses', 'r'), ('rule', 'l'), ('skipped', 'r'),
              ('lost', 'r')]
    groups = ((5, 7, 'interval wall [ms]'), (8, 10, 'interval sim [ms]'))
    rows = []
    for t in topics:
        wall: IntervalSummary = t.interval_wall
        sim: IntervalSummary = t.interval_sim
        period = _ms(t.period_ns, 3) + ('*' if t.period_learned else '')
        rows.append([
            t.topic, f'{t.messages_total:,}', _num(t.rate_wall_hz, 1), period, t.timer_clock,
            _ms(wall.mean_ns, 2), _ms(wall.max_ns, 2), _ms(wall.p99_ns, 2),
            _ms(sim.mean_ns, 2), _ms(sim.max_ns, 2), _ms(sim.p99_ns, 2),
            *_timer_only(t, count_cell(t.deadline_misses_total), t.rule,
                         count_cell(t.skipped_periods_total)),
            f'{t.messages_lost_total:,}'])
    return render(header, rows, groups)


def _clock_line(clock: ClockResult, t0_ns: int) -> str:
    rtf = _num(clock.rtf_total, 3)
    parts = [f'Clock {clock.topic}: {clock.messages_total:,} messages, RTF {rtf} overall '
             f'(sim {clock.sim_span_ns / 1e9:.2f} s / wall {clock.wall_span_ns / 1e9:.2f} s)',
             f'worst {clock.rtf_bin_ns / 1e6:g} ms window {_num(clock.rtf_bin_min, 3)} at '
             f'{_rel_s(clock.rtf_bin_min_at_ns, t0_ns)}, best {_num(clock.rtf_bin_max, 3)}',
             f'step {_ms(clock.step_ns, 3)} ms, longest gap {_ms(clock.max_wall_gap_ns, 1)} ms '
             f'at {_rel_s(clock.max_wall_gap_at_ns, t0_ns)}',
             f'resets {clock.resets_total}']
    if clock.resets_total:
        parts[0] += ' (RTF overall since the last reset)'
    if clock.paused_windows:
        parts.append(f'paused in {clock.paused_windows} report windows')
    return ';\n  '.join(parts)


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


def format_table(result: BagResult) -> str:
    """Return the human-readable summary printed by ``analyze``."""
    bag = result.bag
    out = [f'Bag {bag.path} ({bag.storage}, {bag.duration_ns / 1e9:.2f} s, '
           f'{bag.message_count:,} messages in {bag.topic_count} topics)']
    if result.topics:
        out += ['', _topic_rows(result.topics)]
        # The footnote of the '*' only where a period was learned, not given.
        learned = ('* period learned from the first intervals. '
                   if any(t.period_learned for t in result.topics) else '')
        legend = [f'{learned}Misses per rule: response = end - scheduled slot > deadline; '
                  'interval = interval > period + jitter.']
        for t in result.topics:
            timing = f'{t.start_source} ({t.timing_reason})' if t.timing_reason else (
                t.start_source)
            details = (f'{t.topic}: deadline {_ms(t.deadline_ns, 3)} ms, jitter '
                       f'{_ms(t.jitter_ns, 3)} ms, start from {timing}, timer clock '
                       f'{t.timer_clock} ({t.clock_choice}), lateness max '
                       f'{_ms(t.lateness_max_ns, 2)} ms, response max '
                       f'{_ms(t.response_max_ns, 2)} ms')
            if t.note:
                details += f'; {t.note}'
            legend.append(details)
        out += legend
        if not all(t.percentiles_exact for t in result.topics):
            out.append(f'p99: {result.percentile_method}')
    if result.clock is not None:
        out += ['', _clock_line(result.clock, bag.start_ns)]
    elif result.topics:
        out += ['', 'Clock: no /clock in the bag (sim figures unavailable)']
    if result.recorded is not None:
        out += ['', _recorded_table(result.recorded, bag.start_ns)]
    for note in result.notes:
        out.append(f'note: {note}')
    return '\n'.join(out)

