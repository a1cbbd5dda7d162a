"""Summaries of recorded ``ros2_deadline_monitor/msg/MonitorStats`` messages.

When a run was recorded with the monitor's ``~/stats`` topic, the bag already holds the live
figures, one message per stats period. The summary keeps the monitor's final cumulative
counters (a counter that drops means the monitor restarted: the counts of each run are
added) and the worst window figure of any period.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import Any

from .results import RecordedClock, RecordedStats, RecordedTopic

NAN = float('nan')
COUNTERS = ('messages_total', 'deadline_misses_total', 'skipped_periods_total',
            'messages_lost_total', 'malformed_total', 'resets_total')
STALE = 3


def _worst(current: float, value: float, pick: Any = max) -> float:
    """Worst of two figures, ignoring NaN."""
    if math.isnan(value):
        return current
    if math.isnan(current):
        return value
    return pick(current, value)


def _worse_level(current: int, level: int) -> int:
    """OK < WARN < ERROR; STALE (3) only counts when nothing else was reported."""
    if current < 0 or current == STALE:
        return level
    return current if level == STALE else max(current, level)


def _stamp_s(header: Any) -> float:
    return header.stamp.sec + header.stamp.nanosec / 1e9


@dataclass
class _Counters:
    """Cumulative counters summed over monitor restarts."""

    done: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    last: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    restarts: int = 0

    def update(self, values: dict[str, int]) -> None:
        if values['messages_total'] < self.last['messages_total']:
            self.restarts += 1
            for name in COUNTERS:
                self.done[name] += self.last[name]
        self.last = values

    def total(self, name: str) -> int:
        return self.done[name] + self.last[name]


@dataclass
class _TopicAcc:
    stats_topic: str
    last: Any = None
    reports: int = 0
    counters: _Counters = field(default_factory=_Counters)
    worst: dict[str, float] = field(default_factory=dict)
    level: int = -1
    first_s: float = NAN
    last_s: float = NAN

    def add(self, msg: Any) -> None:
        self.reports += 1
        self.last = msg
        self.counters.update({name: int(getattr(msg, name)) for name in COUNTERS})
        figures = {
            'interval_wall_max_ms': msg.interval_wall.max_ms,
            'interval_wall_p99_ms': msg.interval_wall.p99_ms,
            'interval_sim_max_ms': msg.interval_sim.max_ms,
            'interval_sim_p99_ms': msg.interval_sim.p99_ms,
            'response_max_ms': msg.response_max_ms,
            'lateness_max_ms': msg.lateness_max_ms,
            'miss_ratio': msg.miss_ratio,
        }
        for name, value in figures.items():
            self.worst[name] = _worst(self.worst.get(name, NAN), float(value))
        self.level = _worse_level(self.level, int(msg.level))
        stamp = _stamp_s(msg.header)
        if math.isnan(self.first_s):
            self.first_s = stamp
        self.last_s = stamp

    def result(self) -> RecordedTopic:
        msg = self.last
        return RecordedTopic(
            stats_topic=self.stats_topic,
            name=msg.name,
            topic=msg.topic,
            msgtype=msg.type,
            reports=self.reports,
            rule=msg.rule,
            timer_clock=msg.timer_clock,
            start_source=msg.start_source,
            period_ms=float(msg.period_ms),
            period_learned=bool(msg.period_learned),
            messages_total=self.counters.total('messages_total'),
            deadline_misses_total=self.counters.total('deadline_misses_total'),
            skipped_periods_total=self.counters.total('skipped_periods_total'),
            messages_lost_total=self.counters.total('messages_lost_total'),
            malformed_total=self.counters.total('malformed_total'),
            resets_total=self.counters.total('resets_total'),
            monitor_restarts=self.counters.restarts,
            last_rate_wall_hz=float(msg.rate_wall_hz),
            last_rate_sim_hz=float(msg.rate_sim_hz),
            last_interval_wall_mean_ms=float(msg.interval_wall.mean_ms),
            last_interval_sim_mean_ms=float(msg.interval_sim.mean_ms),
            worst_interval_wall_max_ms=self.worst['interval_wall_max_ms'],
            worst_interval_wall_p99_ms=self.worst['interval_wall_p99_ms'],
            worst_interval_sim_max_ms=self.worst['interval_sim_max_ms'],
            worst_interval_sim_p99_ms=self.worst['interval_sim_p99_ms'],
            worst_response_max_ms=self.worst['response_max_ms'],
            worst_lateness_max_ms=self.worst['lateness_max_ms'],
            worst_miss_ratio=self.worst['miss_ratio'],
            worst_level=self.level,
            first_s=self.first_s,
            last_s=self.last_s,
        )


@dataclass
class _ClockAcc:
    reports: int = 0
    last: Any = None
    messages_done: int = 0
    resets_done: int = 0
    worst_window: float = NAN
    worst_bin: float = NAN
    worst_bin_at: float = NAN
    best_bin: float = NAN
    worst_gap: float = NAN
    level: int = -1

    def add(self, clock: Any) -> None:
        if self.last is not None and clock.messages_total < self.last.messages_total:
            self.messages_done += int(self.last.messages_total)
            self.resets_done += int(self.last.resets_total)
        self.reports += 1
        self.last = clock
        self.worst_window = _worst(self.worst_window, float(clock.rtf), min)
        bin_min = float(clock.rtf_bin_min)
        if not math.isnan(bin_min) and not self.worst_bin <= bin_min:
            self.worst_bin = bin_min
            self.worst_bin_at = float(clock.rtf_bin_min_at_s)
        self.best_bin = _worst(self.best_bin, float(clock.rtf_bin_max))
        self.worst_gap = _worst(self.worst_gap, float(clock.max_wall_gap_ms))
        self.level = _worse_level(self.level, int(clock.level))

    def result(self) -> RecordedClock:
        last = self.last
        return RecordedClock(
            reports=self.reports,
            messages_total=self.messages_done + int(last.messages_total),
            last_rtf_total=float(last.rtf_total),
            worst_rtf_window=self.worst_window,
            worst_rtf_bin=self.worst_bin,
            worst_rtf_bin_at_s=self.worst_bin_at,
            rtf_bin_s=float(last.rtf_bin_s),
            best_rtf_bin=self.best_bin,
            worst_max_wall_gap_ms=self.worst_gap,
            resets_total=self.resets_done + int(last.resets_total),
            worst_level=self.level,
        )


class RecordedSummary:
    """Accumulates decoded MonitorStats messages, one call per message."""

    def __init__(self) -> None:
        """Start empty."""
        self._topics: dict[tuple[str, str], _TopicAcc] = {}
        self._clock = _ClockAcc()
        self._stats_topics: list[str] = []
        self.messages = 0
        self.malformed = 0

    def add(self, stats_topic: str, msg: Any) -> None:
        """Take one decoded ``MonitorStats`` recorded on ``stats_topic``."""
        if stats_topic not in self._stats_topics:
            self._stats_topics.append(stats_topic)
        self.messages += 1
        for topic in msg.topics:
            key = (stats_topic, topic.topic)
            if key not in self._topics:
                self._topics[key] = _TopicAcc(stats_topic)
            self._topics[key].add(topic)
        if msg.clock.messages_total or self._clock.reports:
            self._clock.add(msg.clock)

    def result(self) -> RecordedStats:
        """Return the summary so far."""
        return RecordedStats(
            stats_topics=tuple(self._stats_topics),
            messages=self.messages,
            malformed=self.malformed,
            topics=tuple(acc.result() for acc in self._topics.values()),
            clock=self._clock.result() if self._clock.reports else None,
        )
