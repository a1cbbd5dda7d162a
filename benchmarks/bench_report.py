#!/usr/bin/env python3
"""What one report costs, with and without the report-cost machinery, side by side in one run.

The live cases of ``bench_scale.py`` measure the whole monitor over the middleware, where a
run differs from the next by up to 30 % with the VM's speed. Here the same traffic is
recorded into one ``Session`` per way of reporting, and at every report each way makes its
report as the node does (``MonitorNode.publish_stats`` without the takes: the snapshot, then
``MonitorStats`` and ``/diagnostics`` published on real rclpy publishers), in an order that
rotates from report to report, and its CPU time is read (``time.thread_time``: the
middleware serializes a published message in the publishing thread), so that other work on a
shared machine changes the figures less than a clock would. The ways:

- ``afresh``: ``reuse_reports`` false: every topic's snapshot, message and status made anew,
  the messages published as objects (rclpy converts and serializes them);
- ``kept``: ``reuse_reports`` true: a steady slow topic's snapshot stands between refreshes
  (``outputs/reporter.py``) and its ``TopicStats`` and status are reused, published as
  objects;
- ``kept+cdr``: as ``kept``, the two messages assembled from kept CDR bytes
  (``outputs/serialized.py``), when that module exists.

Cases: ``scale`` (``--topics`` at 1 Hz and one at ``--fast-hz``), ``idle`` (``--topics``
configured, nobody publishing), ``one`` (one topic at ``--fast-hz``). Each report's time is
printed as the median and the spread (min–max) of ``--reports`` reports after ``--warmup``
(periods learned, refresh turns spread), and as a share of one core at the default report
period (1 s). ``refreshed``: the topics a report made afresh.

    python benchmarks/bench_report.py
    python benchmarks/bench_report.py --cases scale --topics 200 --reports 60
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from benchlib import (
    benchmark_parser,
    environment_line,
    fmt_spread,
    parse_benchmark_args,
    print_table,
    ros_init,
    write_json,
)

MS = 1_000_000
S = 1_000_000_000
START = 1_700_000_000 * S
CASES = ('scale', 'idle', 'one')
REPORT_PERIOD_MS = 1000.0
"""The default ``stats_period_s``: a report's ms over this is its share of one core."""


class Way:
    """One way of reporting: its own session, reporter and outputs on real publishers."""

    def __init__(self, node: Any, name: str, reuse: bool, cdr: bool, topics: dict[str, Any],
                 receiving: bool) -> None:
        """Configure a session with ``topics``; ``receiving``: each has a writer."""
        from ros2_deadline_monitor.analysis.config import AnalysisConfig
        from ros2_deadline_monitor.analysis.session import Session, TopicState
        from ros2_deadline_monitor.live.qos import STATS_QOS
        from ros2_deadline_monitor.msg import MonitorStats
        from ros2_deadline_monitor.outputs import diagnostics
        from ros2_deadline_monitor.outputs.reporter import Reporter
        from ros2_deadline_monitor.outputs.stats_output import StatsOutput

        self.name = name
        self.session = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=START)
        self.session.configure(topics)
        if receiving:
            for topic_id in topics:
                self.session.topic_status(topic_id, TopicState.RECEIVING,
                                          type_name='std_msgs/msg/Header', writers=1)
        self.reporter = make_reporter(Reporter, self.session, reuse)
        self.stats = StatsOutput(reuse)
        assembler = getattr(self.stats, 'assembler', None)
        if not cdr and assembler is not None:
            self.stats.assembler = assembler = None
        if cdr and assembler is None:
            raise SystemExit('the CDR assembler does not match this rmw: nothing to measure')
        self.publisher = node.create_publisher(MonitorStats, f'~/{name}/stats', STATS_QOS)
        kwargs = {'assembler': assembler} if cdr else {}
        self.diagnostics = diagnostics.DiagnosticsOutput(
            node, '', use_updater=False, reuse=reuse, **kwargs)
        self.report_ms: list[float] = []
        self.refreshed: list[int] = []
        self._previous: dict[str, object] = {}

    def report(self, now_ns: int, measured: bool) -> None:
        """Make and publish one report as ``MonitorNode.publish_stats`` does."""
        from ros2_deadline_monitor.configuration.expectations import Verdict

        began = time.thread_time()
        snapshot = self.reporter.snapshot(now_ns, standing=self.reporter.standing(now_ns))
        self.publisher.publish(self.stats.payload(snapshot))
        self.diagnostics.publish_report(snapshot, Verdict(()))
        took = time.thread_time() - began
        if measured:
            self.report_ms.append(1e3 * took)
            self.refreshed.append(sum(1 for t in snapshot.topics
                                      if self._previous.get(t.topic_id) is not t))
        self._previous = {t.topic_id: t for t in snapshot.topics}


def make_reporter(reporter_class: Any, session: Any, reuse: bool) -> Any:
    """Return the reporter of ``session``, reusing or not."""
    return reporter_class(session, reuse_reports=reuse)


def ways_available() -> list[tuple[str, bool, bool]]:
    """Return (name, reuse, cdr) of each way this version of the code has."""
    ways = [('afresh', False, False), ('kept', True, False)]
    try:
        import ros2_deadline_monitor.outputs.serialized  # noqa: F401
    except ImportError:
        return ways
    return [*ways, ('kept+cdr', True, True)]


def run_case(node: Any, case: str, topics: int, fast_hz: int, warmup: int,
             reports: int) -> dict[str, Any]:
    """Feed one case's traffic to every way; time each way's reports in rotating order."""
    from ros2_deadline_monitor.analysis.config import TopicConfig

    slow_count = 0 if case == 'one' else topics
    configs = {f't{i}': TopicConfig(name=f't{i}', topic=f'/bench_report/t{i}')
               for i in range(slow_count)}
    if case != 'idle':
        configs['fast'] = TopicConfig(name='fast', topic='/bench_report/fast')
    ways = [Way(node, f'{case}_{name.replace("+", "_")}', reuse, cdr, configs,
                receiving=case != 'idle')
            for name, reuse, cdr in ways_available()]
    names = [name for name, _, _ in ways_available()]
    raw = bytes(16)
    fast_step = S // fast_hz
    for k in range(warmup + reports):
        second = START + k * S
        for way in ways:
            session = way.session
            if case == 'scale':
                for i in range(slow_count):  # spread over the second, in a fixed order
                    session.recorder(f't{i}', None)(
                        second + (i * 997 % 1000) * MS + 1000, raw, k + 1)
            if case != 'idle':
                fast = session.recorder('fast', None)
                for j in range(fast_hz):
                    fast(second + j * fast_step + 500, raw, k * fast_hz + j + 1)
        order = ways[k % len(ways):] + ways[:k % len(ways)]
        for way in order:
            way.report(second + S, measured=k >= warmup)
    return {name: {'report_ms': way.report_ms, 'refreshed': way.refreshed}
            for name, way in zip(names, ways, strict=True)}


def main() -> None:
    """Run every case and print each way's report time, its share of a core and ratios."""
    parser = benchmark_parser(__doc__)
    parser.add_argument('--cases', default=','.join(CASES),
                        help=f'comma-separated cases (default {",".join(CASES)})')
    parser.add_argument('--topics', type=int, default=1000, help='slow topics (default 1000)')
    parser.add_argument('--fast-hz', type=int, default=1000,
                        help='rate of the fast topic [Hz] (default 1000)')
    parser.add_argument('--warmup', type=int, default=30, help='reports before measuring')
    parser.add_argument('--reports', type=int, default=30, help='reports measured')
    args = parse_benchmark_args(parser)
    ros_init()
    import rclpy
    from rclpy.node import Node

    node = Node('bench_report')
    results: dict[str, Any] = {}
    try:
        print(f'# One report, side by side ({environment_line()})')
        rows = []
        for case in args.cases.split(','):
            result = results[case] = run_case(node, case, args.topics, args.fast_hz,
                                               args.warmup, args.reports)
            base = result['afresh']['report_ms']
            for name, figures in result.items():
                ms = figures['report_ms']
                ratio = [a / b for a, b in zip(ms, base, strict=True)]
                rows.append([case, name, fmt_spread(ms, 2) + ' ms',
                             f'{statistics.median(ms) / REPORT_PERIOD_MS * 100:.2f} %',
                             fmt_spread(ratio, 2),
                             f'{statistics.median(figures["refreshed"]):.0f}'])
        print_table(['case', 'way', 'report: median (min–max)', 'of a core at 1 s',
                     'x afresh (same report)', 'refreshed'], rows)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    write_json(args.json, results)


if __name__ == '__main__':
    main()
