"""A stream of ``MonitorStats`` messages folded into one ``Snapshot``: the messages' way back.

``outputs/conversions.py`` turns a snapshot into ``MonitorStats``; this turns what a monitor
published (watched live by ``testing.watch_monitor``, or recorded in a bag and read by
``outputs/recorded_stats.py``) back into a snapshot, so the gate, the tables and the figure table
read it like any other. Any object with the message's fields will do (rclpy's messages or
rosbags' decoded ones): no ROS import.

What the fold keeps, per topic and for the clock (per topic, the figure table says which field
folds how: ``Figure.fold``, ``analysis/figures.py``):

- counters (``*_total``, a ``COUNTER`` or ``SUMMED`` figure): the last cumulative value,
  summed over monitor restarts (a counter that drops means the monitor restarted: the counts
  of each run are added);
- whole-run figures (cycles, every interval's count and sum, the longest interval of the
  run): summed over restarts, the longest the longest of all; a message recorded before
  these fields existed leaves them unknown, never 0;
- window figures: the worst of any report (a ``WORST`` figure: longest interval, p99,
  response, lateness, miss ratio; for the clock the lowest RTF window), the others as the last
  report said them;
- the level: the worst reported (STALE only when nothing else was), the reason the last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import Any

from ros2_deadline_monitor.analysis.figures import COUNTER, RUN_TOPIC, SUMMED, TOPIC, TOTALS, WORST
from ros2_deadline_monitor.analysis.reports import (
    ClockReport,
    HostReport,
    IntervalSummary,
    IntervalTotals,
    Level,
    RunTotals,
    TopicReport,
)
from ros2_deadline_monitor.analysis.snapshot import (
    ClockSnapshot,
    HostSnapshot,
    Snapshot,
    TopicSnapshot,
)

__all__ = ['CLOCK_WORST_FIELDS', 'StatsFold', 'WORST_FIELDS']

NAN = float('nan')
COUNTERS = tuple(f.field for f in TOPIC if f.field and f.metric == COUNTER)
"""``TopicStats`` run totals of the window table, summed over monitor restarts."""
RUN_COUNTERS = tuple(f.field for f in RUN_TOPIC if f.field and f.fold == SUMMED)
"""Summed over restarts like the counters; absent from messages recorded before them."""
RUN_LONGEST = tuple(f.field for f in (*TOPIC, *RUN_TOPIC)
                    if f.field and f.fold == WORST and (f in RUN_TOPIC or f.group == TOTALS))
"""The longest of the run (an interval, an outage): the longest any report said."""
WORST_FIELDS = tuple(f.field for f in TOPIC
                     if f.field and f.fold == WORST and f.group != TOTALS)
"""``TopicStats`` window fields whose folded value is the worst of any report (the rest: the
last)."""
CLOCK_WORST_FIELDS = ('rtf', 'rtf_bin_min', 'rtf_bin_max', 'max_wall_gap_ms')
"""``ClockStats`` fields whose folded value is the worst (``rtf_bin_max``: the best) of any."""


def _ns(value_ms_or_s: float, scale: float) -> float:
    return float(value_ms_or_s) * scale


def _int_ns(value: float, scale: float) -> int | None:
    value = float(value)
    return None if math.isnan(value) else round(value * scale)


def _worst(current: float, value: float, pick: Any = max) -> float:
    """Return the worse of two figures, ignoring NaN."""
    value = float(value)
    if math.isnan(value):
        return current
    if math.isnan(current):
        return value
    return pick(current, value)


def _worse_level(current: int, level: int) -> int:
    """OK < WARN < ERROR; STALE only counts when nothing else was reported."""
    if current < 0 or current == Level.STALE:
        return level
    return current if level == Level.STALE else max(current, level)


def _counts_note(msg: Any, period_ns: int | None) -> str:
    """Why the counts are unknown; a message recorded before the field: the period decides."""
    note = getattr(msg, 'counts_note', None)
    if note is not None:
        return note
    timer = (getattr(msg, 'kind', '') or 'timer') == 'timer'
    return 'no period' if timer and period_ns is None else ''


def _read(msg: Any, field: str, default: Any = NAN) -> Any:
    """Return a (dotted) field of a message, ``default`` where the message has none."""
    value = msg
    for name in field.split('.'):
        value = getattr(value, name, default)
    return value


def _stamp_ns(header: Any) -> int:
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


@dataclass
class _Sums:
    """Cumulative values summed over monitor restarts (a drop of ``restart_on`` is one)."""

    names: tuple[str, ...]
    restart_on: str
    done: dict[str, float] = field(default_factory=dict)
    last: dict[str, float] = field(default_factory=dict)
    restarts: int = 0

    def update(self, values: dict[str, float]) -> None:
        if self.last and values[self.restart_on] < self.last[self.restart_on]:
            self.restarts += 1
            for name, value in self.last.items():
                self.done[name] = self.done.get(name, 0) + value
        self.last = values

    def total(self, name: str) -> float:
        return self.done.get(name, 0) + self.last.get(name, 0)


@dataclass
class _TopicFold:
    source: str
    last: Any = None
    reports: int = 0
    level: int = -1
    counters: _Sums = field(default_factory=lambda: _Sums(COUNTERS + RUN_COUNTERS,
                                                          'messages_total'))
    run_known: bool = True
    longest: dict[str, float] = field(default_factory=lambda: dict.fromkeys(RUN_LONGEST, NAN))
    worst: dict[str, float] = field(default_factory=dict)

    def add(self, msg: Any) -> None:
        self.reports += 1
        self.last = msg
        self.run_known = self.run_known and hasattr(msg, 'cycles_total')
        values = {name: _read(msg, name, 0) for name in COUNTERS + RUN_COUNTERS}
        self.counters.update(values)
        for name in RUN_LONGEST:
            self.longest[name] = _worst(self.longest[name], _read(msg, name))
        for name in WORST_FIELDS:
            self.worst[name] = _worst(self.worst.get(name, NAN), _read(msg, name))
        self.level = _worse_level(self.level, int(msg.level))

    def _interval(self, clock: str) -> IntervalSummary:
        field = f'interval_{clock}'
        i = getattr(self.last, field)

        def worst(name: str) -> float:
            return self.worst.get(f'{field}.{name}', NAN)
        return IntervalSummary(
            clock=clock, count=int(i.count), mean_ns=_ns(i.mean_ms, 1e6),
            min_ns=_ns(i.min_ms, 1e6), max_ns=_ns(worst('max_ms'), 1e6),
            max_at_ns=_int_ns(i.max_at_s, 1e9), p50_ns=_ns(i.p50_ms, 1e6),
            p95_ns=_ns(worst('p95_ms'), 1e6), p99_ns=_ns(worst('p99_ms'), 1e6),
            tail_amplification=float(i.tail_amplification), over_period=int(i.over_period),
            over_period_plus_jitter=int(i.over_period_plus_jitter),
            over_wall_budget=int(i.over_wall_budget))

    def _run(self) -> RunTotals:
        if not self.run_known:
            return RunTotals()
        total, longest = self.counters.total, self.longest

        def on(clock: str) -> IntervalTotals:
            count = int(total(f'intervals_{clock}_total'))
            return IntervalTotals(clock, count, round(total(f'interval_{clock}_sum_s') * 1e9),
                                  _ns(longest[f'interval_{clock}_max_run_ms'], 1e6)
                                  if count else NAN)
        return RunTotals(cycles=int(total('cycles_total')), interval_wall=on('wall'),
                         interval_sim=on('sim'))

    def snapshot(self, topic_id: str) -> TopicSnapshot:
        msg, total = self.last, self.counters.total
        period_ns = _int_ns(msg.period_ms, 1e6)
        if period_ns is not None and period_ns <= 0:
            period_ns = None
        stamp_ns = _stamp_ns(msg.header)
        since = float(msg.since_last_message_s)
        outages = int(total('outages_total'))
        report = TopicReport(
            name=msg.name, topic=msg.topic, rule=msg.rule, start_source=msg.start_source,
            timer_clock=msg.timer_clock, period_learned=bool(msg.period_learned),
            period_ns=period_ns, deadline_ns=_int_ns(msg.deadline_ms, 1e6),
            jitter_ns=_int_ns(msg.jitter_tolerance_ms, 1e6),
            wall_budget_ns=_int_ns(msg.wall_budget_ms, 1e6), timeout_ns=None,
            window_wall_ns=_int_ns(msg.window_wall_s, 1e9) or 0,
            window_sim_ns=_int_ns(msg.window_sim_s, 1e9) or 0,
            messages_total=int(total('messages_total')),
            deadline_misses_total=int(total('deadline_misses_total')),
            skipped_periods_total=int(total('skipped_periods_total')),
            messages_lost_total=int(total('messages_lost_total')),
            lost_by_monitor_total=int(total('messages_lost_by_monitor_total')),
            malformed_total=int(total('malformed_total')),
            qos_deadline_events_total=int(total('qos_deadline_events_total')),
            resets_total=int(total('resets_total')),
            messages=int(msg.messages), deadline_misses=int(msg.deadline_misses),
            skipped_periods=int(msg.skipped_periods), messages_lost=int(msg.messages_lost),
            loss_known=bool(msg.loss_known), miss_ratio=self.worst['miss_ratio'],
            rate_wall_hz=float(msg.rate_wall_hz), rate_sim_hz=float(msg.rate_sim_hz),
            interval_wall=self._interval('wall'), interval_sim=self._interval('sim'),
            lateness_mean_ns=_ns(msg.lateness_mean_ms, 1e6),
            lateness_max_ns=_ns(self.worst['lateness_max_ms'], 1e6),
            response_mean_ns=_ns(msg.response_mean_ms, 1e6),
            response_max_ns=_ns(self.worst['response_max_ms'], 1e6),
            response_p99_ns=_ns(msg.response_p99_ms, 1e6),
            size_mean_bytes=float(msg.size_mean_bytes), size_max_bytes=float(msg.size_max_bytes),
            bandwidth_bytes_per_s=float(msg.bandwidth_bytes_per_s),
            age_mean_ns=_ns(msg.age_mean_ms, 1e6), age_max_ns=_ns(self.worst['age_max_ms'], 1e6),
            last_arrival_wall_ns=None if math.isnan(since) else stamp_ns - round(since * 1e9),
            kind=getattr(msg, 'kind', '') or 'timer',
            foreign_stamps_total=int(total('foreign_stamps_total')), outages_total=outages,
            outage_total_ns=round(total('outage_total_s') * 1e9),
            outage_max_ns=(_int_ns(self.longest['outage_max_s'], 1e9) or 0) if outages else 0,
            producer_runs_total=int(total('producer_runs_total')),
            producers=int(msg.producers), unattributed_total=int(total('unattributed_total')),
            loss_note=msg.loss_note, counts_note=_counts_note(msg, period_ns))
        return TopicSnapshot(topic_id=topic_id, topic=msg.topic, type_name=msg.type,
                             level=Level(self.level), reason=msg.status, report=report,
                             run=self._run())


@dataclass
class _ClockFold:
    reports: int = 0
    last: Any = None
    sums: _Sums = field(default_factory=lambda: _Sums(('messages_total', 'resets_total'),
                                                      'messages_total'))
    worst_window: float = NAN
    worst_bin: float = NAN
    worst_bin_at_s: float = NAN
    best_bin: float = NAN
    worst_gap_ms: float = NAN
    worst_gap_at_s: float = NAN
    level: int = -1

    def add(self, clock: Any) -> None:
        self.reports += 1
        self.last = clock
        self.sums.update({'messages_total': int(clock.messages_total),
                          'resets_total': int(clock.resets_total)})
        self.worst_window = _worst(self.worst_window, clock.rtf, min)
        bin_min = float(clock.rtf_bin_min)
        if not math.isnan(bin_min) and not self.worst_bin <= bin_min:
            self.worst_bin, self.worst_bin_at_s = bin_min, float(clock.rtf_bin_min_at_s)
        self.best_bin = _worst(self.best_bin, clock.rtf_bin_max)
        gap = float(clock.max_wall_gap_ms)
        if not math.isnan(gap) and not self.worst_gap_ms >= gap:
            self.worst_gap_ms, self.worst_gap_at_s = gap, float(clock.max_wall_gap_at_s)
        self.level = _worse_level(self.level, int(clock.level))

    def snapshot(self, topic: str) -> ClockSnapshot:
        c = self.last
        if c is None:
            report = ClockReport(0, 0, 0, 0, None, NAN, NAN, 0, NAN, None, NAN, NAN, NAN, None,
                                 0, 0, False, None)
            return ClockSnapshot(topic, report, Level.OK, 'no /clock reported', NAN, False)
        report = ClockReport(
            messages_total=int(self.sums.total('messages_total')), messages=int(c.messages),
            window_wall_ns=_int_ns(c.window_wall_s, 1e9) or 0,
            window_sim_ns=_int_ns(c.window_sim_s, 1e9) or 0,
            sim_time_ns=_int_ns(c.sim_time_s, 1e9), rtf=self.worst_window,
            rtf_total=float(c.rtf_total), rtf_bin_ns=_int_ns(c.rtf_bin_s, 1e9) or 0,
            rtf_bin_min=self.worst_bin, rtf_bin_min_at_ns=_int_ns(self.worst_bin_at_s, 1e9),
            rtf_bin_max=self.best_bin, step_ns=_ns(c.step_ms, 1e6),
            max_wall_gap_ns=_ns(self.worst_gap_ms, 1e6),
            max_wall_gap_at_ns=_int_ns(self.worst_gap_at_s, 1e9),
            resets_total=int(self.sums.total('resets_total')), resets=0,
            paused=bool(c.paused), last_wall_ns=None, rtf_bin_min_run=self.worst_bin,
            rtf_bin_min_run_at_ns=_int_ns(self.worst_bin_at_s, 1e9))
        return ClockSnapshot(topic, report, Level(self.level), c.status, NAN, True,
                             simulator_rtf=float(c.simulator_rtf))


class StatsFold:
    """Folds ``MonitorStats`` messages, one call each, into one ``Snapshot``.

    ``source`` tells monitors apart (a bag's stats topic): a topic is identified by its
    ``name`` (the monitor's identifier), and by ``name@source`` where two sources report the
    same name. The clock figures of every source fold into one clock (one /clock per run).
    The snapshot starts where the first report's window starts, and is taken at the last
    report.
    """

    def __init__(self, clock_topic: str = '/clock') -> None:
        """Start empty; ``clock_topic`` names the clock (the messages do not)."""
        self._topics: dict[tuple[str, str], _TopicFold] = {}
        self._clock = _ClockFold()
        self._clock_topic = clock_topic
        self.messages = 0
        self.sources: list[str] = []
        self._first_ns: int | None = None
        self._last_ns = 0

    def add(self, stats: Any, source: str = '') -> None:
        """Take one ``MonitorStats`` (from ``source``)."""
        self.messages += 1
        if source not in self.sources:
            self.sources.append(source)
        stamp_ns = _stamp_ns(stats.header)
        if self._first_ns is None:  # the start of the first report's window
            self._first_ns = stamp_ns - (_int_ns(stats.window_wall_s, 1e9) or 0)
        self._last_ns = stamp_ns
        for topic in stats.topics:
            key = (source, topic.name)
            fold = self._topics.get(key)
            if fold is None:
                fold = self._topics[key] = _TopicFold(source)
            fold.add(topic)
        if stats.clock.messages_total or self._clock.reports:
            self._clock.add(stats.clock)

    def _ids(self) -> dict[tuple[str, str], str]:
        names: dict[str, int] = {}
        for _, name in self._topics:
            names[name] = names.get(name, 0) + 1
        return {(source, name): name if names[name] == 1 or not source else f'{name}@{source}'
                for source, name in self._topics}

    def reports(self) -> dict[str, tuple[str, int, int]]:
        """Per topic identifier: its source, how many reports and monitor restarts."""
        ids = self._ids()
        return {ids[key]: (fold.source, fold.reports, fold.counters.restarts)
                for key, fold in self._topics.items()}

    @property
    def clock_reports(self) -> int:
        """Reports that carried /clock figures."""
        return self._clock.reports

    def snapshot(self) -> Snapshot:
        """Return the fold so far: one snapshot of whole-run figures (see the module)."""
        ids = self._ids()
        topics = tuple(fold.snapshot(ids[key]) for key, fold in self._topics.items())
        arrival = next((fold.last.arrival_source for fold in self._topics.values()), '')
        return Snapshot(wall_ns=self._last_ns, start_wall_ns=self._first_ns or 0,
                        arrival_timestamp=arrival, topics=topics,
                        clock=self._clock.snapshot(self._clock_topic),
                        host=HostSnapshot(HostReport(), Level.OK, ''))

