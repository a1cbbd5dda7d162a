"""Diagnostic statuses from the core's reports, and their way onto ``/diagnostics``.

One status per monitored topic (``<node>: topic <id>``), one for the clock (``<node>:
clock``) and one for the host (``<node>: host``). No ``/`` appears in a status name:
``rqt_robot_monitor`` splits names on it to build its tree. Every key names its unit.

The statuses are built once, here, and published either through ``diagnostic_updater`` (when
installed) or by the monitor itself; both give the same array. The updater is driven from
the monitor's steady stats timer with ``force_update()``: its own timer runs on the node's
clock (sim time under ``use_sim_time``, so it stops with the simulator), so it is destroyed
right after construction, and its ``period`` setter (which adds a timer) is never used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import QoSProfile

from ros2_deadline_monitor.core.reports import (
    ClockReport,
    HostReport,
    IntervalSummary,
    Level,
    TopicReport,
)
from ros2_deadline_monitor.core.snapshot import Receive, Snapshot
from ros2_deadline_monitor.shell.optional import diagnostic_updater

NS_PER_MS = 1e6
NS_PER_S = 1e9
NOT_AVAILABLE = 'n/a'
DIAGNOSTICS_TOPIC = '/diagnostics'
DIAGNOSTICS_DEPTH = 10


def topic_status_name(topic_id: str) -> str:
    """Return the status name of a topic, without the node prefix."""
    return f'topic {topic_id}'


CLOCK_STATUS = 'clock'
HOST_STATUS = 'host'


def _num(value: float | int | None, digits: int = 3) -> str:
    """Format a figure; NaN and None (nothing measured) become 'n/a'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NOT_AVAILABLE
    if isinstance(value, int):
        return str(value)
    return f'{value:.{digits}f}'


def _ms(ns: float | int | None) -> str:
    return _num(None if ns is None else ns / NS_PER_MS)


def _s(ns: float | int | None) -> str:
    return _num(None if ns is None else ns / NS_PER_S)


def _bool(value: bool) -> str:
    return 'true' if value else 'false'


def level_byte(level: Level | int) -> bytes:
    """Return a level as the ``byte`` the DiagnosticStatus message field holds."""
    return bytes([int(level)])


def make_status(name: str, level: Level, message: str, hardware_id: str,
                values: Sequence[tuple[str, str]]) -> DiagnosticStatus:
    """Build one status (name without the node prefix; the output adds it)."""
    return DiagnosticStatus(
        level=level_byte(level), name=name, message=message, hardware_id=hardware_id,
        values=[KeyValue(key=k, value=v) for k, v in values])


def _interval_values(summary: IntervalSummary) -> list[tuple[str, str]]:
    c = summary.clock
    values = [
        (f'intervals {c}', str(summary.count)),
        (f'mean interval {c} (ms)', _ms(summary.mean_ns)),
        (f'min interval {c} (ms)', _ms(summary.min_ns)),
        (f'max interval {c} (ms)', _ms(summary.max_ns)),
        (f'max interval {c} at (s)', _s(summary.max_at_ns)),
        (f'p50 interval {c} (ms)', _ms(summary.p50_ns)),
        (f'p95 interval {c} (ms)', _ms(summary.p95_ns)),
        (f'p99 interval {c} (ms)', _ms(summary.p99_ns)),
        (f'tail amplification {c} (p99/p50)', _num(summary.tail_amplification)),
        (f'intervals {c} over period', str(summary.over_period)),
        (f'intervals {c} over period+jitter', str(summary.over_period_plus_jitter)),
    ]
    if c == 'wall':
        values.append(('intervals wall over wall budget', str(summary.over_wall_budget)))
    return values


def topic_values(report: TopicReport, type_name: str, arrival_source: str,
                 rtf: float, now_wall_ns: int) -> list[tuple[str, str]]:
    """Key/value pairs of one topic: configuration in force, counters, window figures."""
    since = (None if report.last_arrival_wall_ns is None
             else now_wall_ns - report.last_arrival_wall_ns)
    lost = str(report.messages_lost) if report.loss_known else 'unknown (several writers)'
    return [
        ('topic', report.topic),
        ('type', type_name or NOT_AVAILABLE),
        ('rule', report.rule),
        ('start source', report.start_source),
        ('arrival timestamp', arrival_source),
        ('timer clock', report.timer_clock),
        ('period (ms)', _ms(report.period_ns)),
        ('period learned', _bool(report.period_learned)),
        ('deadline (ms)', _ms(report.deadline_ns)),
        ('jitter tolerance (ms)', _ms(report.jitter_ns)),
        ('wall budget (ms)', _ms(report.wall_budget_ns)),
        ('timeout (s)', _s(report.timeout_ns)),
        ('window wall (s)', _s(report.window_wall_ns)),
        ('window sim (s)', _s(report.window_sim_ns)),
        ('messages', str(report.messages)),
        ('deadline misses', str(report.deadline_misses)),
        ('skipped periods', str(report.skipped_periods)),
        ('messages lost', lost),
        ('miss ratio (%)', _num(report.miss_ratio * 100, 2)),
        ('RTF', _num(rtf)),
        ('rate wall (Hz)', _num(report.rate_wall_hz)),
        ('rate sim (Hz)', _num(report.rate_sim_hz)),
        *_interval_values(report.interval_wall),
        *_interval_values(report.interval_sim),
        ('mean lateness (ms)', _ms(report.lateness_mean_ns)),
        ('max lateness (ms)', _ms(report.lateness_max_ns)),
        ('mean response (ms)', _ms(report.response_mean_ns)),
        ('max response (ms)', _ms(report.response_max_ns)),
        ('p99 response (ms)', _ms(report.response_p99_ns)),
        ('mean size (bytes)', _num(report.size_mean_bytes, 1)),
        ('max size (bytes)', _num(report.size_max_bytes, 0)),
        ('bandwidth (bytes/s)', _num(report.bandwidth_bytes_per_s, 1)),
        ('mean age (ms)', _ms(report.age_mean_ns)),
        ('max age (ms)', _ms(report.age_max_ns)),
        ('since last message (s)', _s(since)),
        ('messages total', str(report.messages_total)),
        ('deadline misses total', str(report.deadline_misses_total)),
        ('skipped periods total', str(report.skipped_periods_total)),
        ('messages lost total', str(report.messages_lost_total)),
        ('malformed total', str(report.malformed_total)),
        ('QoS deadline events total', str(report.qos_deadline_events_total)),
        ('sim resets total', str(report.resets_total)),
    ]


def clock_values(report: ClockReport, clock_topic: str, target_rtf: float,
                 simulator_rtf: float, publishers: int | None = None) -> list[tuple[str, str]]:
    """Key/value pairs of the /clock stream and the RTF (``publishers``: from the graph)."""
    counted = [] if publishers is None else [('clock publishers', str(publishers))]
    return [
        ('clock topic', clock_topic),
        *counted,
        ('RTF', _num(report.rtf)),
        ('RTF total', _num(report.rtf_total)),
        ('RTF target', _num(target_rtf)),
        ('simulator RTF', _num(simulator_rtf)),
        ('RTF bin (s)', _s(report.rtf_bin_ns)),
        ('RTF min bin', _num(report.rtf_bin_min)),
        ('RTF min bin at (s)', _s(report.rtf_bin_min_at_ns)),
        ('RTF max bin', _num(report.rtf_bin_max)),
        ('sim time (s)', _s(report.sim_time_ns)),
        ('window wall (s)', _s(report.window_wall_ns)),
        ('window sim (s)', _s(report.window_sim_ns)),
        ('messages', str(report.messages)),
        ('messages total', str(report.messages_total)),
        ('sim step (ms)', _ms(report.step_ns)),
        ('max wall gap (ms)', _ms(report.max_wall_gap_ns)),
        ('max wall gap at (s)', _s(report.max_wall_gap_at_ns)),
        ('paused', _bool(report.paused)),
        ('sim resets', str(report.resets)),
        ('sim resets total', str(report.resets_total)),
    ]


def host_values(report: HostReport, stats_timer_late_ns: int) -> list[tuple[str, str]]:
    """Key/value pairs of the host context (cgroup throttling, the monitor's own load)."""
    cgroup = report.cgroup_available
    return [
        ('cgroup cpu.stat', 'available' if cgroup else 'unavailable'),
        ('cgroup periods', str(report.cgroup_nr_periods) if cgroup else NOT_AVAILABLE),
        ('cgroup throttled periods',
         str(report.cgroup_nr_throttled) if cgroup else NOT_AVAILABLE),
        ('cgroup throttled (ms)', _ms(report.cgroup_throttled_ns) if cgroup else NOT_AVAILABLE),
        ('monitor CPU (%)', _num(report.cpu_fraction * 100, 1)),
        ('monitor minor faults', str(report.minor_faults)),
        ('monitor max RSS (MB)', _num(report.max_rss_bytes / 1e6, 1)),
        ('stats timer late (ms)', _ms(stats_timer_late_ns)),
    ]


def statuses(snapshot: Snapshot) -> list[DiagnosticStatus]:
    """All statuses of one snapshot: one per topic, the clock, the host."""
    out = []
    now = snapshot.wall_ns
    clock = snapshot.clock
    for topic in snapshot.topics:
        values: list[tuple[str, str]] = []
        if topic.report is not None:
            values = topic_values(topic.report, topic.type_name, snapshot.arrival_timestamp,
                                  clock.report.rtf, now) + _receive_values(topic.receive)
        out.append(make_status(topic_status_name(topic.topic_id), topic.level, topic.reason,
                               '', values))
    out.append(make_status(CLOCK_STATUS, clock.level, clock.reason, '', clock_values(
        clock.report, clock.topic, clock.target_rtf, clock.simulator_rtf, clock.publishers)))
    host = snapshot.host
    out.append(make_status(HOST_STATUS, host.level, host.reason, '',
                           host_values(host.report, host.stats_timer_late_ns)))
    return out


def _receive_values(receive: Receive) -> list[tuple[str, str]]:
    if receive.mode != 'batched':
        return [('receive', 'callback per message')]
    return [
        ('receive', f'batched every {receive.take_period_ns / 1e6:g} ms'),
        ('reader queue depth', str(receive.queue_depth)),
        ('queue overflows total', str(receive.queue_overflows_total)),
        ('messages lost includes', 'messages dropped by a full reader queue'),
    ]


class DiagnosticsOutput:
    """Publishes the statuses on ``/diagnostics``, through diagnostic_updater when installed."""

    def __init__(self, node: Node, hardware_id: str, use_updater: bool = True) -> None:
        """Create the publisher (or the updater, with its own timer destroyed)."""
        self._node = node
        self._hardware_id = hardware_id
        self._latest: dict[str, DiagnosticStatus] = {}
        self._updater = None
        self._publisher = None
        if use_updater and diagnostic_updater is not None:
            updater = diagnostic_updater.Updater(node)
            # Its timer follows the node clock (sim time): never let it fire.
            node.destroy_timer(updater.timer)
            updater.setHardwareID(hardware_id)
            self._updater = updater
        else:
            self._publisher = node.create_publisher(
                DiagnosticArray, DIAGNOSTICS_TOPIC, QoSProfile(depth=DIAGNOSTICS_DEPTH))

    @property
    def uses_updater(self) -> bool:
        """Tell whether diagnostic_updater publishes (else the monitor itself does)."""
        return self._updater is not None

    def set_hardware_id(self, hardware_id: str) -> None:
        """Change the hardware_id of every following status."""
        self._hardware_id = hardware_id
        if self._updater is not None:
            self._updater.setHardwareID(hardware_id)

    def publish(self, statuses: Sequence[DiagnosticStatus]) -> None:
        """Publish one array holding exactly ``statuses`` (names without the node prefix)."""
        for status in statuses:
            status.hardware_id = self._hardware_id
        if self._updater is not None:
            self._sync_tasks(statuses)
            self._updater.force_update()
            return
        array = DiagnosticArray()
        array.header.stamp = self._node.get_clock().now().to_msg()
        prefix = self._node.get_name() + ': '
        for status in statuses:
            array.status.append(DiagnosticStatus(
                level=status.level, name=prefix + status.name, message=status.message,
                hardware_id=status.hardware_id, values=status.values))
        self._publisher.publish(array)

    def flush(self, timeout: Duration) -> None:
        """Wait until subscribers acknowledged what was published (before shutting down)."""
        publisher = self._updater.publisher if self._updater is not None else self._publisher
        publisher.wait_for_all_acked(timeout)

    def _sync_tasks(self, statuses: Sequence[DiagnosticStatus]) -> None:
        """Keep one updater task per status name; each task copies the latest status."""
        latest = {status.name: status for status in statuses}
        for name in set(self._latest) - set(latest):
            self._updater.removeByName(name)
        added = [name for name in latest if name not in self._latest]
        self._latest = latest
        for name in added:
            self._updater.add(name, self._task(name))

    def _task(self, name: str) -> Callable:
        def run(stat):
            status = self._latest[name]
            stat.summary(status.level, status.message)
            stat.hardware_id = status.hardware_id
            stat.values = list(status.values)
            return stat
        return run
