"""The figure table draws every table output: its columns, headers, decimals and n/a rule.

Each output picks figures of the table (``analysis/figures.py``) and writes them through
``outputs/format.py``; nothing else names a column or decides what unknown reads. These tests
change a figure's descriptor (its header, its decimals), or add one, where the output picks
its figures, and look for the change in what the output prints: an output that kept a header
or a number format of its own would not show it.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from ros2_deadline_monitor.analysis import figures
from ros2_deadline_monitor.analysis.figures import find, RUN_TOPIC, TOPIC
from ros2_deadline_monitor.outputs import baseline, report_lines, summary, tables, terminal_view
from ros2_deadline_monitor.outputs.format import cell

WORDS = {'topic', 'level', 'reason'}
"""Headers that name no figure: the row's topic, its level and the level's reason."""


def _renamed(figure: figures.Figure, column: str, digits: int) -> figures.Figure:
    return dataclasses.replace(figure, column=column, column_digits=digits)


def _columns(table: tuple[figures.Figure, ...]) -> set[str]:
    return {figure.column for figure in table if figure.column}


# -- every column comes from the table ---------------------------------------------------------

def test_every_watch_column_is_a_figure_of_the_window_table():
    headers = set(terminal_view.columns()) - WORDS
    assert headers and headers <= _columns(TOPIC)


def test_every_summary_column_is_a_whole_run_figure(snapshots):
    header = summary.summary_text('m', snapshots.snapshot()).splitlines()[1]
    for figure in summary.COLUMNS:
        assert figure.column in _columns(RUN_TOPIC) and figure.column in header
        header = header.replace(figure.column, '', 1)
    assert header.split() == ['topic']  # nothing else heads a column


def test_every_bag_table_and_recorded_column_is_a_whole_run_figure():
    for chosen in (tables.TABLE_FIGURES, tables.RECORDED_FIGURES):
        assert all(figure.column for figure in chosen)
        assert {figure.column for figure in chosen} <= _columns(RUN_TOPIC)


def test_every_count_of_the_report_lines_is_a_figure_and_labelled_by_its_column(snapshots):
    line = report_lines.topic_line(snapshots.snapshot(), snapshots.topic())
    for total, _ in report_lines.COUNTS:
        assert f' {total.column}' in line and total in TOPIC


def test_every_compared_baseline_figure_is_named_and_keyed_by_the_table():
    by_key = {figure.key: figure for figure in (*RUN_TOPIC, *figures.RUN_CLOCK)}
    for compared in baseline.BASELINE_FIGURES + baseline.CLOCK_FIGURES[:2]:
        assert by_key[compared.label].json == compared.key
    assert len({c.key for c in baseline.BASELINE_FIGURES}) == len(baseline.BASELINE_FIGURES)


def test_no_output_looks_a_figure_up_by_a_json_key_string():
    """The outputs name figures by the table (``find``), never by a record's key string."""
    from pathlib import Path
    import re

    package = Path(figures.__file__).resolve().parents[1]
    keys = {figure.json for figure in (*RUN_TOPIC, *figures.RUN_CLOCK) if figure.json}
    found = []
    for folder in ('outputs', 'bag', 'live'):
        for path in sorted((package / folder).glob('*.py')):
            text = path.read_text(encoding='utf-8')
            for match in re.finditer(r"\[['\"]([a-z0-9_]+)['\"]\]", text):
                if match.group(1) in keys:
                    found.append(f'{folder}/{path.name}: {match.group(0)}')
    assert not found, found


# -- changing or adding a descriptor shows up in each output ----------------------------------

def test_the_summary_shows_a_changed_or_added_figure(monkeypatch, snapshots):
    added = _renamed(find(RUN_TOPIC, 'rate wall'), 'wall Hz', 4)
    changed = _renamed(find(RUN_TOPIC, 'max interval wall'), 'longest wall', 4)
    columns = tuple(changed if f.name == 'max interval wall' else f for f in summary.COLUMNS)
    monkeypatch.setattr(summary, 'COLUMNS', columns[:-1] + (added, columns[-1]))
    snap = snapshots.snapshot()
    topic = snap.topics[0]
    lines = summary.summary_text('m', snap).splitlines()
    assert 'longest wall' in lines[1] and 'wall Hz' in lines[1]
    assert cell(changed, snap, topic) in lines[2] and len(cell(changed, snap, topic)
                                                          .split('.')[1]) == 4
    assert cell(added, snap, topic) in lines[2]


def test_the_report_lines_show_a_changed_figure(monkeypatch, snapshots):
    monkeypatch.setattr(report_lines, 'RATE', _renamed(report_lines.RATE, 'x', 4))
    total, window = report_lines.COUNTS[1]
    monkeypatch.setattr(report_lines, 'COUNTS', (*report_lines.COUNTS[:1],
                                                 (_renamed(total, 'slips', 0), window),
                                                 *report_lines.COUNTS[2:]))
    snap = snapshots.snapshot()
    line = report_lines.topic_line(snap, snap.topics[0])
    rate = snap.topics[0].report.rate_wall_hz
    assert f'{rate:.4f} Hz' in line and ' slips,' in line


def test_the_bag_table_and_its_html_show_a_changed_or_added_figure(monkeypatch, snapshots):
    from ros2_deadline_monitor.outputs import html

    snap = snapshots.snapshot()
    result = SimpleNamespace(snapshot=snap)
    changed = _renamed(find(RUN_TOPIC, 'rate wall'), 'wall rate', 4)
    added = _renamed(find(RUN_TOPIC, 'cycles'), 'cycles seen', 0)
    chosen = tuple(changed if f.name == 'rate wall' else f for f in tables.TABLE_FIGURES)
    monkeypatch.setattr(tables, 'TABLE_FIGURES', chosen + (added,))
    monkeypatch.setattr(html, 'TABLE_FIGURES', chosen + (added,))
    cells = tables.topic_cells(result, snap.topics[0])
    assert cells[len(chosen)] == f'{snap.topics[0].run.cycles:,}'
    assert cells[1] == f'{changed.get(snap, snap.topics[0]):.4f}'
    header = [f.column for f in tables.TABLE_FIGURES]
    assert header[1] == 'wall rate' and header[-1] == 'cycles seen'


def test_the_n_a_rule_is_the_tables_per_cycle_flag(snapshots):
    """A figure marked per cycle reads 'n/a' for an event topic in every output's cell."""
    event = snapshots.topic(report=snapshots.topic_report(kind='event'))
    snap = snapshots.snapshot(topics=[event])
    for table in (TOPIC, RUN_TOPIC):
        for figure in table:
            if figure.per_cycle:
                assert cell(figure, snap, event) == 'n/a', figure.name
                assert figure.unknown(snap, event).startswith(figures.EVENT_TOPIC)
    rate = find(RUN_TOPIC, 'rate wall')
    assert cell(dataclasses.replace(rate, per_cycle=True), snap, event) == 'n/a'
    assert cell(rate, snap, event) != 'n/a'
