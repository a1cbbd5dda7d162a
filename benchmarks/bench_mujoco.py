#!/usr/bin/env python3
"""MuJoCo in the loop: whether the simulator holds RTF 1.0 next to the controller and monitor.

Starts the three processes the way ``launch/mujoco.launch.py`` does: ``mujoco_sim`` (the
shipped pendulum, 1 kHz physics, ``/clock`` at every step, target RTF 1), ``demo_controller``
closing the loop on it at 100 Hz of sim time (``control:=pd``, no stall) and the ``monitor``
on the controller's topic and ``/clock`` (``use_sim_time``). After ``--warmup`` seconds it
reads each process's CPU time from /proc over ``--measure`` seconds, then stops them and reads
the simulator's own record: its RTF over the whole run and its worst 100 ms window, the times
it fell behind (re-anchors, slow reports) and the steps on a stale command.

    python benchmarks/bench_mujoco.py                  # one round, about 40 s
    python benchmarks/bench_mujoco.py --rounds 3 --measure 30

The load average of the machine is printed with the table: on a shared machine the RTF moves
with what else runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (  # noqa: E402,I001
    benchmark_parser,
    cpu_ticks,
    environment_line,
    parse_benchmark_args,
    print_table,
)

from ros2_deadline_monitor.tools.demo import executable_command, node_args  # noqa: E402

TOPIC = '/bench_mujoco/cmd'
TICKS = os.sysconf('SC_CLK_TCK')


def run_round(warmup_s: float, measure_s: float) -> dict[str, float]:
    """Run the three processes once; return CPU shares and the simulator's RTF figures."""
    with tempfile.TemporaryDirectory() as tmp:
        record_path = Path(tmp) / 'mujoco_sim.json'
        processes = {
            'monitor': subprocess.Popen(executable_command('monitor') + ['--quiet'] + node_args({
                'use_sim_time': True, 'target_rtf': 1.0, 'topics': ['cmd'],
                'topic.cmd.name': TOPIC, 'topic.cmd.period_ms': 10.0,
                'topic.cmd.stamp': 'start'})),
            'demo_controller': subprocess.Popen(executable_command('demo_controller') + node_args({
                'use_sim_time': True, 'control': 'pd', 'rate_hz': 100.0, 'topic': TOPIC,
                'wait_for_subscribers': 1,
                'joint_states_topic': '/bench_mujoco/joint_states',
                'command_topic': '/bench_mujoco/commands'})),
            'mujoco_sim': subprocess.Popen(executable_command('mujoco_sim') + node_args({
                'target_rtf': 1.0, 'clock_publish_hz': 0.0, 'wait_for_subscribers': 2,
                'record_path': str(record_path),
                'joint_states_topic': '/bench_mujoco/joint_states',
                'imu_topic': '/bench_mujoco/imu',
                'command_topic': '/bench_mujoco/commands'})),
        }
        try:
            time.sleep(warmup_s)
            before = {name: cpu_ticks(p.pid) for name, p in processes.items()}
            start = time.monotonic()
            time.sleep(measure_s)
            elapsed = time.monotonic() - start
            after = {name: cpu_ticks(p.pid) for name, p in processes.items()}
        finally:
            for process in processes.values():
                if process.poll() is None:
                    process.send_signal(signal.SIGINT)
            for process in processes.values():
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
        record = json.loads(record_path.read_text())
    figures = {f'cpu_{name}': (after[name] - before[name]) / TICKS / elapsed
               for name in processes}
    figures.update({key: record[key] for key in (
        'rtf', 'rtf_100ms_min', 'reanchors', 'slow_reports', 'stale_steps', 'steps',
        'tracking_error_rms_rad', 'tracking_error_max_rad')})
    figures['load_1min'] = os.getloadavg()[0]
    return figures


def main() -> int:
    """Run the rounds and print one table (median and min-max over the rounds)."""
    parser = benchmark_parser(__doc__)
    parser.add_argument('--rounds', type=int, default=1, help='rounds (default 1)')
    parser.add_argument('--warmup', type=float, default=5.0, help='seconds before measuring')
    parser.add_argument('--measure', type=float, default=20.0, help='seconds measured')
    args = parse_benchmark_args(parser)
    print(environment_line())
    rounds = []
    for index in range(args.rounds):
        figures = run_round(args.warmup, args.measure)
        rounds.append(figures)
        print(f'round {index + 1}: ' + json.dumps({k: round(v, 4) if isinstance(v, float)
                                                   else v for k, v in figures.items()}))

    def column(key: str, scale: float = 1.0, digits: int = 1) -> str:
        values = [r[key] * scale for r in rounds if r[key] is not None]
        if not values:
            return '-'
        text = f'{statistics.median(values):.{digits}f}'
        return text + (f' ({min(values):.{digits}f}–{max(values):.{digits}f})'
                       if len(values) > 1 else '')

    print()
    print_table(['figure', f'median of {len(rounds)} round(s)'], [
        ['mujoco_sim RTF, whole run (target 1.0)', column('rtf', digits=4)],
        ['mujoco_sim RTF, worst 100 ms window', column('rtf_100ms_min', digits=3)],
        ['mujoco_sim re-anchors / slow reports', f"{column('reanchors', digits=0)} / "
                                                 f"{column('slow_reports', digits=0)}"],
        ['CPU mujoco_sim (1 kHz physics, /clock every step)',
         column('cpu_mujoco_sim', 100.0) + ' % of a core'],
        ['CPU demo_controller (100 Hz, pd)', column('cpu_demo_controller', 100.0) +
         ' % of a core'],
        ['CPU monitor', column('cpu_monitor', 100.0) + ' % of a core'],
        ['tracking error RMS (rad)', column('tracking_error_rms_rad', digits=4)],
        ['load average (1 min) at the end', column('load_1min', digits=2)],
    ])
    if args.json:
        Path(args.json).write_text(json.dumps(rounds, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
