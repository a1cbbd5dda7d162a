"""Core reports (integer ns, NaN for "nothing measured") to the package's stats messages.

Units change here and only here: ns become ms or s as the message field names say.
"""

from __future__ import annotations

import math

from builtin_interfaces.msg import Time
from std_msgs.msg import Header

from ros2_deadline_monitor.core.reports import (
    ClockReport,
    HostReport,
    IntervalSummary,
    Level,
    TopicReport,
)
from ros2_deadline_monitor.core.snapshot import Snapshot
from ros2_deadline_monitor.msg import (
    ClockStats,
    HostStats,
    IntervalStats,
    MonitorStats,
    TopicStats,
)

NAN = float('nan')
NS_PER_S = 1_000_000_000


def _ms(ns: float | int | None) -> float:
    return NAN if ns is None else ns / 1e6


def _s(ns: float | int | None) -> float:
    return NAN if ns is None else ns / 1e9


def stamp(wall_ns: int) -> Time:
    """Return a wall (system clock) time in ns as a ``builtin_interfaces/Time``."""
    sec, nanosec = divmod(wall_ns, NS_PER_S)
    return Time(sec=sec, nanosec=nanosec)


def header(wall_ns: int) -> Header:
    """Return the header of a stats message: the report's wall time, no frame."""
    return Header(stamp=stamp(wall_ns))


def interval_stats(summary: IntervalSummary) -> IntervalStats:
    """Convert the interval statistics on one clock."""
    return IntervalStats(
        clock=summary.clock,
        count=summary.count,
        mean_ms=_ms(summary.mean_ns),
        min_ms=_ms(summary.min_ns),
        max_ms=_ms(summary.max_ns),
        max_at_s=_s(summary.max_at_ns),
        p50_ms=_ms(summary.p50_ns),
        p95_ms=_ms(summary.p95_ns),
        p99_ms=_ms(summary.p99_ns),
        tail_amplification=float(summary.tail_amplification),
        over_period=summary.over_period,
        over_period_plus_jitter=summary.over_period_plus_jitter,
        over_wall_budget=summary.over_wall_budget,
    )


def topic_stats(report: TopicReport, now_wall_ns: int, type_name: str, level: Level,
                status: str, arrival_source: str) -> TopicStats:
    """Convert one topic's report, with the level and summary its diagnostic shows."""
    since = (NAN if report.last_arrival_wall_ns is None
             else (now_wall_ns - report.last_arrival_wall_ns) / 1e9)
    return TopicStats(
        header=header(now_wall_ns),
        name=report.name,
        topic=report.topic,
        type=type_name,
        level=int(level),
        status=status,
        rule=report.rule,
        start_source=report.start_source,
        arrival_source=arrival_source,
        timer_clock=report.timer_clock,
        period_learned=report.period_learned,
        period_ms=_ms(report.period_ns),
        deadline_ms=_ms(report.deadline_ns),
        jitter_tolerance_ms=_ms(report.jitter_ns),
        wall_budget_ms=_ms(report.wall_budget_ns),
        window_wall_s=_s(report.window_wall_ns),
        window_sim_s=_s(report.window_sim_ns),
        messages_total=report.messages_total,
        deadline_misses_total=report.deadline_misses_total,
        skipped_periods_total=report.skipped_periods_total,
        messages_lost_total=report.messages_lost_total,
        malformed_total=report.malformed_total,
        qos_deadline_events_total=report.qos_deadline_events_total,
        resets_total=report.resets_total,
        messages=report.messages,
        deadline_misses=report.deadline_misses,
        skipped_periods=report.skipped_periods,
        messages_lost=report.messages_lost,
        loss_known=report.loss_known,
        miss_ratio=float(report.miss_ratio),
        rate_wall_hz=float(report.rate_wall_hz),
        rate_sim_hz=float(report.rate_sim_hz),
        interval_wall=interval_stats(report.interval_wall),
        interval_sim=interval_stats(report.interval_sim),
        lateness_mean_ms=_ms(report.lateness_mean_ns),
        lateness_max_ms=_ms(report.lateness_max_ns),
        response_mean_ms=_ms(report.response_mean_ns),
        response_max_ms=_ms(report.response_max_ns),
        response_p99_ms=_ms(report.response_p99_ns),
        size_mean_bytes=float(report.size_mean_bytes),
        size_max_bytes=float(report.size_max_bytes),
        bandwidth_bytes_per_s=float(report.bandwidth_bytes_per_s),
        age_mean_ms=_ms(report.age_mean_ns),
        age_max_ms=_ms(report.age_max_ns),
        since_last_message_s=since,
    )


def clock_stats(report: ClockReport, now_wall_ns: int, level: Level, status: str,
                simulator_rtf: float) -> ClockStats:
    """Convert the /clock report."""
    return ClockStats(
        header=header(now_wall_ns),
        level=int(level),
        status=status,
        receiving=report.messages > 0,
        messages_total=report.messages_total,
        messages=report.messages,
        window_wall_s=_s(report.window_wall_ns),
        window_sim_s=_s(report.window_sim_ns),
        sim_time_s=_s(report.sim_time_ns),
        rtf=float(report.rtf),
        rtf_total=float(report.rtf_total),
        rtf_bin_s=_s(report.rtf_bin_ns),
        rtf_bin_min=float(report.rtf_bin_min),
        rtf_bin_min_at_s=_s(report.rtf_bin_min_at_ns),
        rtf_bin_max=float(report.rtf_bin_max),
        step_ms=_ms(report.step_ns),
        max_wall_gap_ms=_ms(report.max_wall_gap_ns),
        max_wall_gap_at_s=_s(report.max_wall_gap_at_ns),
        resets_total=report.resets_total,
        paused=report.paused,
        simulator_rtf=float(simulator_rtf),
    )


def host_stats(report: HostReport, stats_timer_late_ns: int) -> HostStats:
    """Convert the host report and the lateness of the monitor's own stats timer."""
    return HostStats(
        cgroup_available=report.cgroup_available,
        cgroup_nr_periods=report.cgroup_nr_periods,
        cgroup_nr_throttled=report.cgroup_nr_throttled,
        cgroup_throttled_ms=_ms(report.cgroup_throttled_ns),
        monitor_cpu_percent=(report.cpu_fraction * 100 if not math.isnan(report.cpu_fraction)
                             else NAN),
        monitor_minor_faults=report.minor_faults,
        monitor_max_rss_mb=report.max_rss_bytes / 1e6,
        stats_timer_late_max_ms=_ms(stats_timer_late_ns),
    )


def monitor_stats(snapshot: Snapshot) -> MonitorStats:
    """Convert one snapshot: every monitored topic, the clock and the host."""
    now = snapshot.wall_ns
    topics = [topic_stats(t.report, now, t.type_name, t.level, t.reason,
                          snapshot.arrival_timestamp)
              for t in snapshot.topics if t.report is not None]
    clock = snapshot.clock
    host = snapshot.host
    return _bundle(now, clock_stats(clock.report, now, clock.level, clock.reason,
                                    clock.simulator_rtf),
                   topics, host_stats(host.report, host.stats_timer_late_ns))


def _bundle(now_wall_ns: int, clock: ClockStats, topics: list[TopicStats],
            host: HostStats) -> MonitorStats:
    """Bundle one stats period; its spans are the widest of its parts."""
    return MonitorStats(
        header=header(now_wall_ns),
        window_wall_s=_widest([clock.window_wall_s] + [t.window_wall_s for t in topics]),
        window_sim_s=_widest([clock.window_sim_s] + [t.window_sim_s for t in topics]),
        clock=clock,
        topics=topics,
        host=host,
    )


def _widest(spans: list[float]) -> float:
    return max((s for s in spans if not math.isnan(s)), default=0.0)
