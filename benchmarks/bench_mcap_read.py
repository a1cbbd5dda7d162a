#!/usr/bin/env python3
"""Benchmark of reading an MCAP bag: the analyzer's chunk columns against public readers.

``bag/reader.py`` reads an indexed MCAP file chunk by chunk from ``rosbags``' private chunk
index (``BagSource.batches``). The public alternatives are the ``mcap`` library's reader
(``make_reader(...).iter_messages()``, log-time order) and ``rosbags``' own
``Reader.messages()``. Each run reads every message of the same bag (the benchmark bag of
``bench_analyze.py``: a 1 kHz header-stamped topic and /clock at 1 kHz) and touches each
payload's size; the runs alternate between the readers, and the figure is the median CPU
time (``process_time``, less sensitive to a loaded machine than wall time) and wall time.

    python benchmarks/bench_mcap_read.py                      # 300,000 messages, 7 rounds
    python benchmarks/bench_mcap_read.py --messages 100000 --rounds 5

Needs ``pip install mcap`` for the ``mcap`` reader (skipped with a note without it).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import gc
from pathlib import Path
import statistics
import sys
import tempfile
import time
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / 'benchmarks'))

from bench_analyze import write_bag  # noqa: E402 - benchmarks/, on sys.path above


def read_columns(bag: Path) -> tuple[int, int]:
    """Read as the analyzer does: ``BagSource.batches`` (chunk columns)."""
    from ros2_deadline_monitor.bag.reader import BagSource

    count = size = 0
    with BagSource(bag) as source:
        conns = [c for topic in source.topics.values() for c in topic.connections]
        for batch in source.batches(conns):
            count += len(batch.log_time)
            size += int(batch.sizes.sum())
    return count, size


def read_mcap(bag: Path) -> tuple[int, int]:
    """Read with the ``mcap`` library's public reader, in log-time order."""
    from mcap.reader import make_reader

    count = size = 0
    for path in sorted(bag.glob('*.mcap')):
        with open(path, 'rb') as stream:
            for _, _, message in make_reader(stream).iter_messages(log_time_order=True):
                count += 1
                size += len(message.data)
    return count, size


def read_rosbags(bag: Path) -> tuple[int, int]:
    """Read with ``rosbags``' own reader (what the analyzer falls back to)."""
    from rosbags.rosbag2 import Reader

    count = size = 0
    with Reader(bag) as reader:
        for _, _, raw in reader.messages():
            count += 1
            size += len(raw)
    return count, size


def measure(read: Callable[[Path], tuple[int, int]], bag: Path) -> dict[str, Any]:
    """Time one read of the whole bag: wall and CPU seconds, and the messages read."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    count, _ = read(bag)
    return {'wall_s': time.perf_counter() - wall, 'cpu_s': time.process_time() - cpu,
            'messages': count}


def main() -> int:
    """Write the bag, read it with each reader in alternated rounds, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--messages', type=int, default=300_000)
    parser.add_argument('--rounds', type=int, default=7)
    args = parser.parse_args()
    readers: dict[str, Callable[[Path], tuple[int, int]]] = {
        'columns (BagSource.batches)': read_columns, 'rosbags Reader.messages': read_rosbags}
    try:
        import mcap  # noqa: F401
    except ImportError:
        print('mcap is not installed (pip install mcap): its reader is left out')
    else:
        readers['mcap make_reader().iter_messages'] = read_mcap
    with tempfile.TemporaryDirectory() as tmp:
        bag = Path(tmp) / 'bag'
        info = write_bag(bag, args.messages, 'mcap')
        for read in readers.values():  # imports and caches warm, not timed
            read(bag)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in readers}
        for _ in range(args.rounds):
            for name, read in readers.items():  # alternated: a load spike hits all alike
                runs[name].append(measure(read, bag))
    print(f'{info["messages"]:,} messages ({info["bytes"] / 1e6:.1f} MB MCAP), '
          f'{args.rounds} alternated rounds; median (min-max)')
    base = statistics.median(r['cpu_s'] for r in runs['columns (BagSource.batches)'])
    for name, results in runs.items():
        counts = {r['messages'] for r in results}
        assert counts == {info['messages']}, (name, counts)
        cpu = [r['cpu_s'] for r in results]
        wall = [r['wall_s'] for r in results]
        print(f'  {name:36s} CPU {statistics.median(cpu):6.3f} s ({min(cpu):.3f}-'
              f'{max(cpu):.3f}), wall {statistics.median(wall):6.3f} s, '
              f'{info["messages"] / statistics.median(cpu) / 1e6:5.2f} M msg/s CPU, '
              f"x{statistics.median(cpu) / base:.1f} the columns' CPU")
    return 0


if __name__ == '__main__':
    sys.exit(main())
