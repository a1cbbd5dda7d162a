"""The analysis session: the one orchestration of the analysis, live and offline.

See docs/design.md, Architecture.

Adapters (the live node, the bag replay) only feed events in: /clock samples, message
events, QoS deadline events, what the graph says about a topic, configuration changes, and
time passing. The session owns everything that decides a figure or a level: the clock
analyzer, one ``CycleAnalyzer`` per topic, arrival order across writers, when events are
processed, sim-time resets, reconfiguration and every level rule. It hands out frozen
``Snapshot`` values that every output reads. No ROS import; the caller passes ``now``.

Rules that keep live and offline figures equal for the same stream:

- Events are processed in arrival order, each reset between the events before and after it.
- An event of a sim-clock topic waits until the /clock sample after it arrived, so its end
  can be placed inside its /clock step (``RtfAnalyzer.sim_in_step``); it is processed
  anyway once /clock has been silent for ``clock_timeout`` or at the final report.
- A change of configuration applies to events processed after it; everything received
  before is processed first, with the clock, under the settings it arrived with.
- A malformed message counts as a message (and as malformed), never as a cycle.
- Levels are decided per report, with state across reports kept here: the start-up grace
  (``Thresholds.grace_ns``, counted from the start and from the first report after a topic
  appeared in the graph) and the hysteresis (``level_rise_windows``, ``level_fall_windows``
  reports in a row before a level changes), so a bag replay reporting at the same times
  shows the same levels.
- One producer per cycle stream (``CycleAnalyzer``): runs of sequence numbers on their own
  grids, foreign start stamps counted and kept off them, outages re-anchoring them; the
  topic's status names what broke the assumption (``_stream_notes``), as live as offline.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
import math
from types import MappingProxyType

import numpy as np

from ros2_deadline_monitor.analysis.config import AnalysisConfig, NS_PER_S, Timing, TopicConfig
from ros2_deadline_monitor.analysis.cycles import CycleAnalyzer
from ros2_deadline_monitor.analysis.errors import CdrError
from ros2_deadline_monitor.analysis.levels import (
    clock_level,
    host_level,
    several_clocks_level,
    topic_level,
)
from ros2_deadline_monitor.analysis.message_info import FallbackStatus
from ros2_deadline_monitor.analysis.reports import (
    ClockReport,
    HostReport,
    Level,
    RunTotals,
    TopicReport,
)
from ros2_deadline_monitor.analysis.ring import MALFORMED, NO_VALUE
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer
from ros2_deadline_monitor.analysis.snapshot import (
    ClockSnapshot,
    HostSnapshot,
    Receive,
    REMOVED_KEPT,
    RemovedTopic,
    Snapshot,
    TopicSnapshot,
)
from ros2_deadline_monitor.analysis.transforms import (
    is_static_topic,
    STAMPS_PER_TRANSFORM,
    TransformAnalyzer,
    TransformFigures,
    TRANSFORMS_KEPT,
    TransformsReport,
    writer_of,
)
from ros2_deadline_monitor.analysis.units import short_seconds
from ros2_deadline_monitor.analysis.whole_run import WholeRun

PUBLISHERS_SEEN = 8
"""Publishers of a topic remembered over the run (for naming its writer, two are enough)."""
NO_INTERVAL_ALERT = (1 << 63) - 1
"""The pace limit of an event topic: no interval is late, only a sequence gap is unusual."""
RESETS_KEPT = 256
"""Wall times of the most recent resets kept for placing them between events; a storm of
more resets between two reports only keeps its latest ones (every one is still counted)."""

TRANSFORMS_NAMED = 5
"""Silent transforms named in a topic's status; the rest are counted."""

CLOCK_BOUND_SLACK = 1.25
"""A sim-time timer faster than /clock is said to run at the /clock rate only when it
measured at most this many times that rate (jitter of a few steps either way)."""

NO_RUN = RunTotals()
"""The whole-run figures of a topic without a cycle yet."""

StampReader = Callable[[bytes], int]
"""Reads the cycle-start stamp (int ns) from a message's raw bytes; raises ``CdrError``."""
Recorder = Callable[[int, bytes, int], None]
"""``record(arrival_wall_ns, raw, seq)``: the per-message call of one topic."""
TransformFeed = Callable[[int, bytes], None]
"""``feed(arrival_wall_ns, raw)``: a message of a /tf-like topic to its per-transform figures."""


class TopicState(Enum):
    """Where a topic stands in the graph, as the adapter sees it."""

    WAITING = 'waiting'
    """No publisher yet: reported STALE until a message arrives."""
    RECEIVING = 'receiving'
    ERROR = 'error'
    """Unusable (publishers disagree on the type, unknown type): ERROR with the reason."""


@dataclass(frozen=True)
class Changes:
    """What ``Session.configure`` did: the adapter subscribes, unsubscribes and logs."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Identifier -> names of the settings that changed (``TopicConfig`` fields)."""


@dataclass
class _Topic:
    config: TopicConfig
    analyzer: CycleAnalyzer
    resets_applied: int
    state: TopicState = TopicState.WAITING
    reason: str = ''
    type_name: str = ''
    publishers: tuple[str, ...] = ()
    publishers_seen: tuple[str, ...] = ()
    """Every publisher the graph named during the run (up to ``PUBLISHERS_SEEN``): one that
    left still sent some of the messages, so the one left at the end is not their writer."""
    writers: int = 0
    receive: Receive = Receive()
    appeared_ns: int | None = None
    """Report time at which the topic last appeared in the graph (the grace counts from it)."""
    appear_pending: bool = False
    offered_deadline_ns: int | None = None
    shown_level: Level | None = None
    """The level last reported (hysteresis), and the reports in a row that asked otherwise."""
    streak: int = 0
    streak_rising: bool = False
    fallback: FallbackStatus | None = None
    seen: tuple[int, ...] = (0, 0, 0, 0, 0)
    """Foreign stamps, outages, unattributed messages, stamps going back and shared stamps
    at the previous snapshot."""
    version: int = 0
    """Counts the changes to what its snapshot depends on from outside the stream
    (``Session._changed``, the one place that counts them)."""
    run: WholeRun | None = None
    """Whole-run figures, from its first processed event on (None before: idle costs none)."""
    pace: Pace = field(default_factory=lambda: Pace())
    transforms: TransformAnalyzer | None = None
    """Per-transform figures of a topic laid out like ``tf2_msgs/TFMessage`` (else None)."""
    latched: int = 0
    """Messages a writer kept for late readers (``transient_local``) and delivered on
    subscribing, published before the monitor subscribed: not cycles (``Session.latched``)."""
    last: TopicSnapshot | None = None
    """Its snapshot of the latest report that made it afresh (``Session.snapshot(standing=)``
    repeats it)."""
    last_version: int = -1
    """``version`` when ``last`` was made."""
    last_recorded: int = 0
    """Messages recorded when ``last`` was made."""
    view: TopicView = field(init=False)

    def __post_init__(self) -> None:
        self.view = TopicView(self)


class TopicView:
    """What a caller deciding which topics to report afresh may read of one topic.

    Read only (``Session.views``; ``outputs/reporter.py``): its latest fresh snapshot, and
    whether anything it depends on changed since: a topic's figures change with its stream,
    everything else bumps ``version``. The same object until the topic is removed; added
    again, it gets a new one.
    """

    __slots__ = ('_topic',)

    def __init__(self, topic: _Topic) -> None:
        self._topic = topic

    @property
    def version(self) -> int:
        """Bumped at every change of what its snapshot depends on from outside the stream.

        Its settings, what the graph and its subscription say, its timing or event totals,
        its appearing in the graph, a gap of the monitor's own, a sim-time reset, the report
        period (``Session._changed``).
        """
        return self._topic.version

    @property
    def snapshot(self) -> TopicSnapshot | None:
        """Its snapshot of the latest report that made it afresh (None: none yet)."""
        return self._topic.last

    @property
    def changed(self) -> bool:
        """Since ``snapshot``, its version moved or a message may change its level (``Pace``)."""
        topic = self._topic
        return topic.version != topic.last_version or topic.pace.unusual

    @property
    def last_arrival_ns(self) -> int:
        """Arrival (wall ns) of its latest message recorded one by one (0: none)."""
        return self._topic.pace.last_ns

    @property
    def recorded_since(self) -> int:
        """Messages recorded since ``snapshot`` was made."""
        topic = self._topic
        return topic.analyzer.recorded - topic.last_recorded

    @property
    def silent(self) -> bool:
        """No message recorded yet."""
        return self._topic.analyzer.silent_so_far

    @property
    def per_transform(self) -> bool:
        """Analyzed per transform (a ``/tf``-like topic): its figures change with time alone."""
        return self._topic.transforms is not None

    @property
    def period_ns(self) -> int | None:
        """The period in force (None: an event topic, or a period still learned)."""
        timing = self._topic.analyzer.timing
        return None if timing is None else timing.period_ns

    @property
    def event(self) -> bool:
        """An event topic: no period paces it."""
        return self._topic.config.kind == 'event'

    @property
    def appeared_ns(self) -> int | None:
        """When it last appeared in the graph (None: at the session's start)."""
        return self._topic.appeared_ns

    @property
    def held(self) -> bool:
        """Reports asked for another level than the one shown (the hysteresis runs)."""
        return self._topic.streak > 0


class Pace:
    """What the per-message call notes about a topic's pace since it was marked (``mark``).

    An interval above ``limit_ns`` (a message late enough to be a miss or a skip), one under
    ``floor_ns`` (the topic got faster than the pace it was marked at) or a gap in the
    sequence numbers sets ``unusual``; so does a start stamp that goes back or repeats
    (all-zero stamps aside: they never count as stamps), moves by more than
    ``stamp_limit_ns`` (a skip on the timer clock, a stamp on another clock), or cannot be
    read. The session marks it at every fresh snapshot of the topic (``Session._mark``).
    """

    __slots__ = ('floor_ns', 'last_ns', 'last_stamp_ns', 'limit_ns', 'next_seq',
                 'stamp_limit_ns', 'unusual')

    def __init__(self) -> None:
        self.unusual = True
        self.last_ns = 0
        """Arrival (wall ns) of the latest message recorded."""
        self.limit_ns = 0
        self.floor_ns = 0
        self.next_seq = NO_VALUE
        self.last_stamp_ns = 0
        self.stamp_limit_ns = 0

    def see(self, arrival_ns: int, seq: int, stamp_ns: int = NO_VALUE) -> None:
        """Note one message; ``NO_VALUE``: no stamp (the arrival is the cycle start)."""
        interval = arrival_ns - self.last_ns
        if interval > self.limit_ns or interval < self.floor_ns or (
                seq != self.next_seq and seq != NO_VALUE):
            self.unusual = True
        self.last_ns = arrival_ns
        self.next_seq = seq + 1
        if stamp_ns != NO_VALUE:
            step = stamp_ns - self.last_stamp_ns
            if (step > self.stamp_limit_ns or step < 0 or (step == 0 and stamp_ns)
                    or stamp_ns == MALFORMED):
                self.unusual = True
            self.last_stamp_ns = stamp_ns


class _Recorder:
    """The per-message call of one topic: plain methods, O(1), no allocation.

    ``on_message`` for a type without a stamp (the arrival is the cycle start),
    ``on_stamped`` reads the stamp from the raw bytes (``MALFORMED`` when it cannot).
    Both note the pace (``Pace.see``) and hand the event to the topic's analyzer; a full
    pending buffer is processed at once (``Session._process_full``).
    """

    __slots__ = ('_full', '_see', '_read_stamp', '_record', '_topic')

    def __init__(self, session: Session, topic_id: str, read_stamp: StampReader | None) -> None:
        topic = session._topics[topic_id]
        self._record = topic.analyzer.record
        self._see = topic.pace.see
        self._read_stamp = read_stamp
        self._full = session._process_full
        self._topic = topic

    def on_message(self, arrival_ns: int, raw: bytes, seq: int) -> None:
        """Record one message of a type without a stamp."""
        self._see(arrival_ns, seq)
        if self._record(arrival_ns, NO_VALUE, seq, len(raw)):
            self._full(self._topic)

    def on_stamped(self, arrival_ns: int, raw: bytes, seq: int) -> None:
        """Record one message whose stamp is read from its raw bytes."""
        try:
            stamp = self._read_stamp(raw)
        except CdrError:
            stamp = MALFORMED
        self._see(arrival_ns, seq, stamp)
        if self._record(arrival_ns, stamp, seq, len(raw)):
            self._full(self._topic)


class Session:
    """One analysis run: events in, snapshots out."""

    def __init__(self, analysis: AnalysisConfig, *, use_sim_time: bool, start_wall_ns: int,
                 clock_topic: str = '/clock', arrival_timestamp: str = 'source_timestamp',
                 stats_period_ns: int = 1_000_000_000, clock_capacity: int = 1 << 17) -> None:
        """Start a session; ``start_wall_ns`` (system clock) anchors relative times."""
        self._analysis = analysis
        self._use_sim_time = use_sim_time
        self._start_wall_ns = start_wall_ns
        self._clock_topic = clock_topic
        self._arrival_timestamp = arrival_timestamp
        self._stats_period_ns = stats_period_ns
        self._rtf = RtfAnalyzer(bin_ns=analysis.rtf_bin_ns, capacity=clock_capacity)
        self._topics: dict[str, _Topic] = {}
        self._views: dict[str, TopicView] = {}
        self._invalid: dict[str, str] = {}
        self._removed: tuple[RemovedTopic, ...] = ()
        self._removed_beyond = 0
        self._resets = 0
        self._reset_walls: deque[int] = deque(maxlen=RESETS_KEPT)
        self._clock_publishers: int | None = None
        self._clock_silent_after: int | None = None
        """Wall time of the last /clock sample while /clock is silent beyond its timeout."""
        self._simulator_rtf = math.nan
        self._reported = False
        self.on_rows: Callable[[str, dict[str, np.ndarray]], None] | None = None
        """Called with a topic's id and the per-cycle rows of each processing (the bag
        replay's plot series), after they went into the whole-run figures."""

    # -- configuration --------------------------------------------------------------------

    @property
    def analysis(self) -> AnalysisConfig:
        """Monitor-wide analysis settings in force."""
        return self._analysis

    @property
    def clock(self) -> RtfAnalyzer:
        """The /clock analyzer (read-only use: mapping times between clocks)."""
        return self._rtf

    def config(self, topic_id: str) -> TopicConfig:
        """Return the settings in force for one monitored topic."""
        return self._topics[topic_id].config

    def topic_ids(self) -> list[str]:
        """Return the identifiers of the monitored topics, in configuration order."""
        return list(self._topics)

    def configure(self, topics: Mapping[str, TopicConfig],
                  invalid: Mapping[str, str] | None = None, *,
                  analysis: AnalysisConfig | None = None, use_sim_time: bool | None = None,
                  stats_period_ns: int | None = None,
                  now_wall_ns: int | None = None) -> Changes:
        """Make the monitored topics exactly ``topics``; ``invalid`` maps ids to reasons.

        A topic whose name changes is removed and added again (its figures start anew).
        Before any setting changes, everything already received is processed under the
        settings it arrived with. With ``now_wall_ns`` (a change at run time), a removed
        topic keeps its figures as of now for the final summary (``Snapshot.removed``).
        """
        self._invalid = dict(invalid or {})
        if use_sim_time is not None:
            self._use_sim_time = use_sim_time
        if stats_period_ns is not None and stats_period_ns != self._stats_period_ns:
            self._stats_period_ns = stats_period_ns
            for topic in self._topics.values():
                self._changed(topic)
        new_analysis = analysis if analysis is not None else self._analysis
        analysis_changed = new_analysis != self._analysis
        if analysis_changed:
            self._process_all(None, force=False)
        self._analysis = new_analysis
        removed = [topic_id for topic_id, topic in self._topics.items()
                   if topic_id not in topics or topics[topic_id].topic != topic.config.topic]
        for topic_id in removed:
            topic = self._topics.pop(topic_id)
            if now_wall_ns is not None:
                self._keep_removed(topic_id, topic, now_wall_ns)
        added = []
        changed: dict[str, tuple[str, ...]] = {}
        for topic_id, config in topics.items():
            topic = self._topics.get(topic_id)
            if topic is None:
                self._topics[topic_id] = _Topic(
                    config, CycleAnalyzer(config, new_analysis), self._resets,
                    reason=f'waiting for a publisher on {config.topic}')
                added.append(topic_id)
                continue
            if config == topic.config and not analysis_changed:
                continue
            if config != topic.config:
                changed[topic_id] = tuple(
                    f.name for f in fields(config)
                    if getattr(config, f.name) != getattr(topic.config, f.name))
            self._process_topic(topic, None, force=False)
            topic.analyzer.reconfigure(config, new_analysis)
            topic.config = config
            self._changed(topic)
        for topic_id in added:
            # Created at the session's start: the grace counts from then; later: from now.
            self._topics[topic_id].appear_pending = bool(self._reported)
        self._views = {topic_id: topic.view for topic_id, topic in self._topics.items()}
        return Changes(tuple(added), tuple(removed), changed)

    def _keep_removed(self, topic_id: str, topic: _Topic, now_wall_ns: int) -> None:
        """Freeze a removed topic's figures: everything it received, processed, as of now."""
        if len(self._removed) >= REMOVED_KEPT:
            self._removed_beyond += 1
            return
        self._process(topic, None, final=True)
        last = self._fresh_topic_snapshot(topic_id, topic, now_wall_ns, 0.0)
        after = short_seconds(now_wall_ns - self._start_wall_ns)
        last = replace(last, reason=f'removed from the configuration {after} s after start; '
                                    f'figures up to then ({last.reason})')
        self._removed += (RemovedTopic(last, now_wall_ns),)

    # -- events -----------------------------------------------------------------------------

    def clock_sample(self, wall_ns: int, sim_ns: int) -> bool:
        """Record one /clock sample; return True when sim time jumped back (a reset)."""
        if not self._rtf.record(wall_ns, sim_ns):
            return False
        self._reset(1)
        self._reset_walls.append(self._rtf.last_wall_ns)
        return True

    def clock_batch(self, wall_ns: np.ndarray, sim_ns: np.ndarray) -> None:
        """Record /clock samples already in arrival order, as ``clock_sample`` each.

        For a bag replay's chunk: no other event may have arrived between them.
        """
        walls = self._rtf.record_many(wall_ns, sim_ns)
        if len(walls):
            self._reset(len(walls))
            self._reset_walls.extend(walls.tolist())

    def clock_samples(self, samples: Iterable[tuple[int, int]]) -> int:
        """Record ``(wall_ns, sim_ns)`` samples in arrival order; return how many were resets.

        A batch taken from a reader queue holds each writer's samples in turn: with several
        /clock publishers they are replayed in the order they arrived.
        """
        return sum(self.clock_sample(wall, sim) for wall, sim in sorted(samples))

    def _reset(self, count: int) -> None:
        """Count sim-time resets: every topic's snapshot depends on them."""
        self._resets += count
        for topic in self._topics.values():
            self._changed(topic)

    def recorder(self, topic_id: str, read_stamp: StampReader | None, *,
                 transforms: bool = False, static: bool = False,
                 no_stamp_reason: str = '') -> Recorder:
        """Return the per-message call of one topic (O(1), no allocation, no deserializing).

        ``read_stamp`` None: the type carries no stamp (the arrival is the cycle start), or
        none that can be read, ``no_stamp_reason`` says why (a bag without the type's
        definition). A message whose stamp cannot be read counts as a message and as
        malformed. ``transforms``: the type is laid out like ``tf2_msgs/TFMessage``
        (``is_tf_layout``); each message also feeds the topic's per-transform figures
        (``transform_feed``).
        """
        if read_stamp is None and no_stamp_reason:
            self._topics[topic_id].analyzer.no_stamp_reason = no_stamp_reason
        recorder = _Recorder(self, topic_id, read_stamp)
        record = recorder.on_message if read_stamp is None else recorder.on_stamped
        if not transforms:
            return record
        feed = self.transform_feed(topic_id, static)

        def record_transforms(arrival_ns: int, raw: bytes, seq: int) -> None:
            record(arrival_ns, raw, seq)
            feed(arrival_ns, raw)
        return record_transforms

    def transform_feed(self, topic_id: str, static: bool = False) -> TransformFeed:
        """Analyze a topic per transform from now on; return the call that feeds a message.

        For a topic laid out like ``tf2_msgs/TFMessage``: the recorder calls it after its own
        call, the bag replay for the messages it records as columns. ``static``: its
        publishers keep their messages for late readers (``transient_local``); a topic named
        ``tf_static`` is static whatever it says. The figures live as long as the topic.
        """
        topic = self._topics[topic_id]
        static = static or is_static_topic(topic.config.topic)
        if not topic.analyzer.no_stamp_reason:
            topic.analyzer.no_stamp_reason = STAMPS_PER_TRANSFORM
        if topic.transforms is None:
            topic.transforms = TransformAnalyzer(static)
        else:
            topic.transforms.static = static
        return topic.transforms.record

    def _process_full(self, topic: _Topic) -> None:
        """Process a topic whose pending buffer is full (the per-message call found it so)."""
        self._process_topic(topic, None, force=False)
        if topic.analyzer.pending_full:
            self._process_topic(topic, None, force=True)

    def record_batch(self, topic_id: str, arrival_ns: np.ndarray, stamp_ns: np.ndarray,
                     size_bytes: np.ndarray) -> None:
        """Record message events without sequence numbers at once (a bag replay's chunk).

        The same as the ``recorder``'s call for each (a stamp already read, ``MALFORMED``
        if unreadable), for at most ``room(topic_id)`` events: the per-message call processes
        a full buffer at the event that filled it, with the clock as it stood then.
        """
        topic = self._topics[topic_id]
        topic.pace.unusual = True  # what the batch holds is not looked at one by one
        topic.analyzer.record_many(arrival_ns, stamp_ns, size_bytes)

    def room(self, topic_id: str) -> int:
        """Events ``record_batch`` takes now for one topic."""
        return self._topics[topic_id].analyzer.room

    def message(self, topic_id: str, arrival_ns: int, stamp_ns: int = NO_VALUE,
                seq: int = NO_VALUE, size_bytes: int = 0) -> None:
        """Record one message event whose stamp is already known (``MALFORMED`` if unreadable)."""
        topic = self._topics[topic_id]
        topic.pace.see(arrival_ns, seq, stamp_ns)
        if topic.analyzer.record(arrival_ns, stamp_ns, seq, size_bytes):
            self._process_topic(topic, None, force=True)

    def latched(self, topic_id: str, arrival_ns: int | None = None,
                raw: bytes | None = None) -> None:
        """Count a latched message: published before the monitor subscribed, kept for it.

        A ``transient_local`` writer (a map) hands its kept messages to a reader that
        matches later. Such a message is no cycle: its interval to the next would span the
        time before the monitor existed, its stamp is as old as the run. It is counted
        apart and named in the status; a topic with nothing else is OK, not waiting. The
        transforms of a latched /tf_static (``raw``, arrived at ``arrival_ns``) still count.
        """
        topic = self._topics[topic_id]
        topic.latched += 1
        self._changed(topic)
        if topic.transforms is not None and raw is not None and arrival_ns is not None:
            topic.transforms.record(arrival_ns, raw)

    def unmonitored(self, topic_id: str, from_wall_ns: int, why: str) -> None:
        """Open a gap of the monitor's own: the adapter stopped receiving a topic then.

        It unsubscribed (to subscribe with another QoS or stamp, or while the topic is
        refused); ``why`` names it. Until ``monitored``, the silence is the monitor's: no
        outage, loss, interval or skipped period across it (``CycleAnalyzer.unmonitored``).
        """
        topic = self._topics[topic_id]
        topic.analyzer.unmonitored(from_wall_ns, why)
        if topic.transforms is not None:
            topic.transforms.unmonitored()
        self._changed(topic)

    def monitored(self, topic_id: str, at_wall_ns: int) -> None:
        """Close the gap: the adapter receives a topic again from ``at_wall_ns`` (if open)."""
        topic = self._topics[topic_id]
        topic.analyzer.monitored(at_wall_ns)
        self._changed(topic)

    def dropped_by_monitor(self, topic_id: str, before_seq: int, count: int) -> None:
        """Count the ``count`` messages before ``before_seq`` as dropped by the adapter's queue.

        Counted as the monitor's loss, apart from the producer's (``messages_lost``).
        """
        self._topics[topic_id].analyzer.dropped_by_monitor(before_seq, count)

    def qos_deadline_missed(self, topic_id: str, count: int) -> None:
        """Count middleware 'requested deadline missed' events of one topic."""
        topic = self._topics[topic_id]
        topic.analyzer.record_qos_deadline_missed(count)
        self._changed(topic)

    def topic_status(self, topic_id: str, state: TopicState, reason: str = '', *,
                     type_name: str | None = None, publishers: tuple[str, ...] | None = None,
                     writers: int | None = None, receive: Receive | None = None,
                     offered_deadline_ns: int | None = None,
                     fallback: FallbackStatus | None = None) -> None:
        """Note what the adapter knows of a topic from the graph and its subscription.

        A topic appears when it starts receiving or its first writer matches again (a
        restart): the start-up grace counts anew from the next report. ``offered_deadline_ns``:
        the deadline QoS every publisher offers (0: none or they differ), the expected period
        of a timer topic that has none configured (``CycleAnalyzer.offer_period``).
        ``fallback``: what the middleware's message infos lacked (``analysis/message_info.py``);
        its notes go into the topic's status, and loss is unknown once numbers are missing.
        """
        topic = self._topics[topic_id]
        before = _told(topic)
        if state is TopicState.RECEIVING and (
                topic.state is not TopicState.RECEIVING
                or (writers is not None and writers > 0 and topic.writers == 0)):
            topic.appear_pending = True
            self._changed(topic)
        if offered_deadline_ns is not None:
            offered = offered_deadline_ns or None
            if offered != topic.offered_deadline_ns:
                topic.offered_deadline_ns = offered
                topic.analyzer.offer_period(offered)
        topic.state = state
        topic.reason = reason
        if type_name is not None:
            topic.type_name = type_name
        if publishers is not None:
            topic.publishers = publishers
            seen = topic.publishers_seen
            for name in publishers:
                if name not in seen and len(seen) < PUBLISHERS_SEEN:
                    seen = (*seen, name)
            topic.publishers_seen = seen
        if writers is not None:
            topic.writers = writers
            topic.analyzer.writers = writers
        if fallback is not None:
            topic.fallback = fallback
        if receive is not None:
            topic.receive = receive
        if _told(topic) != before:
            self._changed(topic)

    def clock_publishers(self, count: int) -> None:
        """Note the publishers of /clock in the graph (several make sim time alternate).

        With several, sim time is theirs in turn: RTF and every figure on sim time are
        unknown (``RtfAnalyzer.mixed``, ``CycleAnalyzer.sim_unknown``) rather than mixed;
        once one is left, the window's RTF starts afresh; RTF since start stays unknown
        (``RtfAnalyzer.run_unknown``), and so does the gate's ``min_rtf``.
        """
        mixed = count > 1
        if mixed and 'publishers' not in self._rtf.run_unknown:
            # The graph's count says why better than the resets it caused (seen first when
            # the samples arrived before the graph counted the second publisher).
            self._rtf.run_unknown = (f'{count} publishers on {self._clock_topic} during the '
                                     'run: their sim times mixed')
        if self._rtf.mixed and not mixed:
            self._rtf.new_epoch()
        self._rtf.mixed = mixed
        self._clock_publishers = count

    def simulator_rtf(self, value: float) -> None:
        """Note the simulator's own RTF figure, shown next to the measured one."""
        self._simulator_rtf = float(value)

    # -- processing -------------------------------------------------------------------------

    def process(self, now_wall_ns: int, *, final: bool = False) -> None:
        """Time passed: process every topic's pending events that can be placed."""
        self._process_all(now_wall_ns, force=final)

    def whole_run(self, topic_id: str) -> WholeRun | None:
        """Return a topic's whole-run accumulators (None before its first cycle): for plots."""
        return self._topics[topic_id].run

    def timing(self, topic_id: str) -> Timing | None:
        """Return the resolved timing of a topic (None while its period is learned)."""
        return self._topics[topic_id].analyzer.timing

    def _horizon(self, now_wall_ns: int | None, force: bool) -> int | None:
        last = self._rtf.last_wall_ns
        # /clock silent beyond its timeout: sim time after its last sample is unknown.
        self._clock_silent_after = last if (
            last is not None and now_wall_ns is not None
            and now_wall_ns - last > self._analysis.thresholds.clock_timeout_ns) else None
        if force or last is None:
            return None
        if self._clock_silent_after is not None:
            return None  # /clock silent: nothing later will place these events better
        return last

    def _process_all(self, now_wall_ns: int | None, force: bool) -> None:
        horizon = self._horizon(now_wall_ns, force)
        for topic in self._topics.values():
            self._process(topic, horizon, force)

    def _process_topic(self, topic: _Topic, now_wall_ns: int | None, force: bool) -> None:
        self._process(topic, self._horizon(now_wall_ns, force))

    def _process(self, topic: _Topic, horizon: int | None, final: bool = False) -> None:
        new = self._resets - topic.resets_applied
        if not new and topic.analyzer.nothing_pending and not final:
            return
        walls = list(self._reset_walls)[-new:] if new else []
        topic.resets_applied = self._resets
        analyzer = topic.analyzer
        if topic.run is None:  # from the first processing on, every row is taken
            topic.run = WholeRun(self._analysis.run_percentiles)
            analyzer.take_rows()
        timing, totals = analyzer.timing, analyzer.event_totals
        mixed = self._rtf.mixed
        analyzer.sim_unknown = mixed
        analyzer.clock_silent_after = self._clock_silent_after
        analyzer.process(self._rtf if self._rtf.has_samples and not mixed else None, walls, new,
                         horizon, final)
        if topic.transforms is not None:
            topic.transforms.process(None if mixed else self._rtf, horizon)
        rows = analyzer.take_rows()
        if rows is not None:
            topic.run.add(rows, analyzer.timing)
            if self.on_rows is not None:
                self.on_rows(topic.config.name, rows)
        if analyzer.timing != timing or analyzer.event_totals != totals:
            self._changed(topic)

    # -- reporting --------------------------------------------------------------------------

    def advance(self, now_wall_ns: int) -> ClockReport:
        """Process what can be processed and start the next clock window; report the clock.

        ``snapshot`` without the topics, for an adapter that folds each topic's rows into
        figures of its own and reads the topics' totals from a final ``snapshot`` (the bag
        replay): a topic's report changes no figure, only the levels no bag result shows.
        """
        self.process(now_wall_ns)
        self._reported = True
        return self._rtf.report(now_wall_ns)

    def snapshot(self, now_wall_ns: int, host: HostReport | None = None,
                 stats_timer_late_ns: int = 0, *, final: bool = False,
                 standing: Collection[str] = ()) -> Snapshot:
        """Process what can be processed, then report every topic, the clock and the host.

        Starts the next clock window. ``final`` processes everything still pending.
        ``standing``: topics whose snapshot of their latest fresh report is repeated
        (``outputs/reporter.py``): they are neither processed nor reported now; their events
        wait for a report without them. A topic never reported afresh is reported anyway.
        """
        if final:
            standing = ()
        horizon = self._horizon(now_wall_ns, final)
        for topic_id, topic in self._topics.items():
            if topic_id not in standing or topic.last is None:
                self._process(topic, horizon, final)
        clock_report = self._rtf.report(now_wall_ns)
        window_rtf = clock_report.rtf if clock_report.messages else 0.0
        topics = [topic.last if topic_id in standing and topic.last is not None
                  else self._fresh_topic_snapshot(topic_id, topic, now_wall_ns, window_rtf)
                  for topic_id, topic in self._topics.items()]
        self._reported = True
        topics += [TopicSnapshot(topic_id, '', '', Level.ERROR,
                                 f'invalid configuration: {reason}', None)
                   for topic_id, reason in self._invalid.items()]
        return Snapshot(
            wall_ns=now_wall_ns,
            start_wall_ns=self._start_wall_ns,
            arrival_timestamp=self._arrival_timestamp,
            topics=tuple(topics),
            clock=self._clock_snapshot(clock_report, now_wall_ns),
            host=self._host_snapshot(host or HostReport(), stats_timer_late_ns),
            removed=self._removed,
            removed_beyond=self._removed_beyond,
        )

    # -- read-only views for a caller that decides what to report (``outputs/reporter.py``) --

    @property
    def start_wall_ns(self) -> int:
        """The system-clock time the session started at."""
        return self._start_wall_ns

    @property
    def stats_period_ns(self) -> int:
        """The report period in force."""
        return self._stats_period_ns

    def views(self) -> Mapping[str, TopicView]:
        """Return every topic's read-only view by id, in configuration order."""
        return MappingProxyType(self._views)

    def _changed(self, topic: _Topic) -> None:
        """Note a change of what a topic's snapshot depends on from outside its stream.

        The one place that bumps ``TopicView.version``: a caller that repeats a topic's
        snapshot while its version stays (``outputs/reporter.py``) sees every such change.
        """
        topic.version += 1

    def _mark(self, topic: _Topic) -> None:
        """Start noting the pace of a topic anew (``Pace``), at the limits of its timing.

        An interval longer than the period and half the deadline may hold a miss (a message
        after an on-time one), or a skipped period; one under three quarters of the period
        says the topic got faster. Sim time runs at most ``target_rtf`` times faster than
        the wall clock. A start stamp (on the timer clock) is unusual beyond the same period
        and half the deadline. Without timing, every interval of a timer topic is unusual
        and none of an event topic's.
        """
        pace, timing = topic.pace, topic.analyzer.timing
        pace.unusual = False
        if timing is None:
            pace.limit_ns = NO_INTERVAL_ALERT if topic.config.kind == 'event' else 0
            pace.stamp_limit_ns = pace.limit_ns
            pace.floor_ns = 0
        else:
            speedup = max(1.0, self._analysis.target_rtf)
            pace.stamp_limit_ns = timing.period_ns + timing.deadline_ns // 2
            pace.limit_ns = round(pace.stamp_limit_ns / speedup)
            pace.floor_ns = round(timing.period_ns * 0.75 / speedup)

    def _fresh_topic_snapshot(self, topic_id: str, topic: _Topic, now_wall_ns: int,
                              window_rtf: float) -> TopicSnapshot:
        report = topic.analyzer.report(now_wall_ns, writers=topic.writers)
        if topic.appear_pending:
            topic.appeared_ns, topic.appear_pending = now_wall_ns, False
        fallback = topic.fallback
        if fallback is not None and not fallback.loss_known and report.loss_known:
            report = replace(report, loss_known=False, loss_note=fallback.loss_note)
        if topic.receive.loss_unseen and report.loss_known:
            report = replace(report, loss_known=False, loss_note=topic.receive.loss_unseen)
        level, reason = self._held(topic, *self._topic_level(topic, report, now_wall_ns,
                                                             window_rtf))
        level, reason, notes = _stream_notes(topic, report, level, reason,
                                             self._rtf.step_ns, self._start_wall_ns)
        transforms = None
        if topic.transforms is not None:
            seen = topic.publishers_seen  # one that left sent some of them
            writer, writer_note = writer_of(seen or topic.publishers,
                                            max(topic.writers, len(seen)),
                                            self._arrival_timestamp == 'log_time')
            transforms = topic.transforms.report(writer, writer_note)
            level, reason, notes = _transform_notes(transforms, topic.config.timeout_ns, level,
                                                    reason, notes)
        self._mark(topic)
        topic.last_version, topic.last_recorded = topic.version, topic.analyzer.recorded
        topic.last = TopicSnapshot(
            topic_id=topic_id, topic=topic.config.topic, type_name=topic.type_name,
            level=level, reason=reason, report=report, publishers=topic.publishers,
            receive=topic.receive, run=topic.run.totals() if topic.run else NO_RUN, notes=notes,
            transforms=transforms)
        return topic.last

    def _topic_level(self, topic: _Topic, report: TopicReport, now_wall_ns: int,
                     window_rtf: float) -> tuple[Level, str]:
        """Level of one topic: the graph's word first, then the figures.

        A sim-clock topic times out on sim time: after ``timeout`` of sim time without a
        message, i.e. the wall timeout stretched by 1 / (the RTF since its last message),
        never shrunk below it. While sim time stands still (paused or frozen simulator) it
        cannot time out; the clock status reports the freeze.
        """
        if topic.state is TopicState.ERROR:
            return Level.ERROR, topic.reason
        grace = self._analysis.thresholds.grace_ns
        since = now_wall_ns - max(self._start_wall_ns, topic.appeared_ns or self._start_wall_ns)
        in_grace = since < grace
        if report.messages_total == 0 and topic.latched:
            return Level.OK, _latched_note(topic.latched) + '; none since'
        if report.messages_total == 0:
            waiting = topic.state is TopicState.WAITING
            if grace and not in_grace:
                what = (f'no publisher on {topic.config.topic}' if waiting
                        else 'no message since it appeared')
                return Level.ERROR, (f'{what} for {short_seconds(since)} s (grace '
                                     f'{short_seconds(grace)} s)')
            if waiting:
                return Level.STALE, topic.reason or 'no message received yet'
        timeout = report.timeout_ns
        last = report.last_arrival_wall_ns
        if (timeout is not None and topic.config.clock == 'sim' and last is not None
                and self._rtf.has_samples and now_wall_ns > last):
            sim_then = int(self._rtf.sim_at(np.array([last], np.int64))[0])
            sim_silent = (self._rtf.last_sim_ns or 0) - sim_then
            # Unknown (before the first /clock sample) or across a reset: the RTF of the
            # window (NaN: unknown, the wall timeout; 0: sim time stood still).
            rtf_since = (sim_silent / (now_wall_ns - last)
                         if sim_then != NO_VALUE and sim_silent >= 0 else window_rtf)
            if not math.isnan(rtf_since):
                timeout = round(timeout / min(rtf_since, 1.0)) if rtf_since > 0 else None
        level, reason = topic_level(report, self._analysis.thresholds, now_wall_ns,
                                    None if in_grace else timeout)
        if in_grace and timeout is not None and last is not None and now_wall_ns - last > timeout:
            return max(level, Level.WARN), (
                f'no message for {short_seconds(now_wall_ns - last)} s (timeout '
                f'{short_seconds(timeout)} s), within the grace of {short_seconds(grace)} s '
                f'after it appeared; {reason}')
        return level, reason

    def _held(self, topic: _Topic, level: Level, reason: str) -> tuple[Level, str]:
        """Apply the hysteresis: a new level is shown once enough reports in a row ask for it.

        Only between OK, WARN and ERROR from the figures: STALE (nothing known) and what the
        graph says (a type conflict) are shown at once.
        """
        thresholds = self._analysis.thresholds
        shown = topic.shown_level
        immediate = (shown is None or Level.STALE in (level, shown)
                     or topic.state is TopicState.ERROR)
        if immediate or level == shown:
            topic.shown_level, topic.streak = level, 0
            return level, reason
        rising = level > shown
        topic.streak = topic.streak + 1 if topic.streak_rising == rising else 1
        topic.streak_rising = rising
        needed = thresholds.level_rise_windows if rising else thresholds.level_fall_windows
        if topic.streak >= needed:
            topic.shown_level, topic.streak = level, 0
            return level, reason
        return shown, (f'{shown.name} held ({topic.streak} of {needed} reports at '
                       f'{level.name}): {reason}')

    def _clock_snapshot(self, report: ClockReport, now_wall_ns: int) -> ClockSnapshot:
        thresholds = self._analysis.thresholds
        level, reason = clock_level(report, thresholds, now_wall_ns, self._analysis.target_rtf,
                                    self._use_sim_time)
        if self._clock_publishers is not None:
            level, reason = several_clocks_level(level, reason, self._clock_publishers,
                                                 report.resets, self._clock_topic)
        return ClockSnapshot(
            topic=self._clock_topic, report=report, level=level, reason=reason,
            target_rtf=self._analysis.target_rtf, use_sim_time=self._use_sim_time,
            publishers=self._clock_publishers, simulator_rtf=self._simulator_rtf)

    def _host_snapshot(self, report: HostReport, late_ns: int) -> HostSnapshot:
        level, reason = host_level(report, late_ns, self._stats_period_ns)
        return HostSnapshot(report=report, level=level, reason=reason,
                            stats_timer_late_ns=late_ns)


def _told(topic: _Topic) -> tuple:
    """Return what ``Session.topic_status`` may change of what a snapshot depends on."""
    return (topic.state, topic.reason, topic.type_name, topic.publishers, topic.writers,
            topic.receive, topic.fallback, topic.analyzer.timing)


def transform_timeout_ns(figures: TransformFigures, timeout_ns: int | None) -> int | None:
    """How long a transform may be silent: the topic's timeout, else 10 of its mean intervals.

    At least 1 s, as a topic's own timeout (``config.resolve_timing``); None for a static
    transform or one with no interval yet (nothing to expect).
    """
    if figures.static:
        return None
    if timeout_ns is not None:
        return timeout_ns
    if not figures.intervals:
        return None
    return max(10 * figures.interval_sum_ns // figures.intervals, NS_PER_S)


def _transform_notes(transforms: TransformsReport, timeout_ns: int | None, level: Level,
                     reason: str, notes: tuple[str, ...]
                     ) -> tuple[Level, str, tuple[str, ...]]:
    """Name the transforms that fell silent (their broadcaster stopped?): WARN, not OK.

    Silent: longer than ``transform_timeout_ns``. The topic itself may still be busy with
    other broadcasters' transforms: each transform is a stream of its own.
    """
    silent = []
    for figures in transforms.transforms:
        limit = transform_timeout_ns(figures, timeout_ns)
        if limit is not None and figures.silence_ns > limit:
            silent.append(f'{figures.name} {short_seconds(figures.silence_ns)} s')
    added = []
    if silent:
        shown = ', '.join(silent[:TRANSFORMS_NAMED])
        more = f' and {len(silent) - TRANSFORMS_NAMED} more' if len(silent) > TRANSFORMS_NAMED \
            else ''
        added.append(f'{len(silent)} transform(s) silent beyond their timeout: {shown}{more}')
        if level is Level.OK:
            level = Level.WARN
    if transforms.untracked:
        added.append(f'{transforms.untracked} transforms of pairs beyond the '
                     f'{TRANSFORMS_KEPT} tracked: counted, not analyzed')
    if transforms.malformed:
        added.append(f'{transforms.malformed} messages without a readable TFMessage')
    if not added:
        return level, reason, notes
    return level, '; '.join([reason, *added]) if reason else '; '.join(added), (*notes, *added)


def _latched_note(count: int) -> str:
    """Name the latched messages a topic received (``Session.latched``)."""
    return (f'latched: {count} message{"s" if count > 1 else ""}, published before the '
            'monitor started')


def sim_timer_note(period_ns: int, clock_step_ns: float, rate_hz: float) -> str:
    """Say that a sim-time timer faster than /clock ran at the /clock rate ('' if it did not).

    rcl fires a sim-time timer at most once per /clock message and skips the periods in
    between: RTF reads 1.0 while the loop runs at the /clock rate (docs/design.md, Clock and
    RTF). Said only where the measured rate (``rate_hz``, on sim time) shows it: a simulator
    plugin publishing in sim time is not bound by /clock (a 200 Hz IMU under a 10 Hz /clock
    measures 200 Hz).
    """
    if not clock_step_ns > period_ns * 1.01:
        return ''
    clock_hz = 1e9 / clock_step_ns
    if not rate_hz <= clock_hz * CLOCK_BOUND_SLACK:  # faster than /clock, or unknown
        return ''
    return (f'/clock every {clock_step_ns / 1e6:.4g} ms: a {1e9 / period_ns:.4g} Hz sim-time '
            f'timer runs at most {clock_hz:.4g} Hz (rcl fires it once per /clock '
            f'message and skips the periods in between; measured {rate_hz:.4g} Hz)')


def unseen_notes(report: TopicReport) -> list[str]:
    """Name the cycles a topic's grid did not see and the ages it could not give.

    One wording live (the status) and offline (the table's note): stamps going back or
    shared, intervals across losses, burst-like learning windows, implausible stamps.
    """
    notes = []
    if report.stamps_back_total:
        notes.append(f'stamps went back {report.stamps_back_total} times: those cycles were '
                     'not placed on the grid (the grid re-anchors when the stamps stay back), '
                     'never counted as skipped periods')
    if report.stamps_shared_total:
        notes.append(f'several cycles share a slot: {report.stamps_shared_total} messages '
                     'carried the start stamp of the one before (the stamp is no cycle start '
                     'for them): not placed on the grid, never counted as skipped periods')
    if report.intervals_across_loss_total:
        notes.append(f'{report.intervals_across_loss_total} intervals across cycles not seen '
                     '(lost, or without a usable start) left out of the interval figures')
    if report.unlearned_total:
        why = f' (latest: {report.learn_note})' if report.learn_note else ''
        notes.append(f'{report.unlearned_total} messages of learning windows without a timer '
                     f'rhythm timed as events (their intervals and gaps counted, no misses or '
                     f'skipped periods){why}')
    if report.age_unknown_total:
        notes.append(f'age unknown for {report.age_unknown_total} messages: their header '
                     'stamps lay more than 1 s ahead of their arrival (on no plausible clock)')
    return notes


def unmonitored_note(report: TopicReport, start_wall_ns: int) -> str:
    """Name the gaps of the monitor's own (not subscribed): never the producer's figures."""
    assert report.unmonitored_gap is not None
    began, ended, why = report.unmonitored_gap
    since = f'{(began - start_wall_ns) / NS_PER_S:.1f} s'
    latest = (f'not monitored from {since} to {(ended - start_wall_ns) / NS_PER_S:.1f} s '
              f'after start ({why})' if ended is not None
              else f'not monitored since {since} after start ({why})')
    count = report.unmonitored_total
    published = report.unmonitored_messages_total
    meanwhile = f', {published} messages published meanwhile' if published else ''
    return (f"{latest}: {count} gap(s) of the monitor's own, "
            f'{report.unmonitored_ns / NS_PER_S:.1f} s in all{meanwhile}, left out of '
            'intervals, misses, skipped periods, outages and loss')


def _stream_notes(topic: _Topic, report: TopicReport, level: Level, reason: str,
                  clock_step_ns: float = math.nan, start_wall_ns: int = 0
                  ) -> tuple[Level, str, tuple[str, ...]]:
    """Say where a topic breaks "one producer per cycle stream" (docs/design.md, Cycles).

    Several producers (named from the graph), start stamps on another clock, outages and the
    middleware's fallbacks are appended to the reason; what happened since the previous
    snapshot (foreign stamps, an outage, messages no producer could be told for) raises an
    OK topic to WARN. Returns the level, the reason and the notes alone (for the snapshot).
    """
    notes: list[str] = []
    warn = False
    names = ', '.join(topic.publishers)
    several = max(topic.writers, report.producers)
    seen = (report.foreign_stamps_total, report.outages_total, report.unattributed_total,
            report.stamps_back_total, report.stamps_shared_total)
    if report.unattributed_total and several > 1:
        warn = seen[2] > topic.seen[2]
        timed = (f'{report.unattributed_total} messages timed as events: rate, intervals '
                 'and gaps only')
        if 'sequence runs interleave' in report.unattributed_note:
            notes.append(f'per-cycle figures need one producer: {report.unattributed_note}'
                         f'{f" (publishers: {names})" if names else ""} ({timed}; '
                         'period_ms times each producer on its own grid)')
        else:
            why = ('no sequence numbers' if not report.producer_runs_total
                   or topic.writers > 1 and report.producers <= 1
                   else 'their sequence numbers run alike')
            # The graph's count names publishers; more sequence runs than that are runs.
            counted = (f'{topic.writers} publishers' if topic.writers > 1
                       else f'{several} sequence runs')
            notes.append(f'per-cycle figures need one producer: {counted}'
                         f'{f" ({names})" if names else ""} and {why} to tell them apart '
                         f'({timed})')
    elif several > 1:
        notes.append(f'{several} producers in the window'
                     f'{f" (publishers: {names})" if names else ""}, each analyzed on its own '
                     'grid (told apart by sequence numbers)')
    if report.foreign_stamps_total:
        warn = warn or seen[0] > topic.seen[0]
        other = 'wall (Unix)' if report.timer_clock == 'sim' else 'sim or another'
        scale = report.foreign_stamps_total - report.foreign_ahead_total
        if scale:
            notes.append(f'{scale} start stamps on the {other} clock, not the '
                         f'{report.timer_clock} timer clock: counted, not placed on the grid')
        if report.foreign_ahead_total:
            notes.append(f'{report.foreign_ahead_total} start stamps more than 1 s ahead of '
                         f'the {report.timer_clock} timer clock: counted, not placed on the '
                         'grid')
    warn = warn or seen[3] > topic.seen[3] or seen[4] > topic.seen[4]
    notes.extend(unseen_notes(report))
    if report.sim_unknown_total:
        notes.append(f'{report.sim_unknown_total} messages not analyzed as cycles: sim time '
                     'unknown while several publishers were on /clock (their sim times mix)')
    if report.outages_total:
        warn = warn or seen[1] > topic.seen[1]
        anchored = ('; the grid re-anchored after each, the max interval since start '
                    'includes it' if report.kind == 'timer'
                    else '; the max interval since start includes it')
        at = report.outage_max_at_ns
        ended = f' (ended {(at - start_wall_ns) / 1e9:.1f} s after start)' if at else ''
        notes.append(f'since start {report.outages_total} outage(s), longest '
                     f'{report.outage_max_ns / 1e9:.1f} s{ended}{anchored}')
    if report.clock_note:
        notes.append(report.clock_note)
    elif (report.timer_clock == 'sim' and report.period_ns is not None
            and report.kind == 'timer'):
        slow = sim_timer_note(report.period_ns, clock_step_ns, report.rate_sim_hz)
        if slow:
            notes.append(slow)
    if report.period_note:
        notes.append(report.period_note)
    if topic.fallback is not None:
        notes.extend(topic.fallback.notes)
    by_monitor = report.lost_by_monitor_total
    if by_monitor:
        notes.append(f"{by_monitor} messages dropped by the monitor's own reader queue (full "
                     "between two takes): the monitor's loss, not the producer's or the "
                     "network's (not in messages lost)")
    if report.unmonitored_gap is not None:
        notes.append(unmonitored_note(report, start_wall_ns))
    if topic.receive.loss_unseen:
        notes.append(f'lost unknown: {topic.receive.loss_unseen}')
    if topic.latched and report.messages_total:
        notes.append(_latched_note(topic.latched) + ' (not a cycle)')
    topic.seen = seen
    if not notes:
        return level, reason, ()
    if warn and level is Level.OK:
        level = Level.WARN
    return level, '; '.join([reason, *notes]) if reason else '; '.join(notes), tuple(notes)

