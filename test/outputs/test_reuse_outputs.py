"""The report messages with ``reuse_reports`` on and off, report by report (no middleware).

On: the reporter keeps standing snapshots and ``StatsOutput`` and the status cache reuse the
messages, statuses and bytes made from them. Off: everything afresh, published as objects. What
the published ``MonitorStats`` and ``/diagnostics`` say must agree (``outputs/reporter.py``):
every topic's level and status text at every report, a refreshed topic's whole ``TopicStats``
and status, and the whole final report.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.serialization import deserialize_message

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.msg import MonitorStats
from ros2_deadline_monitor.outputs import diagnostics
from ros2_deadline_monitor.outputs.reporter import Reporter
from ros2_deadline_monitor.outputs.reuse import Reuse
from ros2_deadline_monitor.outputs.serialized import same
from ros2_deadline_monitor.outputs.stats_output import StatsOutput

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S
SLOW = 20
REPORTS = 40


class Outputs(NamedTuple):
    """What the node keeps between reports: its ``StatsOutput``, its diagnostics' cache."""

    stats: StatsOutput
    statuses: Reuse | None


def configured(reuse: bool) -> tuple[Session, Reporter, Outputs]:
    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    topics = {f's{i}': TopicConfig(name=f's{i}', topic=f'/s{i}', period_ns=S)
              for i in range(SLOW)}
    topics['fast'] = TopicConfig(name='fast', topic='/fast', period_ns=10 * MS)
    topics['quiet'] = TopicConfig(name='quiet', topic='/quiet', period_ns=S)
    s.configure(topics)
    for topic_id in topics:
        if topic_id != 'quiet':
            s.topic_status(topic_id, TopicState.RECEIVING, type_name='std_msgs/msg/Header',
                           writers=1)
    outputs = Outputs(StatsOutput(reuse), Reuse() if reuse else None)
    assert (outputs.stats.assembler is not None) == reuse
    return s, Reporter(s, reuse_reports=reuse), outputs


def feed(s: Session, k: int) -> None:
    for i in range(SLOW):
        late = 700 * MS if i == 2 and k == 30 else 0
        s.message(f's{i}', OFF + k * S + (i + 1) * MS + late, seq=k + 1)
    for j in range(100):
        s.message('fast', OFF + k * S + j * 10 * MS + 50 * 1000, seq=k * 100 + j + 1)


def published(outputs: Outputs, snapshot: Any) -> tuple[MonitorStats, DiagnosticArray]:
    """Return the report's two messages as a subscriber reads them."""
    stats = outputs.stats.payload(snapshot)
    array = DiagnosticArray(status=diagnostics.statuses(snapshot, cache=outputs.statuses))
    array.header.stamp.sec = 1
    if outputs.stats.assembler is not None:
        array = deserialize_message(outputs.stats.assembler.payload(array), DiagnosticArray)
    if isinstance(stats, bytes):
        stats = deserialize_message(stats, MonitorStats)
    return stats, array


def test_published_reports_agree_with_reuse_on_and_off() -> None:
    on_session, on, on_outputs = configured(True)
    off_session, off, off_outputs = configured(False)
    previous: dict[str, Any] = {}
    kept = 0
    for k in range(REPORTS):
        feed(on_session, k)
        feed(off_session, k)
        now, final = OFF + (k + 1) * S, k == REPORTS - 1
        with_reuse, fresh = on.snapshot(now, final=final), off.snapshot(now, final=final)
        stats_on, array_on = published(on_outputs, with_reuse)
        stats_off, array_off = published(off_outputs, fresh)
        for topic, a, b in zip(with_reuse.topics, stats_on.topics, stats_off.topics,
                               strict=True):
            assert (a.name, a.level, a.status) == (b.name, b.level, b.status), (k, a.name)
            if topic is not previous.get(topic.topic_id):  # refreshed
                assert same(a, b), (k, a.name)
            else:
                kept += 1
        for a, b in zip(array_on.status, array_off.status, strict=True):
            assert (a.name, a.level, a.message) == (b.name, b.level, b.message), k
        previous = {topic.topic_id: topic for topic in with_reuse.topics}
    assert kept > SLOW * REPORTS // 2, kept  # reuse did happen
    # The final report: every topic refreshed, the same messages field by field (rclpy's
    # own bytes of one message differ from call to call in their alignment padding).
    assert same(stats_on, stats_off) and same(array_on, array_off)
