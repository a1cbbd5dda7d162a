#!/usr/bin/env python3
"""Memory of the monitor over time: RSS of the ``monitor`` executable at 1 kHz on 5 topics.

A publisher process (pinned to CPU 0) sends ``std_msgs/Header`` at 1 kHz on each of 5
topics; the installed ``monitor`` executable watches them with its shipped defaults (batched
takes, 10 s / 10,000-cycle windows, stats every second). Its RSS is read from /proc every few
seconds. After the warm-up (the windows fill up, DDS pools settle) the RSS should stay flat:
printed are the RSS at the end of the warm-up and at the end, the growth, the slope of a
least-squares line through the post-warm-up samples, and the monitor's CPU share.

    python benchmarks/bench_memory.py                  # 2 minutes
    python benchmarks/bench_memory.py --minutes 10     # the full run
"""

from __future__ import annotations

from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchlib import (
    benchmark_parser,
    Child,
    cpu_ticks,
    emit,
    environment_line,
    parse_benchmark_args,
    pin,
    print_table,
    ros_init,
    rss_kib,
    stop_event,
    write_json,
)

PUBLISHER_CPU = 0
TOPICS = 5
TOPIC_PREFIX = '/bench_mem/t'
PACKAGE = 'ros2_deadline_monitor'


def run_publisher(options: dict[str, Any]) -> None:
    """Publish on every topic at the rate until SIGINT; report what was sent."""
    import rclpy
    from rclpy.node import Node
    from rclpy.qos import QoSProfile
    from std_msgs.msg import Header

    pin(PUBLISHER_CPU)
    stop = stop_event()
    ros_init()
    node = Node('bench_mem_publisher')
    publishers = [node.create_publisher(Header, f'{TOPIC_PREFIX}{i}', QoSProfile(depth=100))
                  for i in range(TOPICS)]
    msg = Header(frame_id='bench')
    period_ns = round(1e9 / options['rate_hz'])
    rounds = 0
    first = next_ns = time.monotonic_ns()
    while not stop.is_set():
        now = time.monotonic_ns()
        if now < next_ns:
            time.sleep((next_ns - now) / 1e9)
            continue
        msg.stamp.sec, msg.stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
        for publisher in publishers:
            publisher.publish(msg)
        rounds += 1
        next_ns += period_ns
    elapsed = (time.monotonic_ns() - first) / 1e9
    emit({'sent_per_topic': rounds, 'achieved_hz': rounds / elapsed})
    node.destroy_node()
    rclpy.try_shutdown()


def monitor_command(rate_hz: float) -> list[str]:
    """Return the command line of the installed monitor watching the benchmark topics."""
    from ament_index_python.packages import get_package_prefix

    executable = Path(get_package_prefix(PACKAGE)) / 'lib' / PACKAGE / 'monitor'
    ids = [f't{i}' for i in range(TOPICS)]
    args = [str(executable), '--ros-args', '-p', f'topics:=[{",".join(ids)}]']
    for i in range(TOPICS):
        args += ['-p', f'topic.t{i}.name:={TOPIC_PREFIX}{i}',
                 '-p', f'topic.t{i}.rate_hz:={rate_hz}']
    return args


def slope_kib_per_min(times_s: list[float], values: list[int]) -> float:
    """Least-squares slope of ``values`` over ``times_s``, per minute."""
    n = len(times_s)
    if n < 2:
        return float('nan')
    mean_t, mean_v = sum(times_s) / n, sum(values) / n
    var = sum((t - mean_t) ** 2 for t in times_s)
    cov = sum((t - mean_t) * (v - mean_v) for t, v in zip(times_s, values, strict=True))
    return cov / var * 60 if var else float('nan')


def main(argv: list[str] | None = None) -> int:
    """Run the monitor for ``--minutes`` and print its RSS over time."""
    import os

    parser = benchmark_parser(__doc__)
    parser.add_argument('--minutes', type=float, default=2.0, help='run time (default 2)')
    parser.add_argument('--warmup', type=float, default=30.0,
                        help='warm-up excluded from the growth [s] (default 30)')
    parser.add_argument('--sample', type=float, default=5.0,
                        help='RSS sampling period [s] (default 5)')
    parser.add_argument('--rate', type=float, default=1000.0, help='rate per topic [Hz]')
    args = parse_benchmark_args(parser, argv)
    if args.child:
        run_publisher(args.options)
        return 0

    print(f'# Monitor RSS, {TOPICS} topics at {args.rate:g} Hz each, {args.minutes:g} min '
          f'({environment_line()})', flush=True)
    tick_s = 1 / os.sysconf('SC_CLK_TCK')
    publisher = Child(__file__, 'publisher', {'rate_hz': args.rate})
    log = tempfile.NamedTemporaryFile('w+', suffix='.log', prefix='bench_memory_')  # noqa: SIM115
    monitor = subprocess.Popen(monitor_command(args.rate), stdout=log, stderr=subprocess.STDOUT)
    samples: list[tuple[float, int]] = []
    try:
        t0 = time.monotonic()
        ticks0 = cpu_ticks(monitor.pid)
        end = t0 + 60 * args.minutes
        while time.monotonic() < end and monitor.poll() is None:
            samples.append((time.monotonic() - t0, rss_kib(monitor.pid)))
            time.sleep(min(args.sample, max(0.0, end - time.monotonic())))
        samples.append((time.monotonic() - t0, rss_kib(monitor.pid)))
        cpu_share = (cpu_ticks(monitor.pid) - ticks0) * tick_s / (time.monotonic() - t0)
        monitor.send_signal(signal.SIGINT)
        monitor.wait(timeout=30)
        sent = publisher.stop()
    finally:
        if monitor.poll() is None:
            monitor.kill()
        publisher.kill()
    log.seek(0)
    summary = [line for line in log.read().splitlines()
               if line.startswith(('topic ', TOPIC_PREFIX))]

    after = [(t, v) for t, v in samples if t >= args.warmup]
    if not after:
        after = samples[-2:]
    start_kib, end_kib = after[0][1], samples[-1][1]
    slope = slope_kib_per_min([t for t, _ in after], [v for _, v in after])
    print('\nRSS samples [MiB] (time s: RSS): ' + ', '.join(
        f'{t:.0f}: {v / 1024:.1f}' for t, v in samples[:: max(1, len(samples) // 24)]))
    print()
    print_table(['figure', 'value'], [
        ['RSS at start', f'{samples[0][1] / 1024:.1f} MiB'],
        [f'RSS after the {args.warmup:g} s warm-up', f'{start_kib / 1024:.1f} MiB'],
        ['RSS at the end', f'{end_kib / 1024:.1f} MiB'],
        ['RSS max after warm-up', f'{max(v for _, v in after) / 1024:.1f} MiB'],
        ['growth after warm-up', f'{(end_kib - start_kib) / 1024:+.2f} MiB'],
        ['slope after warm-up', f'{slope / 1024:+.3f} MiB/min'],
        ['monitor CPU', f'{100 * cpu_share:.1f} % of a core'],
        ['publisher', f'{sent["sent_per_topic"]} rounds at {sent["achieved_hz"]:.1f} Hz'],
    ])
    if summary:
        print('\nmonitor final summary:\n' + '\n'.join(summary))
    write_json(args.json, {'samples': samples, 'publisher': sent, 'cpu_share': cpu_share})
    return 0


if __name__ == '__main__':
    sys.exit(main())
