#!/usr/bin/env python3
"""Benchmark of the offline analyzer: messages/s next to a plain rosbags read, jobs, memory.

Writes bags of a 1 kHz header-stamped topic (a timer with a 2.2 ms stall every 50th cycle,
so there are misses and skipped periods to find) plus /clock at 1 kHz into a temporary
directory, then runs, each in a fresh process and several times:

- ``read``: a plain ``rosbags`` read of the same bag (iterate raw messages, no decoding);
- ``analyze``: ``analyze BAG --stamp start`` (the table only, no plots);
- ``jobs N``: the ``--check`` gate over several bags (``check_bags``, what
  ``analyze runs/*/ --check --jobs N`` runs) with N worker processes.

The figures are the ratio of analyze's rate to the plain read's (target: at least 1.0) and the
speed-up of ``--jobs 2`` over ``--jobs 1`` (target: at least 1.7 on 2 cores). Each child also
reports its peak RSS (``VmHWM``), for a small and a large bag (bounded memory: the analyzer's
peak does not grow with the bag) and per job of the gate.

    python benchmarks/bench_analyze.py                 # 1,000,000 and 100,000; 4 x 250,000
    python benchmarks/bench_analyze.py --messages 200000 --reps 5 --storage sqlite3
    python benchmarks/bench_analyze.py --skip-single --bags 4 --bag-messages 100000
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
    from ros2_deadline_monitor.analysis.cycles import count_cycles

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
    """Peak resident memory of this process image in MB (``check.peak_rss_mb``)."""
    from ros2_deadline_monitor.bag.check import peak_rss_mb

    return peak_rss_mb()


def child_read(bag: str) -> dict:
    """Iterate every raw message of the bag with rosbags, nothing else."""
    from rosbags.rosbag2 import Reader

    before = _rss_mb()
    began = time.perf_counter()
    cpu = time.process_time()
    count = 0
    with Reader(Path(bag)) as reader:
        for _ in reader.messages():
            count += 1
    return {'seconds': time.perf_counter() - began, 'cpu_s': time.process_time() - cpu,
            'messages': count, 'rss_mb': _rss_mb(), 'rss_before_mb': before}


def child_analyze(bag: str) -> dict:
    """Run ``analyze BAG --stamp start`` (table to /dev/null, figures to a JSON file)."""
    import rosbags.rosbag2  # noqa: F401 - imported before the clock starts, as for `read`

    from ros2_deadline_monitor.bag.analyze import main

    out = Path(tempfile.mkdtemp()) / 'result.json'
    before = _rss_mb()
    stdout = sys.stdout
    began = time.perf_counter()
    cpu = time.process_time()
    with open(os.devnull, 'w') as devnull:
        sys.stdout = devnull
        try:
            code = main([bag, '--stamp', 'start', '--no-progress', '--json', str(out)])
        finally:
            sys.stdout = stdout
    seconds = time.perf_counter() - began
    cpu_s = time.process_time() - cpu
    result = json.loads(out.read_text())
    topic = result['topics'][0]
    return {'seconds': seconds, 'cpu_s': cpu_s, 'code': code, 'rss_mb': _rss_mb(),
            'rss_before_mb': before,
            'messages': topic['messages'] + result['clock']['messages'],
            'misses': topic['deadline_misses'], 'skipped': topic['skipped_periods'],
            'p99_exact': topic['percentiles_exact']}


def child_jobs(jobs: int, bags: str) -> dict:
    """Check every bag of ``bags`` (``os.pathsep``-separated) with ``jobs`` worker processes."""
    import rosbags.rosbag2  # noqa: F401 - imported before the clock starts, as for `read`

    from ros2_deadline_monitor.bag.check import check_bags, CheckJob
    from ros2_deadline_monitor.bag.plan import Overrides
    from ros2_deadline_monitor.configuration.expectations import Expectations, parse_limit

    paths = bags.split(os.pathsep)
    job = CheckJob(file_config=None, overrides=Overrides(stamp='start'),
                   expectations=Expectations(every_topic=(parse_limit('max_misses', '0'),)))
    began = time.perf_counter()
    cpu = time.process_time()
    runs = check_bags(paths, job, jobs=jobs)
    seconds = time.perf_counter() - began
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the workers, reaped by now
    cpu_s = time.process_time() - cpu + children.ru_utime + children.ru_stime
    errors = [r.error for r in runs if r.error]
    return {'seconds': seconds, 'code': 1 if errors else 0, 'errors': errors,
            'messages': sum(r.messages for r in runs),
            'misses': [r.figures.topics[0].deadline_misses for r in runs if r.figures],
            'failed': sum(r.failed for r in runs),
            'job_rss_mb': [r.peak_rss_mb for r in runs],
            'job_seconds': [r.seconds for r in runs], 'rss_mb': _rss_mb(), 'cpu_s': cpu_s}


def measure(kind: str, bag: Path | str) -> dict:
    """Run one ``read``, ``analyze`` or ``jobsN`` child on ``bag``; return what it reported."""
    env = dict(os.environ, PYTHONPATH=f'{REPO}{os.pathsep}{os.environ.get("PYTHONPATH", "")}')
    proc = subprocess.run([sys.executable, __file__, '--child', kind, str(bag)], env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f'ERROR: {kind} child failed:\n{proc.stderr}')
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _rates(runs: list[dict], messages: int) -> tuple[float, float, float]:
    rates = sorted(messages / r['seconds'] for r in runs)
    return rates[0], statistics.median(rates), rates[-1]


def _single(args: argparse.Namespace, tmp: str) -> list[str]:
    """One bag at ``--messages`` and one at ``--small``: analyze vs a plain read, peak RSS."""
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
    out = []
    for info, reads, analyses in rows:
        n = info['messages']
        out.append(f'\nbag: {n:,} messages ({info["topic"]:,} /demo/cmd std_msgs/Header at 1 kHz '
                   f'+ {info["clock"]:,} /clock), {info["bytes"] / 1e6:.0f} MB, written in '
                   f'{info["write_s"]:.1f} s; truth: {info["misses"]:,} misses, '
                   f'{info["skipped"]:,} skipped (found exactly)')
        out.append(f'  {"":28} {"min":>10} {"median":>10} {"max":>10}   msg/s')
        read = _rates(reads, n)
        ana = _rates(analyses, n)
        out.append(f'  {"plain rosbags read":28} ' + ' '.join(f'{r:>10,.0f}' for r in read))
        out.append(f'  {"analyze (table only)":28} ' + ' '.join(f'{r:>10,.0f}' for r in ana))
        out.append(f'  {"ratio analyze / read":28} {ana[0] / read[0]:>10.2f} '
                   f'{ana[1] / read[1]:>10.2f} {ana[2] / read[2]:>10.2f}   (target >= 1.0)')
        cpu_read = _rates([{'seconds': r['cpu_s']} for r in reads], n)
        cpu_ana = _rates([{'seconds': r['cpu_s']} for r in analyses], n)
        out.append(f'  {"ratio by CPU time":28} {cpu_ana[0] / cpu_read[0]:>10.2f} '
                   f'{cpu_ana[1] / cpu_read[1]:>10.2f} {cpu_ana[2] / cpu_read[2]:>10.2f}   '
                   '(msg per CPU s; less sensitive to machine load)')
        out.append(f'  peak RSS: analyze {max(r["rss_mb"] for r in analyses):.0f} MB '
                   f'(after imports {min(r["rss_before_mb"] for r in analyses):.0f} MB), plain '
                   f'read {max(r["rss_mb"] for r in reads):.0f} MB; p99 exact: '
                   f'{analyses[0]["p99_exact"]}')
    big = max(r['rss_mb'] for r in rows[0][2])
    small = max(r['rss_mb'] for r in rows[1][2])
    out.append(f'\npeak RSS of analyze: {rows[1][0]["messages"]:,} messages {small:.0f} MB, '
               f'{rows[0][0]["messages"]:,} messages {big:.0f} MB '
               f'({big / small:.2f}x for {rows[0][0]["messages"] / rows[1][0]["messages"]:.0f}x '
               'the messages)')
    return out


def _jobs(args: argparse.Namespace, tmp: str) -> list[str]:
    """``--bags`` bags of ``--bag-messages``: the gate with 1 and with 2 worker processes."""
    paths, infos = [], []
    for i in range(args.bags):
        path = Path(tmp) / f'run_{i}'
        infos.append(write_bag(path, args.bag_messages, args.storage))
        paths.append(str(path))
    joined = os.pathsep.join(paths)
    results: dict[int, list[dict]] = {1: [], 2: []}
    for _ in range(args.reps):
        for jobs in (1, 2):  # interleaved, so a change in machine load hits both
            run = measure(f'jobs{jobs}', joined)
            if run['code'] != 0 or run['misses'] != [i['misses'] for i in infos]:
                raise SystemExit(f'ERROR: wrong gate result: {run} vs {infos}')
            results[jobs].append(run)
    total = args.bags * args.bag_messages
    one = sorted(r['seconds'] for r in results[1])
    two = sorted(r['seconds'] for r in results[2])
    speedups = sorted(a / b for a, b in zip(
        [r['seconds'] for r in results[1]], [r['seconds'] for r in results[2]], strict=True))
    out = [f'\ngate over {args.bags} bags x {args.bag_messages:,} messages ({total:,} in all; '
           f'check_bags = analyze BAGS --check --jobs N)',
           f'  {"":28} {"min":>10} {"median":>10} {"max":>10}   s (msg/s at the median)']
    for label, times in (('--jobs 1', one), ('--jobs 2', two)):
        out.append(f'  {label:28} ' + ' '.join(f'{t:>10.2f}' for t in (
            times[0], statistics.median(times), times[-1]))
            + f'   ({total / statistics.median(times):,.0f})')
    out.append(f'  {"speed-up --jobs 2 / --jobs 1":28} {speedups[0]:>10.2f} '
               f'{statistics.median(speedups):>10.2f} {speedups[-1]:>10.2f}   (target >= 1.7 '
               f'on 2 cores; {cpu_count()} usable here)')
    cpu1 = statistics.median(r['cpu_s'] for r in results[1])
    cpu2 = statistics.median(r['cpu_s'] for r in results[2])
    out.append(f'  CPU s, all processes (median)  --jobs 1 {cpu1:.2f}, --jobs 2 {cpu2:.2f} '
               f'({cpu2 / cpu1:.2f}x: the cost of the worker processes; the speed-up needs 2 '
               'idle cores)')
    rss1 = [mb for r in results[1] for mb in r['job_rss_mb']]
    rss2 = [mb for r in results[2] for mb in r['job_rss_mb']]
    out.append(f'  peak RSS per job (bag): --jobs 2 {min(rss2):.0f}-{max(rss2):.0f} MB, --jobs 1 '
               f'{min(rss1):.0f}-{max(rss1):.0f} MB; parent process with --jobs 2 '
               f'{max(r["rss_mb"] for r in results[2]):.0f} MB')
    return out


def cpu_count() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()


def main() -> int:
    """Write the bags, measure, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--messages', type=int, default=1_000_000,
                        help='messages in the large bag (default: 1,000,000)')
    parser.add_argument('--small', type=int, default=100_000,
                        help='messages in the small bag for the memory comparison')
    parser.add_argument('--bags', type=int, default=4,
                        help='bags for the --jobs comparison (default: 4)')
    parser.add_argument('--bag-messages', type=int, default=250_000,
                        help='messages in each of those bags (default: 250,000)')
    parser.add_argument('--reps', type=int, default=3, help='repetitions per measurement')
    parser.add_argument('--storage', choices=('mcap', 'sqlite3'), default='mcap')
    parser.add_argument('--skip-single', action='store_true',
                        help='skip the one-bag read/analyze comparison')
    parser.add_argument('--skip-jobs', action='store_true',
                        help='skip the --jobs comparison')
    parser.add_argument('--child', nargs=2, metavar=('KIND', 'BAG'), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, bag = args.child
        if kind.startswith('jobs'):
            print(json.dumps(child_jobs(int(kind[4:]), bag)))
        else:
            print(json.dumps(child_read(bag) if kind == 'read' else child_analyze(bag)))
        return 0

    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix='bench_analyze_') as tmp:
        lines = [] if args.skip_single else _single(args, tmp)
        if not args.skip_jobs:
            lines += _jobs(args, tmp)
    end_load = os.getloadavg()
    print(f'storage {args.storage}, {args.reps} runs each in a fresh process; '
          f'Python {sys.version.split()[0]}, {cpu_count()} CPUs; load average (1 min) '
          f'{load[0]:.2f} at the start, {end_load[0]:.2f} at the end')
    print('\n'.join(lines))
    return 0


if __name__ == '__main__':
    sys.exit(main())
