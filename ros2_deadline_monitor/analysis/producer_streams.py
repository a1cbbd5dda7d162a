"""Producer streams: one topic's events told apart by their runs of publication sequence numbers.

Jazzy's message info names no writer, but each writer numbers its samples 1, 2, 3, ...: an
event continues the run whose last number is just below its own (DESIGN.md §3). Each
stream keeps its own grid and intervals, so several producers on one topic are each
measured on their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ros2_deadline_monitor.analysis.grid import GridState
from ros2_deadline_monitor.analysis.ring import NO_VALUE

MAX_STREAMS = 8
"""Producer streams (runs of publication sequence numbers) kept apart at most; the one heard
from least recently is forgotten first, so memory stays bounded however many writers come."""
NEAR_SEQ = 16
"""Runs whose last sequence numbers lie this close are "numbered alike": a loss could hide
which of them an event continues, so their rhythm decides (a guess)."""


@dataclass
class ProducerStream:
    """One producer's run of publication sequence numbers: its own grid and intervals.

    Jazzy's message info names no writer, but each writer numbers its samples 1, 2, 3, ...:
    events are told apart by which run they continue (``CycleAnalyzer._demultiplex``).
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
        silence (DESIGN.md §3). The timer-clock interval starts afresh, so the outage is one
        figure, not a deadline miss or thousands of skipped periods.
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
