"""Producer streams: one topic's events told apart by their runs of publication sequence numbers.

Jazzy's message info names no writer, but each writer numbers its samples 1, 2, 3, ...: an
event continues the run whose last number is just below its own (docs/design.md, Cycles). Each
stream keeps its own grid and intervals, so several producers on one topic are each
measured on their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ros2_deadline_monitor.analysis.cycle_starts import EPOCH_SCALE_NS
from ros2_deadline_monitor.analysis.grid import GridState
from ros2_deadline_monitor.analysis.intervals import diff_with
from ros2_deadline_monitor.analysis.ring import MALFORMED, NO_VALUE

MAX_STREAMS = 8
"""Producer streams (runs of publication sequence numbers) kept apart at most; the one heard
from least recently is forgotten first, so memory stays bounded however many writers come."""
OWN_DROPS_KEPT = 1 << 16
"""Notes of the monitor's own drops kept at most (bounded, however the queue drops)."""
NEAR_SEQ = 16
"""Runs whose last sequence numbers lie this close are "numbered alike": a loss could hide
which of them an event continues, so their rhythm decides (a guess)."""


@dataclass
class ProducerStream:
    """One producer's run of publication sequence numbers: its own grid and intervals.

    Jazzy's message info names no writer, but each writer numbers its samples 1, 2, 3, ...:
    events are told apart by which run they continue (``ProducerStreams.split``).
    ``epoch`` is the topic's outage count when the grid was last anchored: a later epoch
    re-anchors it.
    """

    seq: int
    arrival: int
    epoch: int = 0
    gap: int = 0
    """Wall time between its last two events: its rhythm, to tell alike-numbered runs apart."""
    scale: int = -1
    """Its stamps' scale: 1 Unix time, 0 sim time (or unset), -1 not known."""
    fresh: bool = False
    """Its next event starts a fresh grid (a guess was made among runs numbered alike)."""
    grid: GridState = field(default_factory=GridState)
    prev_start_timer: int = NO_VALUE
    prev_start_wall: int = NO_VALUE
    prev_start_sim: int = NO_VALUE
    last_stamp: int = NO_VALUE
    """Its latest header start on the timer clock, placed or not (stamps going back)."""
    unseen: int = 0
    """Cycles it ran since its latest placed one that no grid saw (lost, or not placed)."""
    unmonitored: bool = False
    """The monitor was not subscribed since its latest event: the sequence numbers its next
    event skips were published while nobody listened, not lost."""

    def anchor(self, epoch: int, keep_intervals: bool = False) -> None:
        """Start a new grid (after an outage or a guess) and, unless kept, new intervals.

        Across an outage of the same producer the intervals on the wall and sim clocks are
        kept (``keep_intervals``): gaps are never hidden, the longest interval includes the
        silence (docs/design.md, Cycles). The timer-clock interval starts afresh, so the
        outage is one figure, not a deadline miss or thousands of skipped periods.
        """
        self.epoch = epoch
        self.grid = GridState()
        self.prev_start_timer = NO_VALUE
        if not keep_intervals:
            self.prev_start_wall = NO_VALUE
            self.prev_start_sim = NO_VALUE


def choose_stream(streams: dict[int, ProducerStream], seq: int, arrival: int, scale: int,
                   active_since_ns: int) -> tuple[int, bool]:
    """Pick the stream an event with sequence number ``seq`` continues: (serial or -1, guess).

    Among the streams heard from since ``active_since_ns`` and numbered below ``seq``: the
    nearest below (one below: no loss), when no other one is numbered within ``NEAR_SEQ``
    of it; else (two producers started together number their samples alike, and a loss
    hides which one went on) the one whose rhythm the arrival fits best: its distance since
    that stream's last arrival nearest a whole number of the stream's last interval. Only
    when no active stream fits, a silent one (the nearest below) continues, so a writer's
    losses over a silence still count. ``guess`` is True unless the choice was clear (loss
    is then unknown and the runs start fresh grids).
    """
    active = [(serial, stream) for serial, stream in streams.items()
              if stream.seq < seq and stream.arrival >= active_since_ns]
    if scale >= 0 and len(active) > 1:
        # A producer's stamps stay on one clock: Unix-scale and sim-scale runs never mix.
        alike = [item for item in active if item[1].scale in (scale, -1)]
        active = alike or active
    if not active:
        silent = [(stream.seq, stream.arrival, serial) for serial, stream in streams.items()
                  if stream.seq < seq]
        return (max(silent)[2] if silent else -1), False
    if len(active) == 1:
        return active[0][0], False

    def misfit(stream: ProducerStream) -> int:
        if stream.gap <= 0:
            return 1 << 62
        off = (arrival - stream.arrival) % stream.gap
        return min(off, stream.gap - off)

    # Runs numbered far below the nearest one cannot have taken this event but by a long
    # loss: numbers decide. Only runs numbered alike (two producers started together) are
    # told apart by their rhythm, and that is a guess.
    nearest = max(stream.seq for _, stream in active)
    near = [item for item in active if item[1].seq >= nearest - NEAR_SEQ]
    if len(near) == 1:
        return near[0][0], False
    # Numbered alike: which run went on is a guess (the rhythm picks, numbers break a tie),
    # good enough to follow the numbers, never to place the event on a grid: jitter as
    # large as the producers' phase apart fools any rhythm.
    ranked = sorted(near, key=lambda item: (misfit(item[1]), item[1].seq != seq - 1,
                                            item[1].arrival))
    return ranked[0][0], True


def known_seq(seq: np.ndarray) -> bool:
    """Tell whether every event carries a publication sequence number."""
    return bool((seq != NO_VALUE).all())


def stream_diffs(starts: np.ndarray, streams: np.ndarray) -> np.ndarray:
    """Intervals between consecutive starts of the same producer stream (for learning)."""
    order = np.argsort(streams, kind='stable')
    starts, streams = starts[order], streams[order]
    same = streams[1:] == streams[:-1]
    return np.diff(starts)[same]

class LossCounts(Protocol):
    """The topic's run totals the streams count into (``cycles._Totals``)."""

    lost: int
    lost_by_monitor: int
    unmonitored_messages: int
    runs: int


class ProducerStreams:
    """One topic's producer streams, and its events split among them (``split``).

    Counts the producer's loss (sequence-number gaps), less what the monitor's own queue
    dropped (``own_dropped``), and the messages published while the monitor was not
    subscribed, into ``totals``.
    """

    def __init__(self, totals: LossCounts) -> None:
        """Start with no stream; count into ``totals``."""
        self._totals = totals
        self.streams: dict[int, ProducerStream] = {}
        self._serial = 0
        self.recent = -1
        """Serial of the stream that took the latest event (events without a number join it)."""
        self._numbered = False
        self.seq_unknown_at: int | None = None
        """Arrival of the latest event without a sequence number after numbered ones."""
        self.ambiguous_at: int | None = None
        """Arrival of the latest event whose stream was a guess."""
        self._own_drops: dict[int, int] = {}
        """Sequence number -> messages the monitor's own queue dropped just before it."""
        self._own_at: dict[int, int] = {}
        """Arrival -> those drops, from ``split`` to the rows (``producer_lost``)."""

    def restart(self, epoch: int) -> None:
        """Untie every stream from its past after a gap of the monitor's own.

        Each keeps its sequence numbers (the ones skipped are not lost) but gets a new serial
        (no period is learned across the gap), a grid anchored at ``epoch`` and no stamp or
        unseen cycles to carry over.
        """
        streams: dict[int, ProducerStream] = {}
        for serial, stream in self.streams.items():
            self._serial += 1
            stream.anchor(epoch)
            stream.unseen, stream.last_stamp, stream.unmonitored = 0, NO_VALUE, True
            streams[self._serial] = stream
            if serial == self.recent:
                self.recent = self._serial
        self.streams = streams

    def own_dropped(self, before_seq: int, count: int) -> None:
        """Note ``count`` messages before ``before_seq`` dropped by the monitor's own queue."""
        if count > 0 and len(self._own_drops) < OWN_DROPS_KEPT:
            self._own_drops[before_seq] = self._own_drops.get(before_seq, 0) + count

    def _new(self, seq: int, arrival: int, epoch: int) -> int:
        """Open a producer stream (a new writer or a restart); forget the stalest past cap."""
        if len(self.streams) >= MAX_STREAMS:
            stalest = min(self.streams, key=lambda k: self.streams[k].arrival)
            del self.streams[stalest]
        self._serial += 1
        self.streams[self._serial] = ProducerStream(seq, arrival, epoch)
        self._totals.runs += 1
        return self._serial

    def split(self, arrival: np.ndarray, seq: np.ndarray, stamp: np.ndarray | None,
              epoch: int, active_ns: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """Return each event's producer stream, losses, fresh-grid marks and guessed events.

        Guessed: which events' producer was a guess (None: none was).

        A guessed event (``choose_stream``) is no cycle, and every run it could have
        belonged to starts a fresh grid after it: a wrong guess, or runs that swapped, never
        join two producers' cycles on one grid.

        An event continues the stream whose last sequence number is one below its own, else
        the nearest below (the gap is lost), the most recently heard at a tie; sequence
        number 1 (a writer's first sample) or none below opens a new stream. An event
        without a number joins the latest stream, and loss is unknown from then on. The
        common case (one stream counting up) is vectorized; the loop runs only when several
        runs interleave or one starts again. ``epoch``: the topic's outage count (a new
        stream's grid anchors there); ``active_ns``: how recently a run must have been heard
        from to be continued.
        """
        n = len(seq)
        known = seq != NO_VALUE
        if not known.all() and (self._numbered or known.any()):
            # Numbers that stop (or start late) leave gaps no count can bridge. A stream that
            # never had numbers (a bag) keeps its old meaning: nothing counted as lost.
            self.seq_unknown_at = int(arrival[~known][-1])
        self._numbered = self._numbered or bool(known.any())
        streams = self.streams
        one = self._sole_active(int(arrival[0]) - active_ns)
        if known.all() and (n == 1 or bool((seq[1:] > seq[:-1]).all())) and (
                not streams or (one is not None and int(seq[0]) > one.seq)):
            if one is None:
                self.recent = self._new(NO_VALUE, int(arrival[0]), epoch)
                one = streams[self.recent]
            gaps = diff_with(one.seq, seq)
            if one.unmonitored:  # published while the monitor was not subscribed
                one.unmonitored = False
                self._totals.unmonitored_messages += max(0, int(gaps[0]) - 1)
                gaps[0] = NO_VALUE
            before = int(arrival[-2]) if n > 1 else one.arrival
            one.seq, one.gap, one.arrival = int(seq[-1]), int(arrival[-1]) - before, int(
                arrival[-1])
            lost = np.where((gaps != NO_VALUE) & (gaps > 1), gaps - 1, 0)
            self._count_lost(lost, seq, arrival)
            return np.full(n, self.recent, np.int64), lost, np.zeros(n, bool), None
        serials = np.empty(n, np.int64)
        lost = np.zeros(n, np.int64)
        fresh = np.zeros(n, bool)
        guessed = np.zeros(n, bool)
        if not known.any():
            # No numbers at all (a bag): every event joins the latest stream, as the loop
            # below would do one by one.
            if self.recent not in streams:
                self.recent = self._new(NO_VALUE, int(arrival[0]), epoch)
            streams[self.recent].arrival = int(arrival[-1])
            serials.fill(self.recent)
            return serials, lost, fresh, guessed
        if stamp is None:
            scales = [-1] * n
        else:
            known_stamp = (stamp != NO_VALUE) & (stamp != MALFORMED)
            scales = np.where(known_stamp, (stamp >= EPOCH_SCALE_NS).astype(np.int64), -1
                              ).tolist()
        for i, (s, a, scale) in enumerate(zip(seq.tolist(), arrival.tolist(), scales,
                                              strict=True)):
            if s == NO_VALUE:
                if self.recent not in streams:
                    self.recent = self._new(NO_VALUE, a, epoch)
                streams[self.recent].arrival = a
                serials[i] = self.recent
                continue
            best, ambiguous = (choose_stream(streams, s, a, scale, a - active_ns) if s != 1
                               else (-1, False))
            if ambiguous:
                # A guess: loss unknown for a window, and every run it could have been
                # starts a fresh grid (this one here, the others at their next event), so a
                # wrong guess, or runs that swapped, never join two producers' cycles.
                self.ambiguous_at = a
                guessed[i] = True
                for stream in streams.values():
                    if stream.arrival >= a - active_ns and abs(stream.seq - s) <= NEAR_SEQ:
                        stream.fresh = True
            if best >= 0 and streams[best].fresh and not ambiguous:
                streams[best].fresh = False
                fresh[i] = True
            if best < 0:
                best = self._new(s, a, epoch)
                streams[best].scale = scale
            else:
                stream = streams[best]
                if stream.seq != NO_VALUE and s - stream.seq > 1:
                    if stream.unmonitored:
                        self._totals.unmonitored_messages += s - stream.seq - 1
                    else:
                        lost[i] = s - stream.seq - 1
                stream.unmonitored = False
                stream.seq, stream.gap, stream.arrival = s, a - stream.arrival, a
                if scale >= 0:
                    stream.scale = scale
            serials[i] = self.recent = best
        self._count_lost(lost, seq, arrival)
        return serials, lost, fresh, guessed

    def _count_lost(self, lost: np.ndarray, seq: np.ndarray, arrival: np.ndarray) -> None:
        """Count sequence gaps as the producer's loss, less what the monitor's queue dropped.

        The monitor's own drops (``dropped_by_monitor``) are counted apart and noted by
        arrival, so the rows carry the producer's loss only (``_producer_lost``); ``lost``
        stays whole: every cycle in the gap took its slot.
        """
        total = int(lost.sum())
        if self._own_drops and total:
            for i in np.flatnonzero(lost > 0).tolist():
                count = self._own_drops.pop(int(seq[i]), 0)
                if count:
                    own = min(count, int(lost[i]))
                    if len(self._own_at) < OWN_DROPS_KEPT:  # bounded, however it goes
                        self._own_at[int(arrival[i])] = own
                    self._totals.lost_by_monitor += own
                    total -= own
        self._totals.lost += total

    def producer_lost(self, arrival: np.ndarray, lost: np.ndarray) -> np.ndarray:
        """Return ``lost`` less the drops of the monitor's own queue (``_count_lost``)."""
        if not self._own_at:
            return lost
        lost = lost.copy()
        for i in np.flatnonzero(lost > 0).tolist():
            lost[i] -= self._own_at.pop(int(arrival[i]), 0)
        return lost

    def _sole_active(self, active_since_ns: int) -> ProducerStream | None:
        """Return the latest stream when no other one was heard from since then, else None.

        Then every event counting up from it continues it (``choose_stream`` would say so
        one by one): a restarted producer's old run, silent, keeps no one off the fast path.
        """
        one = self.streams.get(self.recent)
        if one is None:
            return None
        for stream in self.streams.values():
            if stream is not one and stream.arrival >= active_since_ns:
                return None
        return one
