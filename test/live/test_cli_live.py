"""`monitor TOPIC --flags`, `watch` and `monitor --watch` as users run them: real processes.

The publisher is the demo controller in its own process; its cycle record is the ground truth
(the same counting rules as the monitor, from the controller's own clocks, each cycle ending
when its message left). The view is read
through a pipe (plain lines) and through a pseudo-terminal (the rich table).
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import time

from own_names import namespace, ns, ros_args  # test/plugins: the test's own names
import pytest

TOPIC = '/cli_test/cmd'
"""The test's own is ns(TOPIC) (own_names)."""
TOPIC_ID = 'cli_test_cmd'
ARG = TOPIC[1:]
"""TOPIC on a command line: relative, in the test's namespace; its identifier is TOPIC_ID."""


def start(processes, path, *args: str, log=None) -> subprocess.Popen:
    process = subprocess.Popen([str(path), *args, *ros_args()], stdout=log or subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    processes.append(process)
    return process


class Pty:
    """A process on a pseudo-terminal, as in a user's terminal; output is collected."""

    def __init__(self, *argv: str, columns: int = 140) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become the program
            os.environ['COLUMNS'] = str(columns)
            os.environ['LINES'] = '40'
            os.execv(argv[0], [*argv, *ros_args()])
        self.output = b''
        self.status: int | None = None

    def read_until(self, condition, timeout: float) -> bool:
        """Collect output until ``condition(text)`` or timeout; return whether it held."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition(self.text):
                return True
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not data:
                    break
                self.output += data
        return condition(self.text)

    @property
    def text(self) -> str:
        return self.output.decode(errors='replace')

    def interrupt(self) -> None:
        """Press Ctrl-C."""
        os.write(self.fd, b'\x03')

    def wait(self, timeout: float = 20.0) -> int:
        """Read the rest of the output and reap the child; kill it after ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.read_until(lambda _: False, 0.3)
                os.close(self.fd)
                self.status = os.waitstatus_to_exitcode(status)
                return self.status
            self.read_until(lambda _: False, 0.1)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        pytest.fail(f'still running after {timeout:g} s:\n{self.text}')


def test_monitor_topic_on_the_command_line_counts_exactly(installed_executable, processes,
                                                          observer, message_times, cycle_truth,
                                                          wait_for, tmp_path):
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    # A cycle ends, for the monitor, when its message left (source timestamp), a little
    # after the controller's own end: a response within that of D counts by the monitor's
    # view (CycleTruth.observed), read here by a raw reader of the same timestamps.
    times = message_times(ns(TOPIC))
    monitor_log = open(tmp_path / 'monitor.log', 'w+')  # noqa: SIM115 - closed by `processes`
    monitor = start(processes, installed_executable('monitor'), ARG, '--period-ms', '10',
                    '--stamp', 'start', '--ros-args', '-p', 'stats_period_s:=0.3',
                    log=monitor_log)
    monitor.log = monitor_log
    record_path = tmp_path / 'record.json'
    controller = start(
        processes, installed_executable('demo_controller'), '--ros-args',
        '-p', f'topic:={ns(TOPIC)}', '-p', 'stall_ms:=22.0', '-p', 'stall_every:=50',
        '-p', 'duration_s:=3.0', '-p', 'wait_for_subscribers:=2',
        '-p', f'record_path:={record_path}')
    assert controller.wait(timeout=30) == 0, controller.stdout.read()
    record = CycleRecord.load(record_path)
    truth = cycle_truth(record, None, 10_000_000, left_ns=times.left_ns(record))
    assert truth.observed > 0 and truth.skipped > 0

    def settled():
        stats = observer.topic_stats(TOPIC_ID)
        return stats if stats is not None and stats.messages_total >= truth.cycles else None

    stats = wait_for(settled, timeout=20.0, what='the monitor to count every cycle')
    assert stats.topic == ns(TOPIC)
    assert stats.period_ms == 10.0 and not stats.period_learned
    assert stats.start_source == 'header' and stats.rule == 'response'
    assert (stats.messages_total, stats.deadline_misses_total, stats.skipped_periods_total,
            stats.messages_lost_total) == (truth.cycles, truth.observed, truth.skipped, 0), \
        truth.describe()
    # Given on the command line, the settings are parameters like any other.
    assert observer.get_parameter(f'topic.{TOPIC_ID}.period_ms') == 10.0
    assert observer.get_parameter('topics') == [TOPIC_ID]
    monitor.send_signal(signal.SIGINT)
    assert monitor.wait(timeout=20) == 0
    monitor_log.seek(0)
    assert ns(TOPIC) in monitor_log.read()


def test_watch_prints_plain_lines_into_a_pipe(installed_executable, processes):
    start(processes, installed_executable('monitor'), ARG, '--ros-args',
          '-p', 'stats_period_s:=0.2')
    watch = subprocess.run([str(installed_executable('watch')), '--count', '3',
                            '--namespace', namespace(), *ros_args()],
                           capture_output=True, text=True, timeout=60, check=False)
    assert watch.returncode == 0, watch.stderr
    blocks = watch.stdout.strip().split('\n\n')
    assert len(blocks) == 3
    for block in blocks:
        title, clock, header, row, legend = block.splitlines()
        assert title.startswith(f'{ns("/deadline_monitor/stats")} at ')
        assert clock.startswith('clock: ')
        assert header.split()[:3] == ['topic', 'rate', 'Hz']
        assert row.split()[0] == ns(TOPIC) and re.search(r'  STALE  \S', row)
        assert legend.startswith('misses, skipped, lost: total since start (in the window')
    assert '\x1b' not in watch.stdout
    assert f'waiting for {ns("/deadline_monitor/stats")}' in watch.stderr


def test_watch_draws_a_coloured_table_in_a_terminal(installed_executable, processes):
    start(processes, installed_executable('monitor'), ARG, '--ros-args',
          '-p', 'stats_period_s:=0.2')
    view = Pty(str(installed_executable('watch')), '--count', '3', '--namespace', namespace())
    assert view.wait(timeout=60) == 0, view.text
    text = view.text
    assert ns(TOPIC) in text and 'max wall ms' in text
    assert '\x1b[35mSTALE' in text  # the level in colour
    assert '\x1b[' in text.split(ns(TOPIC))[0]  # drawn in place with escape codes
    assert 'Traceback' not in text


def test_monitor_watch_shows_the_table_and_then_the_summary(installed_executable):
    view = Pty(str(installed_executable('monitor')), ARG, '--watch', '--ros-args',
               '-p', 'stats_period_s:=0.2')
    try:
        assert view.read_until(lambda text: 'STALE' in text, timeout=30), view.text
    finally:
        view.interrupt()
    assert view.wait(timeout=30) == 0, view.text
    text = view.text
    assert 'max wall ms' in text and '\x1b[35mSTALE' in text
    # The alternate screen is left before the summary, which stays readable after exit.
    assert text.rindex('\x1b[?1049l') < text.index('deadline_monitor summary')
    assert 'Traceback' not in text


def test_flags_win_over_the_params_file_and_add_to_its_topics(installed_executable, processes,
                                                              observer, wait_for, tmp_path):
    params = tmp_path / 'monitor.yaml'
    params.write_text(
        '/**:\n  ros__parameters:\n    topics: [cmd, other]\n'
        f'    topic.cmd.name: {ns(TOPIC)}\n    topic.cmd.period_ms: 20.0\n'
        f'    topic.other.name: {ns("/cli_test/other")}\n    topic.other.period_ms: 30.0\n')
    start(processes, installed_executable('monitor'), ARG, 'cli_test/new', '--rate-hz',
          '200', '--ros-args', '--params-file', str(params), '-p', 'stats_period_s:=0.2')
    stats = wait_for(observer.latest_stats, timeout=20.0, what='the monitor to report')
    assert sorted(t.name for t in stats.topics) == ['cli_test_new', 'cmd', 'other']
    assert observer.get_parameter('topics') == ['cmd', 'other', 'cli_test_new']
    # The configured topic keeps its identifier; the flag replaced the file's period.
    assert observer.get_parameter('topic.cmd.rate_hz') == 200.0
    assert observer.get_parameter('topic.cmd.period_ms') == 0.0
    assert observer.get_parameter('topic.other.period_ms') == 30.0
    assert observer.get_parameter('topic.cli_test_new.name') == 'cli_test/new'  # as given
    assert {t.name: t.period_ms for t in stats.topics} == {
        'cmd': 5.0, 'other': 30.0, 'cli_test_new': 5.0}


def test_monitor_watch_with_a_renamed_node(installed_executable, processes):
    """A global `__node` remap renames the monitor only; the view follows its stats."""
    view = Pty(str(installed_executable('monitor')), ARG, '--watch', '--ros-args',
               '-r', '__node:=renamed', '-r', f'__ns:={ns("/robot1")}',
               '-p', 'stats_period_s:=0.2')
    try:
        assert view.read_until(lambda text: 'STALE' in text, timeout=30), view.text
    finally:
        view.interrupt()
    assert view.wait(timeout=30) == 0, view.text
    assert ns('/robot1/renamed/stats') in view.text
    assert 'renamed summary' in view.text


LINE = re.compile(
    r'^(?P<topic>/\S+): (?:last (?P<window>\S+) s|window) (?P<rate>\S+) Hz, max interval '
    r'(?P<max>\S+) ms, (?P<window_misses>\S+) misses, (?P<window_skipped>\S+) skipped, '
    r'(?P<window_lost>\S+) lost; since start (?P<msgs>\S+) msgs, (?P<misses>\S+) misses, '
    r'(?P<skipped>\S+) skipped, (?P<lost>\S+) lost; (?P<period>[^;]+); '
    r'(?P<level>OK|WARN|ERROR|STALE): (?P<reason>.+)$')
"""A topic's line at a report (``outputs/report_lines.py``), colour codes removed."""
ESCAPE = re.compile(r'\x1b\[[0-9;?]*[a-zA-Z]')


def report_lines_of(text: str, topic: str) -> list[dict[str, str]]:
    """Parse every report line of ``topic`` in ``text`` (terminal output or a file)."""
    found = []
    for line in ESCAPE.sub('', text).replace('\r\n', '\n').splitlines():
        match = LINE.match(line)
        if match and match['topic'] == topic:
            found.append(match.groupdict())
    return found


def total(count: str) -> int:
    """Return a count of a line (a run total); '-' fails."""
    return int(count)


def test_monitor_prints_a_line_per_report_on_a_terminal(installed_executable, processes,
                                                         message_times, cycle_truth, tmp_path):
    """``monitor TOPIC`` on a terminal: a coloured line per report, counts exact at the end."""
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    times = message_times(ns(TOPIC))
    summary_path = tmp_path / 'summary.json'
    view = Pty(str(installed_executable('monitor')), ARG, '--period-ms', '10', '--stamp',
               'start', '--ros-args', '-p', 'stats_period_s:=0.3',
               '-p', f'summary_file:={summary_path}')
    try:
        assert view.read_until(lambda text: report_lines_of(text, ns(TOPIC)),
                               timeout=30), view.text
        record_path = tmp_path / 'record.json'
        controller = start(
            processes, installed_executable('demo_controller'), '--ros-args',
            '-p', f'topic:={ns(TOPIC)}', '-p', 'stall_ms:=22.0', '-p', 'stall_every:=50',
            '-p', 'duration_s:=3.0', '-p', 'wait_for_subscribers:=2',
            '-p', f'record_path:={record_path}')
        assert controller.wait(timeout=30) == 0, controller.stdout.read()
        record = CycleRecord.load(record_path)
        truth = cycle_truth(record, None, 10_000_000, left_ns=times.left_ns(record))
        assert truth.observed > 0 and truth.skipped > 0

        def counted(text: str) -> bool:
            return any(line['msgs'] == str(truth.cycles)
                       for line in report_lines_of(text, ns(TOPIC)))

        assert view.read_until(counted, timeout=30), view.text
    finally:
        view.interrupt()
    assert view.wait(timeout=30) == 0, view.text
    lines = report_lines_of(view.text, ns(TOPIC))
    first = lines[0]  # before the controller ran: nothing to measure reads '-', never 0
    assert (first['rate'], first['max'], first['msgs'], first['level']) == ('-', '-', '0',
                                                                            'STALE')
    # A configured period is known before the first message; what it counts is not.
    assert (first['misses'], first['skipped'], first['lost'], first['window_misses'],
            first['window_skipped']) == ('-',) * 5
    assert {line['period'] for line in lines} == {'period 10 ms (given)'}
    done = next(line for line in lines if line['msgs'] == str(truth.cycles))
    assert (total(done['misses']), total(done['skipped']), total(done['lost'])) == (
        truth.observed, truth.skipped, 0), truth.describe()
    # The window's counts are labelled apart from the run's: never more than the run's.
    assert done['window'] is not None and float(done['window']) > 0
    assert int(done['window_misses']) <= total(done['misses'])
    assert [int(line['msgs']) for line in lines] == sorted(int(line['msgs']) for line in lines)
    # The last line printed holds the totals of the summary file.
    summary = json.loads(summary_path.read_text())
    (topic,) = summary['topics']
    last = lines[-1]
    assert (int(last['msgs']), total(last['misses']), total(last['skipped']),
            total(last['lost'])) == (topic['messages'], topic['deadline_misses'],
                                     topic['skipped_periods'], topic['messages_lost'])
    text = view.text
    # The level coloured (which level a loaded machine reaches is not this test's business).
    assert re.search(r'\x1b\[[0-9;]+m(OK|WARN|ERROR|STALE)\x1b\[0m', text), text
    assert text.index(f'{ns(TOPIC)}: ') < text.index('deadline_monitor summary')
    assert 'Traceback' not in text


def test_monitor_prints_plain_lines_into_a_file(installed_executable, processes, observer,
                                                wait_for, tmp_path):
    """Redirected: the same lines on stdout, no escape codes; the log stays on stderr."""
    out_path, err_path = tmp_path / 'out.txt', tmp_path / 'err.txt'
    with open(out_path, 'w') as out, open(err_path, 'w') as err:
        monitor = subprocess.Popen(
            [str(installed_executable('monitor')), ARG, '--ros-args',
             '-p', 'stats_period_s:=0.2', *ros_args()], stdout=out, stderr=err)
    processes.append(monitor)
    wait_for(lambda: len(report_lines_of(out_path.read_text(), ns(TOPIC))) >= 3, timeout=30,
             what=lambda: f'three report lines, got:\n{out_path.read_text()}')
    monitor.send_signal(signal.SIGINT)
    assert monitor.wait(timeout=20) == 0
    out = out_path.read_text()
    assert '\x1b' not in out
    lines = report_lines_of(out, ns(TOPIC))
    assert all(line['level'] == 'STALE' and line['rate'] == '-' for line in lines)
    assert {line['period'] for line in lines} == {'period - (not learned yet)'}
    assert all(line.startswith(f'{ns(TOPIC)}: ') for line in out.splitlines()), out
    assert 'deadline_monitor summary' in err_path.read_text()


def test_monitor_quiet_prints_no_line(installed_executable, processes, observer, wait_for,
                                      tmp_path):
    """``--quiet``: reports are published as ever, nothing is printed for them."""
    out_path = tmp_path / 'out.txt'
    with open(out_path, 'w') as out:
        monitor = subprocess.Popen(
            [str(installed_executable('monitor')), ARG, '--quiet', '--ros-args',
             '-p', 'stats_period_s:=0.2', *ros_args()], stdout=out, stderr=subprocess.DEVNULL)
    processes.append(monitor)
    wait_for(lambda: len(observer.report_arrays()) >= 3, timeout=30,
             what='three reports from the quiet monitor')
    monitor.send_signal(signal.SIGINT)
    assert monitor.wait(timeout=20) == 0
    assert out_path.read_text() == ''


def test_watch_says_when_the_monitor_is_gone(installed_executable, processes, wait_for,
                                             tmp_path):
    """Reports stop (the monitor exits): ``watch`` says so instead of showing the last table."""
    monitor = start(processes, installed_executable('monitor'), ARG, '--quiet', '--ros-args',
                    '-p', 'stats_period_s:=0.2')
    out_path = tmp_path / 'watch.txt'
    with open(out_path, 'w') as out:
        view = subprocess.Popen([str(installed_executable('watch')), '--plain', '--namespace',
                                 namespace(), *ros_args()], stdout=out,
                                stderr=subprocess.DEVNULL)
    processes.append(view)
    wait_for(lambda: f'{ns(TOPIC)} ' in out_path.read_text(), timeout=30,
             what='a report in the view')
    monitor.send_signal(signal.SIGINT)
    assert monitor.wait(timeout=20) == 0
    wait_for(lambda: 'monitor gone?' in out_path.read_text(), timeout=20,
             what=lambda: f'the view to say the monitor is gone:\n{out_path.read_text()}')
    view.send_signal(signal.SIGINT)
    assert view.wait(timeout=20) == 0
    text = out_path.read_text()
    blocks = text.strip().split('\n\n')
    assert re.fullmatch(r'no report for \d+ s: monitor gone\? \(last at \d\d:\d\d:\d\d\)',
                        blocks[-1]), blocks[-1]
    assert text.count('monitor gone?') == 1
    row = next(line for line in blocks[-2].splitlines() if line.startswith(ns(TOPIC)))
    assert re.search(r'  STALE  \S', row), row  # and its reason
