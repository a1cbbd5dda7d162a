"""Soak run: 20 topics at 200 Hz plus /clock at 1 kHz through the installed ``monitor``.

Three processes: the ``monitor`` (installed executable), a publisher process (this script
with ``--publisher``: one node, 20 ``std_msgs/Header`` publishers and a /clock publisher on
a monotonic schedule, counting what it published), and this script, which listens to
``/deadline_monitor/stats`` and samples the monitor's RSS from ``/proc``.

It reports, after ``--minutes`` of publishing:

- memory: the monitor's RSS at the end of the warm-up and at the end, growth in MB and %;
- messages: per topic, published versus counted by the monitor (``messages_total`` of the
  final report), and the monitor's own loss figure (publication sequence gaps);
- the stats timer: intervals between consecutive ``MonitorStats`` header stamps against
  ``stats_period_s``, and the share within 5 %.

Usage (with the build sourced, a ROS_DOMAIN_ID of its own)::

    python benchmarks/soak.py                 # 2 minutes
    python benchmarks/soak.py --minutes 10 --json soak.json
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from ros2_deadline_monitor.tools.demo import executable_command, node_args

NS_PER_S = 1_000_000_000
STATS_TOPIC = '/deadline_monitor/stats'


def topic_names(count: int) -> list[str]:
    """Return the soak topics' identifiers (``t00``, ``t01``, ...); topic ``/soak/<id>``."""
    return [f't{i:02d}' for i in range(count)]


def build_parser() -> argparse.ArgumentParser:
    """Return the command line parser."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--minutes', type=float, default=2.0,
                        help='publishing time (default: 2)')
    parser.add_argument('--topics', type=int, default=20)
    parser.add_argument('--rate-hz', type=float, default=200.0)
    parser.add_argument('--clock-hz', type=float, default=1000.0)
    parser.add_argument('--warmup-s', type=float,
                        help='RSS growth is measured from the end of the warm-up (default: '
                        '150 s, long enough for the bounded rings to fill (/clock samples: '
                        '131 s at 1 kHz), or half the run when shorter than 5 minutes)')
    parser.add_argument('--stats-period-s', type=float, default=1.0)
    parser.add_argument('--json', type=Path, help='write the figures to this file')
    parser.add_argument('--publisher', type=Path, help=argparse.SUPPRESS)
    return parser


# -- the publisher process -----------------------------------------------------------------


def run_publisher(args: argparse.Namespace) -> int:
    """Publish until SIGINT, then write ``{topic: count}`` to ``args.publisher``."""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rclpy.signals import SignalHandlerOptions
    from rosgraph_msgs.msg import Clock
    from std_msgs.msg import Header

    running = threading.Event()
    running.set()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: running.clear())
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('soak_publisher')
    ids = topic_names(args.topics)
    publishers = [node.create_publisher(Header, f'/soak/{i}', QoSProfile(depth=100))
                  for i in ids]
    clock = node.create_publisher(
        Clock, '/clock', QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT))
    counts = dict.fromkeys(ids, 0)
    while running.is_set() and not all(p.get_subscription_count() for p in publishers):
        time.sleep(0.05)  # the monitor subscribes once it has seen the publishers
    clock_step = round(NS_PER_S / args.clock_hz)
    topic_step = round(NS_PER_S / args.rate_hz)
    start = time.monotonic_ns()
    end = start + round(args.minutes * 60 * NS_PER_S)
    next_clock = next_topics = start
    clock_msg, header = Clock(), Header()
    sim_ns = NS_PER_S
    while running.is_set():
        now = time.monotonic_ns()
        if now >= end:
            break
        if now >= next_clock:
            clock_msg.clock.sec, clock_msg.clock.nanosec = divmod(sim_ns, NS_PER_S)
            clock.publish(clock_msg)
            sim_ns += clock_step
            next_clock += clock_step
        if now >= next_topics:
            header.stamp.sec, header.stamp.nanosec = divmod(time.time_ns(), NS_PER_S)
            for topic_id, publisher in zip(ids, publishers, strict=True):
                publisher.publish(header)
                counts[topic_id] += 1
            next_topics += topic_step
        wait = min(next_clock, next_topics) - time.monotonic_ns()
        if wait > 200_000:
            time.sleep((wait - 100_000) / 1e9)
    for publisher in publishers:
        publisher.wait_for_all_acked(rclpy.duration.Duration(seconds=5))
    args.publisher.write_text(json.dumps(counts))
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


# -- the soak ------------------------------------------------------------------------------


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f'/proc/{pid}/status').read_text().splitlines():
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float('nan')


class Listener:
    """Keeps the monitor's reports and its RSS after each."""

    def __init__(self, monitor_pid: int) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile

        from ros2_deadline_monitor.msg import MonitorStats

        self.pid = monitor_pid
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('soak_listener', context=self.context)
        self.lock = threading.Lock()
        self.reports: list[tuple[int, dict[str, int], dict[str, int], float, float]] = []
        self.node.create_subscription(MonitorStats, STATS_TOPIC, self._on_stats,
                                      QoSProfile(depth=100))
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _on_stats(self, msg: Any) -> None:
        stamp = msg.header.stamp.sec * NS_PER_S + msg.header.stamp.nanosec
        counted = {t.name: t.messages_total for t in msg.topics}
        lost = {t.name: t.messages_lost_total for t in msg.topics}
        with self.lock:
            self.reports.append((stamp, counted, lost, _rss_mb(self.pid),
                                 msg.host.monitor_cpu_percent))

    def latest(self) -> tuple[int, dict[str, int], dict[str, int], float, float] | None:
        """Return the newest report's figures, or None."""
        with self.lock:
            return self.reports[-1] if self.reports else None

    def close(self) -> None:
        """Stop listening."""
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)




def run_soak(args: argparse.Namespace) -> dict[str, Any]:
    """Run the three processes and return the figures."""
    ids = topic_names(args.topics)
    params: dict[str, Any] = {'use_sim_time': True, 'stats_period_s': args.stats_period_s,
                              'topics': ids}
    for topic_id in ids:
        params[f'topic.{topic_id}.name'] = f'/soak/{topic_id}'
        params[f'topic.{topic_id}.period_ms'] = 1000.0 / args.rate_hz
        params[f'topic.{topic_id}.clock'] = 'wall'
    with tempfile.TemporaryDirectory() as tmp:
        counts_path = Path(tmp) / 'counts.json'
        monitor = subprocess.Popen(executable_command('monitor') + node_args(params))
        listener = Listener(monitor.pid)
        publisher = subprocess.Popen([sys.executable, __file__, '--publisher', str(counts_path),
                                      '--minutes', str(args.minutes), '--topics',
                                      str(args.topics), '--rate-hz', str(args.rate_hz),
                                      '--clock-hz', str(args.clock_hz)])
        try:
            started = time.monotonic()
            warm_rss = None
            total_s = args.minutes * 60 + 120
            while publisher.poll() is None and time.monotonic() - started < total_s:
                time.sleep(1.0)
                latest = listener.latest()
                if warm_rss is None and latest and sum(latest[1].values()) > 0:
                    warm_start = time.monotonic()
                    warm_rss = -1.0
                if warm_rss == -1.0 and time.monotonic() - warm_start >= args.warmup_s:
                    warm_rss = _rss_mb(monitor.pid)
                    warm_index = len(listener.reports)
            publisher.wait(timeout=60)
            published = json.loads(counts_path.read_text())
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                latest = listener.latest()
                if latest and all(latest[1].get(i, 0) >= published[i] for i in ids):
                    break
                time.sleep(0.5)
            end_rss = _rss_mb(monitor.pid)
        finally:
            if monitor.poll() is None:
                monitor.send_signal(signal.SIGINT)
            exit_code = monitor.wait(timeout=30)
            if publisher.poll() is None:
                publisher.kill()
            listener.close()
    reports = listener.reports
    stamps = [r[0] for r in reports]
    period_ns = args.stats_period_s * NS_PER_S
    # The last report is the final one at shutdown, off the timer's schedule.
    intervals = [(b - a) / period_ns for a, b in zip(stamps[:-2], stamps[1:-1], strict=True)]
    within = [abs(x - 1.0) <= 0.05 for x in intervals]
    _, counted, lost, _, _ = reports[-1]
    rss = [r[3] for r in reports[warm_index:]]
    cpu = [r[4] for r in reports[warm_index:] if r[4] == r[4]]
    return {
        'minutes': args.minutes, 'topics': args.topics, 'rate_hz': args.rate_hz,
        'clock_hz': args.clock_hz, 'monitor_exit_code': exit_code,
        'published_total': sum(published.values()),
        'counted_total': sum(counted.get(i, 0) for i in ids),
        'missing_per_topic': {i: published[i] - counted.get(i, 0) for i in ids
                              if published[i] != counted.get(i, 0)},
        'monitor_lost_total': sum(lost.values()),
        'rss_after_warmup_mb': warm_rss, 'rss_end_mb': end_rss,
        'rss_growth_mb': end_rss - warm_rss,
        'rss_growth_percent': 100 * (end_rss - warm_rss) / warm_rss,
        'rss_max_mb': max(rss) if rss else float('nan'),
        'monitor_cpu_percent_mean': sum(cpu) / len(cpu) if cpu else float('nan'),
        'stats_reports': len(reports),
        'stats_interval_ratio_min': min(intervals), 'stats_interval_ratio_max': max(intervals),
        'stats_intervals_within_5_percent': f'{sum(within)}/{len(within)}',
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the soak (or, with ``--publisher``, be its publisher process)."""
    args = build_parser().parse_args(argv)
    if args.publisher is not None:
        return run_publisher(args)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    if args.warmup_s is None:
        args.warmup_s = 150.0 if args.minutes >= 5 else args.minutes * 30
    figures = run_soak(args)
    for key, value in figures.items():
        print(f'{key:34} {value}')
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    ok = (not figures['missing_per_topic'] and figures['monitor_lost_total'] == 0
          and figures['stats_intervals_within_5_percent'].split('/')[0]
          == figures['stats_intervals_within_5_percent'].split('/')[1])
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
