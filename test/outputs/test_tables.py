"""Tests for the text table, JSON and CSV of a result (outputs/tables.py)."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from ros2_deadline_monitor.bag.plan import build_plan, Overrides
from ros2_deadline_monitor.bag.reader import BagSource
from ros2_deadline_monitor.bag.replay import BagAnalysis
from ros2_deadline_monitor.outputs.tables import format_table, render, to_json, write_csv


@pytest.fixture
def result(bags, tmp_path: Path):
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    with BagSource(ref.path) as bag:
        plan, _ = build_plan(bag, None, Overrides(stamp='start'))
        return BagAnalysis(bag, plan).run()


def _keys(value: object) -> list[str]:
    if isinstance(value, dict):
        return [k for key, item in value.items() for k in [key, *_keys(item)]]
    if isinstance(value, list):
        return [k for item in value for k in _keys(item)]
    return []


def test_json_has_units_in_keys_and_no_nan(result, topic_views) -> None:
    data = to_json(result)
    keys = _keys(data)
    assert not [k for k in keys if k.endswith('_ns')]
    assert {'period_ms', 'deadline_ms', 'jitter_ms', 'first_arrival_s', 'duration_s',
            'rtf_bin_min_at_s', 'max_wall_gap_ms', 'wall_span_s'} <= set(keys)
    text = json.dumps(data, allow_nan=False)
    assert '"series"' not in text
    topic = data['topics'][0]
    assert topic['max_interval_wall_at_s'] == pytest.approx(
        (topic_views(result)[0].interval_wall.max_at_ns - result.bag.start_ns) / 1e9)
    assert topic['period_ms'] == 10.0
    assert data['recorded'] is None


def test_nan_becomes_null(result, topic_views) -> None:
    data = to_json(result)
    assert math.isnan(topic_views(result)[0].size_max_bytes) is False
    assert data['topics'][0]['note'] == ''
    assert data['clock']['paused_windows'] == 0
    wall = {k: v for k, v in data['topics'][0].items() if k.endswith('interval_wall_ms')}
    assert len(wall) == 6 and all(v is not None for v in wall.values())


def test_csv_rows(result) -> None:
    buffer = io.StringIO()
    write_csv(result, buffer)
    rows = list(csv.DictReader(io.StringIO(buffer.getvalue())))
    assert [r['source'] for r in rows] == ['bag', 'clock']
    assert rows[0]['topic'] == '/demo/cmd'
    assert rows[0]['skipped_periods'] == '10'
    assert rows[0]['rtf_total'] == ''
    assert float(rows[1]['rtf_total']) == pytest.approx(1.0)


def test_table_text(result) -> None:
    text = format_table(result)
    lines = text.splitlines()
    assert lines[0].startswith('Bag ') and '(mcap, 5.10 s, 5,592 messages in 3 topics)' in lines[0]
    header = next(line for line in lines if line.startswith('topic '))
    row = next(line for line in lines if line.startswith('/demo/cmd '))
    # The headers are the figure table's columns, as in watch, the HTML and the summary.
    assert header.split() == ['topic', 'msgs', 'rate', 'wall', 'Hz', 'period', 'ms', 'clock',
                              'mean', 'wall', 'ms', 'max', 'wall', 'ms', 'p99', 'wall', 'ms',
                              'mean', 'sim', 'ms', 'max', 'sim', 'ms', 'p99', 'sim', 'ms',
                              'misses', 'rule', 'skipped', 'lost']
    assert row.split() == ['/demo/cmd', '490', '98.0', '10.000*', 'wall', '10.20', '22.00',
                           '22.00', '10.20', '22.00', '22.00', '20', 'response', '10', '-']
    assert 'RTF 1.000 overall' in text


def test_render_aligns_and_widens_for_group_labels() -> None:
    text = render([('name', 'l'), ('a', 'r'), ('b', 'r')], [['x', '1', '22']],
                  ((1, 2, 'a long label'),))
    first, header, row = text.splitlines()
    assert 'a long label' in first
    assert header.index('b') + 1 == len(header)
    assert row.endswith('22') and len(row) == len(header)


def test_the_text_table_and_the_html_show_a_changed_figure(result, monkeypatch) -> None:
    """A figure's header and decimals in the table of figures are those of both outputs."""
    import dataclasses

    from ros2_deadline_monitor.outputs import html, tables

    renamed = tuple(dataclasses.replace(f, column='wall rate', column_digits=4)
                    if f.name == 'rate wall' else f for f in tables.TABLE_FIGURES)
    monkeypatch.setattr(tables, 'TABLE_FIGURES', renamed)
    monkeypatch.setattr(html, 'TABLE_FIGURES', renamed)
    text = format_table(result)
    header = next(line for line in text.splitlines() if line.startswith('topic '))
    row = next(line for line in text.splitlines() if line.startswith('/demo/cmd '))
    assert 'wall rate' in header and 'rate wall Hz' not in header
    rate = next(f for f in renamed if f.column == 'wall rate')
    topic = next(t for t, _ in result.topics if t.topic == '/demo/cmd')
    shown = f'{rate.get(result.snapshot, topic):.4f}'  # 4 decimals, as the descriptor says
    assert row.split()[2] == shown
    page = html.html_report(result, {})
    assert '>wall rate</th>' in page and f'>{shown}</td>' in page
