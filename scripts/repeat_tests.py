#!/usr/bin/env python3
"""Run the test suite N times and tell which tests failed how often: the flaky-test hunt.

Called by ``scripts/dev test --repeat N [--hog] [PYTEST ARGS]`` with the venv and the build
sourced. Each run is ``python -m pytest --junitxml=...`` with the given arguments; its output
and its junit XML are kept under ``--log-dir`` (default ``.build/repeat/<time>``), and at the
end a table names every test that failed or errored, in how many runs, with the first line
of its first failure and the runs' logs to read. ``--hog`` keeps every core busy with a
spinning process for the whole hunt, so races that only show on a loaded machine show here.
Exits 0 when every run passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass, field
import os
from pathlib import Path
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

HOG_CODE = 'while True: pass'


@dataclass
class RunResult:
    """One pytest run: its exit code, counts and the failed tests with their first lines."""

    index: int
    returncode: int
    seconds: float
    log: Path
    tests: int = 0
    skipped: int = 0
    failed: dict[str, str] = field(default_factory=dict)


def build_parser() -> argparse.ArgumentParser:
    """Return the command line parser; unknown arguments go to pytest."""
    parser = argparse.ArgumentParser(
        prog='scripts/dev test --repeat',
        description='Run pytest N times; print which tests failed how often.',
        allow_abbrev=False)
    parser.add_argument('--repeat', type=int, required=True, metavar='N',
                        help='number of runs (>= 1)')
    parser.add_argument('--hog', action='store_true',
                        help='keep every core busy with a spinning process during the runs')
    parser.add_argument('--log-dir', type=Path, default=None,
                        help="where each run's output and junit XML go "
                             '(default: .build/repeat/<date-time>)')
    return parser


def nodeid(case: ElementTree.Element) -> str:
    """Return a pytest-like id for a junit ``testcase`` (file::name when the file is given)."""
    name = case.get('name', '?')
    file = case.get('file')
    if file:
        return f'{file}::{name}'
    classname = case.get('classname', '')
    return f'{classname.replace(".", "/")}.py::{name}' if classname else name


def parse_junit(path: Path, result: RunResult) -> None:
    """Fill ``result`` from one junit XML file (missing or broken: nothing is filled)."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return
    for case in root.iter('testcase'):
        result.tests += 1
        for child in case:
            if child.tag in ('failure', 'error'):
                message = (child.get('message') or child.text or child.tag).strip()
                first = message.splitlines()[0] if message else child.tag
                result.failed.setdefault(nodeid(case), f'{child.tag}: {first}'[:160])
            elif child.tag == 'skipped':
                result.skipped += 1


def start_hogs() -> list[subprocess.Popen]:
    """Start one busy-looping Python per core (``python -S``: no site start-up cost)."""
    count = os.cpu_count() or 1
    return [subprocess.Popen([sys.executable, '-S', '-c', HOG_CODE],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            for _ in range(count)]


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    """End the hog processes this script started."""
    for hog in hogs:
        if hog.poll() is None:
            hog.send_signal(signal.SIGTERM)
    for hog in hogs:
        try:
            hog.wait(timeout=5)
        except subprocess.TimeoutExpired:
            hog.kill()
            hog.wait()


def kill_session(process: subprocess.Popen) -> None:
    """Kill every process left in ``process``'s session (its own process group)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def run_once(index: int, log_dir: Path, pytest_args: list[str]) -> RunResult:
    """Run pytest once with a junit XML; return what it did."""
    xml = log_dir / f'run-{index:02d}.xml'
    log = log_dir / f'run-{index:02d}.log'
    command = [sys.executable, '-m', 'pytest', f'--junitxml={xml}', *pytest_args]
    started = time.monotonic()
    with open(log, 'w') as out:
        # A session of its own: whatever a test leaves running (a killed run's monitor or
        # sim_clock keeps publishing in the domain) is ended before the next run starts.
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            returncode = process.wait()
        finally:
            kill_session(process)
    result = RunResult(index, returncode, time.monotonic() - started, log)
    parse_junit(xml, result)
    if returncode not in (0, 5) and not result.failed:
        # pytest itself failed (a crash, an interrupted run): count that as a failure too.
        result.failed['<pytest run>'] = f'exit code {returncode}, see {log}'
    return result


def table(results: list[RunResult]) -> str:
    """Return the summary: one line per failing test, most frequent first."""
    runs = len(results)
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    where: dict[str, list[int]] = {}
    for result in results:
        for test, message in result.failed.items():
            counts[test] += 1
            first.setdefault(test, message)
            where.setdefault(test, []).append(result.index)
    lines = []
    total = sum(r.seconds for r in results)
    failed_runs = sum(1 for r in results if r.failed)
    lines.append(f'{runs} run(s), {failed_runs} with failures, {total / 60:.1f} min in all '
                 f'(longest run {max(r.seconds for r in results):.0f} s)')
    if not counts:
        lines.append('no test failed')
        return '\n'.join(lines)
    width = max(len(test) for test in counts)
    lines.append(f'{"failed":>8}  {"test":<{width}}  runs / first failure')
    for test, count in counts.most_common():
        runs_list = ','.join(str(i) for i in where[test])
        lines.append(f'{count:>3} / {runs:<2}  {test:<{width}}  runs {runs_list}')
        lines.append(f'{"":>8}  {"":<{width}}  {first[test]}')
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the hunt; return 0 when no run failed."""
    args, pytest_args = build_parser().parse_known_args(argv)
    if args.repeat < 1:
        print('ERROR: --repeat needs a number >= 1', file=sys.stderr)
        return 2
    log_dir = args.log_dir or Path('.build') / 'repeat' / time.strftime('%Y%m%d-%H%M%S')
    log_dir.mkdir(parents=True, exist_ok=True)
    # SIGTERM ends the hunt like Ctrl-C: the hogs and the running pytest are stopped.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    hogs = start_hogs() if args.hog else []
    load = f', {len(hogs)} CPU hog(s)' if hogs else ''
    print(f'==> {args.repeat} run(s) of pytest {" ".join(pytest_args)}{load}; '
          f'logs in {log_dir}', file=sys.stderr, flush=True)
    results: list[RunResult] = []
    try:
        for index in range(1, args.repeat + 1):
            result = run_once(index, log_dir, pytest_args)
            results.append(result)
            state = f'{len(result.failed)} failed' if result.failed else 'passed'
            print(f'run {index:>2}/{args.repeat}: {state}, {result.tests} tests '
                  f'({result.skipped} skipped) in {result.seconds:.0f} s', flush=True)
            for test, message in result.failed.items():
                print(f'    {test}: {message}', flush=True)
    except KeyboardInterrupt:
        print('interrupted', file=sys.stderr)
    finally:
        stop_hogs(hogs)
    if not results:
        return 1
    summary = table(results)
    (log_dir / 'summary.txt').write_text(summary + '\n')
    print(summary)
    return 1 if any(r.failed for r in results) else 0


if __name__ == '__main__':
    sys.exit(main())
