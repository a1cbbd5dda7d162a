"""A snapshot (integer ns, NaN for "nothing measured") to the package's stats messages.

The table of figures drives the mapping: each figure of ``analysis/figures.py`` that names a
``field`` fills it with its value (in the unit the field's name ends with; ``message`` where
the message carries a counter the diagnostics show otherwise). The few fields no figure
covers (header, name, level, status, ...) are set here by name. The way back, from
messages to a snapshot, is ``analysis/stats_fold.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
from typing import Any

from builtin_interfaces.msg import Time
from std_msgs.msg import Header

from ros2_deadline_monitor.analysis import figures
from ros2_deadline_monitor.analysis.figures import Figure
from ros2_deadline_monitor.analysis.snapshot import (
    ClockSnapshot,
    HostSnapshot,
    Snapshot,
    TopicSnapshot,
)
from ros2_deadline_monitor.analysis.units import NS_PER_S, to_s
from ros2_deadline_monitor.msg import (
    ClockStats,
    HostStats,
    IntervalStats,
    MonitorStats,
    TopicStats,
)

NAN = float('nan')


def stamp(wall_ns: int) -> Time:
    """Return a wall (system clock) time in ns as a ``builtin_interfaces/Time``."""
    sec, nanosec = divmod(wall_ns, NS_PER_S)
    return Time(sec=sec, nanosec=nanosec)


def header(wall_ns: int) -> Header:
    """Return the header of a stats message: the report's wall time, no frame."""
    return Header(stamp=stamp(wall_ns))


_COERCE: dict[str, Callable[[Any], Any]] = {
    'double': lambda value: NAN if value is None else float(value),
    'float': lambda value: NAN if value is None else float(value),
    'boolean': bool,
    'string': lambda value: '' if value is None else str(value),
}
"""How a figure's value becomes a field's (None: nothing measured, NaN in a float field)."""


def _plan(figures: Sequence[Figure], message_type: type) -> list[tuple[Figure, str, str,
                                                                        Callable]]:
    """Return (figure, submessage or '', field, coerce) for each figure naming a field."""
    types = dict(message_type.get_fields_and_field_types())
    types.update({f'{name}.{sub}': kind
                  for name in ('interval_wall', 'interval_sim') if name in types
                  for sub, kind in IntervalStats.get_fields_and_field_types().items()})
    plan = []
    for figure in figures:
        if figure.field is None:
            continue
        kind = types[figure.field]
        coerce = _COERCE.get(kind, int)
        outer, _, inner = figure.field.rpartition('.')
        plan.append((figure, outer, inner, coerce))
    return plan


def _fields(plan: list[tuple[Figure, str, str, Callable]], snapshot: Snapshot, part: Any
            ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Return the fields the table fills: top-level and per submessage (interval_wall, ...)."""
    fields: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for figure, outer, inner, coerce in plan:
        value = (figure.message or figure.get)(snapshot, part)
        if figure.field_scale != 1.0 and value is not None:
            value = value / figure.field_scale
        (nested.setdefault(outer, {}) if outer else fields)[inner] = coerce(value)
    return fields, nested


_TOPIC_PLAN = _plan(figures.TOPIC + figures.RUN_TOPIC, TopicStats)
_CLOCK_PLAN = _plan(figures.CLOCK, ClockStats)
_HOST_PLAN = _plan(figures.HOST, HostStats)


@dataclass(frozen=True)
class _ReportTime:
    """What a topic's figures read of their snapshot: the report's time, the arrival source."""

    wall_ns: int
    arrival_timestamp: str


def topic_stats(topic: TopicSnapshot, wall_ns: int, arrival_source: str,
                stamp_header: Header | None = None) -> TopicStats:
    """Convert one monitored topic (it has a report) reported at ``wall_ns``.

    Every field a figure of ``TOPIC`` or ``RUN_TOPIC`` names holds that figure's value;
    the rest is set here. ``stamp_header``: the header it carries (a new one stamped
    ``wall_ns`` by default).
    """
    snapshot: Any = _ReportTime(wall_ns, arrival_source)
    report = topic.report
    assert report is not None, 'only topics with a report have stats'
    fields, nested = _fields(_TOPIC_PLAN, snapshot, topic)
    return TopicStats(
        header=header(wall_ns) if stamp_header is None else stamp_header,
        name=report.name,
        level=int(topic.level),
        status=topic.reason,
        loss_known=report.loss_known,
        loss_note=report.loss_note,
        interval_wall=IntervalStats(clock='wall', max_at_s=to_s(report.interval_wall.max_at_ns),
                                    **nested['interval_wall']),
        interval_sim=IntervalStats(clock='sim',
                                   over_wall_budget=report.interval_sim.over_wall_budget,
                                   **nested['interval_sim']),
        **fields,
    )


def clock_stats(snapshot: Snapshot, clock: ClockSnapshot) -> ClockStats:
    """Convert the /clock part: the ``CLOCK`` figures' fields, and the rest set here."""
    report = clock.report
    fields, _ = _fields(_CLOCK_PLAN, snapshot, clock)
    return ClockStats(
        header=header(snapshot.wall_ns),
        level=int(clock.level),
        status=clock.reason,
        receiving=report.messages > 0,
        rtf_bin_min_at_s=to_s(report.rtf_bin_min_at_ns),
        max_wall_gap_at_s=to_s(report.max_wall_gap_at_ns),
        **fields,
    )


def host_stats(snapshot: Snapshot, host: HostSnapshot) -> HostStats:
    """Convert the host part: the ``HOST`` figures' fields, and the rest set here."""
    fields, _ = _fields(_HOST_PLAN, snapshot, host)
    return HostStats(cgroup_available=host.report.cgroup_available, **fields)


def monitor_stats(snapshot: Snapshot, topics: list[TopicStats] | None = None,
                  stamp_header: Header | None = None) -> MonitorStats:
    """Bundle one report: every topic with a report, the clock, the host.

    Its spans are the widest of its parts. Topics whose configuration is invalid have no
    figures and show only in ``/diagnostics``. ``topics`` and ``stamp_header``: the topics'
    messages and their header when the caller kept them (``stats_output.TopicStatsCache``).
    """
    clock = clock_stats(snapshot, snapshot.clock)
    if stamp_header is None:
        stamp_header = header(snapshot.wall_ns)
    if topics is None:
        topics = [topic_stats(t, snapshot.wall_ns, snapshot.arrival_timestamp)
                  for t in snapshot.topics if t.report is not None]
    return MonitorStats(
        header=stamp_header,
        window_wall_s=_widest([clock.window_wall_s] + [t.window_wall_s for t in topics]),
        window_sim_s=_widest([clock.window_sim_s] + [t.window_sim_s for t in topics]),
        clock=clock,
        topics=topics,
        host=host_stats(snapshot, snapshot.host),
    )


def _widest(spans: list[float]) -> float:
    return max((s for s in spans if not math.isnan(s)), default=0.0)
