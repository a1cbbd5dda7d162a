"""What a bag analysis returns: the session's final snapshot plus what only a bag has.

Times in nanoseconds as in the analysis reports: statistics are floats (NaN when unmeasured),
points in time (``*_at_ns``) ints (None when unknown). The table, JSON, CSV, plot and HTML
writers only read them, through the figure table where there is a figure for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot
from ros2_deadline_monitor.outputs.recorded_stats import RecordedStats


@dataclass(frozen=True)
class TopicFacts:
    """What only the bag says about one analyzed topic; its figures are in the snapshot.

    ``notes``: what the replay knows and the session cannot (the bag has no /clock to place
    sim-time stamps, messages before the first /clock sample); the session's own notes are
    ``TopicSnapshot.notes``.
    """

    topic_id: str
    msgtype: str
    """The message type the bag records."""
    stamp: str
    """The configured ``stamp`` setting (``auto``, ``start``, ``end``, ``none``)."""
    clock_choice: str
    """Where the timer clock came from: ``config``, ``--clock`` or ``auto: why``."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClockFacts:
    """What the replay adds to the session's clock report over the whole bag.

    The RTF overall, the worst bin of the run and the resets are the session's
    (``Snapshot.clock.report``); these come from the report of every round.
    """

    malformed_total: int
    """/clock messages whose stamp could not be read."""
    wall_span_ns: int
    """Wall time of the rounds that had /clock samples, summed (and their sim time)."""
    sim_span_ns: int
    rtf_bin_max: float
    """Best fixed-window RTF of any round."""
    step_ns: float
    """Median of the rounds' /clock steps."""
    max_wall_gap_ns: float
    max_wall_gap_at_ns: int | None
    paused_windows: int
    """Rounds in which sim time stood still."""


@dataclass(frozen=True)
class BagInfo:
    """What the bag is: where, which storage, when and how much."""

    path: str
    storage: str
    start_ns: int
    duration_ns: int
    message_count: int
    topic_count: int


@dataclass(frozen=True)
class BagResult:
    """One bag's analysis: the session's final snapshot plus what only the bag has.

    ``snapshot.topics`` holds the analyzed topics in the plan's order, ``facts`` the bag
    facts of each (same order); every figure is read from the snapshot (``analysis.figures``
    ``RUN_TOPIC``/``RUN_CLOCK``), as the live monitor's final summary reads its own.
    ``series`` feeds the plots only.
    """

    bag: BagInfo
    snapshot: Snapshot
    facts: tuple[TopicFacts, ...]
    clock: ClockFacts | None
    """None without /clock samples in the bag."""
    recorded: RecordedStats | None
    percentile_method: str
    notes: tuple[str, ...] = ()
    series: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def topics(self) -> tuple[tuple[TopicSnapshot, TopicFacts], ...]:
        """Each analyzed topic's snapshot with its bag facts, in the plan's order."""
        return tuple(zip(self.snapshot.topics, self.facts, strict=True))
