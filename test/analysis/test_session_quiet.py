"""Topics without any message: their snapshot is reused, and equals one computed afresh."""

from ros2_deadline_monitor.analysis.config import AnalysisConfig, Thresholds, TopicConfig
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.outputs.reporter import Reporter

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S


def configured(grace_ns: int = 0) -> Session:
    s = Session(AnalysisConfig(thresholds=Thresholds(grace_ns=grace_ns)), use_sim_time=False,
                start_wall_ns=OFF)
    s.configure({f't{i}': TopicConfig(name=f't{i}', topic=f'/t{i}', period_ns=10 * MS)
                 for i in range(4)})
    return s


STEPS = [
    # (topic, what happens), each followed by a report one second later
    ('t0', lambda s: s.topic_status('t0', TopicState.RECEIVING, type_name='std_msgs/msg/Header',
                                     publishers=('/p',), writers=1)),
    ('t1', lambda s: s.topic_status('t1', TopicState.ERROR, 'publishers disagree: A, B')),
    ('t2', lambda s: s.qos_deadline_missed('t2', 3)),
    ('t3', lambda s: s.message('t3', OFF + 3 * S + 5 * MS)),
    ('t1', lambda s: s.topic_status('t1', TopicState.WAITING, 'waiting for a publisher on /t1')),
]


def test_a_quiet_topic_keeps_its_snapshot_until_something_about_it_changes() -> None:
    s = configured()
    reporter = Reporter(s)
    first = reporter.snapshot(OFF)
    again = reporter.snapshot(OFF + S)
    assert all(a is b for a, b in zip(first.topics, again.topics, strict=True))
    previous, before = again, None
    for k, (changed, event) in enumerate(STEPS):
        event(s)
        snap = reporter.snapshot(OFF + (k + 2) * S)
        for old, new in zip(previous.topics, snap.topics, strict=True):
            if new.topic_id == changed:
                assert new is not old
            elif new.report.messages_total == 0 and new.topic_id != before:
                # (a topic that appeared is reported afresh once more: its grace starts)
                assert new is old, new.topic_id
        previous, before = snap, changed


def test_reused_snapshots_equal_fresh_ones() -> None:
    every_second, once = configured(), configured()
    reporter = Reporter(every_second)
    for k, (_, event) in enumerate(STEPS):
        event(every_second)
        event(once)
        for t in range(5):
            reporter.snapshot(OFF + k * S + t * S // 5)
    end = OFF + len(STEPS) * S
    reused = reporter.snapshot(end).topics
    fresh = once.snapshot(end).topics
    assert reused == fresh
    by_id = {t.topic_id: t for t in reused}
    assert by_id['t2'].report.qos_deadline_events_total == 3
    assert by_id['t1'].level == Level.STALE and by_id['t3'].report.messages_total == 1


def test_a_running_grace_is_never_frozen() -> None:
    s = configured(grace_ns=2 * S)
    reporter = Reporter(s)
    s.topic_status('t0', TopicState.WAITING, 'waiting for a publisher on /t0')
    assert reporter.snapshot(OFF + S).topics[0].level == Level.STALE
    late = reporter.snapshot(OFF + 3 * S).topics[0]
    assert late.level == Level.ERROR and 'no publisher on /t0 for 3 s' in late.reason
    later = reporter.snapshot(OFF + 4 * S).topics[0]
    assert later is not late and 'for 4 s' in later.reason
