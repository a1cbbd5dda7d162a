#!/usr/bin/env python3
"""Large nested messages: the monitor receives what a bare raw subscriber receives.

A publisher process pinned to CPU 0 sends ``geometry_msgs/PoseArray`` at 30 Hz with 2,500
poses (about 140 KB, 7,500 nested message instances) and with 10,000 poses. Three listeners
run together, each in its own process, and the publisher starts only once all three matched:

- ``raw``: a raw subscription on the stock executor that only counts (``ros2 topic hz``);
- ``deserializing``: the same, deserializing every message (``ros2 topic hz --filter``);
- ``monitor``: the MonitorNode as shipped (batched takes), its window covering the whole run.

Both plain subscribers use the sensor-data QoS ``ros2 topic hz`` uses (best effort, depth 5);
the monitor picks its own from the publisher (reliable when the publisher is). Printed per
size: received / sent of each listener, the monitor's lost count against sent − received,
and the rate the monitor reports against the publisher's own achieved rate.

    python benchmarks/bench_large_messages.py            # 3 repetitions of 10 s per size
    python benchmarks/bench_large_messages.py --reps 5 --duration 30 --poses 2500 10000 20000
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

from benchlib import (
    benchmark_parser,
    Child,
    emit,
    environment_line,
    fmt_spread,
    monitor_parameters,
    monitor_topic_values,
    monitor_totals,
    parse_benchmark_args,
    pin,
    print_table,
    ros_init,
    stop_event,
    wait_until,
    write_json,
)

PUBLISHER_CPU = 0
TOPIC = '/bench_large/poses'
RATE_HZ = 30.0
MATCH_TIMEOUT_S = 30.0
LISTENERS = ('raw', 'deserializing', 'monitor')


def run_publisher(options: dict[str, Any]) -> None:
    """Wait for the listeners, publish for the duration, report sent and achieved rate."""
    from geometry_msgs.msg import Pose, PoseArray
    import rclpy
    from rclpy.node import Node
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    pin(PUBLISHER_CPU)
    ros_init()
    node = Node('bench_large_publisher')
    reliability = (ReliabilityPolicy.RELIABLE if options['reliable']
                   else ReliabilityPolicy.BEST_EFFORT)
    publisher = node.create_publisher(PoseArray, TOPIC,
                                      QoSProfile(depth=10, reliability=reliability))
    msg = PoseArray()
    msg.header.frame_id = 'bench'
    msg.poses = [Pose() for _ in range(options['poses'])]
    for i, pose in enumerate(msg.poses):
        pose.position.x = float(i)
        pose.orientation.w = 1.0
    wait_until(lambda: publisher.get_subscription_count() >= options['listeners'],
               MATCH_TIMEOUT_S, 'the listeners')
    time.sleep(0.5)  # let every listener finish matching (both directions)
    period_ns = round(1e9 / RATE_HZ)
    end_ns = time.monotonic_ns() + round(options['duration_s'] * 1e9)
    publish_ns = []
    sent_times = []
    next_ns = time.monotonic_ns()
    while next_ns < end_ns:
        now = time.monotonic_ns()
        if now < next_ns:
            time.sleep((next_ns - now) / 1e9)
        stamp = time.time_ns()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        t0 = time.perf_counter_ns()
        publisher.publish(msg)
        publish_ns.append(time.perf_counter_ns() - t0)
        sent_times.append(time.monotonic_ns())
        next_ns = max(next_ns + period_ns, time.monotonic_ns())
    sent = len(sent_times)
    span = (sent_times[-1] - sent_times[0]) / 1e9 if sent > 1 else math.nan
    publish_ns.sort()
    emit({'sent': sent, 'achieved_hz': (sent - 1) / span if sent > 1 else math.nan,
          'publish_median_ms': publish_ns[len(publish_ns) // 2] / 1e6})
    time.sleep(1.0)  # reliable data still in flight
    node.destroy_node()
    rclpy.try_shutdown()


def run_listener(options: dict[str, Any]) -> None:
    """Listen until SIGINT; report what was received (and the monitor's own figures)."""
    from geometry_msgs.msg import PoseArray
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data

    stop = stop_event()
    ros_init()
    executor = SingleThreadedExecutor()
    kind = options['kind']
    if kind == 'monitor':
        from ros2_deadline_monitor.live.monitor_node import MonitorNode

        node = MonitorNode(parameter_overrides=monitor_parameters(
            monitor_topic_values([TOPIC], window_s=600.0, window_cycles=100_000)))
    else:
        node = Node(f'bench_large_{kind}')
        counter = [0]

        def on_message(msg: Any) -> None:
            counter[0] += 1

        node.create_subscription(PoseArray, TOPIC, on_message, qos_profile_sensor_data,
                                 raw=kind == 'raw')
    executor.add_node(node)
    while not stop.is_set():
        executor.spin_once(timeout_sec=0.1)
    if kind == 'monitor':
        totals = monitor_totals(node)
        report = node.snapshot().topics[0].report
        emit({'received': totals['messages'], 'lost': totals['lost'],
              'overflows': totals['overflows'], 'rate_hz': report.rate_wall_hz,
              'depth': node.topic_monitors['t0'].depth})
    else:
        emit({'received': counter[0]})
    node.destroy_node()
    rclpy.try_shutdown()


def run_once(poses: int, args: argparse.Namespace) -> dict[str, Any]:
    """One run of the three listeners against one publisher."""
    listeners = {kind: Child(__file__, 'listener', {'kind': kind}) for kind in LISTENERS}
    try:
        publisher = Child(__file__, 'publisher', {
            'poses': poses, 'duration_s': args.duration, 'listeners': len(LISTENERS),
            'reliable': not args.best_effort})
        result = {'publisher': publisher.wait_line(MATCH_TIMEOUT_S + args.duration + 60)}
        time.sleep(1.0)  # the last messages reach everyone
        for kind, child in listeners.items():
            result[kind] = child.stop(timeout=60)
    finally:
        for child in listeners.values():
            child.kill()
    return result


def main(argv: list[str] | None = None) -> int:
    """Run every size ``--reps`` times and print the tables."""
    parser = benchmark_parser(__doc__)
    parser.add_argument('--reps', type=int, default=3, help='repetitions (default 3)')
    parser.add_argument('--duration', type=float, default=10.0,
                        help='publishing time per run [s] (default 10)')
    parser.add_argument('--poses', type=int, nargs='+', default=[2500, 10000],
                        help='poses per message (default 2500 10000)')
    parser.add_argument('--best-effort', action='store_true',
                        help='best effort publisher (default: reliable, the ROS default)')
    args = parse_benchmark_args(parser, argv)
    if args.child:
        (run_publisher if args.child == 'publisher' else run_listener)(args.options)
        return 0

    print(f'# PoseArray at {RATE_HZ:g} Hz, publisher pinned to CPU {PUBLISHER_CPU} '
          f'({environment_line()})')
    results: dict[int, list[dict[str, Any]]] = {n: [] for n in args.poses}
    for rep in range(args.reps):
        for poses in args.poses:
            results[poses].append(run_once(poses, args))
        print(f'repetition {rep + 1}/{args.reps} done', file=sys.stderr, flush=True)

    for poses, runs in results.items():
        print(f'\n### {poses} poses ({3 * poses} nested instances)')
        rows = []
        for i, run in enumerate(runs):
            pub, mon = run['publisher'], run['monitor']
            sent = pub['sent']
            rows.append([
                str(i + 1), str(sent), f'{pub["achieved_hz"]:.3f}',
                f'{pub["publish_median_ms"]:.1f}',
                f'{run["raw"]["received"]}/{sent}',
                f'{run["deserializing"]["received"]}/{sent}',
                f'{mon["received"]}/{sent}', str(mon['lost']), str(sent - mon['received']),
                f'{mon["rate_hz"]:.3f}',
                f'{100 * (mon["rate_hz"] / pub["achieved_hz"] - 1):+.2f}',
            ])
        print_table(['rep', 'sent', 'pub rate [Hz]', 'publish() [ms]', 'raw', 'deserializing',
                     'monitor', 'monitor lost', 'sent − received', 'monitor rate [Hz]',
                     'rate error [%]'], rows)
        share = {kind: [r[kind]['received'] / r['publisher']['sent'] for r in runs]
                 for kind in LISTENERS}
        print('\nreceived / sent, median (min–max): ' + ', '.join(
            f'{kind} {fmt_spread(values, 3)}' for kind, values in share.items()))
    write_json(args.json, {str(k): v for k, v in results.items()}, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
