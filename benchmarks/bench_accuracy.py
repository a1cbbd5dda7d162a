#!/usr/bin/env python3
"""Accuracy under load: the monitor's misses and max interval against the producer's own record.

The installed ``demo_controller`` (100 Hz, a 22 ms stall every 50th cycle, stamp = cycle start,
published at the cycle end) writes its own record of every cycle: that is the ground truth
(``analysis.cycles.count_cycles`` turns it into misses and skipped periods). Five monitors listen
in one process, on one executor:

- ``batched``/``callbacks``: ``take_period_s`` 0.05 (shipped) and 0 (a callback per message);
- ``stamp start``: the header stamp is the cycle start (response rule); the truth is the
  record's starts and its publish times (taken just before ``publish()``);
- ``stamp none``: arrivals only (interval rule, the middleware's received timestamps); the
  truth is the intervals between the record's publish times;
- ``stamp none, source``: the same with ``arrival_timestamp: source`` (the writer's
  timestamp, taken inside ``publish()``), which no delay on the way can move.

Scenarios: ``quiet``; ``cpu hog`` (one busy process per CPU next to everything);
``slow callback`` (a 200 ms busy timer every second on the monitors' own executor).
Printed per scenario and monitor: misses and skipped periods against the truth (exact is
the target) and the max-interval error (target ≤ 0.5 ms), plus the transport latency
(arrival timestamp − the controller's time just before ``publish()``) that separates the
two.

    python benchmarks/bench_accuracy.py                  # 3 repetitions of 10 s per scenario
    python benchmarks/bench_accuracy.py --reps 5 --duration 30 --scenarios "cpu hog"
"""

from __future__ import annotations

import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchlib import (
    benchmark_parser,
    Child,
    emit,
    environment_line,
    fmt_spread,
    monitor_parameters,
    parse_benchmark_args,
    print_table,
    ros_init,
    stop_event,
    wait_until,
    write_json,
)
import numpy as np

PACKAGE = 'ros2_deadline_monitor'
TOPIC = '/bench_acc/ctrl'
RATE_HZ = 100.0
PERIOD_NS = 10_000_000
STALL_MS = 22.0
STALL_EVERY = 50
SLOW_PERIOD_S = 1.0
SLOW_BUSY_S = 0.2
SCENARIOS = ('quiet', 'cpu hog', 'slow callback')
MONITORS = {
    'batched, stamp start': {'take_period_s': 0.05, 'stamp': 'start'},
    'callbacks, stamp start': {'take_period_s': 0.0, 'stamp': 'start'},
    'batched, stamp none': {'take_period_s': 0.05, 'stamp': 'none'},
    'callbacks, stamp none': {'take_period_s': 0.0, 'stamp': 'none'},
    'batched, stamp none, source': {'take_period_s': 0.05, 'stamp': 'none',
                                    'arrival_timestamp': 'source'},
}


def run_monitors(options: dict[str, Any]) -> None:
    """Run the four monitors (and the slow callback) until SIGINT; report their figures."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from ros2_deadline_monitor.live.monitor_node import MonitorNode

    stop = stop_event()
    ros_init()
    executor = SingleThreadedExecutor()
    nodes = {}
    taken: dict[str, list] = {}
    for i, (name, settings) in enumerate(MONITORS.items()):
        values = {'topics': ['ctrl'], 'topic.ctrl.name': TOPIC,
                  'topic.ctrl.period_ms': PERIOD_NS / 1e6,
                  'topic.ctrl.stamp': settings['stamp'],
                  'take_period_s': settings['take_period_s'],
                  'window_s': 600.0, 'window_cycles': 100_000,
                  'arrival_timestamp': settings.get('arrival_timestamp', 'received')}
        node = MonitorNode(f'acc_monitor_{i}', parameter_overrides=monitor_parameters(values))
        nodes[name] = node
        taken[name] = []  # every per-cycle row the session makes, as the bag replay's plots
        node.session.on_rows = lambda topic_id, rows, mine=taken[name]: mine.append(rows)
        executor.add_node(node)
    if options['slow']:
        slow = Node('acc_slow_callback')

        def busy() -> None:
            end = time.perf_counter() + SLOW_BUSY_S
            while time.perf_counter() < end:
                pass

        slow.create_timer(SLOW_PERIOD_S, busy)
        executor.add_node(slow)
    while not stop.is_set():
        executor.spin_once(timeout_sec=0.1)
    result = {}
    for name, node in nodes.items():
        (topic,) = node.snapshot(final=True).topics
        report = topic.report
        rows = {key: np.concatenate([r[key] for r in taken[name]]) if taken[name]
                else np.empty(0, np.int64) for key in ('arrival', 'start_wall')}
        result[name] = {
            'messages': report.messages_total, 'misses': report.deadline_misses_total,
            'skipped': report.skipped_periods_total, 'lost': report.messages_lost_total,
            'max_interval_ns': report.interval_wall.max_ns,
            'overflows': topic.receive.queue_overflows_total,
            'arrival': rows['arrival'].tolist(), 'start': rows['start_wall'].tolist()}
        if MONITORS[name].get('arrival_timestamp') == 'source':
            result[name]['start'] = result[name]['arrival']
    emit(result)
    for node in nodes.values():
        node.destroy_node()
    rclpy.try_shutdown()


def controller_command(duration_s: float, record: Path) -> list[str]:
    """Return the installed demo_controller's command line."""
    from ament_index_python.packages import get_package_prefix

    executable = Path(get_package_prefix(PACKAGE)) / 'lib' / PACKAGE / 'demo_controller'
    params = {'rate_hz': RATE_HZ, 'topic': TOPIC, 'duration_s': duration_s,
              'stall_ms': STALL_MS, 'stall_every': STALL_EVERY,
              'wait_for_subscribers': len(MONITORS), 'record_path': str(record)}
    args = [str(executable), '--ros-args']
    for key, value in params.items():
        args += ['-p', f'{key}:={value}']
    return args


def start_hogs() -> list[subprocess.Popen]:
    """Start one busy process per CPU."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else 2
    return [subprocess.Popen([sys.executable, '-S', '-c', 'while True: pass'])
            for _ in range(count)]


def run_once(scenario: str, duration_s: float, workdir: Path) -> dict[str, Any]:
    """One controller run with the four monitors; return truth and monitor figures."""
    from ros2_deadline_monitor.analysis.cycles import count_cycles
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    record_path = workdir / 'cycles.json'
    record_path.unlink(missing_ok=True)
    monitors = Child(__file__, 'monitors', {'slow': scenario == 'slow callback'})
    hogs = start_hogs() if scenario == 'cpu hog' else []
    try:
        log = open(workdir / 'controller.log', 'w')  # noqa: SIM115
        controller = subprocess.Popen(controller_command(duration_s, record_path),
                                      stdout=log, stderr=subprocess.STDOUT)
        code = controller.wait(timeout=duration_s + 60)
        log.close()
        if code != 0:
            tail = (workdir / 'controller.log').read_text().splitlines()[-10:]
            raise RuntimeError('demo_controller failed:\n' + '\n'.join(tail))
        wait_until(record_path.exists, 10, 'the cycle record')
        time.sleep(1.0)
        figures = monitors.stop(timeout=60)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        monitors.kill()
    record = CycleRecord.load(record_path)
    starts = np.asarray(record.start_timer_ns)
    ends = np.asarray(record.end_system_ns)
    truth_start = count_cycles(starts, ends, PERIOD_NS, PERIOD_NS, None, 'response')
    truth_none = count_cycles(ends, ends, PERIOD_NS, None, None, 'interval')
    truth = {'sent': len(record),
             'start': {'misses': truth_start.misses, 'skipped': truth_start.skipped,
                       'max_interval_ns': int(np.diff(starts).max())},
             'none': {'misses': truth_none.misses, 'skipped': truth_none.skipped,
                      'max_interval_ns': int(np.diff(ends).max())}}
    for name, fig in figures.items():
        # Transport latency per cycle: received timestamp - publish time (matched by stamp).
        if 'stamp start' in name:
            end_by_start = dict(zip(starts.tolist(), ends.tolist(), strict=True))
            fig['latency_ns'] = [a - end_by_start[s] for a, s in
                                 zip(fig['arrival'], fig['start'], strict=True)
                                 if s in end_by_start]
        elif 'source' in name and len(fig['arrival']) == len(ends):
            fig['latency_ns'] = (np.asarray(fig['arrival']) - ends).tolist()
        del fig['arrival'], fig['start']
    return {'truth': truth, 'monitors': figures}


def summarize(scenario: str, runs: list[dict[str, Any]]) -> None:
    """Print one scenario's table."""
    print(f'\n### {scenario}')
    rows = []
    for name in MONITORS:
        kind = 'start' if 'stamp start' in name else 'none'
        per_run = []
        errors = []
        for run in runs:
            fig, truth = run['monitors'][name], run['truth'][kind]
            per_run.append(f'{fig["misses"]}/{truth["misses"]}, {fig["skipped"]}/'
                           f'{truth["skipped"]}')
            errors.append((fig['max_interval_ns'] - truth['max_interval_ns']) / 1e6)
        exact = sum(run['monitors'][name]['misses'] == run['truth'][kind]['misses']
                    and run['monitors'][name]['skipped'] == run['truth'][kind]['skipped']
                    for run in runs)
        received = sum(run['monitors'][name]['messages'] for run in runs)
        sent = sum(run['truth']['sent'] for run in runs)
        latency = [v for run in runs for v in run['monitors'][name].get('latency_ns', [])]
        lat = (f'{np.percentile(latency, 50) / 1e3:.0f} / {np.percentile(latency, 99) / 1e3:.0f}'
               f' / {max(latency) / 1e3:.0f}' if latency else '')
        rows.append([name, '; '.join(per_run), f'{exact}/{len(runs)}',
                     fmt_spread(errors, 3), f'{received}/{sent}', lat])
    print_table(['monitor', 'misses, skipped: monitor/truth per run', 'exact runs',
                 'max-interval error [ms]', 'received/sent',
                 'arrival − publish time p50/p99/max [µs]'], rows)


def main(argv: list[str] | None = None) -> int:
    """Run every scenario ``--reps`` times and print the tables."""
    parser = benchmark_parser(__doc__)
    parser.add_argument('--reps', type=int, default=3, help='repetitions (default 3)')
    parser.add_argument('--duration', type=float, default=10.0,
                        help='controller run time [s] (default 10)')
    parser.add_argument('--scenarios', nargs='+', default=list(SCENARIOS),
                        choices=SCENARIOS, help='scenarios to run (default all)')
    args = parse_benchmark_args(parser, argv)
    if args.child:
        run_monitors(args.options)
        return 0

    print(f'# Accuracy against the producer record: {RATE_HZ:g} Hz, {STALL_MS:g} ms stall '
          f'every {STALL_EVERY}th cycle, {args.duration:g} s runs ({environment_line()})')
    results: dict[str, list[dict[str, Any]]] = {s: [] for s in args.scenarios}
    with tempfile.TemporaryDirectory(prefix='bench_accuracy_') as tmp:
        for rep in range(args.reps):
            for scenario in args.scenarios:
                results[scenario].append(run_once(scenario, args.duration, Path(tmp)))
            print(f'repetition {rep + 1}/{args.reps} done', file=sys.stderr, flush=True)
    for scenario, runs in results.items():
        summarize(scenario, runs)
    write_json(args.json, results)
    return 0


if __name__ == '__main__':
    sys.exit(main())
