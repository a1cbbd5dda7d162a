#!/usr/bin/env python3
"""What one report costs at robot scale, stage by stage, in one process (no DDS).

The scale case of ``bench_scale.py`` (1,000 topics at 1 Hz plus one at 1 kHz) measures the
whole monitor over the middleware, where a run differs from the next by up to 30 % with the
VM's speed. Here the same traffic is recorded into a ``Session`` directly and each report
is timed in its stages, so a change to one stage shows even when it is a few ms:

- ``standing``: deciding which topics' snapshots stand (``Reporter.standing``);
- ``snapshot``: processing the other topics' events and refreshing them;
- ``MonitorStats``: converting the snapshot and assembling its CDR bytes;
- ``diagnostics``: the statuses and the ``DiagnosticArray`` bytes.

Every report's time is the sum; ``refreshed`` counts the topics a report refreshes (the
others repeat their snapshot). Medians over ``--reports`` reports after ``--warmup``
reports (periods learned, refresh turns spread). To compare two versions of the code, run
this alternately on each a few times: the medians of one run move by about 10 % with the VM.

    python benchmarks/bench_report.py
    python benchmarks/bench_report.py --topics 200 --reports 60
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from benchlib import (
    benchmark_parser,
    environment_line,
    parse_benchmark_args,
    print_table,
    write_json,
)

MS = 1_000_000
S = 1_000_000_000
START = 1_700_000_000 * S
STAGES = ('standing', 'snapshot', 'MonitorStats', 'diagnostics')


def run(topics: int, fast_hz: int, warmup: int, reports: int) -> dict[str, Any]:
    """Record ``topics`` at 1 Hz and one at ``fast_hz``; time each report's stages."""
    from diagnostic_msgs.msg import DiagnosticArray

    from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
    from ros2_deadline_monitor.analysis.session import Session, TopicState
    from ros2_deadline_monitor.outputs import conversions, diagnostics
    from ros2_deadline_monitor.outputs.reporter import Reporter
    from ros2_deadline_monitor.outputs.serialized import Assembler
    from ros2_deadline_monitor.outputs.stats_output import TopicStatsCache

    session = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=START)
    reporter = Reporter(session)
    configs = {f't{i}': TopicConfig(name=f't{i}', topic=f'/bench_report/t{i}')
               for i in range(topics)}
    configs['fast'] = TopicConfig(name='fast', topic='/bench_report/fast')
    session.configure(configs)
    for topic_id in configs:
        session.topic_status(topic_id, TopicState.RECEIVING, type_name='std_msgs/msg/Header',
                             writers=1)
    assembler = Assembler()
    if not assembler.check():
        raise SystemExit('the CDR assembler does not match this rmw: nothing to measure')
    stats_cache, status_cache = TopicStatsCache(), diagnostics.StatusCache()
    slow = [session.recorder(f't{i}', None) for i in range(topics)]
    fast = session.recorder('fast', None)
    raw = bytes(16)
    fast_step = S // fast_hz
    previous: dict[str, object] = {}
    times: dict[str, list[float]] = {stage: [] for stage in STAGES}
    refreshed: list[int] = []
    for k in range(warmup + reports):
        second = START + k * S
        for i, record in enumerate(slow):  # spread over the second, in a fixed order
            record(second + (i * 997 % 1000) * MS + 1000, raw, k + 1)
        for j in range(fast_hz):
            fast(second + j * fast_step + 500, raw, k * fast_hz + j + 1)
        now = second + S
        t0 = time.perf_counter()
        standing = reporter.standing(now)
        t1 = time.perf_counter()
        snapshot = reporter.snapshot(now, standing=standing)
        t2 = time.perf_counter()
        assembler.payload(conversions.monitor_stats(
            snapshot, stats_cache.messages(snapshot), stats_cache.header))
        t3 = time.perf_counter()
        assembler.payload(DiagnosticArray(status=diagnostics.statuses(snapshot,
                                                                      cache=status_cache)))
        t4 = time.perf_counter()
        if k < warmup:
            continue
        for stage, seconds in zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            times[stage].append(seconds)
        refreshed.append(sum(1 for t in snapshot.topics if previous.get(t.topic_id) is not t))
        previous = {t.topic_id: t for t in snapshot.topics}
    totals = [sum(times[stage][i] for stage in STAGES) for i in range(reports)]
    return {'topics': topics + 1, 'stages_ms': {stage: [1e3 * t for t in values]
                                                for stage, values in times.items()},
            'report_ms': [1e3 * t for t in totals], 'refreshed': refreshed}


def main() -> None:
    """Run and print the stages' medians."""
    parser = benchmark_parser(__doc__)
    parser.add_argument('--topics', type=int, default=1000, help='slow topics (default 1000)')
    parser.add_argument('--fast-hz', type=int, default=1000,
                        help='rate of the fast topic [Hz] (default 1000)')
    parser.add_argument('--warmup', type=int, default=30, help='reports before measuring')
    parser.add_argument('--reports', type=int, default=30, help='reports measured')
    args = parse_benchmark_args(parser)
    result = run(args.topics, args.fast_hz, args.warmup, args.reports)
    print(f'# One report, stage by stage ({environment_line()})')
    rows = [[stage, f'{statistics.median(values):.2f} ms']
            for stage, values in result['stages_ms'].items()]
    rows.append(['report (sum)', f'{statistics.median(result["report_ms"]):.2f} ms'])
    rows.append(['refreshed topics a report', f'{statistics.median(result["refreshed"]):.0f} '
                 f'of {result["topics"]}'])
    print_table(['stage', 'median'], rows)
    write_json(args.json, result)


if __name__ == '__main__':
    main()
