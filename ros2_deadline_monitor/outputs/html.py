"""One self-contained HTML report: tables, notes and the figures embedded as base64 PNGs.

The file needs nothing else (no scripts, no external style sheets or images), so it can be
mailed or attached to a ticket as is.
"""

from __future__ import annotations

import base64
from datetime import datetime, timezone
from functools import partial
from html import escape

from ros2_deadline_monitor.analysis.figures import Figure, find, RUN_CLOCK, RUN_TOPIC
from ros2_deadline_monitor.outputs import format as fmt
from ros2_deadline_monitor.outputs.bag_result import BagResult, ClockFacts, RecordedStats
from ros2_deadline_monitor.outputs.format import cell
from ros2_deadline_monitor.outputs.tables import (
    recorded_clock_line,
    recorded_table,
    TABLE_FIGURES,
    topic_cells,
    topic_note,
)

__all__ = ['html_report']

STYLE = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto;
       max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.6em 0; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #e4e4e4; text-align: right;
         white-space: nowrap; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
td.bad { color: #b00020; font-weight: 600; }
.meta { color: #555; font-size: 0.9em; } .note { color: #555; font-size: 0.85em; }
figure { margin: 1.2em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.85em; }
"""


_num = partial(fmt.number, missing='-', grouping=True)
_ms = partial(fmt.ms, missing='-', grouping=True)
def _row(cells: list[tuple[str, str]]) -> str:
    return '<tr>' + ''.join(f'<td class="{cls}">{escape(text)}</td>' for text, cls in cells) + \
        '</tr>'


def _head(names: list[str], left: int = 1) -> str:
    return '<tr>' + ''.join(f'<th class="{"l" if i < left else ""}">{escape(n)}</th>'
                            for i, n in enumerate(names)) + '</tr>'


BAD = tuple(find(RUN_TOPIC, name) for name in ('deadline misses', 'skipped periods',
                                                'messages lost'))
"""Counts marked in red once above 0."""


def _topics_table(result: BagResult) -> str:
    head = _head(['topic', 'type', *(figure.column for figure in TABLE_FIGURES)], left=2)
    rows = []
    for t, facts in result.topics:
        cells = topic_cells(result, t)
        marked = [(cell, 'bad' if figure in BAD and cell not in ('0', '-', 'n/a') else '')
                  for figure, cell in zip(TABLE_FIGURES, cells, strict=True)]
        rows.append(_row([(t.topic, 'l'), (facts.msgtype, 'l'), *marked]))
    details = []
    for t, facts in result.topics:
        r, run = t.report, t.run
        if r is None:
            details.append(f'<li>{escape(t.topic_id)}: {escape(t.reason)}</li>')
            continue
        text = (f'{t.topic}: deadline {_ms(r.deadline_ns, 3)} ms, jitter tolerance '
                f'{_ms(r.jitter_ns, 3)} ms, cycle start from {r.start_source}'
                f'{f" ({r.timing_reason})" if r.timing_reason else ""}, timer clock '
                f'{r.timer_clock} ({facts.clock_choice}); lateness mean/max '
                f'{_ms(run.lateness_mean_ns, 3)}/{_ms(run.lateness_max_ns, 2)} ms; '
                f'response mean/p99/max {_ms(run.response_mean_ns, 3)}/'
                f'{_ms(run.response_p99_ns, 2)}/{_ms(run.response_max_ns, 2)} ms; size mean '
                f'{_num(run.size_mean_bytes, 0)} B, bandwidth '
                f'{_num(run.bandwidth_bytes_per_s, 0)} B/s')
        note = topic_note(t, facts)
        if note:
            text += f'; {note}'
        details.append(f'<li>{escape(text)}</li>')
    return (f'<table>{head}{"".join(rows)}</table>'
            f'<ul class="note">{"".join(details)}</ul>')


def _clock_table(result: BagResult, clock: ClockFacts, t0_ns: int) -> str:
    snapshot = result.snapshot
    report = snapshot.clock.report

    def rel(at_ns: int | None) -> str:
        return '-' if at_ns is None else f'+{(at_ns - t0_ns) / 1e9:.2f} s'

    def figure(name: str) -> tuple[Figure, str]:
        found = find(RUN_CLOCK, name)
        return found, cell(found, snapshot, snapshot.clock)

    messages, rtf, worst, resets = (figure(name) for name in (
        'messages', 'RTF overall', 'worst RTF window', 'sim resets'))
    # The figures of the table under their keys; then the bag's own facts (``ClockFacts``).
    rows = [
        (messages[0].key, messages[1]),
        (rtf[0].key + (' (since the last reset)' if report.resets_total else ''), rtf[1]),
        (f'{worst[0].key} ({report.rtf_bin_ns / 1e6:g} ms)',
         f'{worst[1]} at {rel(report.rtf_bin_min_run_at_ns)}'),
        (resets[0].key, resets[1]),
        ('sim / wall span', f'{clock.sim_span_ns / 1e9:.3f} s / {clock.wall_span_ns / 1e9:.3f} s'),
        (f'best {report.rtf_bin_ns / 1e6:g} ms window', _num(clock.rtf_bin_max, 3)),
        ('median sim step', f'{_ms(clock.step_ns, 3)} ms'),
        ('longest wall gap between /clock messages',
         f'{_ms(clock.max_wall_gap_ns, 1)} ms at {rel(clock.max_wall_gap_at_ns)}'),
        ('report windows with sim time paused', str(clock.paused_windows)),
    ]
    body = ''.join(_row([(k, 'l'), (v, '')]) for k, v in rows)
    return f'<table>{body}</table>'


def _recorded_table(recorded: RecordedStats) -> str:
    header, rows = recorded_table(recorded)
    body = ''.join(_row([(cell, 'l' if i == 0 else '') for i, cell in enumerate(row)])
                   for row in rows)
    html = f'<table>{_head([name for name, _ in header])}{body}</table>'
    clock = recorded_clock_line(recorded, lambda at_ns: fmt.since_s(
        at_ns, recorded.snapshot.start_wall_ns, digits=2, missing='-'))
    if clock is not None:
        html += f'<p class="meta">{escape(clock)}.</p>'
    return html


def _caption(name: str) -> str:
    if name == 'ecdf.png':
        return ('Empirical distribution of the intervals between cycle starts, on both clocks; '
                'right: the tail on log axes.')
    if name.startswith('timeline_'):
        return ('Intervals with deadline misses and skipped periods marked, response times '
                'against the deadline, and the real time factor, on one wall-time axis.')
    if name.startswith('lateness_'):
        return 'How late cycles started relative to their scheduled slot (log counts).'
    return 'Real time factor per report window with the worst and best bins.'


def html_report(result: BagResult, images: dict[str, bytes]) -> str:
    """Render the whole report as one HTML string."""
    bag = result.bag
    start = datetime.fromtimestamp(bag.start_ns / 1e9, tz=timezone.utc) if bag.start_ns else None
    parts = [
        '<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
        f'<title>Deadline analysis: {escape(bag.path)}</title>',
        f'<style>{STYLE}</style></head><body>',
        '<h1>Deadline and real time factor analysis</h1>',
        f'<p class="meta">Bag <code>{escape(bag.path)}</code> ({escape(bag.storage)}), '
        f'{bag.duration_ns / 1e9:.2f} s from '
        f'{escape(start.isoformat(timespec="seconds")) if start else "-"}, '
        f'{bag.message_count:,} messages in {bag.topic_count} topics.</p>',
    ]
    if result.topics:
        parts += ['<h2>Topics</h2>', _topics_table(result),
                  f'<p class="note">Percentiles: {escape(result.percentile_method)}.</p>']
    if result.clock is not None:
        parts += ['<h2>Clock and real time factor</h2>',
                  _clock_table(result, result.clock, bag.start_ns)]
    if result.recorded is not None:
        parts += ['<h2>Recorded monitor statistics</h2>', _recorded_table(result.recorded)]
    if result.notes:
        parts.append('<ul class="note">' + ''.join(f'<li>{escape(n)}</li>'
                                                   for n in result.notes) + '</ul>')
    if images:
        parts.append('<h2>Figures</h2>')
        for name, png in images.items():
            data = base64.b64encode(png).decode('ascii')
            parts.append(f'<figure><img alt="{escape(name)}" src="data:image/png;base64,{data}">'
                         f'<figcaption>{escape(_caption(name))}</figcaption></figure>')
    parts.append('</body></html>')
    return '\n'.join(parts) + '\n'
