"""Reused TopicStats and statuses of unchanged topics: byte for byte what a fresh build gives."""

from __future__ import annotations

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.outputs import conversions, diagnostics
from ros2_deadline_monitor.outputs.reporter import Reporter
from ros2_deadline_monitor.outputs.reuse import Reuse
from ros2_deadline_monitor.outputs.serialized import same
from ros2_deadline_monitor.outputs.stats_output import TopicStatsCache

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S


def test_cached_outputs_equal_fresh_ones_report_after_report() -> None:
    from diagnostic_msgs.msg import DiagnosticArray

    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    reporter = Reporter(s)
    s.configure({f't{i}': TopicConfig(name=f't{i}', topic=f'/t{i}', period_ns=10 * MS)
                 for i in range(5)})
    s.topic_status('t4', TopicState.RECEIVING, type_name='std_msgs/msg/Header', writers=1)
    stats_cache, status_cache = TopicStatsCache(), Reuse()
    reused = 0
    previous = None
    for k in range(6):
        for i in range(100):  # t4 is busy, the others wait for a publisher
            s.message('t4', OFF + k * S + i * 10 * MS, seq=k * 100 + i + 1)
        if k == 3:
            s.topic_status('t1', TopicState.ERROR, 'publishers disagree: A, B')
        snap = reporter.snapshot(OFF + (k + 1) * S)
        cached = conversions.monitor_stats(snap, stats_cache.messages(snap), stats_cache.header)
        fresh = conversions.monitor_stats(snap)
        assert same(cached, fresh)
        with_cache = diagnostics.statuses(snap, cache=status_cache)
        without = diagnostics.statuses(snap)
        assert same(DiagnosticArray(status=with_cache), DiagnosticArray(status=without))
        if previous is not None:
            reused += sum(a is b for a, b in zip(previous, with_cache[:5], strict=True))
            assert with_cache[4] is not previous[4]  # the busy topic is built anew
        previous = with_cache[:5]
    assert reused == 5 * 4 - 1  # 4 quiet topics in 5 reports; t1 built anew once (its error)


def test_a_cached_status_follows_its_expectations_while_the_topic_stands() -> None:
    from ros2_deadline_monitor.configuration.expectations import Outcome, Verdict

    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    reporter = Reporter(s)
    s.configure({f't{i}': TopicConfig(name=f't{i}', topic=f'/t{i}') for i in range(3)})
    cache: Reuse = Reuse()

    def verdict(passed: bool) -> Verdict:
        return Verdict((Outcome('t1', '/t1', 'max_misses', 'deadline misses', 'max', 0.0 if
                                passed else 3.0, 0.0, '', passed),))
    for k, passed in enumerate((True, True, False, False)):
        snap = reporter.snapshot(OFF + (k + 1) * S)  # nobody publishes: every snapshot stands
        with_cache = diagnostics.statuses(snap, verdict=verdict(passed), cache=cache)
        without = diagnostics.statuses(snap, verdict=verdict(passed))
        assert same(with_cache, without)
        failed = [kv.value for kv in with_cache[1].values if kv.key == 'expectations']
        assert failed == ['1 held, 0 failed' if passed else '0 held, 1 failed']
