"""The line per report of ``monitor``: snapshot -> lines (pure), and the printer's thread."""

from __future__ import annotations

import math
import os

from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.outputs import report_lines
from ros2_deadline_monitor.outputs.report_lines import ReportPrinter


def test_a_topic_line_reads_each_figure_with_its_label(snapshots):
    report = snapshots.topic_report(period_source='learned', period_learned=True)
    line = report_lines.topic_line(snapshots.snapshot(), snapshots.topic(report=report))
    assert line == ('/imu: last 5.0 s 98.0 Hz, max interval 22.50 ms, 20 misses, 10 skipped, '
                    '1 lost; since start 500 msgs, 20 misses, 10 skipped, 1 lost; period 10 ms '
                    '(learned); WARN: 20 misses (response rule), 10 skipped periods in window')


def test_window_counts_and_run_totals_are_labelled_apart(snapshots):
    report = snapshots.topic_report(messages_total=900, messages=300, window_wall_ns=10 * 10**9,
                                    deadline_misses_total=38, deadline_misses=3)
    line = report_lines.topic_line(snapshots.snapshot(), snapshots.topic(report=report))
    assert ': last 10.0 s 98.0 Hz, max interval 22.50 ms, 3 misses, 10 skipped, 1 lost; ' in line
    assert '; since start 900 msgs, 38 misses, 10 skipped, 1 lost; ' in line
    assert line.index('since start') < line.index('period') < line.index('WARN: ')


def test_the_period_in_use_and_where_it_came_from(snapshots):
    def period(**changes) -> str:
        report = snapshots.topic_report(**changes)
        line = report_lines.topic_line(snapshots.snapshot(), snapshots.topic(report=report))
        return line.split('; ')[2]

    assert period(period_source='configured', period_ns=20_000_000) == 'period 20 ms (given)'
    assert period(period_source='graph deadline QoS', period_ns=33_333_333) == (
        "period 33.3333 ms (the publishers' deadline QoS)")
    assert period(period_source='learned', period_learned=True) == 'period 10 ms (learned)'
    assert period(period_ns=None, period_source='') == 'period - (not learned yet)'
    assert period(kind='event') == 'no period (event topic)'


def test_no_count_reads_0_before_the_first_message(snapshots):
    # A configured period is known from the start; what it counts is not.
    report = snapshots.topic_report(
        messages_total=0, messages=0, deadline_misses_total=0, deadline_misses=0,
        skipped_periods_total=0, skipped_periods=0, messages_lost=0, messages_lost_total=0,
        period_source='configured')
    line = report_lines.topic_line(snapshots.snapshot(), snapshots.topic(report=report))
    assert ', - misses, - skipped, - lost; since start 0 msgs, - misses, - skipped, - lost; ' \
        'period 10 ms (given); ' in line


def test_nothing_measured_reads_a_dash_never_zero(snapshots):
    wall = snapshots.interval('wall', count=0, max_ns=math.nan)
    report = snapshots.topic_report(rate_wall_hz=math.nan, interval_wall=wall,
                                    loss_known=False, loss_note='several writers')
    topic = snapshots.topic(report=report, level=Level.STALE, reason='no message received yet')
    line = report_lines.topic_line(snapshots.snapshot(), topic)
    assert line.startswith('/imu: last 5.0 s - Hz, max interval - ms, 20 misses, 10 skipped, '
                           '- lost; since start 500 msgs, ')
    assert ', - lost; ' in line and line.endswith('STALE: no message received yet')


def test_an_event_topic_has_no_misses_or_skipped(snapshots):
    report = snapshots.topic_report(kind='event')
    line = report_lines.topic_line(snapshots.snapshot(), snapshots.topic(report=report))
    # No period: misses and skipped periods do not apply ('n/a', as in every output).
    assert '500 msgs, n/a misses, n/a skipped, 1 lost;' in line
    assert 'ms, n/a misses, n/a skipped, 1 lost; since' in line


def test_an_invalid_topic_says_why(snapshots):
    topic = snapshots.topic(report=None, topic='', topic_id='cmd', level=Level.ERROR,
                            reason='topic.cmd.period_ms: must be >= 0')
    assert report_lines.topic_line(snapshots.snapshot(), topic) == (
        'cmd: not monitored, ERROR: topic.cmd.period_ms: must be >= 0')


def test_a_long_reason_is_cut_and_kept_on_one_line(snapshots):
    topic = snapshots.topic(reason='a\nb ' + 'x' * 300)
    line = report_lines.topic_line(snapshots.snapshot(), topic)
    reason = line.split('WARN: ', 1)[1]
    assert '\n' not in line and len(reason) == report_lines.MAX_REASON_CHARS
    assert reason.startswith('a b x') and reason.endswith('...')


def test_a_report_has_a_line_per_topic_and_the_clock(snapshots):
    topics = [snapshots.topic('a', topic='/a'), snapshots.topic('b', topic='/b')]
    lines = report_lines.report_lines(snapshots.snapshot(topics))
    assert [line.split(':')[0] for line in lines] == ['/a', '/b', '/clock']
    assert lines[2].startswith('/clock: RTF 1.000 (window), 1.000 (since start), OK: ')


def test_no_clock_line_before_clock_is_heard(snapshots):
    clock = snapshots.clock(report=snapshots.clock_report(messages_total=0, messages=0))
    lines = report_lines.report_lines(snapshots.snapshot(clock=clock))
    assert [line.split(':')[0] for line in lines] == ['/imu']


def test_many_topics_give_a_summary_and_the_worst(snapshots):
    levels = [Level.OK] * 20 + [Level.WARN] * 9 + [Level.ERROR] * 2 + [Level.STALE]
    topics = [snapshots.topic(f't{i:02d}', topic=f'/t{i:02d}', level=level)
              for i, level in enumerate(levels)]
    lines = report_lines.report_lines(snapshots.snapshot(topics), max_topic_lines=10)
    assert lines[0] == ('32 topics: 2 ERROR, 1 STALE, 9 WARN, 20 OK; the 10 worst below, '
                        '2 more not OK')
    shown = [line.split(':')[0] for line in lines[1:-1]]
    assert shown == ['/t29', '/t30', '/t31', *[f'/t{i}' for i in range(20, 27)]]
    assert lines[-1].startswith('/clock: ')


def test_many_healthy_topics_print_one_line(snapshots):
    topics = [snapshots.topic(f't{i}', topic=f'/t{i}', level=Level.OK) for i in range(11)]
    clock = snapshots.clock(report=snapshots.clock_report(messages_total=0, messages=0))
    lines = report_lines.report_lines(snapshots.snapshot(topics, clock=clock),
                                      max_topic_lines=10)
    assert lines == ['11 topics: 11 OK']


def test_colour_only_on_the_level(snapshots):
    plain = report_lines.report_lines(snapshots.snapshot())
    coloured = report_lines.report_lines(snapshots.snapshot(), colour=True)
    assert all('\x1b' not in line for line in plain)
    assert '\x1b[33mWARN\x1b[0m: ' in coloured[0]
    assert coloured[0].replace('\x1b[33m', '').replace('\x1b[0m', '') == plain[0]


def read_all(fd: int) -> bytes:
    data = b''
    while chunk := os.read(fd, 65536):
        data += chunk
    return data


def test_the_printer_writes_every_report_into_a_pipe(snapshots):
    read_fd, write_fd = os.pipe()
    with os.fdopen(write_fd, 'w') as stream:
        printer = ReportPrinter(stream)
        assert not printer.colour  # a pipe is no terminal
        for _ in range(3):
            printer.show(snapshots.snapshot())
        printer.close()
    text = read_all(read_fd).decode()
    os.close(read_fd)
    assert text.count('/imu: ') == 3 and text.count('/clock: ') == 3 and '\x1b' not in text


def test_a_blocked_output_drops_reports_instead_of_blocking(snapshots):
    """Nobody reads the pipe: ``show`` returns at once, and says later what it dropped."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    stream = os.fdopen(write_fd, 'w')
    big = snapshots.snapshot([snapshots.topic(f't{i}', topic=f'/t{i}' + 'x' * 200,
                                              level=Level.WARN) for i in range(10)])
    printer = ReportPrinter(stream)
    shown = 0
    while printer.dropped == 0:  # the pipe fills (64 KiB), then the queue
        printer.show(big)
        shown += 1
        assert shown < 10_000
    printer.show(big)
    assert printer.dropped == 2
    drained = b''
    while not drained.endswith(b'\n') or printer.dropped:
        try:
            drained += os.read(read_fd, 65536)
        except BlockingIOError:
            pass
        if printer.dropped:
            printer.show(big)  # gets through once the pipe has room
    printer.close()
    os.set_blocking(read_fd, True)
    stream.close()
    drained += read_all(read_fd)
    os.close(read_fd)
    assert b'report(s) not printed: the output did not take them in time' in drained


def test_a_closed_pipe_stops_the_printing_not_the_monitor(snapshots):
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    with os.fdopen(write_fd, 'w') as stream:
        printer = ReportPrinter(stream)
        printer.show(snapshots.snapshot())  # EPIPE in the thread (SIGPIPE is ignored here)
        printer.close()
        printer.show(snapshots.snapshot())  # nothing left to do, no error
