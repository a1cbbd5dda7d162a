"""The one table of figures: what each figure is, how it is read and named, where it goes.

Each ``Figure`` describes one figure once: its name and unit (the diagnostic key), how it is
read from a snapshot, its field in the stats messages, its key in the whole-run records, the
expectation that bounds it, and the few plain facts every output needs to show it (digits, a
short column header, whether it means anything for an event topic). The descriptors stay
here, beside the measurement, because the session's levels and the CI gate read them too; the
code that writes them out lives in ``outputs/`` (``outputs/format.py`` turns a figure into
text, ``outputs/figure_docs.py`` generates the documented key lists from these tables).

The order of each table is the order ``rqt_robot_monitor`` shows: the headline figures
first, configuration and the way messages are received last. A figure whose getter returns
None or NaN has nothing to measure and is left out of the diagnostics, unless it is
``always`` shown (counters and the names a script looks up). Points in time on the wall
clock read as seconds since the session started; sim times as sim seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass
import math
from typing import Any

from ros2_deadline_monitor.analysis.reports import IntervalSummary, IntervalTotals, TopicReport
from ros2_deadline_monitor.analysis.snapshot import (
    ClockSnapshot,
    HostSnapshot,
    Snapshot,
    TopicSnapshot,
)
from ros2_deadline_monitor.analysis.transforms import TransformFigures
from ros2_deadline_monitor.analysis.units import to_ms, to_s

__all__ = ['CLOCK', 'COUNTER', 'EVENT_TOPIC', 'Figure', 'GAUGE', 'HOST', 'NO_METRIC', 'RUN_CLOCK',
           'RUN_TOPIC', 'SUMMED', 'TOPIC', 'TRANSFORM', 'TRANSFORM_STATUS', 'WORST', 'applies',
           'find', 'known', 'not_applicable', 'record', 'unknowns']

Value = int | float | str | bool | None

GAUGE = 'gauge'
COUNTER = 'counter'
NO_METRIC = ''
"""What ``Figure.metric`` can say: how ``/metrics`` (``outputs/metrics.py``) exports a figure."""
SUMMED = 'summed'
WORST = 'worst'
"""What ``Figure.fold`` can say besides '' (the last report's value)."""


@dataclass(frozen=True)
class Figure:
    """One figure: how it is named, measured and shown, and where it goes in a message."""

    name: str
    unit: str
    """Shown in the key, e.g. 'ms', 's since start', '%'; '' for counts and words."""
    description: str
    get: Callable[[Snapshot, Any], Value]
    """Value in ``unit`` from the snapshot and its part (a topic, the clock, the host)."""
    group: str
    field: str | None = None
    """Dotted path of the same value in the part's stats message, when there is one."""
    field_scale: float = 1.0
    """Shown value = message field x ``field_scale`` (100 for a ratio shown in %)."""
    digits: int = 3
    always: bool = False
    """Shown even with nothing to measure (reads 'n/a'): counters, names scripts look up."""
    metric: str = GAUGE
    """``COUNTER`` for a run total (it only grows while the monitor runs), ``GAUGE`` for a
    number of the window or a setting, ``NO_METRIC`` for words and for a copy of another
    part's figure. Points in time (``s since start``) are never exported."""
    json: str = ''
    """Key of the figure in the whole-run records (the summary JSON, the bag JSON/CSV): the
    name with its unit, e.g. ``max_interval_wall_ms``; '' when the figure is not in them."""
    column: str = ''
    """Short header of the figure in every table that shows it (``watch``, the bag table and
    its HTML, the recorded table, the shutdown summary), with its unit: ``max wall ms``; ''
    when no table does. Unique within its table of figures."""
    column_digits: int | None = None
    """Decimals in a table's column where fewer than ``digits`` read better (``rate wall Hz``:
    1); None: ``digits``."""
    fold: str = ''
    """How the stats messages of a run fold back into one value (``analysis/stats_fold.py``:
    ``watch``, ``testing.watch_monitor``, a bag's recorded stats): ``WORST``, the largest of
    any report; a ``COUNTER`` and a ``SUMMED`` run total are summed over monitor restarts;
    '' the last report's."""
    per_cycle: bool = False
    """A figure of the cycles on a period (misses, skipped periods, the miss rule): it means
    nothing for an event topic, which has no period; there it is None and reads 'n/a'
    (``applies``), never 'unknown'."""
    limit: str = ''
    """The expectation key that bounds this figure (``max_misses``); '' when none does."""
    why: Callable[[Snapshot, Any], str] | None = None
    """Why the value is unknown (None or NaN): what the gate says for a figure it cannot see."""
    message: Callable[[Snapshot, Any], Value] | None = None
    """The value ``field`` carries where it differs from the shown one (a counter the
    diagnostics show as 'unknown (why)' or leave out while 0); None: the shown value."""
    key: str = dataclasses.field(init=False)  # not ``field``: the attribute above
    """The diagnostic key: the name with its unit (made once: every status reads it)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, 'key', f'{self.name} ({self.unit})' if self.unit else self.name)
        if self.message is None:  # a getter that hides a value carries the plain reading
            object.__setattr__(self, 'message', getattr(self.get, 'raw', None))
        if self.per_cycle:  # the one n/a rule, applied where every output reads the value
            read = self.get

            def get(snapshot: Snapshot, part: Any) -> Value:
                return read(snapshot, part) if applies(self, part) else None
            object.__setattr__(self, 'get', get)

    @property
    def digits_in_column(self) -> int:
        """Return the decimals of the figure in a table's column."""
        return self.digits if self.column_digits is None else self.column_digits

    def value(self, snapshot: Snapshot, part: Any) -> Value:
        """Return the figure's value in its unit (None or NaN: nothing to measure)."""
        return self.get(snapshot, part)

    def unknown(self, snapshot: Snapshot, part: Any) -> str:
        """Return why the value is unknown (call it when ``value`` is None or NaN)."""
        if not applies(self, part):
            return not_applicable(part)
        return self.why(snapshot, part) if self.why is not None else 'not measured'


EVENT_TOPIC = 'event topic: no period, so no misses or skipped periods'
"""Why a per-cycle figure does not apply (``Figure.per_cycle``)."""


def applies(figure: Figure, part: Any) -> bool:
    """Tell whether a figure means anything for ``part``: the one n/a rule of every output.

    A per-cycle figure (misses, skipped periods, the rule) does not apply to an event topic:
    it has no period. Every other figure applies; when it has nothing to measure it is
    unknown (None or NaN, ``Figure.unknown`` says why), never 'n/a'.
    """
    if not figure.per_cycle:
        return True
    report = getattr(part, 'report', None)
    return report is None or report.kind != 'event'


def not_applicable(part: Any) -> str:
    """Say why the per-cycle figures do not apply to ``part`` (an event topic, and how told)."""
    note = part.report.learn_note
    return f'{EVENT_TOPIC} ({note})' if note else EVENT_TOPIC


def find(figures: Sequence[Figure], name: str) -> Figure:
    """Return the figure of ``figures`` named ``name`` (outputs pick their columns by name).

    KeyError names the figure: an output choosing a figure the table no longer has fails when
    it is imported, not when it first shows one.
    """
    for figure in figures:
        if figure.name == name:
            return figure
    raise KeyError(f'no figure named {name!r} in the table')


# -- getters -------------------------------------------------------------------------------

def _raw(get: Callable[[Snapshot, Any], Value], raw: Callable[[Snapshot, Any], Value]
         ) -> Callable[[Snapshot, Any], Value]:
    """Attach to a getter that hides a value (unknown, left out) the plain reading."""
    get.raw = raw  # type: ignore[attr-defined]
    return get


def _nonzero(read: Callable[[TopicReport], Value]) -> Callable[[Snapshot, TopicSnapshot], Value]:
    """Read a counter shown once it is not 0 (the message carries it always)."""
    return _raw(lambda snapshot, topic: read(topic.report) or None,
                lambda snapshot, topic: read(topic.report))


def _if_outages(read: Callable[[TopicReport], Value]
                ) -> Callable[[Snapshot, TopicSnapshot], Value]:
    """Read a figure of the outages, shown once there was one."""
    return _raw(lambda snapshot, topic: read(topic.report) if topic.report.outages_total
                else None, lambda snapshot, topic: read(topic.report))


def _over_one(read: Callable[[TopicReport], int]) -> Callable[[Snapshot, TopicSnapshot], Value]:
    """Read a count of producers, shown when more than one."""
    def get(snapshot: Snapshot, topic: TopicSnapshot) -> Value:
        value = read(topic.report)
        return value if value > 1 else None
    return _raw(get, lambda snapshot, topic: read(topic.report))


def _r(read: Callable[[TopicReport], Value]) -> Callable[[Snapshot, TopicSnapshot], Value]:
    """Read a value from a topic's report (the diagnostics skip topics without one)."""
    return lambda snapshot, topic: read(topic.report)


def _since_start(snapshot: Snapshot, at_ns: int | None) -> float:
    """Return a wall (system-clock) point in time as seconds since the session started."""
    return math.nan if at_ns is None else to_s(at_ns - snapshot.start_wall_ns)


def _since_last(snapshot: Snapshot, topic: TopicSnapshot) -> float:
    last = topic.report.last_arrival_wall_ns
    return math.nan if last is None else to_s(snapshot.wall_ns - last)


def _lost(snapshot: Snapshot, topic: TopicSnapshot) -> Value:
    report = topic.report
    return report.messages_lost if report.messages_total and report.loss_known else None


def _publishers(snapshot: Snapshot, topic: TopicSnapshot) -> str | None:
    return ', '.join(topic.publishers) or None


def _receive(snapshot: Snapshot, topic: TopicSnapshot) -> str | None:
    receive = topic.receive
    if receive.mode == 'batched':
        return f'batched every {receive.take_period_ns / 1e6:g} ms'
    if receive.mode == 'callback':
        return 'callback per message'
    return None


def _batched(read: Callable[[TopicSnapshot], Value]) -> Callable[[Snapshot, TopicSnapshot], Value]:
    """Only a batched reader has a queue of its own."""
    return lambda snapshot, topic: read(topic) if topic.receive.mode == 'batched' else None


def _counts(read: Callable[[TopicReport], Value]) -> Callable[[Snapshot, TopicSnapshot], Value]:
    """Read a count of misses or skipped periods once it is a figure, else None (unknown).

    No message yet (even with a configured period), no period yet or a /clock coarser than
    the topic: unknown, never 0 (``_counts_note`` says why); the message carries the plain
    reading.
    """
    def get(snapshot: Snapshot, topic: TopicSnapshot) -> Value:
        report = topic.report
        return None if report.counts_note or not report.messages_total else read(report)
    return _raw(get, lambda snapshot, topic: read(topic.report))


NO_MESSAGE = 'no message received'


def _counts_note(snapshot: Snapshot, topic: TopicSnapshot) -> str:
    report = topic.report
    if not report.messages_total:
        return NO_MESSAGE
    return report.counts_note or 'no period'


def _loss_note(snapshot: Snapshot, topic: TopicSnapshot) -> str:
    report = topic.report
    if not report.messages_total:
        return NO_MESSAGE
    return report.loss_note or SEVERAL_WRITERS


def _rtf(snapshot: Snapshot, part: Any) -> float:
    return snapshot.clock.report.rtf


# -- topic figures ---------------------------------------------------------------------------

HEADLINE = 'headline'
TOTALS = 'totals'
CYCLES = 'per cycle'
CONFIGURATION = 'configuration'
RECEIVE = 'receive'
DETAILS = 'details'


def _intervals(clock: str) -> tuple[Figure, ...]:
    """Return the interval statistics on one clock (the max is a headline figure)."""
    def summary(topic: TopicSnapshot) -> IntervalSummary:
        return topic.report.interval_wall if clock == 'wall' else topic.report.interval_sim

    def measured(read: Callable[[IntervalSummary], Value]) -> Callable[..., Value]:
        def get(snapshot: Snapshot, topic: TopicSnapshot) -> Value:
            s = summary(topic)
            return read(s) if s.count else None
        return _raw(get, lambda snapshot, topic: read(summary(topic)))

    def against_period(read: Callable[[IntervalSummary], Value]) -> Callable[..., Value]:
        def get(snapshot: Snapshot, topic: TopicSnapshot) -> Value:
            s = summary(topic)
            return read(s) if s.count and topic.report.period_ns is not None else None
        return _raw(get, lambda snapshot, topic: read(summary(topic)))

    def max_at(snapshot: Snapshot, topic: TopicSnapshot) -> Value:
        s = summary(topic)
        if s.max_at_ns is None:
            return None
        return _since_start(snapshot, s.max_at_ns) if clock == 'wall' else to_s(s.max_at_ns)

    group = f'intervals {clock}'
    field = f'interval_{clock}'
    figures = [
        Figure(f'intervals {clock}', '', 'intervals between cycle starts in the window',
               lambda snapshot, topic: summary(topic).count, group, f'{field}.count',
               always=True),
        Figure(f'mean interval {clock}', 'ms', 'mean interval',
               measured(lambda s: to_ms(s.mean_ns)), group, f'{field}.mean_ms'),
        Figure(f'min interval {clock}', 'ms', 'shortest interval',
               measured(lambda s: to_ms(s.min_ns)), group, f'{field}.min_ms'),
        Figure(f'max interval {clock} at', 's since start' if clock == 'wall' else 's sim time',
               'end of the longest interval' + (', seconds since the monitor started'
                                                if clock == 'wall' else ', in sim time'),
               max_at, group, None if clock == 'wall' else f'{field}.max_at_s', digits=2),
        Figure(f'p50 interval {clock}', 'ms', 'median interval (linear interpolation)',
               measured(lambda s: to_ms(s.p50_ns)), group, f'{field}.p50_ms'),
        Figure(f'p95 interval {clock}', 'ms', '95th percentile interval',
               measured(lambda s: to_ms(s.p95_ns)), group, f'{field}.p95_ms', fold=WORST),
        Figure(f'p99 interval {clock}', 'ms', '99th percentile interval',
               measured(lambda s: to_ms(s.p99_ns)), group, f'{field}.p99_ms', fold=WORST),
        Figure(f'tail amplification {clock}', 'p99/p50', 'how much longer the tail is',
               measured(lambda s: s.tail_amplification), group, f'{field}.tail_amplification',
               digits=2),
        Figure(f'intervals {clock} over period', '', 'intervals longer than the period T',
               against_period(lambda s: s.over_period), group, f'{field}.over_period'),
        Figure(f'intervals {clock} over period+jitter', '',
               'intervals longer than T + J (late by the interval rule)',
               against_period(lambda s: s.over_period_plus_jitter), group,
               f'{field}.over_period_plus_jitter'),
    ]
    if clock == 'wall':
        figures.append(Figure(
            'intervals wall over wall budget', '',
            'wall intervals longer than the wall budget per cycle',
            measured(lambda s: s.over_wall_budget), group, f'{field}.over_wall_budget'))
    return tuple(figures)


def _max_interval(clock: str) -> Figure:
    def get(snapshot: Snapshot, topic: TopicSnapshot) -> float:
        s = topic.report.interval_wall if clock == 'wall' else topic.report.interval_sim
        return to_ms(s.max_ns)
    return Figure(f'max interval {clock}', 'ms',
                  f'longest interval between cycle starts on the {clock} clock in the window, '
                  'outages included (gaps are never hidden)',
                  get, HEADLINE, f'interval_{clock}.max_ms', column=f'max {clock} ms',
                  column_digits=2, fold=WORST)


TOPIC: tuple[Figure, ...] = (
    Figure('deadline misses', '', 'cycles that missed their deadline in the window, by the '
           'rule (`n/a` for an event topic)',
           _counts(lambda r: r.deadline_misses), HEADLINE, 'deadline_misses', always=True,
           per_cycle=True, why=_counts_note),
    Figure('skipped periods', '', "timer periods skipped in the window (rcl's timer rule; "
           '`n/a` for an event topic)',
           _counts(lambda r: r.skipped_periods), HEADLINE, 'skipped_periods', always=True,
           per_cycle=True, why=_counts_note),
    _max_interval('wall'),
    _max_interval('sim'),
    Figure('RTF', '', 'real time factor of /clock over the stats window', _rtf, HEADLINE,
           metric=NO_METRIC),  # the clock's
    Figure('messages', '', 'messages in the window', _r(lambda r: r.messages), HEADLINE,
           'messages', always=True),
    Figure('messages lost', '',
           'gaps in publication sequence numbers in the window; `unknown` with several writers',
           _lost, HEADLINE, 'messages_lost', always=True, why=_loss_note,
           message=lambda snapshot, topic: topic.report.messages_lost),
    Figure('miss ratio', '%', 'deadline misses / messages in the window',
           _r(lambda r: r.miss_ratio * 100 if r.messages and not r.counts_note
              else math.nan), HEADLINE,
           'miss_ratio', field_scale=100, digits=2, per_cycle=True, fold=WORST,
           message=lambda snapshot, topic: topic.report.miss_ratio * 100),
    Figure('max response', 'ms', 'longest end - scheduled slot, on the timer clock',
           _r(lambda r: to_ms(r.response_max_ns)), HEADLINE, 'response_max_ms', fold=WORST),
    Figure('rate wall', 'Hz', 'message rate on the wall clock', _r(lambda r: r.rate_wall_hz),
           HEADLINE, 'rate_wall_hz', digits=2, column='rate Hz', column_digits=1),
    Figure('rate sim', 'Hz', 'message rate on the sim clock', _r(lambda r: r.rate_sim_hz),
           HEADLINE, 'rate_sim_hz', digits=2),
    Figure('since last message', 's', 'wall time since the last message', _since_last,
           HEADLINE, 'since_last_message_s', digits=1),

    Figure('messages total', '', 'messages since start', _r(lambda r: r.messages_total),
           TOTALS, 'messages_total', always=True, metric=COUNTER, column='msgs'),
    Figure('deadline misses total', '', 'deadline misses since start',
           _counts(lambda r: r.deadline_misses_total), TOTALS, 'deadline_misses_total',
           always=True, metric=COUNTER, per_cycle=True, why=_counts_note, column='misses'),
    Figure('skipped periods total', '', 'skipped periods since start',
           _counts(lambda r: r.skipped_periods_total), TOTALS, 'skipped_periods_total',
           always=True, metric=COUNTER, per_cycle=True, why=_counts_note, column='skipped'),
    Figure('messages lost total', '', "messages lost since start by the producer or the "
           "network (gaps in its sequence numbers), not the monitor's own drops or gaps",
           _r(lambda r: r.messages_lost_total), TOTALS, 'messages_lost_total', always=True,
           metric=COUNTER, column='lost'),
    Figure('messages lost by monitor total', '', "messages the monitor's own reader queue "
           'dropped (full between two takes): its loss, apart from messages lost total',
           _r(lambda r: r.lost_by_monitor_total), TOTALS, 'messages_lost_by_monitor_total',
           always=True, metric=COUNTER),
    Figure('unmonitored gaps total', '', "gaps of the monitor's own: it was not subscribed "
           '(re-subscribing after a QoS or stamp change, or while the topic was refused); '
           'never an outage, a loss, an interval or skipped periods (shown once there are any)',
           _r(lambda r: r.unmonitored_total or None), TOTALS, metric=COUNTER),
    Figure('unmonitored total', 's', 'wall time of those gaps, summed (an open one up to now)',
           _r(lambda r: to_s(r.unmonitored_ns) if r.unmonitored_total else None), TOTALS,
           digits=2, metric=COUNTER),
    Figure('unmonitored messages total', '', 'messages published during those gaps (their '
           'sequence numbers skipped): never counted as lost',
           _r(lambda r: r.unmonitored_messages_total if r.unmonitored_total else None),
           TOTALS, metric=COUNTER),
    Figure('malformed total', '', 'raw messages too short or of unknown encoding',
           _r(lambda r: r.malformed_total), TOTALS, 'malformed_total', always=True,
           metric=COUNTER),
    Figure('QoS deadline events total', '', "middleware 'requested deadline missed' events",
           _r(lambda r: r.qos_deadline_events_total), TOTALS, 'qos_deadline_events_total',
           always=True, metric=COUNTER),
    Figure('sim resets total', '', "sim-time resets (back) and jumps (forward) that cleared "
           "this topic's sim state",
           _r(lambda r: r.resets_total), TOTALS, 'resets_total', always=True, metric=COUNTER),
    Figure('foreign stamps total', '', 'start stamps that cannot be on the timer clock (Unix '
           'time under sim, sim time under wall, or in the future beyond 1 s): counted, never '
           'placed on a grid (shown once there are any)',
           _nonzero(lambda r: r.foreign_stamps_total), TOTALS, 'foreign_stamps_total',
           metric=COUNTER),
    Figure('outages total', '', 'silences longer than the timeout (on the timer clock); the '
           'grids re-anchor after each instead of counting skipped periods',
           _nonzero(lambda r: r.outages_total), TOTALS, 'outages_total',
           metric=COUNTER),
    Figure('outage total', 's', 'wall time of the outages, summed',
           _if_outages(lambda r: to_s(r.outage_total_ns)), TOTALS,
           'outage_total_s', digits=2, metric=COUNTER),
    Figure('longest outage', 's', 'wall time of the longest outage',
           _if_outages(lambda r: to_s(r.outage_max_ns)), TOTALS,
           'outage_max_s', digits=2, fold=WORST),
    Figure('longest outage at', 's since start', 'end of the longest outage',
           lambda snapshot, topic: _since_start(snapshot, topic.report.outage_max_at_ns)
           if topic.report.outages_total else None, TOTALS, digits=2),
    Figure('period re-learned total', '', 'times the learned period was learned again '
           'because later intervals kept disagreeing with it (shown once it happened)',
           _r(lambda r: r.period_relearned_total or None), TOTALS, metric=COUNTER),
    Figure('producer runs total', '', 'runs of publication sequence numbers seen: one per '
           'producer and per restart, each analyzed on its own grid',
           _over_one(lambda r: r.producer_runs_total), TOTALS,
           'producer_runs_total', metric=COUNTER),
    Figure('intervals across loss total', '', 'intervals spanning cycles the producer ran but '
           'the monitor never saw (lost, or received without a usable start): not the '
           "producer's intervals, left out of the interval figures and the misses (shown once "
           'there are any)',
           _r(lambda r: r.intervals_across_loss_total or None), TOTALS, metric=COUNTER),
    Figure('stamps back total', '', "start stamps earlier than the producer's previous one: "
           'not placed on the grid, never skipped periods (shown once there are any)',
           _r(lambda r: r.stamps_back_total or None), TOTALS, metric=COUNTER),
    Figure('shared stamps total', '', "start stamps equal to the producer's previous one "
           '(several cycles share a slot): not placed on the grid, never skipped periods '
           '(shown once there are any)',
           _r(lambda r: r.stamps_shared_total or None), TOTALS, metric=COUNTER),
    Figure('unlearned total', '', 'messages of learning windows whose intervals kept no '
           'timer rhythm (bursts, updates): counted, timed as events (intervals and gaps), '
           'never as cycles (shown once there are any)',
           _r(lambda r: r.unlearned_total or None), TOTALS, metric=COUNTER),
    Figure('age unknown total', '', 'messages whose header stamp lay more than 1 s ahead of '
           'their arrival (on no plausible clock): no age (shown once there are any)',
           _r(lambda r: r.age_unknown_total or None), TOTALS, metric=COUNTER),
    Figure('unattributed total', '', 'messages of several producers not timed on one '
           "producer's grid (no sequence numbers to tell them apart, numbers that run alike, "
           'or a period learned from several): counted and timed as events (rate, intervals '
           'and gaps), no per-cycle figure uses them',
           _nonzero(lambda r: r.unattributed_total), TOTALS, 'unattributed_total',
           metric=COUNTER),

    Figure('mean response', 'ms', 'mean end - scheduled slot', _r(lambda r: to_ms(
        r.response_mean_ns)), CYCLES, 'response_mean_ms'),
    Figure('p99 response', 'ms', '99th percentile response', _r(lambda r: to_ms(
        r.response_p99_ns)), CYCLES, 'response_p99_ms'),
    Figure('mean lateness', 'ms', 'mean start - scheduled slot, on the timer clock',
           _r(lambda r: to_ms(r.lateness_mean_ns)), CYCLES, 'lateness_mean_ms'),
    Figure('max lateness', 'ms', 'longest start - scheduled slot',
           _r(lambda r: to_ms(r.lateness_max_ns)), CYCLES, 'lateness_max_ms', fold=WORST),
    Figure('mean age', 'ms', 'mean arrival - header stamp (messages with a header)',
           _r(lambda r: to_ms(r.age_mean_ns)), CYCLES, 'age_mean_ms'),
    Figure('max age', 'ms', 'longest arrival - header stamp', _r(lambda r: to_ms(
        r.age_max_ns)), CYCLES, 'age_max_ms', fold=WORST),
    Figure('mean size', 'bytes', 'mean serialized size', _r(lambda r: r.size_mean_bytes),
           CYCLES, 'size_mean_bytes', digits=1),
    Figure('max size', 'bytes', 'largest serialized size', _r(lambda r: r.size_max_bytes),
           CYCLES, 'size_max_bytes', digits=0),
    Figure('bandwidth', 'bytes/s', 'serialized bytes per wall second',
           _r(lambda r: r.bandwidth_bytes_per_s), CYCLES, 'bandwidth_bytes_per_s', digits=1),

    *_intervals('wall'),
    *_intervals('sim'),

    Figure('topic', '', 'fully qualified topic name', lambda snapshot, topic: topic.topic,
           CONFIGURATION, 'topic', always=True, metric=NO_METRIC),
    Figure('type', '', "message type, e.g. 'sensor_msgs/msg/Imu' (once discovered)",
           lambda snapshot, topic: topic.type_name or None, CONFIGURATION, 'type',
           metric=NO_METRIC),
    Figure('publishers', '', 'nodes publishing the topic, from the graph', _publishers,
           CONFIGURATION, metric=NO_METRIC),
    Figure('kind', '', '`timer` (a periodic producer) or `event` (no period, no misses)',
           _r(lambda r: r.kind), CONFIGURATION, 'kind', always=True, metric=NO_METRIC),
    Figure('producers', '', 'producer streams with cycles in the window (told apart by '
           'sequence numbers), each on its own grid (shown when more than one)',
           _over_one(lambda r: r.producers), CONFIGURATION, 'producers'),
    Figure('notes', '', 'several producers, foreign stamps, outages, middleware fallbacks: '
           'what the status adds to the figures', lambda snapshot, topic: '; '.join(
               topic.notes) or None, CONFIGURATION, metric=NO_METRIC),
    Figure('rule', '', '`interval` or `response`: what counts as a deadline miss',
           _r(lambda r: r.rule), CONFIGURATION, 'rule', always=True, metric=NO_METRIC,
           per_cycle=True),
    Figure('start source', '', '`header` (stamp = cycle start) or `arrival`: what times the '
           'cycles', _r(lambda r: r.start_source), CONFIGURATION, 'start_source',
           metric=NO_METRIC),
    Figure('timing reason', '', 'why that source: `stamp: start/none (configured)`, or what '
           '`stamp: auto` saw in the first messages (one clock, increasing, spaced like the '
           'arrivals)', _r(lambda r: r.timing_reason or None), CONFIGURATION,
           metric=NO_METRIC),
    Figure('arrival timestamp', '', 'the middleware timestamp that ends a cycle',
           lambda snapshot, topic: snapshot.arrival_timestamp, CONFIGURATION, 'arrival_source',
           metric=NO_METRIC),
    Figure('timer clock', '', 'clock of the producing timer: `sim` or `wall`',
           _r(lambda r: r.timer_clock), CONFIGURATION, 'timer_clock', metric=NO_METRIC),
    Figure('period', 'ms', 'expected period T (configured or learned)',
           _r(lambda r: to_ms(r.period_ns)), CONFIGURATION, 'period_ms'),
    Figure('period learned', '', 'true when T was learned from the first window (once known)',
           _raw(_r(lambda r: r.period_learned if r.period_ns is not None else None),
                _r(lambda r: r.period_learned)), CONFIGURATION,
           'period_learned'),
    Figure('period source', '', '`configured`, `graph deadline QoS` (offered by every '
           'publisher) or `learned`', _r(lambda r: r.period_source or None), CONFIGURATION,
           metric=NO_METRIC),
    Figure('deadline', 'ms', 'deadline D', _r(lambda r: to_ms(r.deadline_ns)), CONFIGURATION,
           'deadline_ms'),
    Figure('jitter tolerance', 'ms', 'slack J on intervals', _r(lambda r: to_ms(r.jitter_ns)),
           CONFIGURATION, 'jitter_tolerance_ms'),
    Figure('wall budget', 'ms', 'wall-clock budget per cycle',
           _r(lambda r: to_ms(r.wall_budget_ns)), CONFIGURATION, 'wall_budget_ms'),
    Figure('timeout', 's', 'silence after which the topic is an error',
           _r(lambda r: to_s(r.timeout_ns)), CONFIGURATION, digits=2),
    Figure('window wall', 's', 'wall span of the window figures',
           _r(lambda r: to_s(r.window_wall_ns)), CONFIGURATION, 'window_wall_s', digits=2,
           column_digits=1),
    Figure('window sim', 's', 'sim span of the window figures',
           _r(lambda r: to_s(r.window_sim_ns)), CONFIGURATION, 'window_sim_s', digits=2),

    Figure('receive', '', '`batched every X ms` (takes on a steady timer) or '
           '`callback per message`', _receive, RECEIVE, metric=NO_METRIC),
    Figure('reader queue depth', '', "depth of the batched reader's queue",
           _batched(lambda topic: topic.receive.queue_depth), RECEIVE),
    Figure('queue overflows total', '', "times the batched reader's queue was full",
           _batched(lambda topic: topic.receive.queue_overflows_total), RECEIVE,
           metric=COUNTER),
)


# -- clock figures ---------------------------------------------------------------------------

def _c(read: Callable[[Any], Value]) -> Callable[[Snapshot, ClockSnapshot], Value]:
    """Read a value from the clock's report."""
    return lambda snapshot, clock: read(clock.report)


CLOCK: tuple[Figure, ...] = (
    Figure('RTF', '', 'real time factor (sim / wall) over the stats window',
           _c(lambda r: r.rtf), HEADLINE, 'rtf', always=True),
    Figure('RTF target', '', 'the RTF the simulator should reach',
           lambda snapshot, clock: clock.target_rtf, HEADLINE),
    Figure('simulator RTF', '', "the simulator's own figure, when a topic carries it",
           lambda snapshot, clock: clock.simulator_rtf, HEADLINE, 'simulator_rtf'),
    Figure('RTF min bin', '', 'worst fixed wall window in the stats window',
           _c(lambda r: r.rtf_bin_min), HEADLINE, 'rtf_bin_min'),
    Figure('max wall gap', 'ms', 'longest wall time between two /clock messages',
           _c(lambda r: to_ms(r.max_wall_gap_ns)), HEADLINE, 'max_wall_gap_ms',
           column='max gap ms', column_digits=1),
    Figure('paused', '', 'sim time did not advance while /clock kept arriving',
           _raw(_c(lambda r: r.paused if r.messages_total else None), _c(lambda r: r.paused)),
           HEADLINE, 'paused'),
    Figure('sim resets', '', 'sim time jumped back (world reset) in the window',
           _c(lambda r: r.resets), HEADLINE, always=True),
    Figure('sim jumps', '', 'sim time jumped forward (a seek: far more sim time than the wall '
           'step allows at any plausible RTF) in the window; like a reset, kept out of RTF',
           _c(lambda r: r.jumps), HEADLINE, always=True),
    Figure('sim time', 's', 'latest /clock value', _c(lambda r: to_s(r.sim_time_ns)),
           HEADLINE, 'sim_time_s'),

    Figure('RTF total', '', 'RTF since start or the last reset (unknown for the rest of the '
           'run once several publishers were on /clock)', _c(lambda r: r.rtf_total),
           TOTALS, 'rtf_total'),
    Figure('messages', '', '/clock messages in the window', _c(lambda r: r.messages), TOTALS,
           'messages', always=True),
    Figure('messages total', '', '/clock messages since start', _c(lambda r: r.messages_total),
           TOTALS, 'messages_total', always=True, metric=COUNTER),
    Figure('sim resets total', '', 'sim-time resets since start', _c(lambda r: r.resets_total),
           TOTALS, 'resets_total', always=True, metric=COUNTER),
    Figure('sim jumps total', '', 'sim time jumped forward since start',
           _c(lambda r: r.jumps_total), TOTALS, always=True, metric=COUNTER),

    Figure('RTF max bin', '', 'best fixed wall window', _c(lambda r: r.rtf_bin_max), DETAILS,
           'rtf_bin_max'),
    Figure('RTF min bin at', 's since start', 'end of the worst window',
           lambda snapshot, clock: _since_start(snapshot, clock.report.rtf_bin_min_at_ns),
           DETAILS, digits=2),
    Figure('RTF bin', 's', 'length of the fixed wall windows', _c(lambda r: to_s(r.rtf_bin_ns)),
           DETAILS, 'rtf_bin_s'),
    Figure('sim step', 'ms', 'median sim step between /clock messages',
           _c(lambda r: to_ms(r.step_ns)), DETAILS, 'step_ms'),
    Figure('max wall gap at', 's since start', 'end of the longest gap',
           lambda snapshot, clock: _since_start(snapshot, clock.report.max_wall_gap_at_ns),
           DETAILS, digits=2),
    Figure('window wall', 's', 'wall span of the window', _c(lambda r: to_s(r.window_wall_ns)),
           DETAILS, 'window_wall_s', digits=2),
    Figure('window sim', 's', 'sim span of the window', _c(lambda r: to_s(r.window_sim_ns)),
           DETAILS, 'window_sim_s', digits=2),

    Figure('clock topic', '', 'the topic carrying sim time', lambda snapshot, clock: clock.topic,
           CONFIGURATION, always=True, metric=NO_METRIC),
    Figure('clock publishers', '', 'publishers of /clock in the graph (live only)',
           lambda snapshot, clock: clock.publishers, CONFIGURATION),
)


# -- host figures ----------------------------------------------------------------------------

def _cgroup(read: Callable[[Any], Value]) -> Callable[[Snapshot, HostSnapshot], Value]:
    """Cgroup counters exist only when cpu.stat was readable."""
    return _raw(lambda snapshot, host: read(host.report) if host.report.cgroup_available
                else None, lambda snapshot, host: read(host.report))


HOST: tuple[Figure, ...] = (
    Figure('cgroup throttled periods', '', 'CPU quota periods in which the cgroup was throttled',
           _cgroup(lambda r: r.cgroup_nr_throttled), HEADLINE, 'cgroup_nr_throttled'),
    Figure('cgroup throttled', 'ms', 'time the cgroup was throttled',
           _cgroup(lambda r: to_ms(r.cgroup_throttled_ns)), HEADLINE, 'cgroup_throttled_ms'),
    Figure('stats timer late', 'ms', "how late the monitor's own stats timer fired (WARN past "
           'half a period: the monitor was starved of CPU)',
           lambda snapshot, host: to_ms(host.stats_timer_late_ns), HEADLINE,
           'stats_timer_late_max_ms', always=True),
    Figure('monitor CPU', '%', 'CPU of the monitor process (user + system) of one core',
           lambda snapshot, host: host.report.cpu_fraction * 100, HEADLINE,
           'monitor_cpu_percent', digits=1),
    Figure('cgroup periods', '', 'CPU quota periods in the window',
           _cgroup(lambda r: r.cgroup_nr_periods), DETAILS, 'cgroup_nr_periods'),
    Figure('monitor minor faults', '', 'minor page faults of the monitor in the window',
           lambda snapshot, host: host.report.minor_faults, DETAILS, 'monitor_minor_faults'),
    Figure('monitor max RSS', 'MB', 'peak resident memory of the monitor',
           lambda snapshot, host: host.report.max_rss_bytes / 1e6, DETAILS,
           'monitor_max_rss_mb', digits=1),
    Figure('cgroup cpu.stat', '', '`available` or `unavailable` (then no cgroup figures)',
           lambda snapshot, host: 'available' if host.report.cgroup_available
           else 'unavailable', CONFIGURATION, always=True, metric=NO_METRIC),
)


# -- whole-run figures -----------------------------------------------------------------------
#
# What a whole run measured: counts are totals since start, the longest interval and the rate
# come from every interval of the run (``TopicSnapshot.run``), the worst RTF window is the
# worst of the run (``ClockReport.rtf_bin_min_run``), never the last window's. The CI gate
# (``expectations.evaluate``) reads the figures whose ``limit`` names an expectation; the
# final summary JSON (``outputs/gate.py``) writes every figure with a ``json`` key. An unknown
# figure is None (never 0) and ``Figure.unknown`` says why.

RUN = 'whole run'
SEVERAL_WRITERS = ('several writers on the topic: sequence numbers of different writers '
                   'cannot be told apart, so loss is unknown')


def known(value: Value) -> Value:
    """Return ``value``, or None when it is None or NaN (nothing measured)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _run(read: Callable[[TopicSnapshot], Value]) -> Callable[[Snapshot, TopicSnapshot], Value]:
    """Read a whole-run figure of a monitored topic (None for a topic without a report)."""
    return lambda snapshot, topic: None if topic.report is None else known(read(topic))


def _run_why(why: Callable[[TopicSnapshot], str]) -> Callable[[Snapshot, TopicSnapshot], str]:
    """Say why a whole-run figure is unknown; a topic without a report is not monitored."""
    def get(snapshot: Snapshot, topic: TopicSnapshot) -> str:
        return f'not monitored: {topic.reason}' if topic.report is None else why(topic)
    return get


def _counts_why(topic: TopicSnapshot) -> str:
    report = topic.report
    if report.messages_total == 0:
        return 'no message received'
    return (report.counts_note or report.run_counts_note
            or f'the period was never learned ({report.messages_total} messages)')


def _run_counts(read: Callable[[TopicReport], int]) -> Callable[[TopicSnapshot], Value]:
    """Read a whole-run count of misses or skipped periods, None while it is no figure.

    No figure: an event topic, no period (yet), a /clock too coarse, or no message at all
    (a topic that never showed up missed nothing only in a way no gate may pass).
    """
    def read_known(topic: TopicSnapshot) -> Value:
        report = topic.report
        return (read(report) if report.counts_known and report.messages_total
                and not report.run_counts_note else None)
    return read_known


def _miss_ratio(topic: TopicSnapshot) -> float | None:
    report, cycles = topic.report, topic.run.cycles
    known = report.counts_known and not report.run_counts_note
    return report.deadline_misses_total / cycles if known and cycles else None


def _miss_ratio_why(topic: TopicSnapshot) -> str:
    report = topic.report
    if not report.counts_known or not report.messages_total or report.run_counts_note:
        return _counts_why(topic)
    return 'no cycle was analyzed'


def _timer_intervals(topic: TopicSnapshot) -> IntervalTotals:
    """Every interval of the run on the topic's timer clock."""
    run = topic.run
    return run.interval_sim if topic.report.timer_clock == 'sim' else run.interval_wall


def _longest_ms(topic: TopicSnapshot) -> float | None:
    """Return the longest interval of the run on the timer clock, outages between producers.

    Gaps are never hidden: an outage between two producers' runs (a restart) is no interval
    of either, yet the longest silence all the same.
    """
    report, intervals = topic.report, _timer_intervals(topic)
    longest = known(intervals.max_ns) if intervals.count else None
    if report.timer_clock == 'wall' and report.outages_total and report.producer_runs_total > 1:
        longest = max(longest or 0, report.outage_max_ns)
    return None if longest is None else to_ms(longest)


def _no_interval(topic: TopicSnapshot) -> str:
    return f'no interval on the {topic.report.timer_clock} clock'


def _loss_why(topic: TopicSnapshot) -> str:
    return topic.report.loss_note or topic.report.run_loss_note or SEVERAL_WRITERS


def _run_lost(topic: TopicSnapshot) -> int | None:
    """Return the run's loss, None while it is no figure (several writers, a guess)."""
    report = topic.report
    known = report.loss_known and not report.run_loss_note
    return report.messages_lost_total if known else None


def _run_max_ms(clock: str) -> Callable[[TopicSnapshot], float | None]:
    def read(topic: TopicSnapshot) -> float | None:
        intervals = topic.run.interval_wall if clock == 'wall' else topic.run.interval_sim
        return to_ms(intervals.max_ns) if intervals.count else None
    return read


def _run_mean_ms(clock: str) -> Callable[[TopicSnapshot], float]:
    return lambda topic: to_ms((topic.run.interval_wall if clock == 'wall'
                                else topic.run.interval_sim).mean_ns)


def _run_rate_hz(clock: str) -> Callable[[TopicSnapshot], float | None]:
    """Read the run's rate on ``clock``: 1 / mean interval of one producer at a time.

    With several producers at once each one's intervals are its own: the topic's rate is its
    messages over the run's wall span, and on sim time no figure.
    """
    def read(topic: TopicSnapshot) -> float | None:
        run = topic.run
        if topic.report.producers_at_once_max > 1:
            if clock != 'wall':
                return None
            return (run.cycles - 1) * 1e9 / run.span_ns if run.span_ns > 0 else None
        return (run.interval_wall if clock == 'wall' else run.interval_sim).rate_hz
    return read


def _rate_why(clock: str) -> Callable[[TopicSnapshot], str]:
    def why(topic: TopicSnapshot) -> str:
        if topic.report.producers_at_once_max > 1 and clock != 'wall':
            return ('several producers at once: their sim intervals are each their own, the '
                    "topic's sim rate is not measured (its wall rate is)")
        return f'no interval on the {clock} clock'
    return why


def _rf(name: str, unit: str, description: str, read: Callable[[TopicSnapshot], Value],
        json: str, *, why: Callable[[TopicSnapshot], str] = lambda topic: 'not measured',
        column: str = '', limit: str = '', group: str = RUN, digits: int = 3,
        always: bool = False, field: str | None = None, column_digits: int | None = None,
        per_cycle: bool = False, fold: str = '') -> Figure:
    """Make a whole-run topic figure (metric-free: ``/metrics`` exports the live table)."""
    return Figure(name, unit, description, _run(read), group, field, json=json, column=column,
                  limit=limit, why=_run_why(why), digits=digits, always=always,
                  metric=NO_METRIC, column_digits=column_digits, per_cycle=per_cycle,
                  fold=fold)


def _run_ns(attr: str) -> Callable[[TopicSnapshot], float]:
    """Read a whole-run figure kept in ns (``RunTotals``) in ms."""
    return lambda topic: to_ms(getattr(topic.run, attr))


def _why_series(series: str, stat: str) -> Callable[[TopicSnapshot], str]:
    def why(topic: TopicSnapshot) -> str:
        if stat == 'p99' and topic.run.percentiles_exact is None:
            return 'no whole-run percentile kept (live: see the window figures)'
        return f'no {series}: no cycle on a grid (no period, or an event topic)'
    return why


def _run_since(attr: str) -> Callable[[Snapshot, TopicSnapshot], float | None]:
    """Read a point in time of the run as seconds after the start (None while unknown)."""
    def get(snapshot: Snapshot, topic: TopicSnapshot) -> float | None:
        at = None if topic.report is None else getattr(topic.run, attr)
        return None if at is None else to_s(at - snapshot.start_wall_ns)
    return get


def _interval_run_figures(clock: str) -> tuple[Figure, ...]:
    """Whole-run interval figures on one clock beyond the max, mean and rate."""
    def intervals(topic: TopicSnapshot) -> IntervalTotals:
        return topic.run.interval_wall if clock == 'wall' else topic.run.interval_sim

    def ms(attr: str) -> Callable[[TopicSnapshot], float | None]:
        return lambda t: to_ms(getattr(intervals(t), attr)) if intervals(t).count else None

    none = f'no interval on the {clock} clock'
    kept = 'no whole-run percentile kept (live: see the window figures)'

    def why_p(topic: TopicSnapshot) -> str:
        return kept if topic.run.percentiles_exact is None else none

    return (
        _rf(f'min interval {clock}', 'ms', f'shortest {clock} interval of the run', ms('min_ns'),
            f'min_interval_{clock}_ms', why=lambda t: none),
        Figure(f'max interval {clock} at', 's', f'when the longest {clock} interval ended '
               '(its cycle start; wall: seconds after the start, sim: sim time)',
               _run_at(clock), RUN, json=f'max_interval_{clock}_at_s', metric=NO_METRIC),
        *(_rf(f'{p} interval {clock}', 'ms', f'{p} of the {clock} intervals of the run',
              ms(f'{p}_ns'), f'{p}_interval_{clock}_ms', why=why_p,
              column=f'p99 {clock} ms' if p == 'p99' else '', column_digits=2)
          for p in ('p50', 'p95', 'p99')),
        _rf(f'tail amplification {clock}', '', f'p99 / p50 of the {clock} intervals of the run',
            lambda t: intervals(t).tail_amplification, f'tail_amplification_{clock}', why=why_p,
            digits=2),
        _rf(f'over period {clock}', '', f'{clock} intervals longer than the period',
            lambda t: intervals(t).over_period, f'over_period_{clock}'),
        _rf(f'over period plus jitter {clock}', '', f'{clock} intervals longer than the period '
            'plus the jitter tolerance', lambda t: intervals(t).over_period_plus_jitter,
            f'over_period_plus_jitter_{clock}'),
    )


def _run_at(clock: str) -> Callable[[Snapshot, TopicSnapshot], float | None]:
    def get(snapshot: Snapshot, topic: TopicSnapshot) -> float | None:
        if topic.report is None:
            return None
        intervals = topic.run.interval_wall if clock == 'wall' else topic.run.interval_sim
        at = intervals.max_at_ns
        if at is None:
            return None
        return to_s(at - snapshot.start_wall_ns) if clock == 'wall' else to_s(at)
    return get


RUN_TOPIC: tuple[Figure, ...] = (
    _rf('messages', '', 'messages since start', lambda t: t.report.messages_total, 'messages',
        column='msgs', always=True),
    _rf('cycles', '', 'messages analyzed as cycles (once the period was known and, on sim '
        'time, /clock was there): the miss ratio divides by them',
        lambda t: t.run.cycles, 'cycles', always=True, field='cycles_total', fold=SUMMED),
    _rf('deadline misses', '', 'cycles that missed their deadline over the whole run',
        _run_counts(lambda r: r.deadline_misses_total), 'deadline_misses', why=_counts_why,
        column='misses', limit='max_misses', always=True, per_cycle=True),
    _rf('miss ratio', '', 'deadline misses / cycles over the whole run (0..1)', _miss_ratio,
        'miss_ratio', why=_miss_ratio_why, limit='max_miss_ratio', digits=4, per_cycle=True),
    _rf('skipped periods', '', 'timer periods skipped over the whole run',
        _run_counts(lambda r: r.skipped_periods_total), 'skipped_periods', why=_counts_why,
        column='skipped', limit='max_skipped', always=True, per_cycle=True),
    _rf('max interval', 'ms', 'longest interval between cycle starts over the whole run on '
        'the timer clock (an outage between two producers included)', _longest_ms,
        'max_interval_ms', why=_no_interval, column='max interval ms', column_digits=2,
        limit='max_interval_ms'),
    _rf('rate', 'Hz', 'whole-run mean message rate on the timer clock (1 / mean interval; '
        "with several producers at once, the topic's messages over the run)",
        lambda t: _run_rate_hz(t.report.timer_clock)(t), 'rate_hz',
        why=lambda t: _rate_why(t.report.timer_clock)(t), column='rate Hz',
        limit='min_rate_hz', digits=2),
    _rf('messages lost', '', 'gaps in publication sequence numbers since start; unknown with '
        'several writers or without sequence numbers (a bag)',
        _run_lost, 'messages_lost', why=_loss_why, column='lost', limit='max_lost', always=True),
    _rf('messages lost by monitor', '', "messages the monitor's own reader queue dropped over "
        "the run: its loss, apart from the producer's", lambda t: t.report.lost_by_monitor_total,
        'messages_lost_by_monitor', always=True),
    _rf('max interval wall', 'ms', 'longest wall interval of the run', _run_max_ms('wall'),
        'max_interval_wall_ms', why=lambda t: 'no interval on the wall clock',
        field='interval_wall_max_run_ms', column='max wall ms', column_digits=2, fold=WORST),
    _rf('max interval sim', 'ms', 'longest sim interval of the run', _run_max_ms('sim'),
        'max_interval_sim_ms', why=lambda t: 'no interval on the sim clock',
        field='interval_sim_max_run_ms', column='max sim ms', column_digits=2, fold=WORST),
    _rf('intervals wall', '', 'intervals between cycle starts on the wall clock in the run',
        lambda t: t.run.interval_wall.count, 'intervals_wall', always=True,
        field='intervals_wall_total', fold=SUMMED),
    _rf('intervals sim', '', 'intervals between cycle starts on the sim clock in the run',
        lambda t: t.run.interval_sim.count, 'intervals_sim', always=True,
        field='intervals_sim_total', fold=SUMMED),
    _rf('interval sum wall', 's', 'the wall intervals of the run, summed (the mean rate is '
        'their count / this)', lambda t: to_s(t.run.interval_wall.sum_ns), '',
        field='interval_wall_sum_s', fold=SUMMED),
    _rf('interval sum sim', 's', 'the sim intervals of the run, summed',
        lambda t: to_s(t.run.interval_sim.sum_ns), '', field='interval_sim_sum_s',
        fold=SUMMED),
    _rf('mean interval wall', 'ms', 'mean wall interval of the run', _run_mean_ms('wall'),
        'mean_interval_wall_ms', why=lambda t: 'no interval on the wall clock',
        column='mean wall ms', column_digits=2),
    _rf('mean interval sim', 'ms', 'mean sim interval of the run', _run_mean_ms('sim'),
        'mean_interval_sim_ms', why=lambda t: 'no interval on the sim clock',
        column='mean sim ms', column_digits=2),
    _rf('rate wall', 'Hz', 'whole-run mean rate on the wall clock', _run_rate_hz('wall'),
        'rate_wall_hz', why=_rate_why('wall'), digits=2,
        column='rate wall Hz', column_digits=1),
    _rf('rate sim', 'Hz', 'whole-run mean rate on the sim clock', _run_rate_hz('sim'),
        'rate_sim_hz', why=_rate_why('sim'), digits=2),
    _rf('outages', '', 'silences longer than the timeout since start',
        lambda t: t.report.outages_total, 'outages', always=True),
    _rf('outage max', 'ms', 'the longest outage',
        lambda t: to_ms(t.report.outage_max_ns) if t.report.outages_total else None,
        'outage_max_ms', why=lambda t: 'no outage'),
    _rf('malformed', '', 'raw messages too short or of unknown encoding since start',
        lambda t: t.report.malformed_total, 'malformed', always=True),
    _rf('sim resets', '', "sim-time resets and jumps that cleared this topic's sim state",
        lambda t: t.report.resets_total, 'resets', always=True),

    _rf('rule', '', '`interval` or `response`', lambda t: t.report.rule, 'rule',
        column='rule', group=CONFIGURATION, per_cycle=True),
    _rf('timer clock', '', 'clock of the producing timer: `sim` or `wall`',
        lambda t: t.report.timer_clock, 'timer_clock', column='clock', group=CONFIGURATION),
    _rf('timing source', '', 'what times a cycle: `header` or `arrival`',
        lambda t: t.report.start_source, 'start_source', group=CONFIGURATION),
    _rf('timing', '', 'the same, under its summary name', lambda t: t.report.start_source,
        'timing_source', group=CONFIGURATION),
    _rf('timing reason', '', 'why that source', lambda t: t.report.timing_reason,
        'timing_reason', group=CONFIGURATION),
    _rf('period', 'ms', 'expected period T (configured or learned)',
        lambda t: to_ms(t.report.period_ns), 'period_ms', why=lambda t: 'no period',
        column='period ms', group=CONFIGURATION),
    _rf('period learned', '', 'true when T was learned', lambda t: t.report.period_learned,
        'period_learned', group=CONFIGURATION),
    _rf('deadline', 'ms', 'deadline D a cycle is judged against',
        lambda t: to_ms(t.report.deadline_ns), 'deadline_ms', why=lambda t: 'no period',
        group=CONFIGURATION),
    _rf('jitter tolerance', 'ms', 'jitter tolerance J', lambda t: to_ms(t.report.jitter_ns),
        'jitter_ms', why=lambda t: 'no period', group=CONFIGURATION),
    _rf('wall budget', 'ms', 'wall-clock budget of one interval',
        lambda t: to_ms(t.report.wall_budget_ns), 'wall_budget_ms', why=lambda t: 'no period',
        group=CONFIGURATION),
    _rf('counts note', '', "why misses and skipped periods are unknown ('' when known)",
        lambda t: t.report.counts_note, 'counts_note', group=CONFIGURATION,
        field='counts_note'),

    # Whole-run figures of a bag analysis (percentiles only where the analysis keeps them:
    # ``AnalysisConfig.run_percentiles``; live they are unknown, the window has its own).
    *(figure for clock in ('wall', 'sim') for figure in _interval_run_figures(clock)),
    _rf('over wall budget', '', 'wall intervals longer than the wall budget',
        lambda t: t.run.interval_wall.over_wall_budget, 'over_wall_budget'),
    *(_rf(f'{stat} {series}', 'ms', f'{what} {series} over the whole run', _run_ns(attr),
          f'{stat}_{series}_ms', why=_why_series(series, stat))
      for series in ('lateness', 'response')
      for stat, attr, what in (('mean', f'{series}_mean_ns', 'mean'),
                               ('max', f'{series}_max_ns', 'largest'),
                               ('p99', f'{series}_p99_ns', '99th percentile of the'))),
    _rf('mean size', 'bytes', 'mean serialized size of the analyzed messages',
        lambda t: t.run.size_mean_bytes, 'mean_size_bytes', digits=1),
    _rf('max size', 'bytes', 'largest serialized size', lambda t: t.run.size_max_bytes,
        'max_size_bytes', digits=0),
    _rf('bandwidth', 'bytes/s', 'bytes of the analyzed messages over their wall span',
        lambda t: t.run.bandwidth_bytes_per_s, 'bandwidth_bytes_per_s', digits=0),
    _rf('mean age', 'ms', 'mean of arrival - header stamp', _run_ns('age_mean_ns'),
        'mean_age_ms', why=lambda t: 'no header stamp on the arrival clock'),
    _rf('max age', 'ms', 'largest arrival - header stamp', _run_ns('age_max_ns'),
        'max_age_ms', why=lambda t: 'no header stamp on the arrival clock'),
    Figure('first arrival', 's', 'first analyzed arrival, seconds after the start',
           _run_since('first_arrival_ns'), RUN, json='first_arrival_s', metric=NO_METRIC),
    Figure('last arrival', 's', 'last analyzed arrival, seconds after the start',
           _run_since('last_arrival_ns'), RUN, json='last_arrival_s', metric=NO_METRIC),
    _rf('percentiles exact', '', 'whether every whole-run percentile is exact (else from a '
        'log histogram); unknown where none is kept', lambda t: t.run.percentiles_exact,
        'percentiles_exact', why=lambda t: 'no whole-run percentile kept'),
)


def _run_clock(read: Callable[[ClockSnapshot], Value]
               ) -> Callable[[Snapshot, ClockSnapshot], Value]:
    """Read a whole-run clock figure (None without any /clock message)."""
    return lambda snapshot, clock: known(read(clock)) if clock.report.messages_total else None


def _clock_why(why: str | Callable[[ClockSnapshot], str]
               ) -> Callable[[Snapshot, ClockSnapshot], str]:
    def get(snapshot: Snapshot, clock: ClockSnapshot) -> str:
        if not clock.report.messages_total:
            return 'no /clock in the run'
        return why if isinstance(why, str) else why(clock)
    return get


RUN_CLOCK: tuple[Figure, ...] = (
    Figure('clock topic', '', 'the topic carrying sim time', lambda snapshot, clock: clock.topic,
           CONFIGURATION, json='topic', metric=NO_METRIC),
    Figure('use sim time', '', 'whether the monitor ran on sim time',
           lambda snapshot, clock: clock.use_sim_time, CONFIGURATION, json='use_sim_time',
           metric=NO_METRIC),
    Figure('messages', '', '/clock messages since start',
           lambda snapshot, clock: clock.report.messages_total, RUN, json='messages',
           column='msgs', always=True, metric=NO_METRIC),
    Figure('RTF overall', '', 'real time factor over the whole run (since the last reset; '
           'unknown when several publishers were on /clock)',
           _run_clock(lambda c: c.report.rtf_total), RUN, json='rtf_total', column='RTF',
           limit='min_rtf', metric=NO_METRIC,
           why=_clock_why(lambda c: c.report.rtf_total_note
                          or 'sim time did not advance over a measurable wall span')),
    Figure('RTF bin', 's', 'length of the fixed wall windows',
           lambda snapshot, clock: to_s(clock.report.rtf_bin_ns), CONFIGURATION,
           json='rtf_bin_s', metric=NO_METRIC),
    Figure('worst RTF window', '', 'lowest RTF of any fixed wall window of the run',
           _run_clock(lambda c: c.report.rtf_bin_min_run), RUN, json='rtf_bin_min',
           column='RTF min bin', limit='min_rtf_bin', metric=NO_METRIC,
           why=_clock_why(lambda c: f'no complete {c.report.rtf_bin_ns / 1e6:g} ms window')),
    Figure('worst RTF window at', 's since start', 'end of that window',
           lambda snapshot, clock: _since_start(snapshot, clock.report.rtf_bin_min_run_at_ns)
           if clock.report.messages_total else None, RUN, json='rtf_bin_min_at_s', digits=2,
           metric=NO_METRIC, why=_clock_why('no complete window')),
    Figure('sim resets', '', 'sim-time resets since start',
           lambda snapshot, clock: clock.report.resets_total, RUN, json='resets',
           always=True, metric=NO_METRIC),
)


# -- per-transform figures of a /tf-like topic ----------------------------------------------
# The part is one ``TransformFigures`` (``TopicSnapshot.transforms``): the whole run up to the
# snapshot. Its limits (``max_transform_gap_ms``, ``min_transform_rate_hz``) bound every
# transform of a topic that is expected to repeat (not a static one).

TRANSFORMS = 'transform'


def _tf_ms(read: Callable[[TransformFigures], float | None]
           ) -> Callable[[Snapshot, TransformFigures], float | None]:
    """Read a duration of a transform (ns) in ms; None stays None."""
    def get(snapshot: Snapshot, tf: TransformFigures) -> float | None:
        value = read(tf)
        return None if value is None else to_ms(value)
    return get


def _tf_why(snapshot: Snapshot, tf: TransformFigures) -> str:
    if tf.static:
        return 'a static transform (latched topic): no rate, interval or gap is expected'
    return f'one message only ({tf.messages})' if tf.messages < 2 else 'no interval'


def _tf_age_why(snapshot: Snapshot, tf: TransformFigures) -> str:
    return (f'no stamp on a known clock ({tf.age_unknown} unknown: a zero stamp, sim time '
            'without /clock, or a stamp ahead of its arrival)')


def _tf_at(snapshot: Snapshot, tf: TransformFigures) -> float | None:
    at = tf.max_interval_at_ns
    return None if at is None else to_s(at - snapshot.start_wall_ns)


TRANSFORM: tuple[Figure, ...] = (
    Figure('parent', '', 'frame_id of the transform', lambda snapshot, tf: tf.parent,
           TRANSFORMS, json='parent', column='parent', always=True, metric=NO_METRIC),
    Figure('child', '', 'child_frame_id of the transform', lambda snapshot, tf: tf.child,
           TRANSFORMS, json='child', column='child', always=True, metric=NO_METRIC),
    Figure('static', '', 'true on a latched topic (/tf_static): sent once, no rate, interval '
           'or gap expected', lambda snapshot, tf: tf.static, TRANSFORMS, json='static',
           metric=NO_METRIC),
    Figure('messages', '', 'messages that carried the transform',
           lambda snapshot, tf: tf.messages, TRANSFORMS, json='messages', column='msgs',
           always=True, metric=NO_METRIC),
    Figure('rate', 'Hz', 'mean rate of the transform (1 / the mean interval between its '
           'arrivals)', lambda snapshot, tf: tf.rate_hz, TRANSFORMS, json='rate_hz',
           column='rate Hz', limit='min_transform_rate_hz', digits=2, why=_tf_why,
           metric=NO_METRIC),
    Figure('max interval', 'ms', 'longest interval between two arrivals of the transform',
           _tf_ms(lambda tf: tf.max_interval_ns), TRANSFORMS, json='max_interval_ms',
           column='max interval ms', column_digits=2, why=_tf_why, metric=NO_METRIC),
    Figure('max interval at', 's since start', 'arrival that ended the longest interval',
           _tf_at, TRANSFORMS, json='max_interval_at_s', digits=2, why=_tf_why,
           metric=NO_METRIC),
    Figure('silent', 'ms', "time since its last arrival, up to the topic's latest message",
           _tf_ms(lambda tf: None if tf.static else tf.silence_ns), TRANSFORMS,
           json='silent_ms', column='silent ms', column_digits=2, why=_tf_why,
           metric=NO_METRIC),
    Figure('longest gap', 'ms', 'longest time without the transform: an interval, or its '
           'silence while the topic went on (a broadcaster that stopped for good)',
           _tf_ms(lambda tf: tf.longest_gap_ns), TRANSFORMS, json='longest_gap_ms',
           column='gap ms', column_digits=2, limit='max_transform_gap_ms', why=_tf_why,
           metric=NO_METRIC),
    Figure('mean age', 'ms', 'mean of arrival - stamp (sim stamps against the arrival placed '
           'on sim time through /clock)', _tf_ms(lambda tf: tf.age_mean_ns), TRANSFORMS,
           json='mean_age_ms', column='age ms', column_digits=2, why=_tf_age_why,
           metric=NO_METRIC),
    Figure('max age', 'ms', 'largest arrival - stamp', _tf_ms(lambda tf: tf.age_max_ns),
           TRANSFORMS, json='max_age_ms', why=_tf_age_why, metric=NO_METRIC),
    Figure('age unknown', '', 'arrivals whose age could not be told (zero stamp, sim time '
           'without /clock, a stamp ahead of its arrival)',
           lambda snapshot, tf: tf.age_unknown, TRANSFORMS, json='age_unknown',
           metric=NO_METRIC),
    Figure('writer', '', 'the node that sends it, where the graph tells (one publisher); '
           'unknown otherwise, never guessed', lambda snapshot, tf: tf.writer, TRANSFORMS,
           json='writer', column='writer', why=lambda snapshot, tf: tf.writer_note,
           metric=NO_METRIC),
)
_TRANSFORM_BY_NAME = {figure.name: figure for figure in TRANSFORM}
TRANSFORM_STATUS: tuple[Figure, ...] = tuple(
    _TRANSFORM_BY_NAME[name] for name in ('rate', 'max interval', 'silent', 'mean age',
                                          'messages'))
"""What a topic's diagnostic status says of each transform, in one value per transform."""


def record(figures: Sequence[Figure], snapshot: Snapshot, part: Any) -> dict[str, Value]:
    """Return the figures with a ``json`` key as one JSON object: an unknown figure is null."""
    return {figure.json: known(figure.get(snapshot, part)) for figure in figures if figure.json}


def unknowns(figures: Sequence[Figure], snapshot: Snapshot, part: Any) -> dict[str, str]:
    """Return why each unknown figure with a ``json`` key is unknown, by that key."""
    return {figure.json: figure.unknown(snapshot, part) for figure in figures
            if figure.json and known(figure.get(snapshot, part)) is None}
