"""The reference measurement, live: RTF next to deadline misses in six phases.

Each phase starts three separate processes — the simulator stand-in (``sim_clock``), a 100 Hz
control loop stand-in (``demo_controller``) and the ``monitor`` — runs them for a few seconds,
and prints what the controller recorded about its own cycles (the ground truth) next to what
the monitor measured from outside. The phases follow the reference measurement: wall clock
without and with a 22 ms stall every 50th cycle, sim time at RTF 1.0 without and with the
stall, and sim time at RTF 0.5. A sixth phase runs sim time at RTF 1.0 with /clock published
at 10 Hz, Gazebo Classic's default: the 100 Hz controller on sim time runs at most once per
/clock message (rcl fires once per /clock update and skips the periods in between), so the RTF
says 1.0 while the loop ran a tenth of its cycles.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
import json
import math
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import numpy as np

from ros2_deadline_monitor.analysis.cdr import read_stamp_ns
from ros2_deadline_monitor.analysis.config import Thresholds
from ros2_deadline_monitor.analysis.cycles import count_cycles
from ros2_deadline_monitor.configuration.usage import ros_arguments
from ros2_deadline_monitor.outputs import format as fmt
from ros2_deadline_monitor.tools.cycle_record import CycleRecord

MS = 1_000_000
PACKAGE = 'ros2_deadline_monitor'
CONTROL_TOPIC = 'demo/cmd'
STATS_TOPIC = 'deadline_monitor/stats'
"""Both relative: in the namespace of ``demo --ros-args -r __ns:=/robot1`` (the root without)."""
CONTROL_ID = 'cmd'
"""The control topic's identifier in the monitor (its reports name it so, however remapped)."""


@dataclass(frozen=True)
class Phase:
    """One configuration of the reference measurement."""

    name: str
    use_sim_time: bool
    target_rtf: float
    stall_ms: float
    title: str
    clock_publish_hz: float = 0.0
    """sim_clock's ``publish_rate_hz``: /clock at this rate, 0 at every 1 ms step."""
    rule: str = 'response'
    """Miss rule of the monitor and of the record's count. Under a 100 ms /clock the first
    cycle's response depends on where between two /clock messages its message left, which
    the controller cannot see; its interval does not."""


PHASES = (
    Phase('wall_baseline', False, 1.0, 0.0, 'wall clock, no stall'),
    Phase('wall_injected', False, 1.0, 22.0, 'wall clock, 22 ms stall every 50th cycle'),
    Phase('sim_rtf1', True, 1.0, 0.0, 'sim time at target RTF 1.0, no stall'),
    Phase('sim_rtf1_injected', True, 1.0, 22.0,
          'sim time at target RTF 1.0, 22 ms stall every 50th cycle'),
    Phase('sim_rtf05', True, 0.5, 0.0, 'sim time at target RTF 0.5, no stall'),
    Phase('sim_clock_10hz', True, 1.0, 0.0, 'sim time at target RTF 1.0, /clock at 10 Hz '
          "(Gazebo Classic's default), no stall", clock_publish_hz=10.0, rule='interval'),
)


@dataclass
class PhaseResult:
    """Ground truth and monitor figures of one phase (None where not measured)."""

    phase: str
    title: str
    rate_hz: float
    stall_every: int
    truth: dict[str, Any] = field(default_factory=dict)
    monitor: dict[str, Any] = field(default_factory=dict)
    sim_clock: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    duration_s: float | None = None
    """Wall time the controller ran for (its ``duration_s``)."""


def executable_command(name: str) -> list[str]:
    """Command that runs one of this package's executables, as ``ros2 run`` would find it."""
    try:
        from ament_index_python.packages import get_package_prefix
        path = Path(get_package_prefix(PACKAGE)) / 'lib' / PACKAGE / name
        if os.access(path, os.X_OK):
            return [str(path)]
    except (ImportError, LookupError):
        pass
    return [sys.executable, '-m', f'{PACKAGE}.tools.{name}']


def node_args(params: dict[str, Any]) -> list[str]:
    """Command-line arguments setting ROS parameters of a node (quiet logging)."""
    args = ['--ros-args', '--log-level', 'warn']
    for name, value in params.items():
        if isinstance(value, bool):
            value = 'true' if value else 'false'
        elif isinstance(value, list):
            value = '[' + ','.join(repr(v) for v in value) + ']'
        args += ['-p', f'{name}:={value}']
    return args


def truth_figures(record: CycleRecord, sent: Sequence[tuple[int, int]] = (),
                  rule: str = 'response') -> dict[str, Any]:
    """Count what the controller saw of itself, with the same rules the monitor applies.

    Response = lateness on the timer's clock + execution on the monotonic clock, so a stall
    counts under sim time even though ROS time stands still while the callback runs.

    ``sent`` holds (stamp, time it left) of each control message as a reader saw it. On the
    wall clock it gives ``misses_as_sent``: each cycle ending when its message left, as the
    monitor times it. A cycle the controller preempted between its own end and ``publish``
    can miss only by that count.
    """
    starts = record.start_timer_ns
    ends = starts + (record.end_mono_ns - record.start_mono_ns)
    counts = count_cycles(starts, ends, record.period_ns, rule=rule)
    stamps = np.array([stamp for stamp, _ in sent], np.int64)
    left = np.array([left for _, left in sent], np.int64)
    wall = (record.start_system_ns[1:] - record.start_system_ns[:-1]) / MS
    timer = (starts[1:] - starts[:-1]) / MS
    figures: dict[str, Any] = {
        'cycles': counts.cycles, 'misses': counts.misses, 'skipped': counts.skipped,
        'grid_periods': counts.grid_periods,
        'wall_mean_ms': float(wall.mean()) if len(wall) else math.nan,
        'wall_max_ms': float(wall.max()) if len(wall) else math.nan,
        'exec_max_wall_ms': float(((record.end_mono_ns - record.start_mono_ns) / MS).max())
        if len(record) else math.nan,
    }
    if record.timer_clock == 'wall' and np.array_equal(stamps, starts):
        figures['misses_as_sent'] = count_cycles(starts, left, record.period_ns,
                                                 rule=rule).misses
    if record.timer_clock == 'sim':
        figures['sim_mean_ms'] = float(timer.mean()) if len(timer) else math.nan
        figures['sim_max_ms'] = float(timer.max()) if len(timer) else math.nan
    return figures


def monitor_figures(messages: Sequence[Any]) -> dict[str, Any]:
    """Collect the monitor's figures for the control topic from one phase's reports.

    Totals come from the last message; the worst 100 ms RTF window and the CPU throttling
    are accumulated over every report of the phase.
    """
    stats = messages[-1]
    topic = next((t for t in stats.topics if t.name == CONTROL_ID), None)
    bins = [m.clock.rtf_bin_min for m in messages if not math.isnan(m.clock.rtf_bin_min)]
    cgroup = any(m.host.cgroup_available for m in messages)  # else no count, not 0
    figures: dict[str, Any] = {
        'rtf': stats.clock.rtf_total, 'rtf_100ms_min': min(bins) if bins else math.nan,
        'throttled': sum(m.host.cgroup_nr_throttled for m in messages) if cgroup else None,
        'throttled_ms': sum(m.host.cgroup_throttled_ms for m in messages) if cgroup else None,
    }
    if topic is not None:
        figures.update({
            'cycles': topic.messages_total, 'misses': topic.deadline_misses_total,
            'skipped': topic.skipped_periods_total, 'lost': topic.messages_lost_total,
            'rule': topic.rule, 'deadline_ms': topic.deadline_ms,
            'wall_mean_ms': topic.interval_wall.mean_ms,
            'wall_max_ms': topic.interval_wall.max_ms,
            'sim_mean_ms': topic.interval_sim.mean_ms, 'sim_max_ms': topic.interval_sim.max_ms,
        })
    return figures


class StatsListener:
    """Collects the monitor's MonitorStats and the control messages, in a background executor.

    The control topic is read raw, like the monitor reads it: its stamps and the time each
    message left (the writer-side source timestamp) give the record's counts as the monitor
    times them (``truth_figures``).
    """

    def __init__(self, extra_ros_args: Sequence[str] = ()) -> None:
        from geometry_msgs.msg import TwistStamped
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        from ros2_deadline_monitor.msg import MonitorStats

        self._context = rclpy.context.Context()
        rclpy.init(args=['--ros-args', *extra_ros_args] if extra_ros_args else None,
                   context=self._context)
        self._node = rclpy.create_node('deadline_demo', context=self._context)
        self._lock = threading.Lock()
        self._messages: list[Any] = []
        self._sent: list[tuple[int, int]] = []
        reliable = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
        self._node.create_subscription(MonitorStats, STATS_TOPIC, self._on_stats, reliable)
        self._node.create_subscription(TwistStamped, CONTROL_TOPIC, self._on_control,
                                       reliable, raw=True)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException
        try:
            # Until close(): a timeout, since waking the executor does not end its wait.
            while not self._stop.is_set() and self._context.ok():
                self._executor.spin_once(timeout_sec=0.1)
        except ExternalShutdownException:
            pass

    def _on_stats(self, msg: Any) -> None:
        with self._lock:
            self._messages.append(msg)

    def _on_control(self, raw: bytes, info: dict[str, Any]) -> None:
        with self._lock:
            self._sent.append((read_stamp_ns(raw), info['source_timestamp']))

    def take(self) -> list[Any]:
        """MonitorStats received since the last call."""
        with self._lock:
            messages, self._messages = self._messages, []
        return messages

    def take_sent(self) -> list[tuple[int, int]]:
        """(stamp, time it left) of each control message received since the last call."""
        with self._lock:
            sent, self._sent = self._sent, []
        return sent

    def close(self) -> None:
        """Stop spinning and shut the context down.

        The thread ends before the executor is shut down: Jazzy's ``Executor.shutdown`` does
        not wait for a spinning thread and destroys the guard condition it uses.
        """
        import rclpy
        self._stop.set()
        self._thread.join(timeout=5.0)
        self._executor.shutdown(timeout_sec=0)
        self._node.destroy_node()
        rclpy.try_shutdown(context=self._context)


def _stop(*processes: subprocess.Popen[bytes], timeout_s: float = 5.0) -> None:
    """SIGINT every process at once, then wait; kill those still running after ``timeout_s``.

    Signalled together, the children shut down in parallel: one after the other, a loaded
    machine made Ctrl-C of the demo take three times as long.
    """
    running = [p for p in processes if p.poll() is None]
    for process in running:
        process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + timeout_s
    for process in running:
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_phase(phase: Phase, listener: StatsListener, *, duration_s: float = 5.0,
              rate_hz: float = 100.0, stall_every: int = 50,
              workdir: Path | None = None, extra_ros_args: Sequence[str] = ()) -> PhaseResult:
    """Run one phase in separate processes and collect truth and monitor figures.

    ``extra_ros_args`` go to every process (a namespace, remappings: ``-r __ns:=/robot1``).
    """
    def ros_args(params: dict[str, Any]) -> list[str]:
        return [*node_args(params), *extra_ros_args]

    result = PhaseResult(phase.name, phase.title, rate_hz, stall_every, duration_s=duration_s)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        record_path = Path(tmp) / 'cycles.json'
        summary_path = Path(tmp) / 'sim_clock.json'
        listener.take()  # forget what earlier phases sent
        listener.take_sent()
        # --quiet: the demo prints its own tables, not the monitor's line per report.
        monitor = subprocess.Popen(executable_command('monitor') + ['--quiet'] + ros_args({
            'use_sim_time': phase.use_sim_time, 'stats_period_s': 0.5,
            'target_rtf': phase.target_rtf, 'topics': ['cmd'],
            'topic.cmd.name': CONTROL_TOPIC, 'topic.cmd.period_ms': 1000.0 / rate_hz,
            'topic.cmd.stamp': 'start', 'topic.cmd.rule': phase.rule}))
        processes = [monitor]
        try:
            if phase.use_sim_time:
                processes.append(subprocess.Popen(executable_command('sim_clock') + ros_args({
                    'target_rtf': phase.target_rtf, 'wait_for_subscribers': 2,
                    'publish_rate_hz': phase.clock_publish_hz,
                    'summary_path': str(summary_path)})))
            controller = subprocess.Popen(executable_command('demo_controller') + ros_args({
                'use_sim_time': phase.use_sim_time, 'rate_hz': rate_hz,
                'stall_ms': phase.stall_ms, 'stall_every': stall_every if phase.stall_ms else 0,
                # Two subscribers: the monitor and the listener's reader.
                'duration_s': duration_s, 'wait_for_subscribers': 2, 'topic': CONTROL_TOPIC,
                'record_path': str(record_path)}))
            processes.append(controller)
            try:
                controller.wait(timeout=duration_s + 30)
            except subprocess.TimeoutExpired:
                # The tools print every thread's stack on SIGUSR1 (the monitor would exit).
                for tool in processes[1:]:
                    if tool.poll() is None:
                        tool.send_signal(signal.SIGUSR1)
                raise
            record = CycleRecord.load(record_path)
            messages, sent = _wait_for_monitor(listener, len(record), timeout_s=5.0)
            result.truth = truth_figures(record, sent, phase.rule)
            _stop(*processes)
            if phase.use_sim_time and summary_path.exists():
                result.sim_clock = json.loads(summary_path.read_text())
            if not messages:
                result.error = 'no MonitorStats from the monitor'
            else:
                result.monitor = monitor_figures(messages)
        except subprocess.TimeoutExpired as err:
            ended = ('it wrote its record, so it hung on its way out' if record_path.exists()
                     else 'no record: its cycles never ended (its warnings say what it awaited)')
            result.error = f'TimeoutExpired: {err} ({ended})'
        except (OSError, ValueError) as err:
            result.error = f'{type(err).__name__}: {err}'
        finally:
            _stop(*processes)
    return result


def _wait_for_monitor(listener: StatsListener, cycles: int,
                      timeout_s: float) -> tuple[list[Any], list[tuple[int, int]]]:
    """Collect the phase's reports and control messages until both hold every cycle that ran."""
    deadline = time.monotonic() + timeout_s
    messages: list[Any] = []
    sent: list[tuple[int, int]] = []
    while time.monotonic() < deadline:
        messages += listener.take()
        sent += listener.take_sent()
        topic = messages and next(
            (t for t in messages[-1].topics if t.name == CONTROL_ID), None)
        if topic and topic.messages_total >= cycles and len(sent) >= cycles:
            break
        time.sleep(0.05)
    return messages, sent


_fmt = partial(fmt.number, missing='-')
def format_phase(result: PhaseResult) -> str:
    """One table: the controller's own record next to the monitor's measurement."""
    t, m, c = result.truth, result.monitor, result.sim_clock
    rule = f"{m.get('rule', 'response')} rule, D = {_fmt(m.get('deadline_ms'), 1)} ms"
    rows = [
        ('RTF, whole phase', _fmt(c.get('rtf')), _fmt(m.get('rtf'))),
        ('RTF, worst 100 ms window', _fmt(c.get('rtf_100ms_min')),
         _fmt(m.get('rtf_100ms_min'))),
        ('cycles', _fmt(t.get('cycles')), _fmt(m.get('cycles'))),
        (f'deadline misses ({rule})', _fmt(t.get('misses')), _fmt(m.get('misses'))),
        ('skipped periods', _fmt(t.get('skipped')), _fmt(m.get('skipped'))),
        ('interval mean / max, wall (ms)',
         f"{_fmt(t.get('wall_mean_ms'))} / {_fmt(t.get('wall_max_ms'))}",
         f"{_fmt(m.get('wall_mean_ms'))} / {_fmt(m.get('wall_max_ms'))}"),
        ('interval mean / max, sim (ms)',
         f"{_fmt(t.get('sim_mean_ms'))} / {_fmt(t.get('sim_max_ms'))}",
         f"{_fmt(m.get('sim_mean_ms'))} / {_fmt(m.get('sim_max_ms'))}"),
        ('messages lost on the way', '', _fmt(m.get('lost'))),
        ('CPU throttled (cgroup): times / ms', '',
         f"{_fmt(m.get('throttled'))} / {_fmt(m.get('throttled_ms'), 1)}"),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [f'== {result.phase}: {result.title}',
             f"   {'':<{width}}  {'controller / sim_clock':>22}  {'monitor':>17}"]
    lines += [f'   {a:<{width}}  {b:>22}  {c_:>17}' for a, b, c_ in rows]
    sentence = clock_rate_sentence(result)
    if sentence:
        lines.append(f'   verdict: {sentence}')
    if result.error:
        lines.append(f'   ERROR: {result.error}')
    elif t.get('skipped') == m.get('skipped') and t.get('misses') != m.get('misses') \
            and t.get('misses_as_sent') == m.get('misses'):
        lines.append(f"   note: by the time each message left, as the monitor times a cycle's "
                     f"end, the record has {m.get('misses')} misses: the controller was held "
                     'up between its end and publish (see docs/monitor.md: what can make the two '
                     'columns differ)')
    elif t.get('misses') != m.get('misses') or t.get('skipped') != m.get('skipped'):
        lines.append('   note: monitor and controller disagree (see docs/monitor.md: what can '
                     'make the two columns differ)')
    signs = busy_signs(result)
    if signs:
        lines.append(f"   note: {'; '.join(signs)}: this machine was busy (see the verdict at "
                     'the end)')
    return '\n'.join(lines)


def clock_rate_sentence(result: PhaseResult) -> str | None:
    """Say that a coarse /clock, not the RTF, set how often the sim-time controller ran.

    Only for a phase whose sim_clock published /clock less often than the controller's rate
    (None otherwise, or before the controller's record and sim_clock's summary are in).
    """
    t, m, c = result.truth, result.monitor, result.sim_clock
    period_ms = c.get('publish_period_ms')
    cycles = t.get('cycles')
    if period_ms is None or cycles is None or result.duration_s is None \
            or period_ms <= 1000.0 / result.rate_hz:
        return None
    rtf = m.get('rtf', c.get('rtf'))
    rtf_text = '-' if rtf is None or math.isnan(rtf) else f'{rtf:.2f}'
    return (f'RTF {rtf_text} but the {result.rate_hz:g} Hz controller ran {cycles} cycles in '
            f'{result.duration_s:g} s: /clock every {period_ms:g} ms (a sim-time timer runs at '
            f'most once per /clock message, {1000.0 / period_ms:g} Hz here; rcl skips the '
            f'periods in between: {_fmt(t.get("skipped"))} skipped)')


DEFAULT_THRESHOLDS = Thresholds()


def pace_sentence(rtf: float | None, worst_bin: float | None, target: float,
                  thresholds: Thresholds = DEFAULT_THRESHOLDS) -> str:
    """Say what the RTF figures say about the simulator, with the monitor's clock levels.

    The clock is WARN below ``rtf_warn_fraction`` of the target and ERROR below
    ``rtf_error_fraction``; a whole-phase RTF can look fine while one 100 ms window froze,
    so the worst window is judged as well.
    """
    if rtf is None or math.isnan(rtf):
        return 'no RTF was measured'
    figures = f'RTF {_fmt(rtf)} against a target of {target:g}'
    worst = '' if worst_bin is None or math.isnan(worst_bin) else _fmt(worst_bin)
    froze = bool(worst) and worst_bin < thresholds.rtf_error_fraction * target
    if rtf < thresholds.rtf_warn_fraction * target:
        tail = f', worst 100 ms window {worst}' if worst else ''
        return f'the simulator fell behind ({figures}{tail})'
    if froze:
        return (f'the simulator kept pace on average ({figures}) but not throughout (worst '
                f'100 ms window {worst})')
    tail = f', worst 100 ms window {worst}' if worst else ''
    return f'the simulator kept pace ({figures}{tail})'


RTF_TOLERANCE = 0.05
"""How far from its target sim_clock's RTF may be before the machine counts as too busy."""
RERUN = ('Close other programs (or lower their priority: renice -n 10 -p PID) and run the demo '
         'again; --duration-s 10 lets a short disturbance weigh less, and --phases sim_rtf1 '
         'sim_rtf1_injected runs the pair that makes the point.')


def _phase(name: str) -> Phase | None:
    return next((p for p in PHASES if p.name == name), None)


def busy_signs(result: PhaseResult) -> list[str]:
    """Say what a phase shows that its set-up does not explain: a machine too busy for it.

    Pure, from the phase's figures. A phase without a stall must give 0 deadline misses and
    0 skipped periods (the controller's own record and the monitor's count), and sim_clock,
    which does no work of its own, must reach its target RTF within ``RTF_TOLERANCE``: what
    departs from that was taken by other processes, not caused by the simulator stand-in or
    the controller. Empty when the phase is as expected (or unknown, or failed).
    """
    phase = _phase(result.phase)
    if phase is None or result.error:
        return []
    t, m, c = result.truth, result.monitor, result.sim_clock
    signs = []
    if not phase.stall_ms:
        # Under a /clock coarser than the period each cycle after the first misses (interval
        # rule) and skips the periods up to the next /clock message: that is the set-up's.
        per_tick = max(1, round(result.rate_hz / phase.clock_publish_hz)
                       if phase.clock_publish_hz else 1)
        runs = max(0, (t.get('cycles') or 0) - 1) if per_tick > 1 else 0
        expected = (runs, (per_tick - 1) * runs)
        own = (t.get('misses') or 0, t.get('skipped') or 0)
        seen = (m.get('misses') or 0, m.get('skipped') or 0)
        setup = (f' beyond the {expected[0]} and {expected[1]} its /clock gives'
                 if per_tick > 1 else '')
        if own != expected:
            signs.append(f'no stall was injected, yet the controller missed {own[0]} '
                         f'deadlines and skipped {own[1]} periods by its own record{setup}')
        elif seen != expected:
            signs.append(f'no stall was injected, yet the monitor counted {seen[0]} deadline '
                         f'misses and {seen[1]} skipped periods{setup} (messages held up on '
                         'their way)')
    if phase.use_sim_time:
        rtf = c.get('rtf')
        source = 'sim_clock reached'
        if rtf is None or (isinstance(rtf, float) and math.isnan(rtf)):
            rtf, source = m.get('rtf'), 'the monitor measured'
        if (rtf is not None and not math.isnan(rtf)
                and abs(rtf / phase.target_rtf - 1) > RTF_TOLERANCE):
            signs.append(f'{source} RTF {_fmt(rtf)} against a target of {phase.target_rtf:g}, '
                         'though sim_clock does no work of its own')
    return signs


def too_busy(results: Sequence[PhaseResult]) -> str | None:
    """Return the verdict of a run on a machine too busy to reproduce the reference, or None.

    Names each phase that departed from what its set-up gives (``busy_signs``), says whether
    the cgroup throttled the CPU (0 throttled periods: the load came from other processes,
    which cgroup counters do not see) and how to run it again.
    """
    found = [(r.phase, signs) for r in results if (signs := busy_signs(r))]
    if not found:
        return None
    where = '; '.join(f"{phase}: {', '.join(signs)}" for phase, signs in found)
    throttled = [r.monitor.get('throttled') for r in results if r.monitor]
    counted = [n for n in throttled if isinstance(n, int)]
    if counted and not any(counted):
        cause = ('The cgroup was never throttled (0 CPU quota periods), so the CPU went to other '
                 'processes, which cgroup counters do not see.')
    elif counted:
        cause = (f'The cgroup was throttled in {sum(counted)} CPU quota periods: its quota is '
                 'too small for the demo.')
    else:
        cause = 'The cgroup counters were unavailable.'
    return (f'This machine was too busy to reproduce the reference measurement, so these '
            f'figures do not show the controller or the simulator alone ({where}). {cause} '
            f'{RERUN}')


def headline(results: Sequence[PhaseResult]) -> str | None:
    """State the claim of the reference measurement with this run's numbers, as they are.

    On a machine visibly too busy (``too_busy``) the verdict says that, and how to rerun,
    instead of blaming the simulator or the controller for what other processes did.
    """
    busy = too_busy(results)
    stalled = next((r for r in results if r.phase == 'sim_rtf1_injected' and r.monitor), None)
    if stalled is None:
        return busy
    m = stalled.monitor
    target = next(p.target_rtf for p in PHASES if p.name == stalled.phase)
    misses, skipped = m.get('misses'), m.get('skipped')
    figures = (f"RTF {_fmt(m.get('rtf'))} and {misses} deadline misses, {skipped} skipped "
               'periods in the same run')
    if busy is not None:
        return f'{busy} Measured: {figures}.'
    loop = ('the control loop did not keep its deadlines' if misses or skipped
            else 'the control loop kept every deadline')
    clock = pace_sentence(m.get('rtf'), m.get('rtf_100ms_min'), target)
    return f'{figures}: {clock}; {loop}.'


def build_parser() -> argparse.ArgumentParser:
    """Command-line interface of ``demo``."""
    parser = argparse.ArgumentParser(
        prog='demo', description='Reproduce the reference measurement live: sim_clock, a '
        '100 Hz controller and the monitor in separate processes, six phases.',
        epilog='ROS arguments after --ros-args go to every process of the demo (e.g. '
               '--ros-args -r __ns:=/demo1 runs it in a namespace of its own).')
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``demo`` to ``parser`` (also ``ros2 deadline demo``'s)."""
    parser.add_argument('--phases', nargs='+', choices=[p.name for p in PHASES],
                        default=[p.name for p in PHASES], help='phases to run (default: all)')
    parser.add_argument('--duration-s', type=float, default=5.0,
                        help='wall time per phase (default: 5)')
    parser.add_argument('--rate-hz', type=float, default=100.0,
                        help='controller rate (default: 100)')
    parser.add_argument('--stall-every', type=int, default=50,
                        help='stall every Nth cycle in the stall phases (default: 50)')
    parser.add_argument('--json', type=Path, help='also write the figures to this JSON file')


def main(argv: Sequence[str] | None = None) -> int:
    """Run the phases and print one table per phase; Ctrl-C, SIGTERM or SIGHUP stops them."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra_ros_args = [arg for section in ros_arguments(argv) for arg in section]
    args = build_parser().parse_args(argv[:argv.index('--ros-args')] if '--ros-args' in argv
                                     else argv)
    # SIGINT too: Python leaves SIGINT ignored when it started ignored (a background job of a
    # non-interactive shell, some CI runners), and `kill -INT` would then not stop the demo.
    # SIGHUP: a closed terminal stops the demo's children like Ctrl-C.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    if args.duration_s <= 0 or args.rate_hz <= 0 or args.stall_every < 1:
        print('ERROR: --duration-s, --rate-hz and --stall-every must be positive',
              file=sys.stderr)
        return 2
    try:
        listener = StatsListener(extra_ros_args)
    except ImportError as err:
        print(f'ERROR: the demo needs the built package (its messages): {err}', file=sys.stderr)
        return 1
    results = []
    try:
        for phase in (p for p in PHASES if p.name in args.phases):
            result = run_phase(phase, listener, duration_s=args.duration_s,
                               rate_hz=args.rate_hz, stall_every=args.stall_every,
                               extra_ros_args=extra_ros_args)
            results.append(result)
            print(format_phase(result), flush=True)
    except KeyboardInterrupt:
        return 130
    finally:
        listener.close()
    line = headline(results)
    if line:
        print(f'\n{line}')
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 1 if any(r.error for r in results) else 0


if __name__ == '__main__':
    sys.exit(main())
