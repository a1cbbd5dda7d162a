"""Signals: the demo leaves no processes behind.

The monitor itself on SIGINT and SIGTERM (final stats published after the signal, a summary,
exit code 0) is covered by
``test/shell/test_monitor_main.py::test_shutdown_publishes_final_stats_and_a_summary``.

Here the ``demo`` executable, which starts ``monitor``, ``demo_controller`` (and ``sim_clock``
in sim phases) as child processes, gets the signal in the middle of a phase. Only the demo's
own PID is signalled (not its process group, which a terminal's Ctrl-C would reach too), so
the demo must stop its children itself. Children are found by scanning ``/proc`` for the
demo's PID as their parent; afterwards none of them may still exist (a zombie reaped by init
counts as gone).
"""

from __future__ import annotations

from pathlib import Path
import signal
import subprocess

import pytest


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
        [str(installed_executable('demo')), '--phases', 'sim_rtf1', '--duration-s', '20'],
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
