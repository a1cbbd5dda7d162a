"""What the analysis session hands out: one frozen ``Snapshot`` per report.

Every output (``MonitorStats``, ``/diagnostics``, the final summary, tables, JSON/CSV, plots,
HTML, the terminal view, CI expectations) is a sink that reads a snapshot; none of them
computes a figure or a level of its own. Times are integer nanoseconds as in ``reports``;
``wall_ns`` and ``start_wall_ns`` are system-clock times, so a sink can show points in time
relative to the start of the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ros2_deadline_monitor.analysis.reports import (
    ClockReport,
    HostReport,
    Level,
    RunTotals,
    TopicReport,
)
from ros2_deadline_monitor.analysis.transforms import TransformsReport


@dataclass(frozen=True)
class Receive:
    """How the adapter gets a topic's messages (live only; offline: ``mode`` 'bag')."""

    mode: str = 'bag'
    """'batched', 'callback' or 'bag'."""
    take_period_ns: int = 0
    queue_depth: int = 0
    queue_overflows_total: int = 0
    lost_by_monitor_total: int = 0
    """Messages the monitor's own reader queue dropped (full between two takes), from the
    sequence numbers across those takes: the monitor's loss, not the producer's."""
    loss_unseen: str = ''
    """Why drops of the monitor's own queue could not be counted ('' when none): a queue
    found full at its first take has no sequence number before it to count from."""


@dataclass(frozen=True)
class TopicSnapshot:
    """One monitored (or misconfigured) topic: its figures, level and why."""

    topic_id: str
    topic: str
    """Fully qualified topic name ('' when the configuration is invalid)."""
    type_name: str
    """e.g. 'sensor_msgs/msg/Imu'; '' until discovered."""
    level: Level
    reason: str
    """One line: why the level is what it is; the diagnostic message."""
    report: TopicReport | None
    """None when the topic's configuration is invalid (``reason`` says why)."""
    publishers: tuple[str, ...] = ()
    """Fully qualified node names of the writers, from the graph (live only)."""
    receive: Receive = Receive()
    run: RunTotals = RunTotals()
    """Whole-run figures no window bounds (cycles, every interval): the CI gate's input and
    the final summary's longest intervals."""
    notes: tuple[str, ...] = ()
    """Where the topic breaks "one producer per cycle stream" or the middleware filled less
    (several producers, foreign stamps, outages, fallbacks); also in ``reason``."""
    transforms: TransformsReport | None = None
    """Per-transform figures of a topic laid out like ``tf2_msgs/TFMessage`` (else None)."""


@dataclass(frozen=True)
class RemovedTopic:
    """A topic removed from the configuration at run time, its figures frozen at removal.

    The final summary lists it, marked removed; the live outputs (stats, diagnostics,
    ``/metrics``) describe the monitored topics only. A topic added again starts afresh: its
    earlier record stays, one per removal.
    """

    topic: TopicSnapshot
    """Its last report, made at removal after everything it had received was processed."""
    removed_wall_ns: int
    """System-clock time of the removal."""


REMOVED_KEPT = 1000
"""Removed topics a session keeps (the earliest); later removals are only counted."""


@dataclass(frozen=True)
class ClockSnapshot:
    """The /clock stream and the RTF, with the clock status."""

    topic: str
    report: ClockReport
    level: Level
    reason: str
    target_rtf: float
    use_sim_time: bool
    publishers: int | None = None
    """Publishers of /clock in the graph (None offline)."""
    simulator_rtf: float = float('nan')
    """The simulator's own RTF when a topic carries it, else NaN."""


@dataclass(frozen=True)
class HostSnapshot:
    """Host context over the report window, with the host status."""

    report: HostReport
    level: Level
    reason: str
    stats_timer_late_ns: int = 0
    """How late the reporting timer fired (0 offline)."""


@dataclass(frozen=True)
class Snapshot:
    """Everything one report says, frozen: the sinks' only input."""

    wall_ns: int
    """System-clock time of the report."""
    start_wall_ns: int
    """System-clock time the session started (points in time can be shown relative to it)."""
    arrival_timestamp: str
    """Which middleware timestamp ended a cycle: 'source_timestamp', 'received_timestamp'
    or 'log_time' (offline)."""
    topics: tuple[TopicSnapshot, ...]
    clock: ClockSnapshot
    host: HostSnapshot
    removed: tuple[RemovedTopic, ...] = ()
    """Topics removed at run time, in order of removal (``RemovedTopic``)."""
    removed_beyond: int = 0
    """Removals beyond ``REMOVED_KEPT``, counted only."""
