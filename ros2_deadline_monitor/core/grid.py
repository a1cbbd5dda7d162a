"""Replay of rcl's timer grid to find scheduled slots and skipped periods (DESIGN.md §3).

rcl moves a timer's next call time forward by whole periods from the previous *scheduled*
time, and jumps over periods that have already passed. Replaying that rule on the observed
cycle starts gives each cycle's scheduled slot and the periods the timer silently skipped.
Integer nanoseconds only, so nothing drifts however long the run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class GridState:
    """Where the replay stands: the slot expected for the next cycle (None before the first)."""

    expected_ns: int | None = None


def replay(starts_ns: np.ndarray, period_ns: int,
           state: GridState) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(slots_ns, skipped)`` for each start and advance ``state``.

    ``skipped[i]`` counts the periods skipped right after cycle ``i`` started. The grid is
    anchored on the first start; a timer never fires before its slot, so a start before the
    expected slot shows the true phase is earlier (the first observed cycle was late, or the
    producer restarted) and the grid moves back onto it. Lateness is therefore never
    negative, and a late first cycle cannot hide later misses.
    """
    n = len(starts_ns)
    slots = np.empty(n, np.int64)
    skipped = np.zeros(n, np.int64)
    expected = state.expected_ns
    period = int(period_ns)
    for i, ts in enumerate(starts_ns.tolist()):
        slot = ts if expected is None or ts < expected else expected
        nxt = slot + period
        if nxt <= ts:
            ahead = 1 + (ts - nxt) // period
            skipped[i] = ahead
            nxt += ahead * period
        slots[i] = slot
        expected = nxt
    state.expected_ns = expected
    return slots, skipped
