#!/usr/bin/env python3
"""Benchmark of the offline analyzer: messages/s next to a plain rosbags read, and memory.

Writes bags of a 1 kHz header-stamped topic (a timer with a 2.2 ms stall every 50th cycle,
so there are misses and skipped periods to find) plus /clock at 1 kHz into a temporary
directory, then runs, each in a fresh process and several times:

- ``read``: a plain ``rosbags`` read of the same bag (iterate raw messages, no decoding);
- ``analyze``: ``analyze BAG --stamp start`` (the table only, no plots).

The figure is the ratio of the two rates. Each child also reports its peak RSS
(``ru_maxrss``), for a small and a large bag: bounded memory means the analyzer's peak does
not grow with the bag.

    python benchmarks/bench_analyze.py                 # 1,000,000 and 100,000 messages
    python benchmarks/bench_analyze.py --messages 200000 --reps 5 --storage sqlite3
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time

REPO = Path(__file__).resolve().parents[1]
MS = 1_000_000
T0 = 1_700_000_000_000_000_000
PERIOD_NS = MS
STALL_NS = 2_200_000
STALL_EVERY = 50
EXEC_NS = 30_000
WAKE_NS = 5_000
DELAY_NS = 20_000


def timer_cycles(count: int) -> tuple[list[int], list[int]]:
    """Return (starts, ends) of ``count`` cycles of an rcl timer with periodic stalls."""
    starts, ends = [], []
    expected = free = T0
    for i in range(1, count + 1):
        start = max(expected + WAKE_NS, free)
        run = STALL_NS if i % STALL_EVERY == STALL_EVERY // 2 else EXEC_NS
        nxt = expected + PERIOD_NS
        if nxt <= start:
            nxt += (1 + (start - nxt) // PERIOD_NS) * PERIOD_NS
        starts.append(start)
        ends.append(start + run)
        expected = nxt
        free = start + run
    return starts, ends


def write_bag(path: Path, messages: int, storage: str) -> dict:
    """Write the benchmark bag; return what it holds and the ground truth."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import get_typestore, Stores

    sys.path.insert(0, str(REPO))
    from ros2_deadline_monitor.core.cycles import count_cycles

    store = get_typestore(Stores.ROS2_JAZZY)
    n_topic = messages // 2
    starts, ends = timer_cycles(n_topic)
    header = struct.Struct('<4siI I5s').pack
    clock = struct.Struct('<4siI').pack
    encapsulation = b'\x00\x01\x00\x00'
    began = time.perf_counter()
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        cmd = writer.add_connection('/demo/cmd', 'std_msgs/msg/Header', typestore=store)
        clk = writer.add_connection('/clock', 'rosgraph_msgs/msg/Clock', typestore=store)
        write = writer.write
        k = 0
        for start, end in zip(starts, ends, strict=True):
            log = end + DELAY_NS
            while T0 + k * MS <= log and k < messages - n_topic:
                sim = k * MS
                write(clk, T0 + k * MS, clock(encapsulation, sim // 10**9, sim % 10**9))
                k += 1
            sec, nanosec = divmod(start, 10**9)
            write(cmd, log, header(encapsulation, sec, nanosec, 5, b'base\0'))
        while k < messages - n_topic:
            sim = k * MS
            write(clk, T0 + k * MS, clock(encapsulation, sim // 10**9, sim % 10**9))
            k += 1
    truth = count_cycles(starts, [e + DELAY_NS for e in ends], PERIOD_NS)
    size = sum(f.stat().st_size for f in path.iterdir())
    return {'messages': messages, 'topic': n_topic, 'clock': messages - n_topic,
            'misses': truth.misses, 'skipped': truth.skipped, 'bytes': size,
            'write_s': time.perf_counter() - began}


# -- children: one measurement each, in a fresh process --------------------------------------

def _rss_mb() -> float:
    """Peak resident memory of this process image in MB.

    ``VmHWM`` rather than ``ru_maxrss``: the venv's ROS wheel bootstrapper re-executes
    Python at start-up, and ``ru_maxrss`` survives ``exec`` (it would report the larger of
    the two images).
    """
    try:
        with open('/proc/self/status') as status:
            for line in status:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_read(bag: str) -> dict:
    """Iterate every raw message of the bag with rosbags, nothing else."""
    from rosbags.rosbag2 import Reader

    before = _rss_mb()
    began = time.perf_counter()
    count = 0
    with Reader(Path(bag)) as reader:
        for _ in reader.messages():
            count += 1
    return {'seconds': time.perf_counter() - began, 'messages': count, 'rss_mb': _rss_mb(),
            'rss_before_mb': before}


def child_analyze(bag: str) -> dict:
    """Run ``analyze BAG --stamp start`` (table to /dev/null, figures to a JSON file)."""
    import rosbags.rosbag2  # noqa: F401 - imported before the clock starts, as for `read`

    from ros2_deadline_monitor.offline.analyze import main

    out = Path(tempfile.mkdtemp()) / 'result.json'
    before = _rss_mb()
    stdout = sys.stdout
    began = time.perf_counter()
    with open(os.devnull, 'w') as devnull:
        sys.stdout = devnull
        try:
            code = main([bag, '--stamp', 'start', '--no-progress', '--json', str(out)])
        finally:
            sys.stdout = stdout
    seconds = time.perf_counter() - began
    result = json.loads(out.read_text())
    topic = result['topics'][0]
    return {'seconds': seconds, 'code': code, 'rss_mb': _rss_mb(), 'rss_before_mb': before,
            'messages': result['topics'][0]['messages_total'] + result['clock']['messages_total'],
            'misses': topic['deadline_misses_total'], 'skipped': topic['skipped_periods_total'],
            'p99_exact': topic['percentiles_exact']}


def measure(kind: str, bag: Path) -> dict:
    """Run one ``read`` or ``analyze`` child on ``bag``; return what it reported."""
    env = dict(os.environ, PYTHONPATH=f'{REPO}{os.pathsep}{os.environ.get("PYTHONPATH", "")}')
    proc = subprocess.run([sys.executable, __file__, '--child', kind, str(bag)], env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f'ERROR: {kind} child failed:\n{proc.stderr}')
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _rates(runs: list[dict], messages: int) -> tuple[float, float, float]:
    rates = sorted(messages / r['seconds'] for r in runs)
    return rates[0], statistics.median(rates), rates[-1]


def main() -> int:
    """Write the bags, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--messages', type=int, default=1_000_000,
                        help='messages in the large bag (default: 1,000,000)')
    parser.add_argument('--small', type=int, default=100_000,
                        help='messages in the small bag for the memory comparison')
    parser.add_argument('--reps', type=int, default=3, help='repetitions per measurement')
    parser.add_argument('--storage', choices=('mcap', 'sqlite3'), default='mcap')
    parser.add_argument('--child', nargs=2, metavar=('KIND', 'BAG'), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, bag = args.child
        print(json.dumps(child_read(bag) if kind == 'read' else child_analyze(bag)))
        return 0

    with tempfile.TemporaryDirectory(prefix='bench_analyze_') as tmp:
        rows = []
        for messages in (args.messages, args.small):
            path = Path(tmp) / f'bag_{messages}'
            info = write_bag(path, messages, args.storage)
            reads = [measure('read', path) for _ in range(args.reps)]
            analyses = [measure('analyze', path) for _ in range(args.reps)]
            for run in analyses:
                if (run['code'], run['messages'], run['misses'], run['skipped']) != (
                        0, messages, info['misses'], info['skipped']):
                    raise SystemExit(f'ERROR: wrong analysis: {run} vs {info}')
            rows.append((info, reads, analyses))

        print(f'storage {args.storage}, {args.reps} runs each in a fresh process; '
              f'Python {sys.version.split()[0]}, {os.cpu_count()} CPUs')
        for info, reads, analyses in rows:
            n = info['messages']
            print(f'\nbag: {n:,} messages ({info["topic"]:,} /demo/cmd std_msgs/Header at 1 kHz '
                  f'+ {info["clock"]:,} /clock), {info["bytes"] / 1e6:.0f} MB, written in '
                  f'{info["write_s"]:.1f} s; truth: {info["misses"]:,} misses, '
                  f'{info["skipped"]:,} skipped (found exactly)')
            print(f'  {"":28} {"min":>10} {"median":>10} {"max":>10}   msg/s')
            read = _rates(reads, n)
            ana = _rates(analyses, n)
            print(f'  {"plain rosbags read":28} ' + ' '.join(f'{r:>10,.0f}' for r in read))
            print(f'  {"analyze (table only)":28} ' + ' '.join(f'{r:>10,.0f}' for r in ana))
            print(f'  {"ratio analyze / read":28} {ana[0] / read[0]:>10.2f} '
                  f'{ana[1] / read[1]:>10.2f} {ana[2] / read[2]:>10.2f}')
            print(f'  peak RSS: analyze {max(r["rss_mb"] for r in analyses):.0f} MB '
                  f'(after imports {min(r["rss_before_mb"] for r in analyses):.0f} MB), plain '
                  f'read {max(r["rss_mb"] for r in reads):.0f} MB; p99 exact: '
                  f'{analyses[0]["p99_exact"]}')
        big = max(r['rss_mb'] for r in rows[0][2])
        small = max(r['rss_mb'] for r in rows[1][2])
        print(f'\npeak RSS of analyze: {rows[1][0]["messages"]:,} messages {small:.0f} MB, '
              f'{rows[0][0]["messages"]:,} messages {big:.0f} MB '
              f'({big / small:.2f}x for {rows[0][0]["messages"] / rows[1][0]["messages"]:.0f}x '
              'the messages)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
