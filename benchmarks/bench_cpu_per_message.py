#!/usr/bin/env python3
"""CPU per received message: the monitor next to a bare raw subscriber and a deserializing one.

A publisher process (pinned to CPU 0) sends ``std_msgs/Header`` continuously; one subscriber
process at a time (pinned to CPU 1) listens, and after a warm-up measures its own CPU time
(getrusage: user + system, every thread, DDS included) over a window, divided by the messages
it got in that window. The subscribers:

- ``raw``: a raw subscription on rclpy's stock SingleThreadedExecutor whose callback only
  counts: the floor, what ``ros2 topic hz`` pays per message;
- ``deserializing``: the same with deserialized messages (``ros2 topic hz --filter``);
- ``monitor``: the MonitorNode as shipped (batched takes every 50 ms, stats every 1 s);
- ``monitor, stats 60 s``: the same with the stats timer out of the window (its cost);
- ``monitor, callbacks``: ``take_period_s`` 0, one executor callback per message.

Cases: 1 topic at 1 kHz; 20 topics sharing 1 kHz; 1 topic at the highest rate the floor
sustains (``--high-rate``, default: 80 % of a CPU at the floor's cost per message measured in
the first case, checked against the rate it really received). The roles take turns inside
each repetition, so every ratio compares figures measured side by side.

    python benchmarks/bench_cpu_per_message.py              # 3 repetitions, about 4 minutes
    python benchmarks/bench_cpu_per_message.py --reps 5 --measure 10
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
    counting_subscriptions,
    cpu_s,
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
SUBSCRIBER_CPU = 1
TOPIC_PREFIX = '/bench_cpu/t'
MATCH_TIMEOUT_S = 20.0

ROLES: dict[str, dict[str, Any]] = {
    'raw': {'kind': 'raw'},
    'deserializing': {'kind': 'deserializing'},
    'monitor': {'kind': 'monitor', 'params': {}},
    'monitor, stats 60 s': {'kind': 'monitor', 'params': {'stats_period_s': 60.0}},
    'monitor, callbacks': {'kind': 'monitor', 'params': {'take_period_s': 0.0}},
}


# -- children -------------------------------------------------------------------------------

def _qos() -> Any:
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


def run_publisher(options: dict[str, Any]) -> None:
    """Publish round-robin on the topics at the total rate until SIGINT; report what was sent."""
    import rclpy
    from rclpy.node import Node
    from std_msgs.msg import Header

    pin(options.get('cpu'))
    stop = stop_event()
    ros_init()
    node = Node('bench_cpu_publisher')
    publishers = [node.create_publisher(Header, f'{TOPIC_PREFIX}{i}', _qos())
                  for i in range(options['topics'])]
    msg = Header(frame_id='bench')
    period_ns = round(1e9 / options['rate_hz'])
    sent = 0
    first = next_ns = time.monotonic_ns()
    count = len(publishers)
    while not stop.is_set():
        now = time.monotonic_ns()
        if now < next_ns:
            time.sleep((next_ns - now) / 1e9)
            continue
        stamp = time.time_ns()
        msg.stamp.sec, msg.stamp.nanosec = divmod(stamp, 1_000_000_000)
        publishers[sent % count].publish(msg)
        sent += 1
        next_ns += period_ns
    elapsed = (time.monotonic_ns() - first) / 1e9
    emit({'sent': sent, 'achieved_hz': sent / elapsed if elapsed > 0 else math.nan})
    node.destroy_node()
    rclpy.try_shutdown()


def run_subscriber(options: dict[str, Any]) -> None:
    """Listen as one role; after the warm-up measure CPU per message over the window."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from std_msgs.msg import Header

    pin(options.get('cpu'))
    ros_init()
    topics = [f'{TOPIC_PREFIX}{i}' for i in range(options['topics'])]
    role = ROLES[options['role']]
    executor = SingleThreadedExecutor()
    counter = [0]

    if role['kind'] == 'monitor':
        from ros2_deadline_monitor.live.monitor_node import MonitorNode

        values = monitor_topic_values(topics, options['rate_hz'] / len(topics), **role['params'])
        node = MonitorNode(parameter_overrides=monitor_parameters(values))

        def matched() -> bool:
            return all(m.writers >= 1 for m in node.topic_monitors.values())

        def count() -> int:
            return monitor_totals(node)['messages']
    else:
        node = Node('bench_cpu_subscriber')
        matched = counting_subscriptions(node, Header, topics, _qos(), counter,
                                         raw=role['kind'] == 'raw')

        def count() -> int:
            return counter[0]

    executor.add_node(node)

    def spin() -> None:
        executor.spin_once(timeout_sec=0.1)

    wait_until(matched, MATCH_TIMEOUT_S, 'the publisher', spin)
    end_warmup = time.monotonic() + options['warmup_s']
    while time.monotonic() < end_warmup:
        spin()
    n0, c0, t0 = count(), cpu_s(), time.monotonic()
    end = t0 + options['measure_s']
    while time.monotonic() < end:
        spin()
    n1, c1, t1 = count(), cpu_s(), time.monotonic()
    received = n1 - n0
    emit({'received': received, 'cpu_s': c1 - c0, 'window_s': t1 - t0,
          'cpu_per_msg_us': (c1 - c0) / received * 1e6 if received else math.nan,
          'rate_hz': received / (t1 - t0), 'cpu_share': (c1 - c0) / (t1 - t0)})
    node.destroy_node()
    rclpy.try_shutdown()


# -- parent ---------------------------------------------------------------------------------

def run_case(args: argparse.Namespace, topics: int, rate_hz: float,
             roles: list[str]) -> dict[str, dict[str, Any]]:
    """One publisher, the roles in turn; return each role's result and the publisher's."""
    publisher = Child(__file__, 'publisher', {'topics': topics, 'rate_hz': rate_hz,
                                              'cpu': PUBLISHER_CPU})
    results: dict[str, dict[str, Any]] = {}
    try:
        for role in roles:
            sub = Child(__file__, 'subscriber', {
                'role': role, 'topics': topics, 'rate_hz': rate_hz, 'cpu': SUBSCRIBER_CPU,
                'warmup_s': args.warmup, 'measure_s': args.measure})
            results[role] = sub.wait_line(MATCH_TIMEOUT_S + args.warmup + args.measure + 30)
        results['publisher'] = publisher.stop()
    finally:
        publisher.kill()
    return results


def summarize(title: str, reps: list[dict[str, dict[str, Any]]], roles: list[str]) -> None:
    """Print one case's table: CPU per message, ratio to the floor, rate and CPU share."""
    print(f'\n### {title}')
    achieved = [r['publisher']['achieved_hz'] for r in reps]
    print(f'publisher achieved {fmt_spread(achieved, 0)} Hz over {len(reps)} repetitions '
          '(median (min–max))\n')
    rows = []
    for role in roles:
        cpu = [r[role]['cpu_per_msg_us'] for r in reps]
        ratio = [r[role]['cpu_per_msg_us'] / r['raw']['cpu_per_msg_us'] for r in reps]
        rate = [r[role]['rate_hz'] for r in reps]
        share = [r[role]['cpu_share'] for r in reps]
        rows.append([role, fmt_spread(cpu, 1), fmt_spread(ratio, 3),
                     fmt_spread(rate, 0), fmt_spread(share, 1, 100)])
    print_table(['subscriber', 'CPU per message [µs]', 'ratio to raw', 'received [msg/s]',
                 'CPU [% of a core]'], rows)


def main(argv: list[str] | None = None) -> int:
    """Run every case ``--reps`` times and print the tables."""
    parser = benchmark_parser(__doc__)
    parser.add_argument('--reps', type=int, default=3, help='repetitions (default 3)')
    parser.add_argument('--warmup', type=float, default=1.0, help='warm-up [s] (default 1)')
    parser.add_argument('--measure', type=float, default=3.0,
                        help='measurement window [s] (default 3)')
    parser.add_argument('--rate', type=float, default=1000.0, help='base rate [Hz]')
    parser.add_argument('--high-rate', type=float, default=0.0,
                        help='rate of the high-rate case [Hz]; 0 = from the floor (default)')
    args = parse_benchmark_args(parser, argv)
    if args.child:
        (run_publisher if args.child == 'publisher' else run_subscriber)(args.options)
        return 0

    print(f'# CPU per received message ({environment_line()})')
    one_roles = list(ROLES)
    many_roles = ['raw', 'deserializing', 'monitor', 'monitor, callbacks']
    high_roles = ['raw', 'deserializing', 'monitor']
    one, many, high = [], [], []
    high_rate = args.high_rate
    for rep in range(args.reps):
        one.append(run_case(args, 1, args.rate, one_roles))
        if not high_rate:
            floor_us = one[0]['raw']['cpu_per_msg_us']
            high_rate = max(args.rate, 500 * math.floor(0.8e6 / floor_us / 500))
        many.append(run_case(args, 20, args.rate, many_roles))
        high.append(run_case(args, 1, high_rate, high_roles))
        print(f'repetition {rep + 1}/{args.reps} done', file=sys.stderr, flush=True)
    summarize(f'1 topic at {args.rate:g} Hz', one, one_roles)
    summarize(f'20 topics sharing {args.rate:g} Hz', many, many_roles)
    summarize(f'1 topic at {high_rate:g} Hz (the highest rate the floor sustains: 80 % of a '
              'core)', high, high_roles)
    stats = [r['monitor']['cpu_per_msg_us'] / r['monitor, stats 60 s']['cpu_per_msg_us']
             for r in one]
    print(f'\nstats timer every 1 s vs out of the window: CPU per message ratio '
          f'{fmt_spread(stats, 3)}')
    write_json(args.json, {'one_topic': one, 'twenty_topics': many, 'high_rate': high,
                           'high_rate_hz': high_rate}, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
