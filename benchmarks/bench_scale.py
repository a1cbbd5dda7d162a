#!/usr/bin/env python3
"""Robot scale: the monitor with a thousand topics, its figures next to the targets.

Cases, each in fresh processes (publisher pinned to CPU 0, subscriber to CPU 1), measured in
one run so the ratios compare figures taken side by side on the same loaded machine:

- ``one topic``: 1 topic at 1 kHz, a bare raw subscriber (the floor, what ``ros2 topic hz``
  pays) and the monitor: CPU per message and their ratio (the one-topic figure);
- ``idle``: 1,000 configured topics that nobody publishes: CPU share and RSS;
- ``scale``: 1,000 topics at 1 Hz plus one at 1 kHz: CPU per message, and its ratio to the
  one-topic figure (``one topic`` runs again right after it; the ratio is to the mean of the
  two, as the VM's speed drifts over minutes);
- ``scale_raw``: the same 1,001 topics and traffic, a bare raw subscriber instead of the
  monitor: context for the scale case (no target). rclpy's executor rebuilds its wait set
  of every subscription at each wake-up, so a bare subscriber falls behind at this scale;
- ``scale_inputs``: the same, the monitor without its reports after the warm-up (periods
  learned; the take timer takes every queue, no snapshot, no output): context (no target),
  what its 1,001 readers and takes cost alone, the floor under the scale case that no
  report design goes below;
- ``scale_unbounded``: the scale case with ``max_steady_refreshes_per_s`` 0: every steady
  1 Hz topic refreshed every 10 s at its own pace, 100 refreshes a second, instead of every
  50 s within the default budget of 20 (context, no target: what the budget saves);
- ``side_by_side``: the scale case and the one-topic monitor at once, the one topic in the
  next ROS domain (``ROS_DOMAIN_ID`` + 1) so neither sees the other's topics; both measure
  over the same window once both are warm, so a slow phase of the VM slows both figures of
  the ratio (the target's) alike; a scale case run minutes apart from its one-topic figures
  moved from 1.03 to 1.30 x in one run of three sequential rounds;
- ``discovery``: ``all_topics`` (``monitor --all``) started first, then a process creates
  1,000 publishers (1 Hz): how long after its publisher was created each topic was
  subscribed (its first appearance to the monitor's reader), and CPU share once all run.

Targets (issue 13): idle at most 2 % of a core and 120 MB RSS; scale CPU per message at most
1.2x the one-topic figure; every topic subscribed within 5 s of appearing.

    python benchmarks/bench_scale.py                 # about 14 minutes
    python benchmarks/bench_scale.py --cases idle,discovery
    python benchmarks/bench_scale.py --cases side_by_side --rounds 5   # 5 ratios, 17 minutes
    python benchmarks/bench_scale.py --cases one,scale --rounds 3   # the 1 Hz case 3 times
    python benchmarks/bench_scale.py --topics 200 --scale-warmup 30 --measure 20

The scale cases warm up for 150 s by default (``--scale-warmup``): their steady state, the one
the target is about. Shorter, the 1 Hz topics are still learning their periods or taking their
first turns within the refresh budget, and they cost more.
    python benchmarks/bench_scale.py --param use_diagnostic_updater=false

A line above the table says which way the monitor published ``/diagnostics``: through
``diagnostic_updater`` (when installed, the default) or by itself.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import statistics
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
    main_thread_cpu_s,
    monitor_parameters,
    monitor_topic_values,
    parse_benchmark_args,
    pin,
    print_table,
    ros_init,
    rss_kib,
    say_ready,
    stop_event,
    wait_until,
    write_json,
)

PUBLISHER_CPU = 0
SUBSCRIBER_CPU = 1
PREFIX = '/bench_scale/t'
FAST_TOPIC = '/bench_scale/fast'
MATCH_TIMEOUT_S = 60.0
DOMAIN_IDS = 233
"""ROS domain ids are 0 to 232."""
TARGETS = {'idle_cpu_percent': 2.0, 'idle_rss_mb': 120.0, 'scale_ratio': 1.2,
           'discovery_s': 5.0}


def _qos() -> Any:
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


# -- children -------------------------------------------------------------------------------

def run_publisher(options: dict[str, Any]) -> None:
    """Publish ``slow`` topics at ``slow_hz`` (spread evenly) and ``fast`` topics at ``fast_hz``.

    Reports when each slow topic's publisher was created (system clock ns), so the monitor's
    discovery latency can be computed on the same host.
    """
    import rclpy
    from rclpy.node import Node
    from std_msgs.msg import Header

    pin(options.get('cpu'))
    stop = stop_event()
    ros_init()
    node = Node('bench_scale_publisher')
    created: list[int] = []
    slow = []
    for i in range(options['slow']):
        slow.append(node.create_publisher(Header, f'{PREFIX}{i}', _qos()))
        created.append(time.time_ns())
    fast = [node.create_publisher(Header, FAST_TOPIC, _qos()) for _ in range(options['fast'])]
    msg = Header(frame_id='bench')
    # One tick per fast message; the slow topics take turns, as many per tick as needed.
    tick_ns = round(1e9 / max(options['fast_hz'] if fast else 0, 1000.0))
    slow_per_tick = len(slow) * options['slow_hz'] * tick_ns / 1e9
    sent_fast = sent_slow = 0
    owed = 0.0
    next_ns = time.monotonic_ns()
    while not stop.is_set():
        now = time.monotonic_ns()
        if now < next_ns:
            time.sleep((next_ns - now) / 1e9)
            continue
        stamp = time.time_ns()
        msg.stamp.sec, msg.stamp.nanosec = divmod(stamp, 1_000_000_000)
        for publisher in fast:
            publisher.publish(msg)
            sent_fast += 1
        owed += slow_per_tick
        while slow and owed >= 1.0:
            slow[sent_slow % len(slow)].publish(msg)
            sent_slow += 1
            owed -= 1.0
        next_ns += tick_ns
    emit({'sent_fast': sent_fast, 'sent_slow': sent_slow, 'created_ns': created})
    node.destroy_node()
    rclpy.try_shutdown()


def run_subscriber(options: dict[str, Any]) -> None:
    """Listen as ``raw`` or ``monitor``; after the warm-up measure CPU and messages."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from std_msgs.msg import Header

    pin(options.get('cpu'))
    ros_init()
    executor = SingleThreadedExecutor()
    counter = [0]
    visits = [0]  # reader queues taken: each take calls into rcl until the queue is empty
    refreshes = [0]  # topics reported afresh (the others' snapshots stood)
    topics = options['topics']
    subscribed_ns: dict[str, int] = {}
    if options['role'] in ('monitor', 'inputs'):
        from ros2_deadline_monitor.analysis.session import Session, TopicState
        from ros2_deadline_monitor.live import subscriptions

        take = subscriptions.TopicMonitor.take

        def counting_take(self: Any) -> int:
            count = take(self)
            counter[0] += count
            visits[0] += 1
            return count

        subscriptions.TopicMonitor.take = counting_take  # count what the takes hand over
        refresh = Session._fresh_topic_snapshot

        def counting_refresh(self: Any, *args: Any) -> Any:
            refreshes[0] += 1
            return refresh(self, *args)

        Session._fresh_topic_snapshot = counting_refresh
        values = monitor_topic_values(topics) if topics else {}
        values.update(options.get('params', {}))
        from ros2_deadline_monitor.live.monitor_node import MonitorNode

        node = MonitorNode(parameter_overrides=monitor_parameters(values))
        expected = options['expect_topics']

        def matched() -> bool:
            now = time.time_ns()
            for monitor in node.topic_monitors.values():
                if monitor.state is TopicState.RECEIVING:
                    subscribed_ns.setdefault(monitor.config.topic, now)
            return len(subscribed_ns) >= expected
    else:
        node = Node('bench_scale_raw')
        matched = counting_subscriptions(node, Header, topics, _qos(), counter)

    executor.add_node(node)

    from ros2_deadline_monitor.live.stop_signals import SPIN_TIMEOUT_S

    def spin() -> None:  # as the monitor executable spins (a signal wakes it, no polling)
        executor.spin_once(timeout_sec=SPIN_TIMEOUT_S)

    ready_ns = time.time_ns()
    wait_until(matched, options['match_timeout_s'], 'the publishers', spin)
    end_warmup = time.monotonic() + options['warmup_s']
    while time.monotonic() < end_warmup:
        spin()
    if options.get('hold'):  # measured over the same window as another child (side by side)
        go = say_ready()
        while not go.is_set():
            spin()
    if options['role'] == 'inputs':  # periods learned (take strides set): the take timer only
        node.publish_stats = lambda final=False: node.clock_input.take()
    r0 = refreshes[0]
    n0, v0, c0, m0, t0 = counter[0], visits[0], cpu_s(), main_thread_cpu_s(), time.monotonic()
    end = t0 + options['measure_s']
    while time.monotonic() < end:
        spin()
    n1, v1, c1, m1, t1 = counter[0], visits[0], cpu_s(), main_thread_cpu_s(), time.monotonic()
    r1 = refreshes[0]
    received = n1 - n0
    diagnostics, strides, take_timer_ms = None, {}, None
    if options['role'] != 'raw':
        diagnostics = ('diagnostic_updater' if node._diagnostics.uses_updater
                       else 'direct')
        for monitor in node.topic_monitors.values():  # every how many take periods, how many
            stride = round(monitor.take_interval_ns / node.settings.take_period_ns)
            strides[stride] = strides.get(stride, 0) + 1
        if node._take_timer is not None:  # none with take_period_s 0 (callbacks)
            take_timer_ms = node._take_timer.timer_period_ns / 1e6
    emit({'received': received, 'cpu_s': c1 - c0, 'window_s': t1 - t0,
          'diagnostics': diagnostics, 'take_strides': strides, 'take_timer_ms': take_timer_ms,
          'cpu_per_msg_us': (c1 - c0) / received * 1e6 if received else math.nan,
          'rate_hz': received / (t1 - t0), 'cpu_percent': 100 * (c1 - c0) / (t1 - t0),
          'takes_per_s': (v1 - v0) / (t1 - t0), 'refreshes_per_s': (r1 - r0) / (t1 - t0),
          'main_thread_percent': 100 * (m1 - m0) / (t1 - t0),
          'rss_mb': rss_kib() * 1024 / 1e6, 'ready_ns': ready_ns,
          'subscribed_ns': subscribed_ns})
    node.destroy_node()
    rclpy.try_shutdown()


# -- parent ---------------------------------------------------------------------------------

def _subscriber(args: argparse.Namespace, role: str, topics: list[str], expect: int = 0,
                params: dict[str, Any] | None = None, before_s: float = 0.0,
                warmup_s: float | None = None, hold: bool = False,
                env: dict[str, str] | None = None) -> Child:
    """Start a subscriber child; ``before_s``: how long before its publishers start.

    ``hold``: after its warm-up it says it is ready and measures once sent SIGUSR1.
    """
    return Child(__file__, 'subscriber', {
        'role': role, 'topics': topics, 'cpu': SUBSCRIBER_CPU,
        'warmup_s': args.warmup if warmup_s is None else warmup_s,
        'measure_s': args.measure, 'expect_topics': expect,
        'match_timeout_s': MATCH_TIMEOUT_S + before_s, 'hold': hold,
        'params': {**args.param, **(params or {})}}, env)


def _parameter(text: str) -> tuple[str, Any]:
    """Parse ``--param NAME=VALUE``; the value as YAML types it (``false``, ``0.5``)."""
    import yaml

    name, sep, value = text.partition('=')
    if not sep or not name:
        raise argparse.ArgumentTypeError(f'expected NAME=VALUE, got {text!r}')
    return name, yaml.safe_load(value)


def _publisher(slow: int, slow_hz: float, fast: int, fast_hz: float,
               env: dict[str, str] | None = None) -> Child:
    return Child(__file__, 'publisher', {'slow': slow, 'slow_hz': slow_hz, 'fast': fast,
                                         'fast_hz': fast_hz, 'cpu': PUBLISHER_CPU}, env)


def _timeout(args: argparse.Namespace) -> float:
    return MATCH_TIMEOUT_S + max(args.warmup, args.scale_warmup) + args.measure + 60


def run_one_topic(args: argparse.Namespace) -> dict[str, Any]:
    """1 topic at 1 kHz: the raw floor and the monitor, one after the other."""
    publisher = _publisher(0, 0.0, 1, args.fast_hz)
    try:
        raw = _subscriber(args, 'raw', [FAST_TOPIC]).wait_line(_timeout(args))
        monitor = _subscriber(args, 'monitor', [FAST_TOPIC], expect=1).wait_line(
            _timeout(args))
        publisher.stop()
    finally:
        publisher.kill()
    return {'raw': raw, 'monitor': monitor}


def run_idle(args: argparse.Namespace) -> dict[str, Any]:
    """``--topics`` configured topics, nobody publishing."""
    topics = [f'{PREFIX}{i}' for i in range(args.topics)]
    return _subscriber(args, 'monitor', topics, expect=0).wait_line(_timeout(args))


def run_scale(args: argparse.Namespace, role: str = 'monitor',
              params: dict[str, Any] | None = None) -> dict[str, Any]:
    """``--topics`` topics at 1 Hz plus one at 1 kHz, all configured, periods learned."""
    publisher = _publisher(args.topics, 1.0, 1, args.fast_hz)
    topics = [f'{PREFIX}{i}' for i in range(args.topics)] + [FAST_TOPIC]
    try:
        result = _subscriber(args, role, topics, expect=len(topics), params=params,
                             warmup_s=args.scale_warmup).wait_line(_timeout(args))
        publisher.stop()
    finally:
        publisher.kill()
    return result


def run_scale_raw(args: argparse.Namespace) -> dict[str, Any]:
    """Run the scale case's topics and traffic with a bare raw subscriber listening."""
    return run_scale(args, 'raw')


def run_scale_inputs(args: argparse.Namespace) -> dict[str, Any]:
    """Run the scale case with the monitor's reports reduced to their takes."""
    return run_scale(args, 'inputs')


def run_scale_unbounded(args: argparse.Namespace) -> dict[str, Any]:
    """Run the scale case without a budget on the routine refreshes of slow topics."""
    return run_scale(args, params={'max_steady_refreshes_per_s': 0.0})


def other_domain() -> dict[str, str]:
    """Return the environment of the one-topic side of ``side_by_side``: the next domain id."""
    domain = int(os.environ.get('ROS_DOMAIN_ID') or 0)
    return {'ROS_DOMAIN_ID': str((domain + 1) % DOMAIN_IDS)}


def run_side_by_side(args: argparse.Namespace) -> dict[str, Any]:
    """Run the scale case and the one-topic case at once, measured over the same window.

    The one-topic side runs in the next ROS domain, so neither sees the other's topics;
    both monitors share the subscriber CPU, both publishers the publisher CPU. Each
    monitor says when it is warm, and both start measuring at the same signal: a slow
    phase of the VM slows both figures of the ratio alike.
    """
    topics = [f'{PREFIX}{i}' for i in range(args.topics)] + [FAST_TOPIC]
    other = other_domain()
    children = [_publisher(args.topics, 1.0, 1, args.fast_hz),
                _publisher(0, 0.0, 1, args.fast_hz, env=other)]
    try:
        monitors = [_subscriber(args, 'monitor', topics, expect=len(topics),
                                warmup_s=args.scale_warmup, hold=True),
                    _subscriber(args, 'monitor', [FAST_TOPIC], expect=1, hold=True,
                                env=other)]
        children += monitors
        for monitor in monitors:
            monitor.wait_ready(_timeout(args))
        for monitor in monitors:
            monitor.signal(signal.SIGUSR1)
        scale, one = (monitor.wait_line(_timeout(args)) for monitor in monitors)
        for publisher in children[:2]:
            publisher.stop()
    finally:
        for child in children:
            child.kill()
    return {'scale': scale, 'one': one}


def run_discovery(args: argparse.Namespace) -> dict[str, Any]:
    """``all_topics``: the monitor first, then ``--topics`` publishers at 1 Hz appear."""
    idle_s = args.warmup + 3.0  # the monitor is up and polling an empty graph
    monitor = _subscriber(args, 'monitor', [], expect=args.topics,
                          params={'all_topics': True}, before_s=idle_s)
    time.sleep(idle_s)
    publisher = _publisher(args.topics, 1.0, 0, 0.0)
    try:
        result = monitor.wait_line(_timeout(args))
        sent = publisher.stop()
    finally:
        publisher.kill()
        monitor.kill()
    names = [f'{PREFIX}{i}' for i in range(args.topics)]
    latency = [(result['subscribed_ns'][name] - created) / 1e9
               for name, created in zip(names, sent['created_ns'], strict=True)
               if name in result['subscribed_ns']]
    result['latency_s'] = sorted(latency)
    result['created_span_s'] = (sent['created_ns'][-1] - sent['created_ns'][0]) / 1e9
    return result


def _monitor_results(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the monitor's result lines of every case run."""
    lines = []
    for case, result in results.items():
        if case in ('one', 'one_again'):
            lines.append(result['monitor'])
        elif case == 'side_by_side':
            lines += [pair[side] for pair in result for side in ('scale', 'one')]
        elif case not in ('scale_raw', 'scale_inputs', 'rounds'):
            lines.append(result)
    return lines


def _per_message(result: dict[str, Any], one_us: float) -> str:
    """Return a scale-like case's CPU per message, as a ratio to the one-topic figure."""
    return (f'{_fmt(result["cpu_per_msg_us"])} µs = '
            f'{_fmt(result["cpu_per_msg_us"] / one_us, 2)} x one topic '
            f'({_fmt(result["rate_hz"], 0)} msg/s, {_fmt(result["cpu_percent"])} % of a core, '
            f'{_fmt(result["main_thread_percent"])} % in the Python thread, '
            f'{_fmt(result["refreshes_per_s"])} refreshes/s, '
            f'{_fmt(result["takes_per_s"], 0)} queue takes/s, {_fmt(result["rss_mb"])} MB)')


def _more_rounds(args: argparse.Namespace, results: dict[str, Any],
                 failed: list[str]) -> list[tuple[dict[str, Any], float]]:
    """Run ``--rounds`` - 1 more (scale, one topic) pairs after the first.

    Return every round's scale result with the mean one-topic figure measured just before
    and just after it (the first round's are ``one`` and ``one_again``): the VM's speed
    drifts over minutes, and one round can land in a slow phase.
    """
    if not {'one', 'scale', 'one_again'} <= results.keys():
        return []
    cpu = [results['one']['monitor']['cpu_per_msg_us'],
           results['one_again']['monitor']['cpu_per_msg_us']]
    rounds = [(results['scale'], (cpu[0] + cpu[1]) / 2)]
    extra: list[dict[str, Any]] = []
    for number in range(2, args.rounds + 1):
        try:
            scale, one = run_scale(args), run_one_topic(args)
        except RuntimeError as error:
            failed.append(f'round {number}')
            print(f'round {number} failed: {error}', file=sys.stderr, flush=True)
            break
        cpu.append(one['monitor']['cpu_per_msg_us'])
        rounds.append((scale, (cpu[-2] + cpu[-1]) / 2))
        extra.append({'scale': scale, 'one': one})
        print(f'round {number} done ({environment_line()})', file=sys.stderr, flush=True)
    results['rounds'] = extra
    return rounds


def _side_by_side_rounds(args: argparse.Namespace,
                         failed: list[str]) -> list[dict[str, Any]]:
    """Run ``side_by_side`` ``--rounds`` times; return each round's figures."""
    rounds = []
    for number in range(1, args.rounds + 1):
        try:
            rounds.append(run_side_by_side(args))
        except RuntimeError as error:
            failed.append(f'side_by_side round {number}')
            print(f'side_by_side round {number} failed: {error}', file=sys.stderr, flush=True)
            break
        print(f'side_by_side round {number} done ({environment_line()})', file=sys.stderr,
              flush=True)
    return rounds


def _fmt(value: float, digits: int = 1) -> str:
    return 'n/a' if value != value else f'{value:.{digits}f}'


def main(argv: list[str] | None = None) -> int:
    """Run the cases asked for and print the figures next to the targets."""
    parser = benchmark_parser(__doc__)
    parser.add_argument('--topics', type=int, default=1000, help='topics (default 1000)')
    parser.add_argument('--fast-hz', type=float, default=1000.0,
                        help='rate of the fast topic [Hz] (default 1000)')
    parser.add_argument('--warmup', type=float, default=5.0,
                        help='warm-up of the one-topic, idle and discovery cases [s] '
                             '(default 5)')
    parser.add_argument('--scale-warmup', type=float, default=150.0,
                        help='warm-up of the scale cases [s] (default 150: the 1 Hz topics '
                             'learn their periods in about 20 s, and the refreshes within '
                             'max_steady_refreshes_per_s settle a turn later, 100 s with '
                             '1,000 topics at the default 10)')
    parser.add_argument('--measure', type=float, default=30.0,
                        help='measurement window [s] (default 30: a slow queue is taken up '
                             'to 4 s apart, so a short window counts a few %% too many '
                             'messages)')
    parser.add_argument('--cases', default='one,idle,scale,scale_raw,side_by_side,discovery',
                        help='comma-separated cases to run (default: these six; also '
                             'scale_inputs, scale_unbounded)')
    parser.add_argument('--rounds', type=int, default=1,
                        help='run side_by_side this many times, and with the one-topic and '
                             'scale cases the scale case and the one-topic case after it; '
                             'print the ratio of each round and their median (default 1)')
    parser.add_argument('--param', type=_parameter, action='append', default=[],
                        metavar='NAME=VALUE',
                        help='a monitor parameter for every case (repeatable)')
    args = parse_benchmark_args(parser, argv)
    args.param = dict(args.param)
    if args.child:
        (run_publisher if args.child == 'publisher' else run_subscriber)(args.options)
        return 0

    print(f'# Robot scale ({environment_line()})')
    cases = args.cases.split(',')
    results: dict[str, Any] = {}
    # The one-topic case runs again right after the scale case when both are asked for: the
    # VM's speed drifts by tens of percent over minutes, and the scale ratio's denominator
    # is then the mean of the figures taken just before and just after it.
    again = 'one' in cases and 'scale' in cases
    failed: list[str] = []
    for case, run in (('one', run_one_topic), ('idle', run_idle), ('scale', run_scale),
                      ('one_again', run_one_topic), ('scale_raw', run_scale_raw),
                      ('scale_inputs', run_scale_inputs), ('scale_unbounded', run_scale_unbounded),
                      ('discovery', run_discovery)):
        if case in cases or (case == 'one_again' and again):
            try:
                results[case] = run(args)
            except RuntimeError as error:  # the other cases' figures still print
                failed.append(case)
                print(f'{case} failed: {error}', file=sys.stderr, flush=True)
                continue
            print(f'{case} done ({environment_line()})', file=sys.stderr, flush=True)
    rounds = _more_rounds(args, results, failed) if again else []
    if 'side_by_side' in cases:
        results['side_by_side'] = _side_by_side_rounds(args, failed)
    rows = []
    ones = [results[case] for case in ('one', 'one_again') if case in results]
    one_us = (sum(one['monitor']['cpu_per_msg_us'] for one in ones) / len(ones)
              if ones else math.nan)
    for case, one in zip(('', ' (again, after the scale case)'), ones, strict=False):
        monitor_us, raw_us = one['monitor']['cpu_per_msg_us'], one['raw']['cpu_per_msg_us']
        rows.append([f'1 topic at 1 kHz: monitor / raw{case}', 'keep 0.19',
                     f'{_fmt(monitor_us)} µs / {_fmt(raw_us)} µs = '
                     f'{_fmt(monitor_us / raw_us, 2)}'])
    if 'idle' in results:
        idle = results['idle']
        rows.append([f'{args.topics} idle topics: CPU', f'≤ {TARGETS["idle_cpu_percent"]:g} %',
                     f'{_fmt(idle["cpu_percent"], 2)} % of a core'])
        rows.append([f'{args.topics} idle topics: RSS', f'≤ {TARGETS["idle_rss_mb"]:g} MB',
                     f'{_fmt(idle["rss_mb"])} MB'])
    if 'scale' in results:
        rows.append([f'{args.topics} at 1 Hz + 1 at {args.fast_hz:g} Hz: CPU per message',
                     f'≤ {TARGETS["scale_ratio"]:g} x one topic',
                     _per_message(results['scale'], one_us)
                     + f'; one topic {_fmt(one_us)} µs'
                     + (', the mean of both' if len(ones) > 1 else '')])
    if 'scale_raw' in results:
        raw = results['scale_raw']
        ratio = (results['scale']['cpu_per_msg_us'] / raw['cpu_per_msg_us']
                 if 'scale' in results else math.nan)
        rows.append(['the same, a bare raw subscriber: CPU per message', 'context',
                     f'{_fmt(raw["cpu_per_msg_us"])} µs (monitor / raw {_fmt(ratio, 2)}; '
                     f'{_fmt(raw["rate_hz"], 0)} '
                     f'msg/s, {_fmt(raw["cpu_percent"])} % of a core)'])
    for case, label in (
            ('scale_inputs', 'the same, the monitor with takes alone (no reports)'),
            ('scale_unbounded', 'the same, max_steady_refreshes_per_s 0 (no budget)')):
        if case in results:
            rows.append([f'{label}: CPU per message', 'context',
                         _per_message(results[case], one_us)])
    if 'discovery' in results:
        found = results['discovery']
        latency = found['latency_s']
        worst = latency[-1] if latency else math.nan
        median = latency[len(latency) // 2] if latency else math.nan
        rows.append([f'--all: {args.topics} topics appearing', f'all within '
                     f'{TARGETS["discovery_s"]:g} s',
                     f'{len(latency)} found, max {_fmt(worst, 2)} s, median {_fmt(median, 2)} s '
                     f'after their publisher (created over {_fmt(found["created_span_s"], 2)} '
                     f's); then {_fmt(found["cpu_percent"])} % of a core, '
                     f'{_fmt(found["rss_mb"])} MB'])
    if rounds:
        ratios = [scale['cpu_per_msg_us'] / one_us for scale, one_us in rounds]
        rows.append(['the same in rounds: scale / the one-topic figures around it',
                     f'≤ {TARGETS["scale_ratio"]:g} x one topic',
                     f'{", ".join(_fmt(r, 2) for r in ratios)}: median '
                     f'{_fmt(statistics.median(ratios), 2)} x ({len(ratios)} rounds, '
                     f'{", ".join(_fmt(s["cpu_per_msg_us"]) for s, _ in rounds)} µs a '
                     f'message)'])
    if results.get('side_by_side'):
        pairs = results['side_by_side']
        ratios = [pair['scale']['cpu_per_msg_us'] / pair['one']['cpu_per_msg_us']
                  for pair in pairs]
        rows.append([f'side by side: {args.topics} at 1 Hz + 1 at {args.fast_hz:g} Hz / '
                     '1 topic, the same window', f'≤ {TARGETS["scale_ratio"]:g} x one topic',
                     f'{", ".join(_fmt(r, 2) for r in ratios)}: median '
                     f'{_fmt(statistics.median(ratios), 2)} x ({len(ratios)} rounds; '
                     + ', '.join(f'{_fmt(pair["scale"]["cpu_per_msg_us"])} / '
                                 f'{_fmt(pair["one"]["cpu_per_msg_us"])}' for pair in pairs)
                     + ' µs a message; scale at '
                     + ', '.join(_fmt(pair['scale']['rate_hz'], 0) for pair in pairs)
                     + ' msg/s)'])
    ways = {r.get('diagnostics') for r in _monitor_results(results)} - {None}
    print()
    print(f'/diagnostics: {", ".join(sorted(ways)) or "n/a"}'
          + (f'; parameters {args.param}' if args.param else ''))
    print_table(['case', 'target', 'measured'], rows)
    write_json(args.json, results, indent=1)
    if failed:
        print(f'failed: {", ".join(failed)}', file=sys.stderr)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
