"""Signals: a closed terminal, a second signal, and the demo leaves no processes behind.

The monitor itself on SIGINT and SIGTERM (final stats published after the signal, a summary,
exit code 0) is covered by
``test/live/test_monitor_main.py::test_shutdown_publishes_final_stats_and_a_summary``.
Here the monitor gets SIGHUP from a terminal that closes (a pseudo-terminal whose master
end is closed, the monitor its controlling process), and a second signal while it stops:
the summary file must exist and name the exit code the process really ended with.

Here the ``demo`` executable, which starts ``monitor``, ``demo_controller`` (and ``sim_clock``
in sim phases) as child processes, gets the signal in the middle of a phase. Only the demo's
own PID is signalled (not its process group, which a terminal's Ctrl-C would reach too), so
the demo must stop its children itself. Children are found by scanning ``/proc`` for the
demo's PID as their parent; afterwards none of them may still exist (a zombie reaped by init
counts as gone).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
import pty
import select
import signal
import subprocess
import termios
import threading

from own_names import ns, ros_args  # test/plugins: the test's own names
import pytest

TOPIC = 'fault/signals'
"""Relative: the monitor's command line resolves it in the test's namespace."""
PUBLISH_PERIOD_S = 0.02


def _children(pid: int) -> dict[int, str]:
    """Return ``{pid: command}`` of the live processes whose parent is ``pid``."""
    found = {}
    for stat in Path('/proc').glob('[0-9]*/stat'):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...; comm may hold spaces and parentheses
        fields = text[text.rindex(')') + 2:].split()
        if int(fields[1]) == pid and fields[0] != 'Z':
            found[int(stat.parent.name)] = text[text.index('(') + 1:text.rindex(')')]
    return found


def _alive(pid: int) -> bool:
    try:
        text = Path(f'/proc/{pid}/stat').read_text()
    except OSError:
        return False
    return text[text.rindex(')') + 2:].split()[0] != 'Z'


@pytest.mark.parametrize('sig', [
    signal.SIGINT,
    signal.SIGTERM,
], ids=['SIGINT', 'SIGTERM'])
def test_interrupted_demo_leaves_no_child_processes(installed_executable, tmp_path, processes,
                                                   observer, wait_for, sig):
    log = open(tmp_path / 'demo.log', 'w')  # noqa: SIM115 - closed by the processes fixture
    demo = subprocess.Popen(
        [str(installed_executable('demo')), '--phases', 'sim_rtf1', '--duration-s', '20',
         *ros_args()],
        stdout=log, stderr=subprocess.STDOUT)
    demo.log = log
    processes.append(demo)
    # The monitor, the sim_clock and the controller of the phase.
    children = wait_for(lambda: (c := _children(demo.pid)) and len(c) >= 3 and c,
                        timeout=20.0, what='the demo to start its three processes')
    # Into the phase: the controller is cycling and the monitor reporting its cycles.
    wait_for(lambda: (t := observer.topic_stats('cmd')) and t.messages_total > 0,
             timeout=20.0, what='the monitor counting cycles of the controller')
    children.update(_children(demo.pid))
    demo.send_signal(sig)
    # The demo signals its three children at once and kills those not gone within 5 s, then
    # closes its listener (< 1 s): 20 s is four times that.
    try:
        code = demo.wait(timeout=20)
    except subprocess.TimeoutExpired:
        log.flush()
        pytest.fail('the demo did not exit within 20 s of the signal; its output:\n'
                    + (tmp_path / 'demo.log').read_text()[-3000:])
    assert code != 0  # interrupted, not a finished run
    leftover = {}

    def all_gone() -> bool:
        leftover.clear()
        leftover.update({pid: name for pid, name in children.items() if _alive(pid)})
        return not leftover

    try:
        wait_for(all_gone, timeout=10.0, what='the children to exit')
    finally:
        for pid in leftover:  # never leave them running on a failure
            subprocess.run(['kill', '-9', str(pid)], check=False)
    assert 'Traceback' not in (tmp_path / 'demo.log').read_text()


def _monitor_args(installed_executable, summary: Path, *extra: str) -> list[str]:
    """Return the monitor's command on TOPIC: a summary file, a failing expectation (exit 3).

    A 50 Hz producer cannot reach 1 kHz: the verdict fails, so an exit code of 0, 130 or
    143 instead of 3 shows at once that something other than the verdict decided it.
    """
    return [str(installed_executable('monitor')), TOPIC, *extra, '--ros-args',
            '-p', 'stats_period_s:=0.3', '-p', f'summary_file:={summary}',
            '-p', 'topic.fault_signals.expect.min_rate_hz:=1000.0', '--', *ros_args()]


def _wait_counting(observer, wait_for) -> None:
    wait_for(lambda: (t := observer.topic_stats('fault_signals')) and t.messages_total > 0,
             timeout=30.0, what="the monitor counting the producer's messages")


def _summary(path: Path) -> dict:
    assert path.is_file(), 'no summary file was written'
    return json.loads(path.read_text())


def _show(master: int, closing: threading.Event) -> None:
    """Read the pty's master end until ``closing``, as a terminal would.

    Never blocked in ``read`` when the terminal closes: a read in progress would keep the
    pty open (and the SIGHUP from coming) until it returned.
    """
    while not closing.is_set():
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                os.read(master, 65536)
            except OSError:  # the slave end is gone
                return


def _controlling_terminal() -> None:
    """In the child, after setsid: make stdin (the pty's slave end) its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@pytest.mark.parametrize('view', [(), ('--watch',)], ids=['log', 'watch'])
def test_a_closed_terminal_ends_the_run_with_its_summary(
        installed_executable, publisher_process, processes, observer, wait_for, tmp_path,
        view):
    publisher_process(ns(f'/{TOPIC}'), 'std_msgs.msg.Header', 'signals_producer',
                      PUBLISH_PERIOD_S)
    summary = tmp_path / 'summary.json'
    master, slave = pty.openpty()
    try:
        monitor = subprocess.Popen(
            _monitor_args(installed_executable, summary, *view), stdin=slave, stdout=slave,
            stderr=slave, start_new_session=True, preexec_fn=_controlling_terminal)
    finally:
        os.close(slave)
    processes.append(monitor)
    # The terminal shows what the monitor writes: a pty nobody reads blocks its writer.
    closing = threading.Event()
    reader = threading.Thread(target=_show, args=(master, closing), daemon=True)
    reader.start()
    try:
        _wait_counting(observer, wait_for)
    finally:
        closing.set()
        reader.join(timeout=10)
        # The terminal closes: the kernel sends SIGHUP to the monitor, its writes fail.
        os.close(master)
    code = monitor.wait(timeout=30)
    record = _summary(summary)
    assert (record['stopped_by'], record.get('signal')) == ('signal', 'SIGHUP')
    assert record['topics'][0]['messages'] > 0
    assert code == record['exit_code'] == 3


@pytest.mark.parametrize(('second', 'when'), [
    (signal.SIGINT, '50ms'),
    (signal.SIGINT, 'repeated'),
    (signal.SIGTERM, 'repeated'),
], ids=['SIGINT-50ms', 'SIGINT-repeated', 'SIGTERM-repeated'])
def test_a_second_signal_does_not_change_the_exit_code(
        installed_executable, publisher_process, processes, observer, wait_for, tmp_path,
        second, when):
    """SIGINT, then ``second``: 50 ms later (a double Ctrl-C), or every 10 ms until it exits.

    Repeated, a signal lands in every phase of the stop: the final report, the summary,
    the teardown of DDS and Python's finalization (where the handlers were the defaults).
    """
    publisher_process(ns(f'/{TOPIC}'), 'std_msgs.msg.Header', 'signals_producer',
                      PUBLISH_PERIOD_S)
    summary = tmp_path / 'summary.json'
    monitor = subprocess.Popen(_monitor_args(installed_executable, summary),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    processes.append(monitor)
    _wait_counting(observer, wait_for)
    monitor.send_signal(signal.SIGINT)
    for _ in range(1 if when == '50ms' else 3000):
        try:
            monitor.wait(timeout=0.05 if when == '50ms' else 0.01)
            break
        except subprocess.TimeoutExpired:
            monitor.send_signal(second)
    code = monitor.wait(timeout=30)
    stderr = monitor.stderr.read()
    assert 'Traceback' not in stderr, stderr
    record = _summary(summary)
    assert code == record['exit_code'] == 3
