"""Shared pieces of the live benchmarks: child processes, CPU and memory readings, tables.

Every benchmark runs its participants (publisher, subscribers, monitor) as separate
processes started from the same script with ``--child ROLE``; a child prints one JSON line
with its figures on stdout. Run the benchmarks with the venv and the colcon build sourced
(``scripts/dev shell``, or ``. .build/install/setup.bash`` after activating ``.venv``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
import json
import os
from pathlib import Path
import resource
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

NS_PER_S = 1_000_000_000
START_TIMEOUT_S = 30.0
READY = 'READY'
"""The line a child prints when it waits for SIGUSR1 to measure (``say_ready``)."""


def cpu_s() -> float:
    """Return the CPU time (user + system, all threads) this process used so far [s]."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main_thread_cpu_s() -> float:
    """Return the CPU time (user + system) of this process's main thread so far [s].

    What is left of ``cpu_s()`` went to the other threads: the middleware's own.
    """
    fields = Path(f'/proc/self/task/{os.getpid()}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def cpu_ticks(pid: int) -> int:
    """Return the CPU time (user + system, all threads) of a process in clock ticks."""
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return int(fields[11]) + int(fields[12])


def rss_kib(pid: int | str = 'self') -> int:
    """Return the resident set size of a process [KiB] from /proc."""
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1])
    raise RuntimeError(f'no VmRSS for process {pid}')


def pin(cpu: int | None) -> None:
    """Pin this process to one CPU (ignored when the CPU does not exist or is not allowed)."""
    if cpu is None or not hasattr(os, 'sched_setaffinity'):
        return
    allowed = os.sched_getaffinity(0)
    if cpu in allowed:
        os.sched_setaffinity(0, {cpu})


def cpu_count() -> int:
    """Return the CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()


def stop_event() -> threading.Event:
    """Return an event set by SIGINT or SIGTERM (children stop cleanly and report)."""
    event = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: event.set())
    return event


def say_ready() -> threading.Event:
    """In a child: print ``READY`` (``Child.wait_ready``); return an event SIGUSR1 sets.

    Children that must measure over the same window each say they are ready; the parent
    then sends every one of them SIGUSR1 at once (``Child.signal``).
    """
    go = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: go.set())
    print(READY, flush=True)
    return go


def ros_init() -> None:
    """Initialize rclpy without its signal handlers (``stop_event`` handles SIGINT)."""
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)


def benchmark_parser(doc: str) -> argparse.ArgumentParser:
    """Return an argument parser described by the first paragraph of a script's docstring."""
    return argparse.ArgumentParser(description=doc.split('\n\n')[0])


def parse_benchmark_args(parser: argparse.ArgumentParser,
                         argv: list[str] | None = None) -> argparse.Namespace:
    """Add ``--json`` and the hidden ``--child ROLE --options JSON`` of children; parse.

    ``args.options`` comes back decoded (a dict; None in the parent).
    """
    parser.add_argument('--json', help='also write every measurement to this file')
    parser.add_argument('--child', help=argparse.SUPPRESS)
    parser.add_argument('--options', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.options is not None:
        args.options = json.loads(args.options)
    return args


def write_json(path: str | None, data: Any, indent: int | None = None) -> None:
    """Write ``data`` as JSON to ``path`` (the ``--json`` option) when one was given."""
    if path:
        with open(path, 'w') as out:
            json.dump(data, out, indent=indent)


def emit(values: dict[str, Any]) -> None:
    """Print the child's result line."""
    print(json.dumps(values), flush=True)


class Child:
    """A child process of this benchmark script; its last stdout line is its JSON result."""

    def __init__(self, script: str, role: str, options: dict[str, Any],
                 env: dict[str, str] | None = None) -> None:
        """Start ``python script --child role --options JSON``; stderr goes to a temp file.

        ``env``: variables set for the child on top of this process's (``ROS_DOMAIN_ID``).
        """
        self.role = role
        self._stderr = tempfile.TemporaryFile('w+')  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, script, '--child', role, '--options', json.dumps(options)],
            stdout=subprocess.PIPE, stderr=self._stderr, text=True,
            env=None if env is None else {**os.environ, **env})

    @property
    def pid(self) -> int:
        """Return the process id."""
        return self.process.pid

    def wait_line(self, timeout: float) -> dict[str, Any]:
        """Wait for the child to exit and return its JSON result."""
        try:
            out, _ = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, _ = self.process.communicate()
            raise RuntimeError(f'{self.role} child did not finish in {timeout:g} s') from None
        lines = [line for line in out.splitlines() if line.startswith('{')]
        if self.process.returncode != 0 or not lines:
            self._stderr.seek(0)
            tail = ''.join(self._stderr.readlines()[-15:])
            raise RuntimeError(f'{self.role} child failed (exit {self.process.returncode}):\n'
                               f'{tail}')
        return json.loads(lines[-1])

    def wait_ready(self, timeout: float) -> None:
        """Wait until the child prints ``READY`` on a line of its own (``say_ready``)."""
        deadline = time.monotonic() + timeout
        stdout = self.process.stdout
        assert stdout is not None
        while time.monotonic() < deadline:
            if not select.select([stdout], [], [], deadline - time.monotonic())[0]:
                break
            line = stdout.readline()
            if line.strip() == READY:
                return
            if not line:  # it exited: wait_line says why
                self.wait_line(timeout)
                break
        raise RuntimeError(f'{self.role} child was not ready in {timeout:g} s')

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the child."""
        self.process.send_signal(sig)

    def stop(self, timeout: float = 20.0) -> dict[str, Any]:
        """Ask the child to stop (SIGINT) and return its JSON result."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        return self.wait_line(timeout)

    def kill(self) -> None:
        """Kill the child if it still runs."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def wait_until(condition: Callable[[], Any], timeout: float, what: str,
               step: Callable[[], None] | None = None) -> Any:
    """Call ``step`` (e.g. spin once) until ``condition`` is truthy; raise on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise RuntimeError(f'timed out after {timeout:g} s waiting for {what}')
        if step is not None:
            step()
        else:
            time.sleep(0.01)


def spread(values: Iterable[float]) -> tuple[float, float, float]:
    """Return (min, median, max)."""
    values = list(values)
    return min(values), statistics.median(values), max(values)


def fmt_spread(values: Sequence[float], digits: int = 1, scale: float = 1.0) -> str:
    """Format 'median (min–max)'."""
    values = [v * scale for v in values if v == v]
    if not values:
        return 'n/a'
    low, mid, high = spread(values)
    return f'{mid:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})'


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print a Markdown table."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    line = '| ' + ' | '.join(str(h).ljust(w) for h, w in zip(header, widths, strict=True)) + ' |'
    print(line)
    print('|' + '|'.join('-' * (w + 2) for w in widths) + '|')
    for row in rows:
        print('| ' + ' | '.join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) + ' |')


def environment_line() -> str:
    """Describe where the figures were measured."""
    load = os.getloadavg() if hasattr(os, 'getloadavg') else (float('nan'),) * 3
    return (f'python {sys.version.split()[0]}, {cpu_count()} CPUs, load average '
            f'{load[0]:.2f}, RMW {os.environ.get("RMW_IMPLEMENTATION", "default")}, '
            f'ROS_DOMAIN_ID {os.environ.get("ROS_DOMAIN_ID", "0")}')


def monitor_parameters(values: dict[str, Any]) -> list[Any]:
    """Turn ``{'topic.a.name': '/a', ...}`` into rclpy Parameters for MonitorNode."""
    from rclpy.parameter import Parameter

    return [Parameter(name, value=value) for name, value in values.items()]


def monitor_topic_values(topics: Sequence[str], rate_hz: float | None = None,
                         **extra: Any) -> dict[str, Any]:
    """Parameter values monitoring ``topics`` (ids t0, t1, ...), optionally at a known rate."""
    values: dict[str, Any] = {'topics': [f't{i}' for i in range(len(topics))]}
    for i, topic in enumerate(topics):
        values[f'topic.t{i}.name'] = topic
        if rate_hz:
            values[f'topic.t{i}.rate_hz'] = float(rate_hz)
    values.update(extra)
    return values


def monitor_totals(node: Any) -> dict[str, int]:
    """Take what is queued and return the summed totals of every topic of a MonitorNode."""
    totals = {'messages': 0, 'lost': 0, 'misses': 0, 'skipped': 0, 'overflows': 0}
    for topic in node.snapshot(final=True).topics:
        report = topic.report
        if report is None:
            continue
        totals['messages'] += report.messages_total
        totals['lost'] += report.messages_lost_total
        totals['misses'] += report.deadline_misses_total
        totals['skipped'] += report.skipped_periods_total
        totals['overflows'] += topic.receive.queue_overflows_total
    return totals


def counting_subscriptions(node: Any, msg_type: Any, topics: Sequence[str], qos: Any,
                           counter: list[int], raw: bool = True) -> Callable[[], bool]:
    """Subscribe ``node`` to ``topics`` with a callback that only counts into ``counter[0]``.

    The floor a monitor is compared with (what ``ros2 topic hz`` pays per message); returns
    ``matched()``, true once every subscription matched a publisher.
    """
    def on_message(msg: Any) -> None:
        counter[0] += 1

    subs = [node.create_subscription(msg_type, topic, on_message, qos, raw=raw)
            for topic in topics]
    return lambda: all(s.get_publisher_count() >= 1 for s in subs)
