"""Several writers at once on one topic: when no one producer's grid may time its messages.

Per-cycle figures (period, misses, skipped periods) belong to one producer. Several writers
without sequence numbers to tell them apart (a bag), sequence runs numbered alike (which one
sent a message is a guess) or runs that interleave under a learned period (a period learned
from 10, 50 and 100 Hz producers is none of theirs): their messages are counted and timed as
the topic's events (rate, intervals and gaps), and the per-cycle figures say why they are
unknown, never the figures of a timer that does not exist.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ros2_deadline_monitor.analysis.ring import NO_VALUE


class UnattributedCount(Protocol):
    """The topic's run total the messages are counted into (``CycleTotals``)."""

    unattributed: int


def interleaved(streams: np.ndarray, last_serial: int = NO_VALUE) -> int:
    """Count the producer streams whose events interleave (0: one producer at a time).

    ``streams``: each event's producer stream, in arrival order; ``last_serial`` the stream of
    the event before them. Streams that take turns (a restart: the old run ends, a new one
    begins) are one producer at a time; streams that alternate are several at once.
    """
    if len(streams) < 2 and last_serial == NO_VALUE:
        return 0
    serials = streams if last_serial == NO_VALUE else np.concatenate(([last_serial], streams))
    changes = int(np.count_nonzero(serials[1:] != serials[:-1]))
    distinct = len(np.unique(serials))
    return distinct if changes >= distinct else 0


class SeveralWriters:
    """One topic's messages that several writers left to no one producer's grid, and why."""

    def __init__(self, totals: UnattributedCount) -> None:
        """Count into ``totals.unattributed``."""
        self._totals = totals
        self.at: int | None = None
        """Arrival of the latest such message (None: none yet)."""
        self.note = ''
        """Why the latest ones were not timed as cycles."""
        self._last_serial = NO_VALUE
        """The producer stream of the latest event (``interleaving``)."""
        self.most_at_once = 0
        """The most producer streams that interleaved in one batch over the run."""

    def interleaving(self, streams: np.ndarray) -> int:
        """Count the streams of this batch that interleave, with the batch before it."""
        count = interleaved(streams, self._last_serial)
        self.most_at_once = max(self.most_at_once, count)
        if len(streams):
            self._last_serial = int(streams[-1])
        return count

    def count(self, arrival: np.ndarray, why: str) -> None:
        """Count messages no producer's grid may time, and why (the latest reason).

        A batch may leave none (every event of it unplaced, e.g. guessed): nothing changes.
        """
        if not len(arrival):
            return
        self._totals.unattributed += len(arrival)
        self.at = int(arrival[-1])
        self.note = why

    def window_note(self, since_ns: int) -> str:
        """Why the window's per-cycle figures are unknown, or '' (none since ``since_ns``)."""
        if self.at is None or self.at < since_ns:
            return ''
        return f'per-cycle figures need one producer: {self.note}'

    def run_note(self) -> str:
        """Why the run's misses and skipped periods are no figure, or '' (none ever)."""
        total = self._totals.unattributed
        return f'{total} messages not timed as cycles: {self.note}' if total else ''
