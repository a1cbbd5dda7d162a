"""Per-topic cycle analysis: intervals, skipped periods, lateness, response, misses (§3).

Each message is one cycle of the producer: its start is the header stamp when the stamp marks
the cycle start, else the arrival; its end is the arrival. ``CycleAnalyzer.record`` only
stores the raw event (O(1)); ``process`` turns the stored events into per-cycle figures on the
stats timer, in batches, which is exact because the arrival times come from the middleware.
The analysis session (``session.py``) decides when events are processed and hands over the
clock, the sim-time resets and the horizon; this module holds the per-topic arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ros2_deadline_monitor.analysis.config import (
    AnalysisConfig,
    NS_PER_MS,
    NS_PER_S,
    resolve_timing,
    Timing,
    TopicConfig,
)
from ros2_deadline_monitor.analysis.cycle_counts import (
    classify_misses,
    count_cycles,
    CycleCounts,
    CycleTotals,
)
from ros2_deadline_monitor.analysis.cycle_starts import (
    ages,
    foreign_starts,
    place,
    StampDecision,
)
from ros2_deadline_monitor.analysis.grid import GridState, replay
from ros2_deadline_monitor.analysis.intervals import (
    diff_with,
    mean,
    percentiles,
    summarize_intervals,
)
from ros2_deadline_monitor.analysis.monitor_gaps import MonitorGaps
from ros2_deadline_monitor.analysis.outages import Outages
from ros2_deadline_monitor.analysis.period_learning import (
    learn_period,
    PeriodCheck,
    PeriodLearner,
    RELEARN_MIN_INTERVALS,
)
from ros2_deadline_monitor.analysis.producer_streams import (
    known_seq,
    ProducerStream,
    ProducerStreams,
    stream_diffs,
)
from ros2_deadline_monitor.analysis.reports import TopicReport
from ros2_deadline_monitor.analysis.ring import (
    ColumnRing,
    EventBuffer,
    HeldBatches,
    MALFORMED,
    NO_VALUE,
)
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer
from ros2_deadline_monitor.analysis.several_writers import SeveralWriters

__all__ = ['classify_misses', 'count_cycles', 'CycleAnalyzer', 'CycleCounts', 'learn_period']
"""``count_cycles`` and ``CycleCounts`` live in ``cycle_counts``, ``learn_period`` in
``period_learning``: named here too."""

NAN = float('nan')
PENDING_CAPACITY = 1 << 16
ROW_COLUMNS = ('arrival', 'start_wall', 'start_sim', 'interval_timer', 'interval_wall',
               'interval_sim', 'lateness', 'response', 'skipped', 'missed', 'lost', 'size',
               'age')
WINDOW_MIN_PERIODS = 5
"""The window figures of a timer topic cover at least this many periods, so a slow topic
(a period near or above the window) still has intervals and a rate to report."""
LEARN_MIN_INTERVALS = 3
"""A slow topic learns its period from the intervals of its first window once they are at
least this many, instead of waiting for ``learn_intervals`` of them."""
COARSE_CLOCK_SHARE = 0.25
"""A sim-clock topic timed by arrivals whose sim intervals are zero this often gets several
messages per /clock step: /clock is coarser than the topic, its sim times from arrivals are
unknown (docs/design.md, Clock and RTF)."""


def _no_negative(intervals: np.ndarray) -> np.ndarray:
    """Negative intervals become NO_VALUE (NO_VALUE itself is negative and stays)."""
    return np.where(intervals < 0, NO_VALUE, intervals)


class CycleAnalyzer:
    """Cycle statistics of one topic with bounded memory and an O(1) per-message call.

    Events wait in a pending buffer until ``process``; every call that processes takes the
    /clock analyzer (``clock``) that maps events between wall and sim time, so an event's
    figures never depend on when it was processed.

    One producer per cycle stream (docs/design.md, Cycles): events are split into producer
    streams by their publication sequence numbers (``ProducerStreams``), each with its own grid and
    intervals; where a cycle starts and on which clock is ``cycle_starts``; a start stamp
    that cannot be on the timer clock is counted (``foreign``) and never placed on a grid; a
    silence longer than the timeout is an outage that re-anchors every grid, one of the
    monitor's own (``MonitorGaps``) is none.
    """

    def __init__(self, config: TopicConfig, analysis: AnalysisConfig | None = None) -> None:
        """Analyze ``config``'s topic with the monitor-wide ``analysis`` settings."""
        self._config = config
        self._analysis = analysis or AnalysisConfig()
        self._pending = EventBuffer(PENDING_CAPACITY)
        self._rows = ColumnRing(self._analysis.window_cycles, ROW_COLUMNS)
        self._made: list[dict[str, np.ndarray]] | None = None
        """Rows made since ``take_rows`` last ran (None: nobody takes them, none kept)."""
        self._timing: Timing | None = None
        self._learner = PeriodLearner()
        """The period learned from the first window of cycles, or why none was."""
        self._foreign_at: int | None = None
        self._last_arrival: int | None = None
        self._start_source = 'arrival'
        self._totals = CycleTotals()
        self._producer_streams = ProducerStreams(self._totals)
        self._writers_seen = 1
        """The most writers the graph showed at a report: a loss counted then is no figure."""
        self._outages = Outages(self._totals)
        """Silences longer than the timeout between cycles, and the epoch they brought."""
        self._several = SeveralWriters(self._totals)
        """Messages of several writers that no one producer's grid may time, and why."""
        self.writers = 1
        """Publishers the graph shows (the session keeps it current): with several and no
        sequence numbers to tell them apart, no per-cycle figure is computed."""
        self._offered_period_ns: int | None = None
        self.clock_silent_after: int | None = None
        """Wall time of the last /clock sample while /clock is silent beyond its timeout (the
        session keeps it current): sim time after it is unknown, not the last sample's."""
        self.sim_unknown = False
        """Sim time is unknown (several /clock publishers; the session keeps it current): a
        sim-clock topic's messages are counted, never analyzed as cycles."""
        self.no_stamp_reason = ''
        """Why the messages' stamps cannot be read (a bag without the type's definition; a
        TFMessage, stamped per transform), said instead of "the messages carry no stamp" (''
        when they simply carry none)."""
        self._stamps = StampDecision(config.stamp)
        """Whether header stamps start the cycles: configured, or decided for ``auto``."""
        self._period_check = PeriodCheck()
        self._relearn_note = ''
        self._coarse_note = ''
        self._unlearned_cycles = 0
        """Cycles analyzed at the end of a run without a period (too few to learn it)."""
        self._monitor_gaps = MonitorGaps()
        """The monitor's own gaps on this topic: never an outage, a loss or an interval."""
        self._resolve()

    @property
    def config(self) -> TopicConfig:
        """The configuration in force."""
        return self._config

    def _effective(self, config: TopicConfig) -> TopicConfig:
        """``config`` with ``stamp: auto`` replaced by what was decided (for the rule)."""
        return self._stamps.effective(config)

    @property
    def kind(self) -> str:
        """``event`` when configured so, or when no timer rhythm was found; else ``timer``."""
        if self._config.kind == 'event' or (self._timing is None
                                            and self._learner.event):
            return 'event'
        return 'timer'

    @property
    def timing(self) -> Timing | None:
        """Resolved timing; None while the period is still being learned."""
        return self._timing

    @property
    def silent_so_far(self) -> bool:
        """True while no message event was recorded at all (nothing pending, none counted)."""
        return self._totals.messages == 0 and self._pending.count == 0

    @property
    def recorded(self) -> int:
        """Message events recorded so far, processed or pending (a count that only grows)."""
        return self._totals.messages + self._pending.count

    @property
    def nothing_pending(self) -> bool:
        """True when ``process`` without a reset would have nothing to do."""
        return self._pending.count == 0

    @property
    def event_totals(self) -> tuple[int, int]:
        """The totals a topic without messages can still change: QoS deadline events, resets."""
        return self._totals.qos_deadline_events, self._totals.resets

    @property
    def pending_full(self) -> bool:
        """True when the pending buffer must be processed before the next ``record``."""
        return self._pending.count >= self._pending.capacity

    def reconfigure(self, config: TopicConfig, analysis: AnalysisConfig) -> None:
        """Apply new settings to events processed from now on; counters are kept.

        The caller processes what was received before (``process`` with the clock) first,
        so a change never alters figures of cycles already received.
        """
        old_period = self._timing.period_ns if self._timing else None
        old_stamp = self._config.stamp
        self._config = config
        if config.stamp != old_stamp:
            self._stamps.choose(config.stamp)
        if analysis.window_cycles != self._analysis.window_cycles:
            self._rows = ColumnRing(analysis.window_cycles, ROW_COLUMNS)
        self._analysis = analysis
        learned = self._timing.learned if self._timing else False
        if config.kind == 'event':
            self._timing = None
            self._learner.held.clear()  # an event topic learns nothing
        elif config.period_ns is None and learned and self._timing is not None:
            self._timing = resolve_timing(self._effective(config), self._timing.period_ns,
                                          True, analysis.target_rtf)
        else:
            self._timing = None
            self._resolve()
        new_period = self._timing.period_ns if self._timing else None
        if new_period != old_period:
            for stream in self._producer_streams.streams.values():
                stream.grid = GridState()

    def _resolve(self) -> None:
        if self._config.kind == 'event':
            return
        if self._config.period_ns is not None:
            self._timing = resolve_timing(self._effective(self._config), self._config.period_ns,
                                          False, self._analysis.target_rtf)
        elif self._offered_period_ns is not None:
            self._timing = resolve_timing(self._effective(self._config),
                                          self._offered_period_ns, False,
                                          self._analysis.target_rtf, 'graph deadline QoS')

    def offer_period(self, period_ns: int | None) -> None:
        """Take the deadline the publishers offer (QoS) as the period instead of learning one.

        The publishers promise a message at least every D: that contract is the period, as a
        configured one would be. Only for a timer topic without a configured period whose
        period was not learned before the offer came (a learned period, measured on the
        stream, is kept). Cycles already waiting to learn the period are analysed with it at
        once; an offer withdrawn later (None) leaves the period in force.
        """
        self._offered_period_ns = period_ns
        if (period_ns is None or self._config.kind == 'event'
                or self._config.period_ns is not None
                or (self._timing is not None and self._timing.source != 'graph deadline QoS')):
            return
        if self._timing is not None and self._timing.period_ns == period_ns:
            return
        self._timing = None
        for stream in self._producer_streams.streams.values():
            stream.grid = GridState()
        self._resolve()
        if self._learner.held:
            self._analyze(*self._learner.held.take())

    def record(self, arrival_wall_ns: int, stamp_ns: int = NO_VALUE, seq: int = NO_VALUE,
               size_bytes: int = 0) -> bool:
        """Store one message event (the per-message call: O(1), no allocation).

        ``stamp_ns`` MALFORMED marks a message whose bytes could not be read. Returns True
        when the pending buffer is full: the caller must ``process`` before the next call.
        """
        return self._pending.append(arrival_wall_ns, stamp_ns, seq, size_bytes)

    def record_many(self, arrival_wall_ns: np.ndarray, stamp_ns: np.ndarray,
                    size_bytes: np.ndarray) -> None:
        """Store many events without sequence numbers at once (a bag replay's chunk).

        The same as ``record`` for each, in order; at most ``room`` events (none may fill
        the pending buffer: that is processed at the event that filled it).
        """
        self._pending.extend(arrival_wall_ns, stamp_ns, NO_VALUE, size_bytes)

    @property
    def room(self) -> int:
        """Events ``record_many`` takes now."""
        return self._pending.room

    def record_qos_deadline_missed(self, count: int = 1) -> None:
        """Count middleware 'requested deadline missed' events."""
        self._totals.qos_deadline_events += count

    def unmonitored(self, from_wall_ns: int, why: str) -> None:
        """Open a gap of the monitor's own: it stopped receiving the topic at ``from_wall_ns``.

        It unsubscribed to subscribe again (another QoS, stamp) or while the topic is
        refused. Until ``monitored``, no message reaches it: the silence is the monitor's,
        never the producer's outage or loss. A gap already open stays the one named.
        """
        self._monitor_gaps.open(from_wall_ns, why)

    def monitored(self, at_wall_ns: int) -> None:
        """Close the gap: the monitor receives the topic again from ``at_wall_ns``.

        Messages that arrived from then on are analyzed as if the stream began anew: no
        interval, outage, skipped period or loss across the gap (``_break``). Without an
        open gap (a first subscription) nothing happens.
        """
        self._monitor_gaps.close(at_wall_ns)

    def dropped_by_monitor(self, before_seq: int, count: int) -> None:
        """Count the ``count`` messages before ``before_seq`` as dropped by the monitor's queue.

        Its sequence-number gap is the monitor's loss, not the producer's: counted apart
        (``lost_by_monitor_total``); the cycles still took their slots (never skipped).
        """
        self._producer_streams.own_dropped(before_seq, count)

    def process(self, clock: RtfAnalyzer | None, resets_wall_ns: Sequence[int] = (),
                resets: int = 0, horizon_ns: int | None = None, final: bool = False) -> None:
        """Turn pending events into per-cycle rows, in arrival order.

        ``resets_wall_ns``: wall times of the sim-time resets (sim time jumped back) received
        since the last call, oldest first; ``resets`` how many there were (a storm may hold
        more than the times kept). Events before a reset are processed with the state before
        it, then the sim-time state is dropped. ``horizon_ns``: for a sim-clock topic, events
        that arrived after it stay pending until the /clock sample after them is known, so
        the sim time of their end can be placed inside its /clock step (None: process all).
        ``final``: the run ends; cycles still waiting for the stamp decision or the period
        are analyzed with what is known (intervals; misses and skipped periods stay unknown
        without a period).
        """
        self._totals.resets += resets
        events = self._pending.drain() if self._pending.count else None
        if events is not None:
            arrival = events[0]
            if (arrival[1:] < arrival[:-1]).any():
                # Batched takes hand over each writer's messages in turn: restore arrival order.
                order = np.argsort(arrival, kind='stable')
                events = tuple(column[order] for column in events)
            if horizon_ns is not None and self._config.clock == 'sim':
                keep = int(np.searchsorted(events[0], horizon_ns, side='right'))
                if keep < len(events[0]):
                    self._pending.put_back(*(column[keep:] for column in events))
                    events = tuple(column[:keep] for column in events)
        cuts = [(at, False) for at in resets_wall_ns]
        if self._monitor_gaps.ending:
            # A gap ends once every event before it is processed (none held for /clock).
            pending = self._pending
            held = int(pending.arrival[:pending.count].min()) if pending.count else None
            cuts = sorted(cuts + [(at, True) for at in self._monitor_gaps.ready(held)])
        for cut_at, gap_end in cuts:
            if events is not None and len(events[0]):
                cut = int(np.searchsorted(events[0], cut_at, side='left'))
                if cut:
                    self._process(*(column[:cut] for column in events), clock)
                events = tuple(column[cut:] for column in events)
            if gap_end:
                self._break()
            else:
                self._drop_sim_state()
        if resets and not resets_wall_ns:
            self._drop_sim_state()
        if events is not None and len(events[0]):
            self._process(*events, clock)
        if final:
            self._finish(clock)

    def _finish(self, clock: RtfAnalyzer | None) -> None:
        """Analyze what still waits at the end of a run: few messages are still figures."""
        if self._stamps.held:
            self._decide_now(clock)
        if self._learner.held and self._timing is None:
            batch = self._learner.held.take()
            self._unlearned_cycles += len(batch[0])
            self._analyze(*batch)

    def _break(self) -> None:
        """Untie the cycles after a gap of the monitor's own from those before it.

        Every producer stream gets a new serial (no period is learned across the gap), a new
        grid and no interval, stamp or silence to measure from: nothing spans the gap
        (``ProducerStreams.restart``).
        """
        self._producer_streams.restart(self._outages.epoch)
        self._period_check.forget_starts()
        self._outages.forget()

    def _drop_sim_state(self) -> None:
        for stream in self._producer_streams.streams.values():
            stream.prev_start_sim = NO_VALUE
            if self._config.clock == 'sim':
                stream.grid = GridState()
                stream.prev_start_timer = NO_VALUE
                stream.last_stamp = NO_VALUE
        if self._config.clock == 'sim':
            self._outages.forget_timer()
            self._rows.clear()

    def _process(self, arrival: np.ndarray, stamp: np.ndarray, seq: np.ndarray,
                 size: np.ndarray, clock: RtfAnalyzer | None) -> None:
        self._totals.messages += len(arrival)
        self._last_arrival = int(arrival[-1])
        active_ns = max(self._timing.timeout_ns if self._timing else NS_PER_S, NS_PER_S)
        streams, lost, fresh, guessed = self._producer_streams.split(
            arrival, seq, stamp, self._outages.epoch, active_ns)
        malformed = stamp == MALFORMED
        if malformed.any():
            self._totals.malformed += int(malformed.sum())
            stamp = np.where(malformed, NO_VALUE, stamp)
        if self.sim_unknown and self._config.clock == 'sim':
            # No timer-clock time to place a cycle on: counted as messages (and losses).
            self._totals.sim_unknown += len(arrival)
            for stream in self._producer_streams.streams.values():
                stream.anchor(stream.epoch)
            self._outages.forget_timer()
            return
        if self.writers > 1 and not known_seq(seq):
            # Several producers and nothing to tell them apart: their cycles would share one
            # grid. Counted, timed as the topic's events (rate, intervals and gaps by
            # arrival), never as cycles (the status says why).
            self._several.count(arrival, f'{self.writers} writers and no sequence numbers to '
                                         'tell them apart')
            self._topic_events(arrival, stamp, size, lost, streams, clock)
            return
        guessed = guessed if guessed is not None else np.zeros(len(arrival), bool)
        if self._stamps.deciding:
            # stamp: auto: the first messages decide whether their stamps start the cycles.
            held = self._stamps.held
            held.add((arrival, stamp, size, lost, streams, fresh, guessed, malformed))
            if (not self._stamps.refused(self._config.clock)
                    and not self._stamps.enough(self._timing is not None,
                                                self._analysis.learn_intervals)
                    and not self._spans_a_window(held, arrival)):
                return
            self._decide_now(clock)
            return
        self._cycles(arrival, stamp, size, lost, streams, fresh, guessed, malformed, clock)

    def _decide_now(self, clock: RtfAnalyzer | None) -> None:
        """Decide the start source from the waiting messages, then analyze them."""
        batch = self._stamps.decide(self._config.clock, clock)
        cycle = ~batch[7]  # a malformed message is no cycle: its stamp says nothing
        if self.no_stamp_reason and not (batch[1][cycle] != NO_VALUE).any():
            self._stamps.reason = self.no_stamp_reason
        if self._timing is not None:
            self._timing = resolve_timing(self._effective(self._config), self._timing.period_ns,
                                          self._timing.learned, self._analysis.target_rtf,
                                          self._timing.source)
        self._cycles(*batch, clock)

    def _cycles(self, arrival: np.ndarray, stamp: np.ndarray, size: np.ndarray,
                lost: np.ndarray, streams: np.ndarray, fresh: np.ndarray,
                guessed: np.ndarray, malformed: np.ndarray, clock: RtfAnalyzer | None) -> None:
        """Place the cycles (start source decided), learn the period, analyze."""
        self._start_source = ('header' if self._stamps.use_stamp
                              and bool((stamp != NO_VALUE).any()) else 'arrival')
        foreign = self._foreign(arrival, stamp, clock)
        start_timer, end_timer, start_wall, start_sim = place(
            arrival, np.where(foreign, NO_VALUE, stamp), self._stamps.use_stamp,
            self._config.clock, clock, self._analysis.thresholds.clock_timeout_ns,
            self.clock_silent_after)
        age, unknown_ages = ages(arrival, stamp, end_timer, self._config.clock, clock)
        self._totals.age_unknown += unknown_ages
        placed = (start_timer != NO_VALUE) & ~malformed & ~foreign
        attributed = np.ones(len(arrival), bool)
        if guessed is not None and guessed.any():
            # Its producer is a guess: counted as a message, never as a cycle.
            self._several.count(arrival[guessed], 'the sequence numbers of several producers '
                                                  'run alike: which one sent a message was '
                                                  'a guess')
            placed &= ~guessed
            attributed = ~guessed
        if self._start_source == 'header':
            placed &= ~self._out_of_order(streams, start_timer,
                                          placed & (stamp != NO_VALUE))
        absent = self._unseen_before(streams, lost, placed, attributed)
        # Several producers at once: their events interleave, or which one sent an event was
        # a guess (numbered alike), whether or not those events are placed.
        several = self._several.interleaving(streams)
        if not several and guessed is not None and guessed.any():
            several = len(np.unique(streams))
        lost = self._producer_streams.producer_lost(arrival, lost)
        if not placed.all():
            for serial in streams[fresh & ~placed].tolist():  # the next one starts afresh
                if serial in self._producer_streams.streams:
                    self._producer_streams.streams[serial].fresh = True
            keep = np.flatnonzero(placed)
            arrival, stamp, size, lost = arrival[keep], stamp[keep], size[keep], lost[keep]
            start_timer, end_timer = start_timer[keep], end_timer[keep]
            start_wall, start_sim = start_wall[keep], start_sim[keep]
            age, streams, fresh = age[keep], streams[keep], fresh[keep]
            absent = absent[keep]
        batch = (arrival, age, size, lost, start_timer, end_timer, start_wall, start_sim,
                 streams, fresh, absent)
        if self._config.clock == 'sim' and not self._stamps.use_stamp and clock is not None:
            self._check_clock_resolution(start_sim, streams, clock)
        if several > 1 and not self._period_given:
            # A period learned from several producers' cycles is none of theirs (10, 50 and
            # 100 Hz read one 10 ms period: hundreds of phantom skips): timed as events.
            if self._learner.held:  # held to learn from: no period is learned from them
                self._learner.held.add(batch)
                batch = self._learner.held.take()
            self._several.count(batch[0], f'several producers at once ({several} sequence '
                                          'runs interleave) and no configured period: '
                                          'a period learned from them would be none of '
                                          'theirs')
            self._analyze(*batch, cycles=False)
            return
        if self._coarse_note:
            if self._learner.held:  # no period is learned from sim times /clock cannot give
                self._learner.held.add(batch)
                batch = self._learner.held.take()
            self._analyze(*batch)
            return
        if self._timing is None and self._config.kind != 'event':
            # A topic found to be an event topic keeps trying: a window that keeps a timer
            # rhythm (a timer delivered in batches at start-up) makes it a timer again.
            self._learner.held.add(batch)
            if (self._learner.held.count <= self._analysis.learn_intervals
                    and not self._spans_a_window(self._learner.held, batch[0])):
                return
            batch = self._learner.held.take()
            period = self._learner.learn(batch)
            if period is None:
                # Not the timer's rhythm (batched delivery, a timer catching up, a topic
                # published on updates): its grid would call most slots skipped or late.
                # Counted, and the next window learns afresh; windows in a row without a
                # rhythm make it an event topic. Its intervals stay (the max interval, the
                # gate): only the per-cycle figures leave them out.
                self._totals.unlearned += len(batch[0])
                self._analyze(*batch)
                return
            self._timing = resolve_timing(self._effective(self._config), period, True,
                                          self._analysis.target_rtf)
            self._analyze(*batch)
            return
        self._analyze(*batch)
        if self._timing is not None and self._timing.learned:
            self._recheck_period(batch[4], batch[8])

    def _out_of_order(self, streams: np.ndarray, start_timer: np.ndarray,
                      stamped: np.ndarray) -> np.ndarray:
        """Header starts at or before the previous one of the same producer: not placed.

        A producer's timer starts its cycles one after the other: a stamp going back is no
        cycle start (counted; when the stamps stay back, the next one re-anchors the grid),
        and a stamp shared with the cycle before means several cycles share a slot (a burst
        stamped once: counted). Neither is placed on the grid, nor read as skipped periods:
        the producer ran that cycle (``_unseen_before``).
        """
        out = np.zeros(len(streams), bool)
        if not stamped.any():
            return out
        back_total = shared_total = 0
        for serial in np.unique(streams[stamped]).tolist():
            mine = np.flatnonzero(stamped & (streams == serial))
            starts = start_timer[mine]
            stream = self._producer_streams.streams.get(serial)
            before = np.empty(len(starts), np.int64)
            before[0] = stream.last_stamp if stream is not None else NO_VALUE
            before[1:] = starts[:-1]
            known = before != NO_VALUE
            back = known & (starts < before)
            shared = known & (starts == before)
            out[mine] = back | shared
            back_total += int(back.sum())
            shared_total += int(shared.sum())
            if stream is not None:
                stream.last_stamp = int(starts[-1])
        self._totals.stamps_back += back_total
        self._totals.stamps_shared += shared_total
        return out

    def _unseen_before(self, streams: np.ndarray, lost: np.ndarray, placed: np.ndarray,
                       attributed: np.ndarray) -> np.ndarray:
        """Cycles each event's producer ran since its previous placed cycle that no grid saw.

        The lost ones (gaps in its sequence numbers) and the ones received but not placed
        (malformed, a foreign, shared or back stamp) took slots of its grid: they are no
        skipped periods (``replay``'s ``lost``), and the interval across them is not one of
        the producer's. Unplaced events at the end of a batch carry over to the next one.
        """
        absent = lost.copy()
        out = attributed & ~placed
        if not out.any() and not any(s.unseen for s in self._producer_streams.streams.values()):
            return absent
        for serial in np.unique(streams).tolist():
            stream = self._producer_streams.streams.get(serial)
            mine = np.flatnonzero(streams == serial)
            add = np.where(out[mine], 1 + lost[mine], 0)
            running = np.cumsum(add) + (stream.unseen if stream is not None else 0)
            at = np.flatnonzero(placed[mine])
            if len(at):
                upto = running[at]
                absent[mine[at]] += upto - np.concatenate(([0], upto[:-1]))
            if stream is not None:
                stream.unseen = int(running[-1] - (running[at[-1]] if len(at) else 0))
        return absent

    def _check_clock_resolution(self, start_sim: np.ndarray, streams: np.ndarray,
                                clock: RtfAnalyzer) -> None:
        """Tell whether /clock is coarser than this topic, timed by arrivals in sim time.

        Several arrivals within one /clock step share its sim time: their sim intervals are
        zero. When that is common (``COARSE_CLOCK_SHARE``), no sim-time figure from arrivals
        can be right (a 200 Hz IMU under a 10 Hz /clock reads 100 ms intervals); they are
        unknown and the status says why (stamps stay exact).
        """
        steps = stream_diffs(start_sim, streams)
        steps = steps[steps >= 0]
        if len(steps) < 2 * LEARN_MIN_INTERVALS:
            return
        zero = int(np.count_nonzero(steps == 0))
        if zero <= COARSE_CLOCK_SHARE * len(steps):
            self._coarse_note = ''
            return
        step_ns = clock.step_ns
        per_step = len(steps) / max(1, len(steps) - zero)
        every = f'every {step_ns / NS_PER_MS:g} ms' if step_ns == step_ns else 'coarse'
        self._coarse_note = (
            f'/clock {every} is coarser than this topic ({per_step:.0f} messages per /clock '
            'step): sim-time intervals, misses and skipped periods from arrivals are unknown; '
            'stamp the cycle start (stamp: start) to measure them')

    def _recheck_period(self, start_timer: np.ndarray, streams: np.ndarray) -> None:
        """Learn the period again when blocks of later intervals keep disagreeing with it.

        Blocks of ``RELEARN_MIN_INTERVALS`` (or 4 x ``learn_intervals``) intervals, outages
        left out (``PeriodCheck``); a new period re-anchors the grids and the status says so.
        """
        timing = self._timing
        assert timing is not None
        block = max(RELEARN_MIN_INTERVALS, 4 * self._analysis.learn_intervals)
        changes = self._period_check.feed(start_timer, streams, self._producer_streams.streams,
                                          timing.period_ns, timing.timeout_ns, block)
        for old, new in changes:
            self._totals.relearned += 1
            self._relearn_note = (
                f'period re-learned: {old / NS_PER_MS:.3f} -> {new / NS_PER_MS:.3f} ms '
                f'(two blocks of {block} intervals disagreed with it)')
            self._timing = resolve_timing(self._effective(self._config), new, True,
                                          self._analysis.target_rtf)
            for stream in self._producer_streams.streams.values():
                stream.grid = GridState()

    def _spans_a_window(self, waiting: HeldBatches, arrival: np.ndarray) -> bool:
        """Tell whether the waiting cycles (to learn or decide) span a window (a slow topic)."""
        return bool(len(arrival)) and waiting.spans(int(arrival[-1]), self._analysis.window_ns,
                                                    LEARN_MIN_INTERVALS + 1)

    @property
    def _period_given(self) -> bool:
        """True when the period is configured or offered (each producer's grid is right)."""
        return self._config.period_ns is not None or (
            self._timing is not None and not self._timing.learned)

    def _topic_events(self, arrival: np.ndarray, stamp: np.ndarray, size: np.ndarray,
                      lost: np.ndarray, streams: np.ndarray, clock: RtfAnalyzer | None) -> None:
        """Time messages as the topic's events by arrival: intervals and gaps, no grid."""
        n = len(arrival)
        if self._stamps.deciding:  # no stamp decision from several writers' stamps
            self._stamps.reason = 'timed by arrival: several writers not told apart'
        start_timer, end_timer, start_wall, start_sim = place(
            arrival, np.full(n, NO_VALUE, np.int64), False, self._config.clock, clock,
            self._analysis.thresholds.clock_timeout_ns, self.clock_silent_after)
        age, unknown_ages = ages(arrival, stamp, end_timer, self._config.clock, clock)
        self._totals.age_unknown += unknown_ages
        self._analyze(arrival, age, size, lost, start_timer, end_timer, start_wall, start_sim,
                      streams, np.zeros(n, bool), np.zeros(n, np.int64), cycles=False)

    def _foreign(self, arrival: np.ndarray, stamp: np.ndarray,
                 clock: RtfAnalyzer | None) -> np.ndarray:
        """Start stamps that cannot be on the timer clock (``foreign_starts``), counted."""
        if not self._stamps.use_stamp:
            return np.zeros(len(arrival), bool)
        foreign, ahead = foreign_starts(arrival, stamp, self._config.clock, clock)
        if foreign.any():
            self._totals.foreign += int(foreign.sum())
            self._totals.foreign_ahead += int(ahead.sum())
            self._foreign_at = int(arrival[foreign][-1])
        return foreign

    def _outage_epochs(self, arrival: np.ndarray, end_timer: np.ndarray,
                       absent: np.ndarray) -> np.ndarray | None:
        """Count the outages among these cycles (``Outages.epochs``); each event's epoch."""
        timing = self._timing
        # An event topic has an outage only with a configured timeout.
        timeout = timing.timeout_ns if timing is not None else self._config.timeout_ns
        return self._outages.epochs(arrival, end_timer, absent, timeout, self._monitor_gaps)

    def _window_ns(self) -> int:
        """Return the rolling window reports cover: ``window_s``, at least a few periods."""
        window_ns = self._analysis.window_ns
        if self._timing is not None:
            window_ns = max(window_ns, WINDOW_MIN_PERIODS * self._timing.period_ns)
        return window_ns

    def _analyze(self, arrival: np.ndarray, age: np.ndarray, size: np.ndarray,
                 lost: np.ndarray, start_timer: np.ndarray, end_timer: np.ndarray,
                 start_wall: np.ndarray, start_sim: np.ndarray, streams: np.ndarray,
                 fresh: np.ndarray, absent: np.ndarray, cycles: bool = True) -> None:
        """Make the rows of a batch; ``cycles`` False: timed as events (no grid)."""
        if len(arrival) == 0:
            return
        # Rows no later report's window holds (it ends after these arrivals) are forgotten:
        # a slow topic keeps the rows of its window, not hours of them.
        self._rows.drop_before('arrival', int(arrival[-1]) - self._window_ns())
        columns = (arrival, age, size, lost, start_timer, end_timer, start_wall, start_sim,
                   absent)
        epochs = self._outage_epochs(arrival, end_timer, absent)
        serials = np.unique(streams)
        if len(serials) == 1 and epochs is None and not fresh.any():
            rows = self._analyze_run(int(serials[0]), self._outages.epoch, False, *columns,
                                     cycles=cycles)
            self._rows.extend(**rows)
            if self._made is not None:
                self._made.append(rows)
            return
        if epochs is None:
            epochs = np.full(len(arrival), self._outages.epoch, np.int64)
        pieces = []
        for serial in serials.tolist():
            mine = np.flatnonzero(streams == serial)
            ep = epochs[mine]
            cuts = np.flatnonzero((ep[1:] != ep[:-1]) | fresh[mine][1:]) + 1
            for part in np.split(mine, cuts):
                pieces.append(self._analyze_run(serial, int(epochs[part[0]]),
                                                bool(fresh[part[0]]),
                                                *(column[part] for column in columns),
                                                cycles=cycles))
        rows = {name: np.concatenate([piece[name] for piece in pieces]) for name in ROW_COLUMNS}
        order = np.argsort(rows['arrival'], kind='stable')
        rows = {name: values[order] for name, values in rows.items()}
        self._rows.extend(**rows)
        if self._made is not None:
            self._made.append(rows)

    def _analyze_run(self, serial: int, epoch: int, fresh: bool, arrival: np.ndarray,
                     age: np.ndarray,
                     size: np.ndarray, lost: np.ndarray, start_timer: np.ndarray,
                     end_timer: np.ndarray, start_wall: np.ndarray,
                     start_sim: np.ndarray, absent: np.ndarray, cycles: bool = True
                     ) -> dict[str, np.ndarray]:
        """Rows of consecutive cycles of one producer within one epoch, on its own grid.

        An event topic, or events not timed as cycles (``cycles`` False: several writers, a
        burst-like learning window), have no grid: their rows carry intervals (gaps), age
        and size only, and the producer's next cycle starts a fresh grid. An
        interval across cycles no grid saw (``absent``: lost, or not placed) is not one of
        the producer's: left out of every interval figure and the interval rule (counted).
        """
        stream = self._producer_streams.streams.get(serial)
        if stream is None:  # forgotten past MAX_STREAMS within this batch: a fresh grid
            stream = ProducerStream(NO_VALUE, int(arrival[0]), epoch)
        if fresh or stream.epoch != epoch:
            stream.anchor(epoch, keep_intervals=not fresh)
        # A start before the previous one (sim time jumped back before the reset reached this
        # topic) has no interval: a negative one would mean nothing.
        interval_timer = _no_negative(diff_with(stream.prev_start_timer, start_timer))
        interval_wall = _no_negative(diff_with(stream.prev_start_wall, start_wall))
        interval_sim = _no_negative(diff_with(stream.prev_start_sim, start_sim))
        across = absent > 0
        if across.any():
            self._totals.across_loss += int((across & (diff_with(
                stream.prev_start_timer, start_timer) != NO_VALUE)).sum())
            interval_timer = np.where(across, NO_VALUE, interval_timer)
            interval_wall = np.where(across, NO_VALUE, interval_wall)
            interval_sim = np.where(across, NO_VALUE, interval_sim)
        coarse = bool(self._coarse_note)
        if coarse:  # /clock coarser than the topic: no sim time from arrivals is right
            interval_sim = np.full(len(arrival), NO_VALUE, np.int64)
            interval_timer = interval_sim
        stream.prev_start_timer = int(start_timer[-1])
        stream.prev_start_wall = int(start_wall[-1])
        stream.prev_start_sim = int(start_sim[-1])
        self._totals.cycles += len(arrival)
        timing = self._timing
        if not cycles:
            stream.grid = GridState()
        if timing is None or coarse or not cycles:  # an event topic, or no grid
            none = np.full(len(arrival), NO_VALUE, np.int64)
            zero = np.zeros(len(arrival), np.int64)
            return dict(
                arrival=arrival, start_wall=start_wall, start_sim=start_sim,
                interval_timer=interval_timer, interval_wall=interval_wall,
                interval_sim=interval_sim, lateness=none, response=none, skipped=zero,
                missed=zero, lost=lost, size=size, age=age)
        slots, skipped = replay(start_timer, timing.period_ns, stream.grid, absent)
        response = end_timer - slots
        missed = classify_misses(timing.rule, interval_timer, response, timing)
        self._totals.misses += int(missed.sum())
        self._totals.skipped += int(skipped.sum())
        return dict(
            arrival=arrival, start_wall=start_wall, start_sim=start_sim,
            interval_timer=interval_timer, interval_wall=interval_wall,
            interval_sim=interval_sim, lateness=start_timer - slots, response=response,
            skipped=skipped, missed=missed.astype(np.int64), lost=lost, size=size, age=age)

    def take_rows(self) -> dict[str, np.ndarray] | None:
        """Hand over the per-cycle rows made since the last call, oldest first (None: none).

        For the session's whole-run figures (``analysis.whole_run``): every row once, including
        those a sim-time reset or the window dropped from the report's rows since. The first
        call starts the keeping; a caller takes them after every ``process``.
        """
        made, self._made = self._made, []
        if not made:
            return None
        if len(made) == 1:
            return made[0]
        return {name: np.concatenate([rows[name] for rows in made]) for name in ROW_COLUMNS}

    def _counts_note(self, since_ns: int) -> str:
        """Why misses and skipped periods are unknown ('' when they are known)."""
        if self.kind == 'event':
            return ''
        if self._coarse_note:
            return self._coarse_note
        several = self._several.window_note(since_ns)
        if several:
            return several
        if self._timing is not None:
            return ''
        totals = self._totals
        waiting = self._learner.held.count + self._stamps.held.count
        need = self._analysis.learn_intervals + 1
        if totals.messages == 0:
            return 'no message received'
        if waiting:
            return (f'period not learned yet: {waiting} of the {need} cycles it needs (or '
                    f'{self._analysis.window_ns / NS_PER_S:g} s of them)')
        if self._unlearned_cycles:
            return (f'period not learned: {self._unlearned_cycles} cycles, it needs {need}; '
                    'configure period_ms to count misses')
        if totals.foreign:
            return (f'no cycle to learn the period from: {totals.foreign} start stamps not on '
                    f'the {self._config.clock} timer clock')
        if totals.unattributed:
            return f'no cycle to learn the period from: {self._several.note}'
        if self._config.clock == 'sim' and totals.cycles == 0:
            return 'no cycle placed: no /clock sample yet (a sim-time topic timed by arrivals)'
        return f'period not learned ({totals.messages} messages)'

    def _producers(self, since_ns: int) -> int:
        """Count the producer streams heard from in the window."""
        streams = self._producer_streams.streams.values()
        return sum(stream.arrival >= since_ns for stream in streams)

    def _loss_note(self, writers: int, since_ns: int) -> str:
        """Why the window's loss count cannot be trusted, or '' (docs/design.md, Cycles).

        Several writers in the graph, events whose producer was a guess, or events without
        sequence numbers in the window: a number would mix runs, ``unknown`` does not.
        """
        if writers > 1:
            return f'{writers} writers on the topic'
        ambiguous_at, seq_unknown_at = (self._producer_streams.ambiguous_at,
                                        self._producer_streams.seq_unknown_at)
        if ambiguous_at is not None and ambiguous_at >= since_ns:
            return 'sequence runs of several producers could not be told apart'
        if seq_unknown_at is not None and seq_unknown_at >= since_ns:
            return 'no publication sequence numbers'
        return ''

    def report(self, now_wall_ns: int, writers: int = 1) -> TopicReport:
        """Summarize the rolling window and the totals of the events processed so far."""
        timing = self._timing
        since = now_wall_ns - self._window_ns()
        rows = self._rows.rows_from('arrival', since)
        loss_note = self._loss_note(writers, since)
        self._writers_seen = max(self._writers_seen, writers)
        run_loss_note = ('sequence runs of several producers could not be told apart'
                         if self._producer_streams.ambiguous_at is not None else '')
        if not run_loss_note and self._writers_seen > 1 and self._totals.lost:
            # Jazzy's message info names no writer: a gap counted while several writers were
            # in the graph may be one writer's numbers read as the other's, never a figure.
            run_loss_note = f'{self._writers_seen} writers on the topic during the run'
        if not loss_note and run_loss_note and self._totals.lost:
            # A loss counted in a run whose producers were guessed at may be made up (a run
            # continued by the wrong producer): never a known figure later.
            loss_note = f'{run_loss_note} earlier in the run ({self._totals.lost} counted)'
        period = timing.period_ns if timing else None
        jitter = timing.jitter_ns if timing else None
        n = len(rows['arrival'])
        wall_known = rows['interval_wall'] != NO_VALUE
        sim_known = rows['interval_sim'] != NO_VALUE
        interval_wall = summarize_intervals(
            'wall', rows['interval_wall'][wall_known], rows['start_wall'][wall_known],
            period, jitter, timing.wall_budget_ns if timing else None)
        interval_sim = summarize_intervals(
            'sim', rows['interval_sim'][sim_known], rows['start_sim'][sim_known], period, jitter)
        misses = int(rows['missed'].sum())
        span_wall = int(rows['arrival'][-1] - rows['arrival'][0]) if n > 1 else 0
        starts_sim = rows['start_sim'][rows['start_sim'] != NO_VALUE]
        span_sim = int(starts_sim[-1] - starts_sim[0]) if len(starts_sim) > 1 else 0
        age = rows['age'][rows['age'] != NO_VALUE]
        lateness = rows['lateness'][rows['lateness'] != NO_VALUE]
        response = rows['response'][rows['response'] != NO_VALUE]
        totals = self._totals
        producers = self._producers(since)
        rate_wall, rate_sim = _rate(interval_wall.mean_ns), _rate(interval_sim.mean_ns)
        if producers > 1:
            # Each producer's intervals are its own: the topic's rate is its messages over
            # the window, not one over their mean interval.
            rate_wall = (n - 1) * 1e9 / span_wall if span_wall > 0 else NAN
            rate_sim = (len(starts_sim) - 1) * 1e9 / span_sim if span_sim > 0 else NAN
        return TopicReport(
            name=self._config.name,
            topic=self._config.topic,
            rule=self._effective(self._config).effective_rule,
            start_source=self._start_source,
            timer_clock=self._config.clock,
            period_learned=timing.learned if timing else False,
            period_ns=period,
            deadline_ns=timing.deadline_ns if timing else None,
            jitter_ns=jitter,
            wall_budget_ns=timing.wall_budget_ns if timing else None,
            timeout_ns=timing.timeout_ns if timing else self._config.timeout_ns,
            window_wall_ns=span_wall,
            window_sim_ns=span_sim,
            messages_total=totals.messages,
            deadline_misses_total=totals.misses,
            skipped_periods_total=totals.skipped,
            messages_lost_total=totals.lost,
            malformed_total=totals.malformed,
            qos_deadline_events_total=totals.qos_deadline_events,
            resets_total=totals.resets,
            messages=n,
            deadline_misses=misses,
            skipped_periods=int(rows['skipped'].sum()),
            messages_lost=int(rows['lost'].sum()),
            loss_known=not loss_note,
            miss_ratio=misses / n if n else NAN,
            rate_wall_hz=rate_wall,
            rate_sim_hz=rate_sim,
            interval_wall=interval_wall,
            interval_sim=interval_sim,
            lateness_mean_ns=_mean(lateness),
            lateness_max_ns=_max(lateness),
            response_mean_ns=_mean(response),
            response_max_ns=_max(response),
            response_p99_ns=percentiles(response, (99,))[0] if len(response) else NAN,
            size_mean_bytes=_mean(rows['size']),
            size_max_bytes=_max(rows['size']),
            bandwidth_bytes_per_s=(float(rows['size'].sum()) * 1e9 / span_wall
                                   if span_wall > 0 else NAN),
            age_mean_ns=_mean(age),
            age_max_ns=_max(age),
            last_arrival_wall_ns=self._last_arrival,
            kind=self.kind,
            period_source=timing.source if timing else '',
            foreign_stamps_total=totals.foreign,
            outages_total=totals.outages,
            outage_total_ns=totals.outage_ns,
            outage_max_ns=totals.outage_max_ns,
            outage_max_at_ns=totals.outage_max_at_ns,
            timing_reason=self._stamps.reason,
            counts_note=self._counts_note(since),
            clock_note=self._coarse_note,
            period_note=self._relearn_note,
            period_relearned_total=totals.relearned,
            producer_runs_total=totals.runs,
            producers=producers,
            unattributed_total=totals.unattributed,
            loss_note=loss_note,
            intervals_across_loss_total=totals.across_loss,
            stamps_back_total=totals.stamps_back,
            stamps_shared_total=totals.stamps_shared,
            sim_unknown_total=totals.sim_unknown,
            foreign_ahead_total=totals.foreign_ahead,
            age_unknown_total=totals.age_unknown,
            unlearned_total=totals.unlearned,
            learn_note=self._learner.note,
            lost_by_monitor_total=totals.lost_by_monitor,
            unmonitored_total=self._monitor_gaps.total(),
            unmonitored_ns=self._monitor_gaps.total_ns(now_wall_ns),
            unmonitored_messages_total=totals.unmonitored_messages,
            unmonitored_gap=self._monitor_gaps.latest,
            unattributed_note=self._several.note,
            run_counts_note=self._several.run_note(),
            producers_at_once_max=self._several.most_at_once,
            run_loss_note=run_loss_note,
        )


def _rate(mean_interval_ns: float) -> float:
    return 1e9 / mean_interval_ns if mean_interval_ns > 0 else NAN


def _mean(values: np.ndarray) -> float:
    return mean(values) if len(values) else NAN


def _max(values: np.ndarray) -> float:
    return float(values.max()) if len(values) else NAN
