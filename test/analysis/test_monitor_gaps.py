"""The monitor's own gaps are never the producer's figures (#47).

Synthetic integer-ns producers whose truth is known by construction: a clean 100 Hz timer
stamped with its cycle start, numbered 1, 2, 3, ...; the monitor stops receiving it for a
while (re-subscribing, refused) and its own reader queue drops messages between two takes.
"""

import numpy as np
import pytest

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.cycles import CycleAnalyzer
from ros2_deadline_monitor.analysis.monitor_gaps import GAPS_KEPT, MonitorGaps
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.analysis.whole_run import WholeRun

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S
"""Unix-scale wall times, as the middleware gives them."""
PERIOD = 10 * MS
DELIVERY = 200_000
GAP_FROM, GAP_TO = 300, 771
"""Cycles ``GAP_FROM + 1 .. GAP_TO - 1`` (seq) are published while the monitor does not listen."""


def analyzer(**kwargs):
    kwargs.setdefault('period_ns', PERIOD)
    return CycleAnalyzer(TopicConfig(name='a', topic='/a', stamp='start', **kwargs))


def start(seq):
    return OFF + (seq - 1) * PERIOD + (seq % 7) * 30_000


def record(a, seqs):
    for seq in seqs:
        a.record(start(seq) + DELIVERY, start(seq), seq, 64)


@pytest.mark.parametrize('batches', ['one', 'each side'])
def test_a_resubscription_gap_is_no_loss_outage_skip_or_interval(batches):
    # 1,000 cycles; the monitor unsubscribes 1 ms after cycle 300 arrived and subscribes
    # again 1 ms before cycle 771 starts: 470 cycles published meanwhile (4.7 s, far beyond
    # the 20 ms timeout).
    a = analyzer()
    whole_run = WholeRun()
    a.take_rows()  # the whole-run figures take every row the analyzer makes
    gap_from = start(GAP_FROM) + DELIVERY + MS
    gap_to = start(GAP_TO) - MS
    record(a, range(1, GAP_FROM + 1))
    if batches == 'each side':
        a.process(None)
        whole_run.add(a.take_rows() or {'arrival': []}, a.timing)
    a.unmonitored(gap_from, 're-subscribed: reliability downgrade')
    a.monitored(gap_to)
    record(a, range(GAP_TO, 1001))
    a.process(None)
    whole_run.add(a.take_rows() or {'arrival': []}, a.timing)
    r = a.report(start(1000) + S)
    assert r.messages_total == 300 + 230
    assert r.messages_lost_total == 0 and r.lost_by_monitor_total == 0
    assert r.outages_total == 0 and r.outage_total_ns == 0
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0
    assert r.unmonitored_total == 1 and r.unmonitored_ns == gap_to - gap_from
    assert r.unmonitored_messages_total == GAP_TO - GAP_FROM - 1
    assert r.unmonitored_gap == (gap_from, gap_to, 're-subscribed: reliability downgrade')
    # Only the producer's own intervals; none spans the gap.
    run = whole_run.totals()
    assert run.interval_wall.count == 530 - 2
    assert run.interval_wall.max_ns <= PERIOD + 180_000
    assert r.intervals_across_loss_total == 0


def test_without_the_gap_the_same_stream_reads_as_the_producers_loss_and_outage():
    # The control: what the monitor reported before it knew its own gaps.
    a = analyzer()
    record(a, range(1, GAP_FROM + 1))
    record(a, range(GAP_TO, 1001))
    a.process(None)
    r = a.report(start(1000) + S)
    assert r.messages_lost_total == GAP_TO - GAP_FROM - 1
    assert r.unmonitored_total == 0 and r.unmonitored_gap is None


@pytest.mark.parametrize('gap', [False, True])
def test_a_gap_in_a_stream_without_numbers_is_no_outage(gap):
    # No sequence numbers (nothing tells the cycles published meanwhile): without the gap
    # the silence is an outage of 4.7 s; with it, none.
    a = analyzer()
    for seq in [*range(1, GAP_FROM + 1), *range(GAP_TO, 1001)]:
        if seq == GAP_TO and gap:
            a.unmonitored(start(GAP_FROM) + MS, 'why')
            a.monitored(start(GAP_TO) - MS)
        a.record(start(seq) + DELIVERY, start(seq), NO_VALUE, 64)
    a.process(None)
    r = a.report(start(1000) + S)
    assert r.outages_total == (0 if gap else 1)
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0


def test_monitor_gaps_count_the_open_one_up_to_now_and_name_the_latest():
    gaps = MonitorGaps()
    assert (gaps.total(), gaps.total_ns(5 * S), gaps.latest, gaps.ending) == (0, 0, None, False)
    gaps.close(S)  # nothing open: nothing happens
    assert gaps.total() == 0 and not gaps.ending
    gaps.open(2 * S, 'refused')
    gaps.open(3 * S, 'another')  # already open: the first stands
    assert (gaps.total(), gaps.total_ns(5 * S)) == (1, 3 * S)
    assert gaps.latest == (2 * S, None, 'refused')
    gaps.close(6 * S)
    assert (gaps.total(), gaps.total_ns(9 * S)) == (1, 4 * S)
    assert gaps.latest == (2 * S, 6 * S, 'refused')
    assert gaps.ending


def test_a_gap_end_is_ready_once_nothing_before_it_is_held():
    gaps = MonitorGaps()
    for began, ended in ((S, 2 * S), (3 * S, 4 * S)):
        gaps.open(began, 'why')
        gaps.close(ended)
    assert gaps.ready(held_ns=2 * S - 1) == []  # an event before the first end is held
    assert gaps.ready(held_ns=3 * S) == [2 * S]
    assert gaps.ending and gaps.ready(held_ns=None) == [4 * S]
    assert not gaps.ending and gaps.ready(held_ns=None) == []


def test_a_silence_across_an_applied_gap_end_is_no_silence():
    gaps = MonitorGaps()
    arrival = np.array([10, 20, 60, 70], np.int64) * S
    silence = np.array([NO_VALUE, 10 * S, 40 * S, 10 * S], np.int64)
    gaps.open(25 * S, 'why')
    gaps.close(50 * S)
    gaps.not_across(arrival, silence)  # not applied yet: nothing changes
    assert silence[2] == 40 * S
    gaps.ready(held_ns=None)
    gaps.not_across(arrival, silence)
    assert list(silence) == [NO_VALUE, 10 * S, NO_VALUE, 10 * S]


def test_only_the_latest_gap_ends_are_kept():
    gaps = MonitorGaps()
    for i in range(GAPS_KEPT + 3):
        gaps.open(10 * i * S, 'why')
        gaps.close((10 * i + 1) * S)
    gaps.ready(held_ns=None)
    arrival = np.array([0, 2], np.int64) * S  # across the first end, which is no longer kept
    silence = np.array([NO_VALUE, 2 * S], np.int64)
    gaps.not_across(arrival, silence)
    assert silence[1] == 2 * S
    assert gaps.total() == GAPS_KEPT + 3


def test_an_open_gap_counts_up_to_the_report_and_a_second_call_keeps_the_first_why():
    a = analyzer()
    record(a, range(1, 101))
    a.unmonitored(start(100) + MS, 'refused: type changed')
    a.unmonitored(start(150), 'something else')  # already open: the first one stands
    a.process(None)
    now = start(100) + MS + 3 * S
    r = a.report(now)
    assert r.unmonitored_total == 1 and r.unmonitored_ns == 3 * S
    assert r.unmonitored_gap == (start(100) + MS, None, 'refused: type changed')
    a.monitored(start(400) - MS)
    a.monitored(start(500))  # no gap open: nothing happens
    record(a, range(400, 501))
    a.process(None)
    r = a.report(start(500) + S)
    assert r.unmonitored_total == 1 and r.unmonitored_ns == start(400) - start(100) - 2 * MS
    assert r.unmonitored_messages_total == 400 - 100 - 1
    assert r.messages_lost_total == 0 and r.outages_total == 0


def test_no_period_is_learned_across_a_gap():
    # The gap comes while the period is learned (after 10 cycles): the interval across it
    # (4.7 s) is no sample of the producer's rhythm, the period is learned exactly.
    a = analyzer(period_ns=None)
    record(a, range(1, 11))
    a.unmonitored(start(10) + MS, 're-subscribed: QoS deadline changed')
    a.monitored(start(481) - MS)
    record(a, range(481, 600))
    a.process(None)
    r = a.report(start(600) + S)
    assert r.period_learned and r.period_ns == PERIOD
    assert r.skipped_periods_total == 0 and r.messages_lost_total == 0
    assert r.unlearned_total == 0 and r.outages_total == 0


def test_a_gap_of_a_topic_held_for_clock_ends_after_the_events_before_it():
    # Events recorded before and after a gap, processed in two calls whose first holds
    # nothing back: the gap applies between them, wherever the call falls.
    a = analyzer()
    record(a, range(1, 51))
    a.unmonitored(start(50) + MS, 'why')
    a.monitored(start(81) - MS)
    record(a, range(81, 101))
    a.process(None)
    record(a, range(101, 201))
    a.process(None)
    r = a.report(start(200) + S)
    assert r.messages_total == 50 + 120
    assert r.messages_lost_total == 0 and r.skipped_periods_total == 0
    assert r.unmonitored_messages_total == 30


def test_drops_of_the_monitors_own_queue_are_its_loss_not_the_producers():
    # Seq 1..100, then the queue dropped 101..200 (the monitor says so), then 201..300;
    # the producer itself lost 301..310.
    a = analyzer()
    record(a, range(1, 101))
    a.process(None)
    a.dropped_by_monitor(201, 100)
    record(a, range(201, 301))
    record(a, range(311, 401))
    a.process(None)
    r = a.report(start(400) + MS)
    assert r.lost_by_monitor_total == 100
    assert r.messages_lost_total == 10
    assert r.messages_lost == 10  # the window: 1..400 lie within it
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0


def test_the_monitor_counts_no_more_of_its_own_drops_than_the_gap_holds():
    # The monitor says 100 before seq 201; the numbers skip only 60 (seq 141..200 missing):
    # the producer lost none of them, the monitor 60.
    a = analyzer()
    record(a, range(1, 141))
    a.dropped_by_monitor(201, 100)
    record(a, range(201, 301))
    a.process(None)
    r = a.report(start(300) + MS)
    assert r.lost_by_monitor_total == 60 and r.messages_lost_total == 0


def test_the_session_names_the_gap_in_the_topics_status():
    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    s.configure({'a': TopicConfig(name='a', topic='/a', stamp='start', period_ns=PERIOD)})
    s.topic_status('a', TopicState.RECEIVING, writers=1)
    for seq in range(1, GAP_FROM + 1):
        s.message('a', start(seq) + DELIVERY, start(seq), seq, 64)
    s.unmonitored('a', OFF + 3 * S, 're-subscribed: reliability downgrade')
    snapshot = s.snapshot(OFF + 4 * S)
    (topic,) = snapshot.topics
    assert 'not monitored since 3.0 s after start (re-subscribed: reliability downgrade)' \
        in topic.reason
    s.monitored('a', start(GAP_TO) - MS)
    for seq in range(GAP_TO, 1001):
        s.message('a', start(seq) + DELIVERY, start(seq), seq, 64)
    snapshot = s.snapshot(start(1000) + 2 * MS)
    (topic,) = snapshot.topics
    report = topic.report
    assert report.messages_lost_total == 0 and report.outages_total == 0
    assert report.skipped_periods_total == 0
    note = ("not monitored from 3.0 s to 7.7 s after start (re-subscribed: reliability "
            "downgrade): 1 gap(s) of the monitor's own, 4.7 s in all, 470 messages published "
            'meanwhile, left out of intervals, misses, skipped periods, outages and loss')
    assert note in topic.notes and note in topic.reason
