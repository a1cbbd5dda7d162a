"""Replay of rcl's timer grid to find scheduled slots and skipped periods (docs/design.md, Cycles).

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


def replay(starts_ns: np.ndarray, period_ns: int, state: GridState,
           lost: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(slots_ns, skipped)`` for each start and advance ``state``.

    ``skipped[i]`` counts the periods skipped right after cycle ``i`` started. The grid is
    anchored on the first start; a timer never fires before its slot, so a start before the
    expected slot shows the true phase is earlier (the first observed cycle was late, or the
    producer restarted) and the grid moves back onto it. Lateness is therefore never
    negative, and a late first cycle cannot hide later misses.

    ``lost[i]``: cycles the producer ran between cycle ``i - 1`` and cycle ``i`` that were
    never seen (a gap in its sequence numbers). They took slots of the grid, so they are no
    skipped periods: skipped = grid slots spanned - cycles seen - cycles known lost
    (docs/design.md, Cycles). Which of the unseen cycles was late is unknown, so cycle ``i``
    takes the latest slot at or before its start (lateness under a period) and the slots left over
    after the lost ones are the skipped periods; a start too early for the lost cycles to
    fit before it shows an earlier phase and moves the grid onto it. A lost cycle may have
    started earlier in its slot than any seen one: the grid is then that much late, and a
    cycle after the loss starting within it reads as a period late, one skipped period
    fewer. So with losses the count is at most one short per gap, never more.
    """
    n = len(starts_ns)
    slots = np.empty(n, np.int64)
    skipped = np.zeros(n, np.int64)
    expected = state.expected_ns
    period = int(period_ns)
    unseen = lost.tolist() if lost is not None else [0] * n
    for i, (ts, k) in enumerate(zip(starts_ns.tolist(), unseen, strict=True)):
        if expected is None or ts < expected + k * period:
            slot = ts
        elif k > 0:
            slot = expected + (ts - expected) // period * period
            skipped[i] = (slot - expected) // period - k
        else:
            slot = expected
        nxt = slot + period
        if nxt <= ts:
            ahead = 1 + (ts - nxt) // period
            skipped[i] += ahead
            nxt += ahead * period
        slots[i] = slot
        expected = nxt
    state.expected_ns = expected
    return slots, skipped
