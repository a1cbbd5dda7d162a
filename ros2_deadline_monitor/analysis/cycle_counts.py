"""Counting cycles: the miss rule, the ground truth of a cycle record, a topic's run totals.

``count_cycles`` replays rcl's timer grid and the miss rule on a producer's own record, the
same arithmetic the analyzer runs on the messages, so a monitor and a producer agree exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ros2_deadline_monitor.analysis.config import resolve_timing, Timing, TopicConfig
from ros2_deadline_monitor.analysis.grid import GridState, replay
from ros2_deadline_monitor.analysis.ring import NO_VALUE


class CycleCounts(NamedTuple):
    """Counting results of one cycle sequence."""

    cycles: int
    misses: int
    skipped: int
    grid_periods: int


def classify_misses(rule: str, interval_timer_ns: np.ndarray, response_ns: np.ndarray,
                    timing: Timing) -> np.ndarray:
    """Deadline misses per cycle under ``rule`` (NO_VALUE intervals never miss)."""
    if rule == 'interval':
        known = interval_timer_ns != NO_VALUE
        return known & (interval_timer_ns > timing.period_ns + timing.jitter_ns)
    return response_ns > timing.deadline_ns


def count_cycles(starts_ns: np.ndarray, ends_ns: np.ndarray, period_ns: int,
                 deadline_ns: int | None = None, jitter_ns: int | None = None,
                 rule: str = 'response') -> CycleCounts:
    """Misses and skipped periods of a whole recorded cycle sequence (the ground truth).

    Uses the same grid replay and miss rule as the live analyzer, so a monitor and the
    producer's own record agree exactly. ``skipped`` includes the periods already passed when
    the last cycle started; ``grid_periods`` counts slots from the first cycle's to the last's.
    """
    starts = np.asarray(starts_ns, np.int64)
    ends = np.maximum(np.asarray(ends_ns, np.int64), starts)
    timing = resolve_timing(
        TopicConfig(name='truth', topic='/truth', period_ns=period_ns, deadline_ns=deadline_ns,
                    jitter_tolerance_ns=jitter_ns, rule=rule), period_ns, False, 1.0)
    slots, skipped = replay(starts, period_ns, GridState())
    intervals = np.full(len(starts), NO_VALUE, np.int64)
    intervals[1:] = np.diff(starts)
    misses = classify_misses(rule, intervals, ends - slots, timing)
    grid = int((slots[-1] - slots[0]) // period_ns + 1) if len(slots) else 0
    return CycleCounts(len(starts), int(misses.sum()), int(skipped.sum()), grid)



@dataclass
class CycleTotals:
    """One topic's run totals: what its cycles, messages and losses added up to so far."""

    messages: int = 0
    misses: int = 0
    skipped: int = 0
    lost: int = 0
    malformed: int = 0
    qos_deadline_events: int = 0
    resets: int = 0
    foreign: int = 0
    outages: int = 0
    outage_ns: int = 0
    outage_max_ns: int = 0
    outage_max_at_ns: int | None = None
    relearned: int = 0
    runs: int = 0
    unattributed: int = 0
    cycles: int = 0
    across_loss: int = 0
    stamps_back: int = 0
    stamps_shared: int = 0
    sim_unknown: int = 0
    foreign_ahead: int = 0
    age_unknown: int = 0
    unlearned: int = 0
    unmonitored_messages: int = 0
    lost_by_monitor: int = 0
