"""A snapshot (integer ns, NaN for "nothing measured") to the package's stats messages.

Units change here and only here for the messages: ns become ms or s as the field names say
(``core/units.py``). The mapping stays explicit, field by field; a test checks it against the
table of figures (``core/figures.py``), whose entries name the field each figure fills.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from builtin_interfaces.msg import Time
from std_msgs.msg import Header

from ros2_deadline_monitor.core.reports import IntervalSummary
from ros2_deadline_monitor.core.snapshot import (
    ClockSnapshot,
    HostSnapshot,
    Snapshot,
    TopicSnapshot,
)
from ros2_deadline_monitor.core.units import NS_PER_S, to_ms, to_s
from ros2_deadline_monitor.msg import (
    ClockStats,
    HostStats,
    IntervalStats,
    MonitorStats,
    TopicStats,
)

if TYPE_CHECKING:
    from ros2_deadline_monitor.shell.report_outputs import TopicStatsCache

NAN = float('nan')


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
        mean_ms=to_ms(summary.mean_ns),
        min_ms=to_ms(summary.min_ns),
        max_ms=to_ms(summary.max_ns),
        max_at_s=to_s(summary.max_at_ns),
        p50_ms=to_ms(summary.p50_ns),
        p95_ms=to_ms(summary.p95_ns),
        p99_ms=to_ms(summary.p99_ns),
        tail_amplification=float(summary.tail_amplification),
        over_period=summary.over_period,
        over_period_plus_jitter=summary.over_period_plus_jitter,
        over_wall_budget=summary.over_wall_budget,
    )


def topic_stats(topic: TopicSnapshot, wall_ns: int, arrival_source: str,
                stamp_header: Header | None = None) -> TopicStats:
    """Convert one monitored topic (it has a report) reported at ``wall_ns``.

    ``stamp_header``: the header it carries (a new one stamped ``wall_ns`` by default).
    """
    report = topic.report
    assert report is not None, 'only topics with a report have stats'
    last = report.last_arrival_wall_ns
    return TopicStats(
        header=header(wall_ns) if stamp_header is None else stamp_header,
        name=report.name,
        topic=report.topic,
        type=topic.type_name,
        level=int(topic.level),
        status=topic.reason,
        rule=report.rule,
        start_source=report.start_source,
        arrival_source=arrival_source,
        timer_clock=report.timer_clock,
        period_learned=report.period_learned,
        period_ms=to_ms(report.period_ns),
        deadline_ms=to_ms(report.deadline_ns),
        jitter_tolerance_ms=to_ms(report.jitter_ns),
        wall_budget_ms=to_ms(report.wall_budget_ns),
        window_wall_s=to_s(report.window_wall_ns),
        window_sim_s=to_s(report.window_sim_ns),
        messages_total=report.messages_total,
        deadline_misses_total=report.deadline_misses_total,
        skipped_periods_total=report.skipped_periods_total,
        messages_lost_total=report.messages_lost_total,
        malformed_total=report.malformed_total,
        qos_deadline_events_total=report.qos_deadline_events_total,
        resets_total=report.resets_total,
        foreign_stamps_total=report.foreign_stamps_total,
        outages_total=report.outages_total,
        outage_total_s=to_s(report.outage_total_ns),
        outage_max_s=to_s(report.outage_max_ns),
        producer_runs_total=report.producer_runs_total,
        unattributed_total=report.unattributed_total,
        producers=report.producers,
        loss_note=report.loss_note,
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
        lateness_mean_ms=to_ms(report.lateness_mean_ns),
        lateness_max_ms=to_ms(report.lateness_max_ns),
        response_mean_ms=to_ms(report.response_mean_ns),
        response_max_ms=to_ms(report.response_max_ns),
        response_p99_ms=to_ms(report.response_p99_ns),
        size_mean_bytes=float(report.size_mean_bytes),
        size_max_bytes=float(report.size_max_bytes),
        bandwidth_bytes_per_s=float(report.bandwidth_bytes_per_s),
        age_mean_ms=to_ms(report.age_mean_ns),
        age_max_ms=to_ms(report.age_max_ns),
        since_last_message_s=NAN if last is None else to_s(wall_ns - last),
    )


def clock_stats(snapshot: Snapshot, clock: ClockSnapshot) -> ClockStats:
    """Convert the /clock part."""
    report = clock.report
    return ClockStats(
        header=header(snapshot.wall_ns),
        level=int(clock.level),
        status=clock.reason,
        receiving=report.messages > 0,
        messages_total=report.messages_total,
        messages=report.messages,
        window_wall_s=to_s(report.window_wall_ns),
        window_sim_s=to_s(report.window_sim_ns),
        sim_time_s=to_s(report.sim_time_ns),
        rtf=float(report.rtf),
        rtf_total=float(report.rtf_total),
        rtf_bin_s=to_s(report.rtf_bin_ns),
        rtf_bin_min=float(report.rtf_bin_min),
        rtf_bin_min_at_s=to_s(report.rtf_bin_min_at_ns),
        rtf_bin_max=float(report.rtf_bin_max),
        step_ms=to_ms(report.step_ns),
        max_wall_gap_ms=to_ms(report.max_wall_gap_ns),
        max_wall_gap_at_s=to_s(report.max_wall_gap_at_ns),
        resets_total=report.resets_total,
        paused=report.paused,
        simulator_rtf=float(clock.simulator_rtf),
    )


def host_stats(host: HostSnapshot) -> HostStats:
    """Convert the host part and the lateness of the monitor's own stats timer."""
    report = host.report
    return HostStats(
        cgroup_available=report.cgroup_available,
        cgroup_nr_periods=report.cgroup_nr_periods,
        cgroup_nr_throttled=report.cgroup_nr_throttled,
        cgroup_throttled_ms=to_ms(report.cgroup_throttled_ns),
        monitor_cpu_percent=float(report.cpu_fraction * 100),
        monitor_minor_faults=report.minor_faults,
        monitor_max_rss_mb=report.max_rss_bytes / 1e6,
        stats_timer_late_max_ms=to_ms(host.stats_timer_late_ns),
    )


def monitor_stats(snapshot: Snapshot, cache: TopicStatsCache | None = None) -> MonitorStats:
    """Bundle one report: every topic with a report, the clock, the host.

    Its spans are the widest of its parts. Topics whose configuration is invalid have no
    figures and show only in ``/diagnostics``. ``cache``: reuse unchanged topics' messages.
    """
    clock = clock_stats(snapshot, snapshot.clock)
    if cache is not None:
        topics = cache.messages(snapshot)
        stamp_header = cache.header
    else:
        stamp_header = header(snapshot.wall_ns)
        topics = [topic_stats(t, snapshot.wall_ns, snapshot.arrival_timestamp)
                  for t in snapshot.topics if t.report is not None]
    return MonitorStats(
        header=stamp_header,
        window_wall_s=_widest([clock.window_wall_s] + [t.window_wall_s for t in topics]),
        window_sim_s=_widest([clock.window_sim_s] + [t.window_sim_s for t in topics]),
        clock=clock,
        topics=topics,
        host=host_stats(snapshot.host),
    )


def _widest(spans: list[float]) -> float:
    return max((s for s in spans if not math.isnan(s)), default=0.0)
