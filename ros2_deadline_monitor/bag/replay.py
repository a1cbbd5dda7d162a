"""Replay a bag through the analysis session, streaming, in bounded memory.

The bag adapter of ``analysis/session.py``: each monitored message goes to the session's
recorder with the bag's log time as the arrival (the recorder's receive time, system clock)
and its raw bytes (the header stamp is read straight from them; nothing is deserialized);
``/clock`` samples go to ``Session.clock_sample``. Every second of bag time (or every
``TICK_MESSAGES`` messages, whichever comes first) the session processes what arrived; it
keeps the whole-run figures itself (``analysis.whole_run``, with percentiles: the replay sets
``AnalysisConfig.run_percentiles``), so the result is the session's final snapshot plus what
only the bag has (``results.BagResult``). Memory is bounded by the session's sketches and
the plot series (``outputs.series``), not by the bag's size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
import math
from typing import Any, NamedTuple

import numpy as np

from ros2_deadline_monitor.analysis.cdr import read_stamp_ns, read_stamps_ns
from ros2_deadline_monitor.analysis.config import AnalysisConfig, NS_PER_S, TopicConfig
from ros2_deadline_monitor.analysis.cycle_starts import (
    OWN_CLOCK_MESSAGES,
    stamps_on_their_own_clock,
)
from ros2_deadline_monitor.analysis.errors import BagError, CdrError
from ros2_deadline_monitor.analysis.message_info import FallbackStatus
from ros2_deadline_monitor.analysis.reports import ClockReport
from ros2_deadline_monitor.analysis.ring import MALFORMED, NO_VALUE
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot
from ros2_deadline_monitor.analysis.stamp_field import StampFieldError, StampRule
from ros2_deadline_monitor.analysis.tf_message import is_tf_layout
from ros2_deadline_monitor.analysis.whole_run import PERCENTILE_METHOD, ValueSketch
from ros2_deadline_monitor.bag.layouts import layout_from_definitions
from ros2_deadline_monitor.bag.reader import (
    BagSource,
    BagTopic,
    MessageBatch,
    recorded_writers,
)
from ros2_deadline_monitor.outputs.bag_result import BagInfo, BagResult, ClockFacts, TopicFacts
from ros2_deadline_monitor.outputs.recorded_stats import RecordedSummary
from ros2_deadline_monitor.outputs.series import RtfWindow, Timeline, WindowSeries

NAN = float('nan')
TICK_NS = NS_PER_S
"""Bag time between two rounds of processing and clock reports."""
TICK_MESSAGES = 8_192
"""Messages between two rounds at most, so no ring overflows however dense the bag."""
CLOCK_CAPACITY = 2 * TICK_MESSAGES
"""/clock samples the session keeps: more than one round can bring."""
OWN_CLOCK_SCAN = 1 << 16
"""Messages read at most to judge the topics' stamps in a bag without /clock."""
BATCH_MIN = 32
"""Runs of fewer messages between two rounds go message by message (numpy costs more)."""


BAG_STREAM = FallbackStatus(
    timestamp='log_time', timestamp_since=0, loss_known=False, loss_unknown_since=1, notes=(),
    loss_note='not measured from a bag: rosbag2 records no publication sequence numbers, so '
              'messages lost between writer and recorder cannot be counted')
"""How a bag's stream arrives: by log time, without sequence numbers (loss is unknown)."""


@dataclass(frozen=True)
class TopicPlan:
    """One topic to analyze: its configuration and what the bag says about it.

    ``stamp_rule``: where the stamp is in the raw bytes, resolved from the bag's own type
    definitions (``topic.<id>.stamp_field``; None: the type has no stamp there), the same
    rule the live node resolves from rosidl.
    ``clock_choice``: where the timer clock comes from (``config``, ``--clock`` or ``auto``).
    """

    config: TopicConfig
    bag_topic: BagTopic
    stamp_rule: StampRule | None
    clock_choice: str
    no_stamp_reason: str = ''
    """Why ``stamp_rule`` is None when the type may carry a stamp (no definition in the bag)."""


@dataclass(frozen=True)
class Plan:
    """What to read from a bag and how to analyze it."""

    topics: tuple[TopicPlan, ...]
    clock: BagTopic | None
    stats: tuple[BagTopic, ...]
    analysis: AnalysisConfig
    use_sim_time: bool | None = None


class _TopicTrack:
    """One analyzed topic: its configuration once decided, and its plot series."""

    def __init__(self, plan: TopicPlan, analysis: AnalysisConfig, t0_ns: int, span_ns: int,
                 keep_series: bool, has_clock: bool = False) -> None:
        self.plan = plan
        self.analysis = analysis
        self.has_clock = has_clock
        """Whether the bag has /clock samples to place sim time."""
        self.config: TopicConfig | None = None
        """The configuration in force once the first message decided an ``auto`` clock."""
        self.clock_choice = plan.clock_choice
        self.own_clock = ''
        """Why the sim-time stamps are timed on their own clock without /clock ('' if not)."""
        self.timeline = Timeline(t0_ns, span_ns) if keep_series else None
        self.transforms = False
        """Whether its type is laid out like ``tf2_msgs/TFMessage``: figures per transform."""
        self.feed: Callable[[int, bytes], None] | None = None
        """The per-transform feed, for the messages recorded as columns."""

    @property
    def topic_id(self) -> str:
        return self.plan.config.name

    @property
    def conn_ids(self) -> list[int]:
        """The bag's connection ids of this topic."""
        return [c.id for c in self.plan.bag_topic.connections]

    def add_rows(self, rows: dict[str, Any]) -> None:
        """Put one processing's per-cycle rows into the plot series."""
        if self.timeline is None:
            return
        known = {name: rows[name] != NO_VALUE
                 for name in ('interval_wall', 'interval_sim', 'response')}
        self.timeline.add(rows['start_wall'], rows, known, rows['missed'].astype(bool),
                          rows['skipped'])

    def _unplaced_stamps_note(self, config: TopicConfig, foreign: int, messages: int) -> str:
        """Say why no period was learned when the start stamps are on another clock.

        Too few stamps were on the timer clock to learn from: it is not a lack of messages.
        Sim-time stamps on a wall-clock topic cannot be placed without /clock, and wall-clock
        stamps on a sim-clock topic are on the other clock.
        """
        head = (f'period not learned: {foreign} of {messages} start stamps are not on the '
                f'{config.clock} clock')
        if config.clock == 'wall':
            where = ('sim time? the bag has no /clock to place it' if not self.has_clock
                     else 'sim time? the timer clock is wall')
            return (f'{head} ({where}); --clock sim takes the stamps on their own clock, '
                    '--stamp none times the arrivals')
        return (f'{head} (they are wall-clock stamps); --clock wall takes them on their own '
                'clock, --stamp none times the arrivals')

    def facts(self, topic: TopicSnapshot) -> TopicFacts:
        """Return what only the bag knows of this topic, next to the session's snapshot of it."""
        plan, report = self.plan, topic.report
        config = self.config or plan.config
        notes: list[str] = []
        if self.own_clock and config.clock == 'sim':
            notes.append(f'{self.own_clock}: timed on their own clock, as --stamp start '
                         '--clock sim does (--clock wall times the arrivals)')
        if report is not None and report.messages_total:
            messages, foreign = report.messages_total, report.foreign_stamps_total
            if (report.period_ns is None and foreign
                    and messages - foreign <= self.analysis.learn_intervals):
                notes.append(self._unplaced_stamps_note(config, foreign, messages))
            elif (config.clock == 'sim' and report.counts_known
                    and topic.run.cycles < messages - foreign):
                notes.append(f'{messages - foreign - topic.run.cycles} messages before the '
                             'first /clock sample (or otherwise not placed) not analyzed')
        return TopicFacts(topic_id=self.topic_id, msgtype=plan.bag_topic.msgtype,
                          stamp=config.stamp, clock_choice=self.clock_choice,
                          notes=tuple(notes))


class _ClockTrack:
    """The /clock stream: what the rounds' clock reports add to the session's final one."""

    def __init__(self, topic: str, keep_series: bool) -> None:
        self.topic = topic
        self.malformed = 0
        self.wall_total = 0
        self.sim_total = 0
        self.bin_max = NAN
        self.gap = NAN
        self.gap_at: int | None = None
        self.steps = ValueSketch(exact_cap=1 << 14)
        self.paused = 0
        self.last_report: ClockReport | None = None
        self.windows = WindowSeries() if keep_series else None

    def add(self, report: ClockReport) -> None:
        """Fold one clock report (one round of the replay) into the whole-run figures."""
        if report.messages_total == 0:
            return
        self.last_report = report
        if report.messages == 0 or report.window_wall_ns <= 0:
            return
        self.wall_total += report.window_wall_ns
        self.sim_total += report.window_sim_ns
        self.bin_max = float(np.fmax(self.bin_max, report.rtf_bin_max))
        if not math.isnan(report.max_wall_gap_ns) and not self.gap >= report.max_wall_gap_ns:
            self.gap = report.max_wall_gap_ns
            self.gap_at = report.max_wall_gap_at_ns
        if not math.isnan(report.step_ns):
            self.steps.add(np.array([round(report.step_ns)], np.int64))
        self.paused += int(report.paused)
        if self.windows is not None and report.last_wall_ns is not None:
            end = report.last_wall_ns
            self.windows.add(RtfWindow(end - report.window_wall_ns, end, report.window_wall_ns,
                                       report.window_sim_ns, report.rtf_bin_min,
                                       report.rtf_bin_max))

    def facts(self) -> ClockFacts:
        """Return the whole-bag figures the final clock report does not hold."""
        step, = self.steps.quantiles((0.5,))
        return ClockFacts(
            malformed_total=self.malformed, wall_span_ns=self.wall_total,
            sim_span_ns=self.sim_total, rtf_bin_max=self.bin_max, step_ns=step,
            max_wall_gap_ns=self.gap, max_wall_gap_at_ns=self.gap_at,
            paused_windows=self.paused)


class _Columns(NamedTuple):
    """One batch's messages by handler: per topic (indices, stamps), /clock, stats."""

    topics: list[tuple[np.ndarray, np.ndarray]]
    clock: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    """Indices, sim times and whether each could be read."""
    stats: np.ndarray | None


class BagAnalysis:
    """Runs a ``Plan`` over a ``BagSource`` and returns a ``BagResult``."""

    def __init__(self, bag: BagSource, plan: Plan, *, keep_series: bool = False,
                 progress: Callable[[int], None] | None = None) -> None:
        """Prepare; ``progress(messages_done)`` is called now and then while running."""
        self.bag = bag
        self.plan = plan
        self.keep_series = keep_series
        self.progress = progress
        span = bag.duration_ns
        analysis = plan.analysis
        self.session = Session(
            replace(analysis, run_percentiles=True),
            use_sim_time=(plan.use_sim_time if plan.use_sim_time is not None
                          else plan.clock is not None),
            start_wall_ns=bag.start_ns,
            clock_topic=plan.clock.name if plan.clock else '/clock',
            arrival_timestamp='log_time', clock_capacity=CLOCK_CAPACITY)
        has_clock = plan.clock is not None and plan.clock.count > 0
        self.tracks = [_TopicTrack(p, analysis, bag.start_ns, span, keep_series, has_clock)
                       for p in plan.topics]
        for track in self.tracks:
            track.transforms = _laid_out_like_tf(bag, track.plan.bag_topic.msgtype)
        if not has_clock and plan.use_sim_time is None:
            self._judge_own_clocks()
        self.clock = _ClockTrack(plan.clock.name if plan.clock else '/clock', keep_series)
        if keep_series:
            by_id = {track.topic_id: track for track in self.tracks}
            self.session.on_rows = lambda topic_id, rows: by_id[topic_id].add_rows(rows)
        self.recorded = RecordedSummary() if plan.stats else None
        self._handlers: dict[int, Callable[[int, bytes], None]] = {}
        self._clock_ids = [c.id for c in plan.clock.connections] if plan.clock else []
        self._stats_ids = [c.id for t in plan.stats for c in t.connections]

    @property
    def message_total(self) -> int:
        """Messages the run will read."""
        topics = [p.bag_topic for p in self.plan.topics] + list(self.plan.stats)
        if self.plan.clock:
            topics.append(self.plan.clock)
        return sum(t.count for t in topics)

    # -- handlers -------------------------------------------------------------------------

    def _connect(self, topic: BagTopic, handler: Callable[[int, bytes], None]) -> None:
        for conn in topic.connections:
            self._handlers[conn.id] = handler

    def _topic_handler(self, track: _TopicTrack) -> Callable[[int, bytes], None]:
        """Handle the first message (it decides an ``auto`` clock), then hand over."""
        plan = track.plan

        def first(t: int, raw: bytes) -> None:
            stamp = NO_VALUE
            read = plan.stamp_rule.read if plan.stamp_rule else None
            if read is not None:
                try:
                    stamp = read(raw)
                except CdrError:
                    stamp = NO_VALUE
            config = plan.config
            if plan.clock_choice == 'auto':
                clock, why = self._auto_clock(track, stamp, t)
                config = config.with_changes(clock=clock)
                track.clock_choice = f'auto: {why}'
            track.config = config
            self.session.configure({k.topic_id: k.config for k in self.tracks
                                    if k.config is not None})
            self.session.topic_status(track.topic_id, TopicState.RECEIVING,
                                      type_name=plan.bag_topic.msgtype, fallback=BAG_STREAM,
                                      writers=recorded_writers(plan.bag_topic) or None)
            record = self.session.recorder(track.topic_id, read, transforms=track.transforms,
                                           no_stamp_reason=plan.no_stamp_reason)
            if track.transforms:
                track.feed = self.session.transform_feed(track.topic_id)

            def handle(t: int, raw: bytes) -> None:
                record(t, raw, NO_VALUE)

            self._connect(plan.bag_topic, handle)
            handle(t, raw)

        return first

    def _judge_own_clocks(self) -> None:
        """Read the topics' first messages: are they clean sim-time stamps? (no /clock).

        Such stamps are timed on their own clock by default, as ``--stamp start --clock
        sim`` does (``stamps_on_their_own_clock``); else the arrivals on the wall clock. One
        pass from the bag's start over the candidates, at most ``OWN_CLOCK_SCAN`` messages:
        a topic that starts late never makes it read the whole bag.
        """
        readers: dict[int, tuple[Callable[[bytes], int], _TopicTrack]] = {}
        for track in self.tracks:
            plan = track.plan
            if plan.clock_choice == 'auto' and plan.stamp_rule and plan.config.stamp != 'none':
                for conn in plan.bag_topic.connections:
                    readers[conn.id] = (plan.stamp_rule.read, track)
        if not readers:
            return
        seen: dict[str, tuple[list[int], list[int]]] = {}
        full = 0
        conns = [c for t in self.tracks for c in t.plan.bag_topic.connections if c.id in readers]
        for scanned, (conn, t, raw) in enumerate(self.bag.messages(conns)):
            read, track = readers[conn.id]
            arrival, stamp = seen.setdefault(track.topic_id, ([], []))
            if len(arrival) < OWN_CLOCK_MESSAGES:
                try:
                    stamp.append(read(raw))
                except CdrError:
                    stamp.append(NO_VALUE)
                arrival.append(t)
                full += len(arrival) == OWN_CLOCK_MESSAGES
            if full == len({track.topic_id for _, track in readers.values()}) or (
                    scanned >= OWN_CLOCK_SCAN):
                break
        for track in self.tracks:
            if track.topic_id in seen:
                arrival, stamp = seen[track.topic_id]
                clean, why = stamps_on_their_own_clock(np.array(arrival, np.int64),
                                                       np.array(stamp, np.int64))
                track.own_clock = why if clean else ''

    def _auto_clock(self, track: _TopicTrack, stamp: int, t: int) -> tuple[str, str]:
        """Pick the producer's timer clock when nothing configures it."""
        config = track.plan.config
        if self.plan.use_sim_time is not None:
            return ('sim' if self.plan.use_sim_time else 'wall'), 'use_sim_time in config'
        if self.plan.clock is None or self.plan.clock.count == 0:
            if track.own_clock:
                return 'sim', 'no /clock in bag; sim-time stamps on their own clock'
            return 'wall', 'no /clock in bag'
        if config.stamp == 'none' or stamp == NO_VALUE:
            return 'sim', '/clock in bag'
        sim = self.session.clock.last_sim_ns or 0
        if abs(stamp - t) <= abs(stamp - sim):
            return 'wall', 'stamps on wall clock'
        return 'sim', 'stamps on sim clock'

    def _clock_handler(self) -> Callable[[int, bytes], None]:
        clock = self.clock
        sample = self.session.clock_sample

        def on_clock(t: int, raw: bytes) -> None:
            try:
                sim = read_stamp_ns(raw)
            except CdrError:
                clock.malformed += 1
                return
            sample(t, sim)

        return on_clock

    def _stats_handler(self, topic: BagTopic, store: Any) -> Callable[[int, bytes], None]:
        recorded = self.recorded
        assert recorded is not None
        deserialize = store.deserialize_cdr
        msgtype = topic.msgtype
        name = topic.name

        def handle(t: int, raw: bytes) -> None:
            try:
                msg = deserialize(raw, msgtype)
            except Exception:  # rosbags' decoder on recorded bytes: count, don't stop
                recorded.malformed += 1
                return
            recorded.add(name, msg)
        return handle

    # -- running --------------------------------------------------------------------------

    def _columns(self, batch: MessageBatch) -> _Columns:
        """Sort one batch's messages by what handles them; read every stamp, vectorized.

        Reading a stamp depends on nothing but the bytes, so it is done for the whole batch
        here; a message the vectorized reader leaves (``ok`` False) is read by the topic's
        own reader, the reference, with ``MALFORMED`` where that raises.
        """
        ids = batch.conn_ids
        buffer = batch.buffer
        starts, sizes = batch.starts, batch.sizes
        topics = []
        for track in self.tracks:
            idx = np.flatnonzero(np.isin(ids, track.conn_ids))
            rule = track.plan.stamp_rule
            if rule is None:
                stamps = np.full(len(idx), NO_VALUE, np.int64)
            else:
                stamps, ok = rule.read_many(buffer, starts[idx], sizes[idx])
                for k in np.flatnonzero(~ok).tolist():
                    try:
                        stamps[k] = rule.read(batch.raw(int(idx[k])))
                    except CdrError:
                        stamps[k] = MALFORMED
            topics.append((idx, stamps))
        clock = None
        if self.plan.clock is not None:
            idx = np.flatnonzero(np.isin(ids, self._clock_ids))
            sim, ok = read_stamps_ns(buffer, starts[idx], sizes[idx])
            for k in np.flatnonzero(~ok).tolist():
                try:
                    sim[k] = read_stamp_ns(batch.raw(int(idx[k])))
                    ok[k] = True
                except CdrError:
                    pass
            clock = (idx, sim, ok)
        stats = np.flatnonzero(np.isin(ids, self._stats_ids)) if self._stats_ids else None
        return _Columns(topics, clock, stats)

    def _segment(self, batch: MessageBatch, columns: _Columns, i: int, j: int) -> None:
        """Hand messages ``i`` to ``j`` (no round between them) to the session.

        As columns where that is the same as message by message: no event in the run is a
        topic's first (it configures the topic, reading the clock as it stands then) and
        none fills a pending buffer (processed at once, with the clock as it stands then).
        Within the run nothing else depends on how topic events and /clock samples
        interleave: nothing is processed before the next round.
        """
        parts = []
        batched = j - i >= BATCH_MIN
        for track, (idx, _) in zip(self.tracks, columns.topics, strict=True):
            a, b = np.searchsorted(idx, (i, j)).tolist()
            parts.append((a, b))
            if b > a and (track.config is None or b - a > self.session.room(track.topic_id)):
                batched = False
        if not batched:
            handlers = self._handlers
            times, ids = batch.log_time, batch.conn_ids
            for k in range(i, j):
                handlers[int(ids[k])](int(times[k]), batch.raw(k))
            return
        times, sizes = batch.log_time, batch.sizes
        for track, (idx, stamps), (a, b) in zip(self.tracks, columns.topics, parts,
                                                strict=True):
            if b > a:
                mine = idx[a:b]
                self.session.record_batch(track.topic_id, times[mine], stamps[a:b], sizes[mine])
                feed = track.feed
                if feed is not None:
                    for k in mine.tolist():
                        feed(int(times[k]), batch.raw(k))
        if columns.clock is not None:
            idx, sim, ok = columns.clock
            a, b = np.searchsorted(idx, (i, j)).tolist()
            if b > a:
                valid = ok[a:b]
                self.clock.malformed += int(b - a - np.count_nonzero(valid))
                self.session.clock_batch(times[idx[a:b]][valid], sim[a:b][valid])
        if columns.stats is not None:
            a, b = np.searchsorted(columns.stats, (i, j)).tolist()
            for k in columns.stats[a:b].tolist():
                self._handlers[int(batch.conn_ids[k])](int(times[k]), batch.raw(k))

    def _round(self, t: int) -> None:
        """Let the session process at bag time ``t``; fold its clock report in."""
        self.clock.add(self.session.advance(t))

    def _final(self, t: int) -> Snapshot:
        """Return the final snapshot, every planned topic in it (also one never heard)."""
        self.session.configure({k.topic_id: k.config or k.plan.config for k in self.tracks})
        snapshot = self.session.snapshot(t, final=True)
        self.clock.add(snapshot.clock.report)
        by_id = {topic.topic_id: topic for topic in snapshot.topics}
        return replace(snapshot, topics=tuple(by_id[k.topic_id] for k in self.tracks))

    def run(self) -> BagResult:
        """Read the bag once and return the results."""
        plan = self.plan
        topics: list[BagTopic] = []
        for track in self.tracks:
            self._connect(track.plan.bag_topic, self._topic_handler(track))
            topics.append(track.plan.bag_topic)
        if plan.clock is not None:
            self._connect(plan.clock, self._clock_handler())
            topics.append(plan.clock)
        if plan.stats:
            store = self.bag.typestore(sorted({t.msgtype for t in plan.stats}))
            for topic in plan.stats:
                self._connect(topic, self._stats_handler(topic, store))
                topics.append(topic)
        connections = [c for topic in topics for c in topic.connections]
        progress = self.progress
        done = 0
        since = 0
        t = self.bag.start_ns  # stays the last log time read (the start if none)
        next_tick = t + TICK_NS
        for batch in self.bag.batches(connections):
            times = batch.log_time
            columns = self._columns(batch)
            n = len(times)
            i = 0
            while i < n:
                t = int(times[i])
                if t >= next_tick or since >= TICK_MESSAGES:
                    self._round(t)
                    next_tick = t + TICK_NS
                    done += since
                    since = 0
                    if progress is not None:
                        progress(done)
                # Up to the next round: the same rounds as message by message.
                j = min(n, i + TICK_MESSAGES - since,
                        int(np.searchsorted(times, next_tick, side='left')))
                self._segment(batch, columns, i, j)
                since += j - i
                i = j
            t = int(times[-1])
        snapshot = self._final(t)
        done += since
        if progress is not None:
            progress(done)
        expected = self.message_total
        if done != expected:
            raise BagError(f'cannot read bag {self.bag.path} completely: {done:,} of the '
                           f'{expected:,} messages it lists could be read (damaged or truncated '
                           'storage file?)')
        return self._result(snapshot)

    def _result(self, snapshot: Snapshot) -> BagResult:
        bag = self.bag
        has_clock = self.plan.clock is not None and self.clock.last_report is not None
        series: dict[str, Any] = {}
        if self.keep_series:
            sketches = {}
            for track in self.tracks:
                run = self.session.whole_run(track.topic_id)
                sketches[track.topic_id] = (run.sketches() if run is not None else {
                    name: ValueSketch() for name in
                    ('interval_wall', 'interval_sim', 'lateness', 'response')})
            series = {
                'timelines': {t.topic_id: t.timeline for t in self.tracks},
                'sketches': sketches,
                'rtf_windows': self.clock.windows.windows if self.clock.windows else [],
                't0_ns': bag.start_ns,
                'span_ns': bag.duration_ns,
                'target_rtf': self.plan.analysis.target_rtf,
            }
        return BagResult(
            bag=BagInfo(path=str(bag.path), storage=bag.storage, start_ns=bag.start_ns,
                        duration_ns=bag.duration_ns, message_count=bag.message_count,
                        topic_count=len(bag.topics)),
            snapshot=snapshot,
            facts=tuple(track.facts(topic)
                        for track, topic in zip(self.tracks, snapshot.topics, strict=True)),
            clock=self.clock.facts() if has_clock else None,
            recorded=self.recorded.result() if self.recorded and self.recorded.messages
            else None,
            percentile_method=PERCENTILE_METHOD,
            notes=tuple(bag.notes),
            series=series,
        )


def _laid_out_like_tf(bag: BagSource, msgtype: str) -> bool:
    """Tell whether a bag's type is laid out like ``tf2_msgs/TFMessage`` (False if unknown)."""
    try:
        return is_tf_layout(layout_from_definitions(msgtype, bag.definition))
    except (BagError, StampFieldError):
        return False
