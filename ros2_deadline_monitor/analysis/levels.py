"""Diagnostic levels from measured figures, as pure functions (docs/design.md, Outputs).

The reasons are what people read first in rqt_robot_monitor: figures are rounded, and a
figure compared with a limit is shown with enough digits to differ from it (never
"RTF 0.950 below 0.950").
"""

from __future__ import annotations

import math

from ros2_deadline_monitor.analysis.config import Thresholds
from ros2_deadline_monitor.analysis.reports import ClockReport, HostReport, Level, TopicReport
from ros2_deadline_monitor.analysis.units import short_seconds

STARVED_FRACTION = 0.5
"""The host status warns when the stats timer fired later than this fraction of its period."""


def topic_level(report: TopicReport, thresholds: Thresholds, now_wall_ns: int,
                timeout_ns: int | None) -> tuple[Level, str]:
    """Level and one-line reason for one topic.

    STALE before the first message; ERROR when it timed out (no message for ``timeout_ns``;
    None: it cannot time out) or the window's miss ratio crosses the threshold; WARN when
    misses, skipped periods or losses happened in the window; OK otherwise.
    """
    if report.last_arrival_wall_ns is None:
        return Level.STALE, 'no message received yet'
    timeout = timeout_ns
    silent_ns = now_wall_ns - report.last_arrival_wall_ns
    if timeout is not None and silent_ns > timeout:
        return Level.ERROR, (f'no message for {short_seconds(silent_ns)} s '
                             f'(timeout {short_seconds(timeout)} s)')
    if report.kind == 'event':
        return _event_level(report)
    summary = (f'{report.deadline_misses} misses ({report.rule} rule), '
               f'{report.skipped_periods} skipped periods in window')
    if report.messages and report.miss_ratio > thresholds.miss_ratio_error:
        ratio, limit = _apart(report.miss_ratio * 100, thresholds.miss_ratio_error * 100, 1)
        return Level.ERROR, f'miss ratio {ratio} % above {limit} %: {summary}'
    lost_count = _known_loss(report)
    if report.deadline_misses or report.skipped_periods or lost_count:
        lost = f', {lost_count} lost' if lost_count else ''
        return Level.WARN, summary + lost
    return Level.OK, summary


def _known_loss(report: TopicReport) -> int:
    """Return the window's loss when it is a figure; 0 when unknown (its note says why)."""
    return report.messages_lost if report.loss_known else 0


def _event_level(report: TopicReport) -> tuple[Level, str]:
    """Level an event topic: no period, so only losses make it WARN (silence: the timeout)."""
    gap = report.interval_wall.max_ns
    summary = f'event topic: {report.messages} messages in window'
    if report.interval_wall.count:
        summary += f', max gap {short_seconds(round(gap))} s'
    if lost_count := _known_loss(report):
        return Level.WARN, f'{summary}, {lost_count} lost'
    return Level.OK, summary


def clock_level(report: ClockReport, thresholds: Thresholds, now_wall_ns: int,
                target_rtf: float, expected: bool) -> tuple[Level, str]:
    """Level and reason for the /clock stream; ``expected`` is True under use_sim_time."""
    if report.last_wall_ns is None:
        if expected:
            return Level.STALE, 'no /clock received yet'
        return Level.OK, 'not using sim time; no /clock'
    silent_ns = now_wall_ns - report.last_wall_ns
    if silent_ns > thresholds.clock_timeout_ns:
        level = Level.ERROR if expected else Level.WARN
        return level, f'/clock silent for {short_seconds(silent_ns)} s (simulator stalled?)'
    level, text = _rtf_level(report, thresholds, target_rtf)
    if report.non_monotonic:
        return Level.ERROR, (f'sim time went back {report.resets} times in this window: '
                             '/clock is not monotonic (jitter, or sources taking turns); RTF '
                             'unknown')
    if report.resets:
        # Said whatever else is wrong: a world reset explains odd figures in this window.
        level, text = max(level, Level.WARN), (f'{text}; sim time jumped back '
                                               f'{report.resets} time(s)')
    if report.jumps:
        # A seek: RTF and every sim-time figure start afresh after it, none spans it.
        level, text = max(level, Level.WARN), (
            f'{text}; sim time jumped forward {report.jumps} time(s) (a seek: kept out of '
            'RTF, sim-time state cleared)')
    return level, text


def _apart(value: float, limit: float, digits: int = 3) -> tuple[str, str]:
    """Format a value and the limit it crossed, with just enough digits to tell them apart."""
    for d in range(digits, digits + 4):
        shown, bound = f'{value:.{d}f}', f'{limit:.{d}f}'
        if shown != bound:
            break
    return shown, bound


def _rtf_level(report: ClockReport, thresholds: Thresholds,
               target_rtf: float) -> tuple[Level, str]:
    rtf_text = f'RTF {report.rtf:.3f}' if not math.isnan(report.rtf) else 'RTF n/a'
    if report.paused:
        return Level.OK, 'simulation paused'
    if not math.isnan(report.rtf):
        for level, fraction in ((Level.ERROR, thresholds.rtf_error_fraction),
                                (Level.WARN, thresholds.rtf_warn_fraction)):
            limit = fraction * target_rtf
            if report.rtf < limit:
                rtf, bound = _apart(report.rtf, limit)
                return level, (f'RTF {rtf} below {bound} ({fraction * 100:g}% of target '
                               f'{target_rtf:g})')
    return Level.OK, rtf_text


def several_clocks_level(level: Level, text: str, publishers: int, resets: int,
                         clock_topic: str) -> tuple[Level, str]:
    """Name several /clock publishers: WARN, ERROR when sim time also jumped back.

    Two simulators (or a simulator and a bag player) on one /clock make sim time alternate
    between them: every sample a 'reset'. The count of publishers says why.
    """
    if publishers <= 1:
        return level, text
    unknown = 'RTF and sim-time figures unknown (their sim times would mix)'
    if resets:
        return Level.ERROR, (f'{publishers} publishers on {clock_topic} disagree: sim time '
                             f'jumped back {resets} time(s) in this window; {unknown}')
    return max(level, Level.WARN), f'{publishers} publishers on {clock_topic}: {unknown}'


def host_level(report: HostReport, stats_timer_late_ns: int = 0,
               stats_period_ns: int = 0) -> tuple[Level, str]:
    """WARN when the cgroup throttled the CPU or the monitor's own timer fired late.

    Unreadable cgroup data is no error. A stats timer more than ``STARVED_FRACTION`` of its
    period late means the monitor's process was starved of CPU.
    """
    if not report.cgroup_available:
        level, text = Level.OK, 'cgroup cpu.stat unavailable'
    elif report.cgroup_nr_throttled:
        level, text = Level.WARN, (f'CPU throttled {report.cgroup_nr_throttled} times, '
                                   f'{report.cgroup_throttled_ns / 1e6:.1f} ms')
    else:
        level, text = Level.OK, 'no CPU throttling'
    if stats_period_ns and stats_timer_late_ns > STARVED_FRACTION * stats_period_ns:
        level = max(level, Level.WARN)
        text += (f'; stats timer fired {stats_timer_late_ns / 1e6:.0f} ms late '
                 '(monitor starved of CPU)')
    return level, text
