"""Outages: silences longer than the timeout between a topic's cycles, each a new epoch.

Gaps are never hidden: an outage is counted, timed on the wall clock and kept in the max
interval; every producer stream re-anchors its grid at the new epoch, so a restart or a
silence is one figure, not thousands of skipped periods (docs/design.md, Cycles).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ros2_deadline_monitor.analysis.intervals import diff_with
from ros2_deadline_monitor.analysis.monitor_gaps import MonitorGaps
from ros2_deadline_monitor.analysis.ring import NO_VALUE


class OutageCounts(Protocol):
    """The topic's run totals the outages are counted into (``CycleTotals``)."""

    outages: int
    outage_ns: int
    outage_max_ns: int
    outage_max_at_ns: int | None


class Outages:
    """One topic's silences between consecutive cycles (any producer) and its epoch."""

    def __init__(self, totals: OutageCounts) -> None:
        """Start at epoch 0 with no cycle to measure from; count into ``totals``."""
        self._totals = totals
        self.epoch = 0
        """Outages so far: a producer stream anchored at an older epoch re-anchors."""
        self._prev_wall = NO_VALUE
        self._prev_timer = NO_VALUE

    def forget(self) -> None:
        """Measure from nothing (after a gap of the monitor's own: nothing spans it)."""
        self._prev_wall = self._prev_timer = NO_VALUE

    def forget_timer(self) -> None:
        """Measure the next silence on the timer clock from nothing (sim time reset)."""
        self._prev_timer = NO_VALUE

    def epochs(self, arrival: np.ndarray, end_timer: np.ndarray, absent: np.ndarray,
               timeout_ns: int | None, monitor_gaps: MonitorGaps) -> np.ndarray | None:
        """Count silences longer than the timeout; return each event's epoch (None: no new one).

        The silence is measured on the timer clock between consecutive cycles of the topic
        (any producer), so a paused simulator is no outage, and reported on the wall clock.
        ``absent``: cycles the producer ran unseen before each one (lost, not placed), which
        split the silence. ``timeout_ns`` None: no outage (an event topic without a timeout).
        """
        gap_wall = diff_with(self._prev_wall, arrival)
        gap_timer = diff_with(self._prev_timer, end_timer)
        monitor_gaps.not_across(arrival, gap_timer)  # the monitor's silence: no outage
        self._prev_wall = int(arrival[-1])
        self._prev_timer = int(end_timer[-1])
        if timeout_ns is None:
            return None
        # Cycles the producer ran unseen in the gap (lost, not placed) split it: a silence
        # is one longer than the timeout between any two of its cycles, spread evenly.
        outage = (gap_timer != NO_VALUE) & (gap_timer / (absent + 1) > timeout_ns)
        if not outage.any():
            return None
        durations = np.where(gap_wall[outage] != NO_VALUE, gap_wall[outage], gap_timer[outage])
        totals = self._totals
        totals.outages += int(outage.sum())
        totals.outage_ns += int(durations.sum())
        longest = int(np.argmax(durations))
        if int(durations[longest]) > totals.outage_max_ns:
            totals.outage_max_ns = int(durations[longest])
            totals.outage_max_at_ns = int(arrival[outage][longest])
        epochs = self.epoch + np.cumsum(outage)
        self.epoch = int(epochs[-1])
        return epochs
