"""The terminal view: MonitorStats -> rows, plain lines and a coloured rich table."""

from __future__ import annotations

import io
import math
import subprocess
import sys

import pytest

from ros2_deadline_monitor.shell import terminal_view, watch


def stats_message():
    from ros2_deadline_monitor.msg import MonitorStats, TopicStats

    def topic(name, level, **fields):
        msg = TopicStats(name=name, topic=f'/{name}', level=level, loss_known=True)
        msg.interval_wall.max_ms = math.nan
        msg.interval_sim.max_ms = math.nan
        msg.rate_wall_hz = math.nan
        for key, value in fields.items():
            setattr(msg, key, value)
        return msg

    stats = MonitorStats(window_wall_s=10.0, window_sim_s=9.5)
    stats.header.stamp.sec = 1_700_000_000
    stats.clock.level = 1
    stats.clock.messages_total = 1000
    stats.clock.receiving = True
    stats.clock.rtf, stats.clock.rtf_total = 0.887, 0.95
    stats.clock.rtf_bin_s, stats.clock.rtf_bin_min = 0.1, 0.003
    stats.clock.sim_time_s = 12.5
    stats.clock.simulator_rtf = math.nan
    cmd = topic('cmd', 1, rate_wall_hz=98.04, deadline_misses_total=20, deadline_misses=2,
                skipped_periods_total=10, skipped_periods=1)
    cmd.interval_wall.max_ms = 22.51
    cmd.interval_sim.max_ms = 22.0
    stats.topics = [
        topic('ok', 0, rate_wall_hz=50.0),
        cmd,
        topic('quiet', 3),
        topic('dead', 2, loss_known=False, messages_lost_total=3),
    ]
    return stats


def test_rows_are_sorted_worst_first_and_formatted():
    view = terminal_view.view_of(stats_message(), '/deadline_monitor/stats')
    assert [row.cells[0] for row in view.rows] == ['/dead', '/quiet', '/cmd', '/ok']
    assert [row.level for row in view.rows] == ['ERROR', 'STALE', 'WARN', 'OK']
    cmd = dict(zip(terminal_view.COLUMNS, view.rows[2].cells, strict=True))
    assert cmd == {'topic': '/cmd', 'rate Hz': '98.0', 'max wall ms': '22.51',
                   'max sim ms': '22.00', 'misses': '20 (+2)', 'skipped': '10 (+1)',
                   'lost': '0', 'level': 'WARN'}
    dead = dict(zip(terminal_view.COLUMNS, view.rows[0].cells, strict=True))
    assert dead['lost'] == '?' and dead['rate Hz'] == '-' and dead['max wall ms'] == '-'
    assert view.clock == ('clock: RTF 0.887 (window), 0.950 (since start), worst 100 ms bin '
                          '0.003, sim time 12.500 s')
    assert view.clock_level == 'WARN'
    assert view.title.startswith('/deadline_monitor/stats at ')


def test_plain_lines_are_aligned_and_free_of_escape_codes():
    lines = terminal_view.plain_lines(terminal_view.view_of(stats_message(), '/s'))
    assert lines[1].endswith('[WARN]')
    header, *rows = lines[2:]
    assert header.split() == ['topic', 'rate', 'Hz', 'max', 'wall', 'ms', 'max', 'sim', 'ms',
                              'misses', 'skipped', 'lost', 'level']
    assert len({line.index('  ', len('/quiet')) for line in rows[:2]}) == 1
    assert all('\x1b' not in line for line in lines)


def test_the_clock_line_without_clock():
    stats = stats_message()
    stats.clock.messages_total = 0
    stats.clock.status = 'no /clock received'
    assert terminal_view.view_of(stats, '/s').clock == 'clock: no /clock received'


def test_the_rich_table_colours_the_levels():
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True, color_system='standard',
                      width=120)
    console.print(terminal_view.rich_table(terminal_view.view_of(stats_message(), '/s')))
    text = console.file.getvalue()
    assert '\x1b[1;31mERROR' in text  # bold red
    assert '\x1b[33mWARN' in text and '\x1b[32mOK' in text and '\x1b[35mSTALE' in text
    assert text.index('/dead') < text.index('/quiet') < text.index('/cmd') < text.index('/ok')


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_rich_a_terminal_gets_plain_lines_and_a_reason(monkeypatch):
    monkeypatch.setattr(terminal_view, 'rich_available', lambda: False)
    warnings: list[str] = []
    display = watch.make_display(FakeTerminal(), '/s', warn=warnings.append)
    assert isinstance(display, watch.PlainDisplay)
    assert warnings == [terminal_view.RICH_MISSING]


def test_a_pipe_gets_plain_lines_and_a_terminal_the_live_table():
    assert isinstance(watch.make_display(io.StringIO(), '/s'), watch.PlainDisplay)
    live = watch.make_display(FakeTerminal(), '/s')
    try:
        assert isinstance(live, watch.LiveDisplay)
    finally:
        live.close()


def test_the_monitor_never_imports_rich():
    """The monitor must run where rich is not installed: only the view imports it."""
    code = ('import sys; import ros2_deadline_monitor.shell.cli, '
            'ros2_deadline_monitor.shell.watch, ros2_deadline_monitor.shell.terminal_view; '
            "sys.exit('rich' in sys.modules)")
    assert subprocess.run([sys.executable, '-c', code], check=False).returncode == 0


@pytest.mark.parametrize(('namespace', 'topic'), [
    ('', '/deadline_monitor/stats'), ('robot1', '/robot1/deadline_monitor/stats'),
    ('/fleet/robot1/', '/fleet/robot1/deadline_monitor/stats'),
])
def test_stats_topic(namespace, topic):
    assert watch.stats_topic(namespace, 'deadline_monitor') == topic


def test_unknown_counts_read_a_dash_and_outages_are_named_beside_the_max():
    stats = stats_message()
    cmd = stats.topics[1]
    cmd.period_ms = math.nan  # still learning: no period, so no count is known
    cmd.outages_total, cmd.outage_max_s = 1, 2.16
    row = dict(zip(terminal_view.COLUMNS, terminal_view._row(cmd).cells, strict=True))
    assert (row['misses'], row['skipped']) == ('-', '-')
    assert row['max wall ms'] == '22.51 (outage 2.16 s)'
