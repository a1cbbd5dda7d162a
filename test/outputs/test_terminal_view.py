"""The terminal view: MonitorStats -> rows, plain lines and a coloured rich table."""

from __future__ import annotations

import dataclasses
import io
import math
import subprocess
import sys
import time

import pytest

from ros2_deadline_monitor.analysis import figures
from ros2_deadline_monitor.live import watch
from ros2_deadline_monitor.outputs import terminal_view


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
    # Counts are figures once a message came (before, they are unknown: '-').
    cmd = topic('cmd', 1, rate_wall_hz=98.04, messages_total=500, messages=98,
                deadline_misses_total=20, deadline_misses=2,
                skipped_periods_total=10, skipped_periods=1, window_wall_s=10.0,
                status='2 misses (response rule), 1 skipped periods in window')
    cmd.interval_wall.max_ms = 22.51
    cmd.interval_sim.max_ms = 22.0
    stats.topics = [
        topic('ok', 0, rate_wall_hz=50.0),
        cmd,
        topic('quiet', 3),
        topic('dead', 2, loss_known=False, messages_lost_total=3,
              status='no message for 2 s (timeout 1 s)'),
    ]
    return stats


def test_rows_are_sorted_worst_first_and_formatted():
    view = terminal_view.view_of(stats_message(), '/deadline_monitor/stats')
    assert [row.cells[0] for row in view.rows] == ['/dead', '/quiet', '/cmd', '/ok']
    assert [row.level for row in view.rows] == ['ERROR', 'STALE', 'WARN', 'OK']
    cmd = dict(zip(terminal_view.COLUMNS, view.rows[2].cells, strict=True))
    assert cmd == {'topic': '/cmd', 'rate Hz': '98.0', 'max wall ms': '22.51',
                   'max sim ms': '22.00', 'misses': '20 (2)', 'skipped': '10 (1)',
                   'lost': '0 (0)', 'level': 'WARN',
                   'reason': '2 misses (response rule), 1 skipped periods in window'}
    assert view.legend == ('misses, skipped, lost: total since start (in the window, the last '
                           '10 s)')
    dead = dict(zip(terminal_view.COLUMNS, view.rows[0].cells, strict=True))
    # Lost with several writers is unknown: '-', as every unknown figure in every table.
    assert dead['lost'] == '-' and dead['rate Hz'] == '-' and dead['max wall ms'] == '-'
    assert dead['reason'] == 'no message for 2 s (timeout 1 s)'
    assert view.clock == ('clock: RTF 0.887 (window), 0.950 (since start), worst 100 ms bin '
                          '0.003, sim time 12.500 s')
    assert view.clock_level == 'WARN'
    assert view.title.startswith('/deadline_monitor/stats at ')


def test_plain_lines_are_aligned_and_free_of_escape_codes():
    lines = terminal_view.plain_lines(terminal_view.view_of(stats_message(), '/s'))
    assert lines[1].endswith('[WARN]')
    header, *rows, legend = lines[2:]
    assert header.split() == ['topic', 'rate', 'Hz', 'max', 'wall', 'ms', 'max', 'sim', 'ms',
                              'misses', 'skipped', 'lost', 'level', 'reason']
    assert len({line.index('  ', len('/quiet')) for line in rows[:2]}) == 1
    assert rows[2].endswith('WARN   2 misses (response rule), 1 skipped periods in window')
    assert legend.startswith('misses, skipped, lost: total since start (in the window')
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
    assert 'reason' in text and 'no message for 2 s (timeout 1 s)' in text
    assert 'misses, skipped, lost: total since start' in text


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
    code = ('import sys; import ros2_deadline_monitor.live.cli, '
            'ros2_deadline_monitor.live.watch, ros2_deadline_monitor.outputs.terminal_view; '
            "sys.exit('rich' in sys.modules)")
    assert subprocess.run([sys.executable, '-c', code], check=False).returncode == 0


@pytest.mark.parametrize(('namespace', 'topic'), [
    ('', '/deadline_monitor/stats'), ('robot1', '/robot1/deadline_monitor/stats'),
    ('/fleet/robot1/', '/fleet/robot1/deadline_monitor/stats'),
])
def test_stats_topic(namespace, topic):
    assert watch.stats_topic(namespace, 'deadline_monitor') == topic


S = 1_000_000_000


def test_silence_counts_only_after_reports_began_and_past_three_intervals():
    silence = terminal_view.Silence()
    assert silence.silent_ns(100 * S) is None  # waiting for the first report: not silent
    silence.report(0)
    assert silence.silent_ns(2 * S) is None  # the floor: never before 2 s
    assert silence.silent_ns(2 * S + 1) == 2 * S + 1
    for at in (5, 10, 15):  # a monitor reporting every 5 s
        silence.report(at * S)
    assert silence.silent_ns(15 * S + 15 * S) is None
    assert silence.silent_ns(15 * S + 15 * S + 1) == 15 * S + 1
    silence.report(31 * S)
    assert silence.silent_ns(31 * S + S) is None


def test_the_silence_line():
    assert terminal_view.silence_line(12 * S + 999) == 'no report for 12 s: monitor gone?'
    line = terminal_view.silence_line(3 * S, 1_700_000_000.0)
    assert line.startswith('no report for 3 s: monitor gone? (last at ')


def test_a_plain_display_says_the_silence_once_per_silence():
    stream = io.StringIO()
    display = watch.PlainDisplay(stream, '/s')
    display.show(stats_message())
    display.silent('no report for 3 s: monitor gone?')
    display.silent('no report for 4 s: monitor gone?')
    display.show(stats_message())
    display.silent('no report for 5 s: monitor gone?')
    text = stream.getvalue()
    assert text.count('monitor gone?') == 2
    assert '4 s' not in text
    assert text.index('3 s: monitor gone?') < text.rindex('/cmd') < text.index('5 s: monitor')


def test_the_live_table_shows_the_silence_above_the_last_table():
    stream = FakeTerminal()
    display = watch.LiveDisplay(stream, '/s')
    try:
        display.show(stats_message())
        display.silent('no report for 12 s: monitor gone?')
    finally:
        display.close()
    text = stream.getvalue()
    last = text[text.rindex('no report for 12 s: monitor gone?'):]
    assert '/cmd' in last and '20 (2)' in last


class Recorder:
    def __init__(self) -> None:
        self.said: list[str] = []

    def show(self, stats) -> None:
        pass

    def silent(self, text: str) -> None:
        self.said.append(text)

    def close(self) -> None:
        pass


def test_the_watcher_tells_the_display_when_reports_stop(ros_context):
    """A report handed to the watcher's callback, then checks at chosen monotonic times."""
    import rclpy

    node = rclpy.create_node('watch_silence_test', context=ros_context)
    try:
        recorder = Recorder()
        watcher = watch.StatsWatcher(node, '/silence_test/stats', recorder)
        watcher.check(time.monotonic_ns() + 100 * S)
        assert recorder.said == []  # no report yet: waiting, not silent
        watcher._on_stats(stats_message())
        now = time.monotonic_ns()
        watcher.check(now + S)
        assert recorder.said == []
        watcher.check(now + 12 * S)
        assert len(recorder.said) == 1
        assert recorder.said[0].startswith(('no report for 11 s', 'no report for 12 s'))
        assert 'monitor gone? (last at ' in recorder.said[0]
    finally:
        node.destroy_node()


def row_of(stats, topic: str) -> dict[str, str]:
    """Return the cells of one topic's row by column."""
    view = terminal_view.view_of(stats, '/s')
    row = next(row for row in view.rows if row.cells[0] == topic)
    return dict(zip(terminal_view.COLUMNS, row.cells, strict=True))


def test_unknown_counts_read_a_dash_and_outages_are_named_beside_the_max():
    stats = stats_message()
    cmd = stats.topics[1]
    cmd.period_ms = math.nan  # still learning: no period, so no count is known
    cmd.counts_note = 'period not learned yet: 3 of the 21 cycles it needs'
    cmd.outages_total, cmd.outage_max_s = 1, 2.16
    row = row_of(stats, '/cmd')
    assert (row['misses'], row['skipped']) == ('-', '-')
    assert row['max wall ms'] == '22.51 (outage 2.16 s)'


def test_an_event_topic_reads_n_a_where_misses_do_not_apply():
    """No period, so misses and skipped periods do not apply: 'n/a', as in every output."""
    stats = stats_message()
    stats.topics[1].kind = 'event'
    row = row_of(stats, '/cmd')
    assert (row['misses'], row['skipped'], row['lost']) == ('n/a', 'n/a', '0 (0)')


def test_counts_unknown_under_a_coarse_clock_read_a_dash_not_0():
    """A configured period under a /clock coarser than the topic: the counts are no figures."""
    stats = stats_message()
    cmd = stats.topics[1]
    assert math.isfinite(cmd.period_ms)
    known = row_of(stats, '/cmd')
    assert known['misses'] != '-'
    cmd.counts_note = '/clock every 100 ms is coarser than the 10 ms period'
    row = row_of(stats, '/cmd')
    assert (row['misses'], row['skipped']) == ('-', '-')


def test_watch_shows_a_changed_or_added_figure(monkeypatch):
    rate = figures.find(figures.TOPIC, 'rate wall')
    added = _renamed(figures.find(figures.TOPIC, 'rate sim'), 'sim rate', 4)
    monkeypatch.setattr(terminal_view, 'FIGURES', (_renamed(rate, 'wall rate', 3),
                                                   *terminal_view.FIGURES[1:], added))
    stats = stats_message()
    stats.topics[1].rate_sim_hz = 97.123456
    view = terminal_view.view_of(stats, '/s')
    lines = terminal_view.plain_lines(view)
    assert view.columns[1] == 'wall rate' and view.columns[4] == 'sim rate'
    cmd = dict(zip(view.columns, next(r.cells for r in view.rows if r.cells[0] == '/cmd'),
                   strict=True))
    assert cmd['wall rate'] == '98.040' and cmd['sim rate'] == '97.1235'
    assert 'wall rate' in lines[2] and 'sim rate' in lines[2]


def _renamed(figure, column: str, digits: int):
    """Return the figure under another header, with other decimals (a descriptor changed)."""
    return dataclasses.replace(figure, column=column, column_digits=digits)
