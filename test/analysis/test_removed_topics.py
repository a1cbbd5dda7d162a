"""A topic removed at run time keeps its figures up to its removal (issue 56).

Hand-built integer-ns events on the wall clock: a 100 Hz timer whose messages carry their
cycle start, with a stall (skipped periods, a miss) and sequence gaps (lost messages). The
frozen figures of the removed topic must equal those of a run that ended at the removal.
"""

from __future__ import annotations

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.session import Session
from ros2_deadline_monitor.analysis.snapshot import REMOVED_KEPT

MS = 1_000_000
S = 1_000_000_000
START = 1_700_000_000 * S
PERIOD = 10 * MS
A = TopicConfig(name='a', topic='/a', period_ns=PERIOD, stamp='start')
B = TopicConfig(name='b', topic='/b', period_ns=PERIOD, stamp='start')
SENT = 100
GONE = (30, 31, 70)
"""Sequence numbers sent but never delivered: lost."""
STALL = 50
"""The cycle that runs 25 ms: a miss, and the timer skips the next two periods."""


def session() -> Session:
    return Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=START)


def feed(s: Session, topic_id: str, first_ns: int) -> int:
    """Feed the timer's messages from ``first_ns`` on; return the last arrival."""
    arrival, seq, tick = first_ns, 0, 0
    while seq < SENT:
        if tick in (STALL + 1, STALL + 2):
            tick += 1
            continue
        cycle_start = first_ns + tick * PERIOD
        arrival = cycle_start + (25 * MS if tick == STALL else 1 * MS)
        seq, tick = seq + 1, tick + 1
        if seq not in GONE:
            s.message(topic_id, arrival, cycle_start, seq=seq, size_bytes=16)
    return arrival


def test_a_removed_topic_keeps_its_figures_up_to_its_removal_marked_removed():
    s, reference = session(), session()
    s.configure({'a': A, 'b': B})
    reference.configure({'b': B})
    last = feed(s, 'b', START + S)
    feed(reference, 'b', START + S)
    s.snapshot(START + S + 500 * MS)  # a report in between changes nothing
    removal = last + 5 * MS
    changes = s.configure({'a': A}, now_wall_ns=removal)
    assert changes.removed == ('b',)
    end = removal + 10 * S
    final = s.snapshot(end, final=True)
    assert [t.topic_id for t in final.topics] == ['a']  # live outputs: monitored topics only
    (removed,) = final.removed
    assert removed.removed_wall_ns == removal and final.removed_beyond == 0
    frozen, expected = removed.topic, reference.snapshot(removal, final=True).topics[0]
    r, e = frozen.report, expected.report
    assert r.messages_total == SENT - len(GONE)
    assert r.messages_lost_total == len(GONE)
    assert (r.messages_total, r.messages_lost_total, r.deadline_misses_total,
            r.skipped_periods_total) == (
        e.messages_total, e.messages_lost_total, e.deadline_misses_total,
        e.skipped_periods_total)
    assert r.skipped_periods_total == 2 and r.deadline_misses_total >= 1  # the stall
    assert frozen.run == expected.run
    assert frozen.run.cycles == e.messages_total
    assert 'removed from the configuration' in frozen.reason
    # Later reports never change it.
    assert s.snapshot(end + S, final=True).removed == final.removed


def test_a_topic_added_again_starts_afresh_and_its_removal_stays_a_record_of_its_own():
    s = session()
    s.configure({'b': B})
    last = feed(s, 'b', START + S)
    s.configure({}, now_wall_ns=last + MS)
    s.configure({'b': B}, now_wall_ns=last + 2 * MS)
    again = feed(s, 'b', last + S)
    snapshot = s.snapshot(again + S, final=True)
    (first,) = snapshot.removed
    assert first.topic.report.messages_total == SENT - len(GONE)
    (current,) = snapshot.topics
    assert current.report.messages_total == SENT - len(GONE)  # counted anew, not 2x
    assert current.run.first_arrival_ns > first.removed_wall_ns


def test_a_name_change_keeps_the_old_name_figures_and_without_a_time_nothing_is_kept():
    s = session()
    s.configure({'b': B})
    last = feed(s, 'b', START + S)
    s.configure({'b': B.with_changes(topic='/c')}, now_wall_ns=last + MS)
    (kept,) = s.snapshot(last + S).removed
    assert kept.topic.topic == '/b' and kept.topic.report.messages_total == SENT - len(GONE)
    s.configure({}, now_wall_ns=None)  # a bag replay's set-up: no run-time removal
    assert len(s.snapshot(last + 2 * S).removed) == 1


def test_removed_topics_are_bounded_and_the_rest_counted():
    s = session()
    for i in range(REMOVED_KEPT + 3):
        s.configure({f't{i}': TopicConfig(name=f't{i}', topic=f'/t{i}', period_ns=PERIOD)},
                    now_wall_ns=START + i * MS)
    s.configure({}, now_wall_ns=START + S)
    snapshot = s.snapshot(START + 2 * S, final=True)
    assert len(snapshot.removed) == REMOVED_KEPT
    assert snapshot.removed_beyond == REMOVED_KEPT + 3 - REMOVED_KEPT
    assert [r.topic.topic_id for r in snapshot.removed[:2]] == ['t0', 't1']
