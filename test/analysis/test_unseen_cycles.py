"""Cycles the monitor never saw, or saw without a usable start, are no skipped periods (#47).

Synthetic integer-ns producers whose truth is known by construction: a clean timer whose
messages are partly lost in transit, stamps going back, bursts sharing one stamp.
"""

import numpy as np

from ros2_deadline_monitor.analysis.config import TopicConfig
from ros2_deadline_monitor.analysis.cycles import CycleAnalyzer
from ros2_deadline_monitor.analysis.ring import NO_VALUE

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S
"""Unix-scale wall times, as the middleware gives them."""
DELIVERY = 200_000


def analyzer(rule='response', period_ns=10 * MS, **kwargs):
    return CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=period_ns, stamp='start',
                                     rule=rule, **kwargs))


def test_a_lossy_reader_on_a_clean_timer_counts_lost_not_skipped():
    # 100 Hz, stamped with its cycle start, 2 % late at most; the reader keeps 10 of every
    # 50 (a queue of 10 taken every 0.5 s): 1,000 cycles, 800 lost.
    for rule in ('response', 'interval'):
        a = analyzer(rule, jitter_tolerance_ns=MS // 2)
        for i in range(1000):
            start = OFF + i * 10 * MS + (i % 7) * 30_000
            if i % 50 >= 40 or i == 0:
                a.record(start + DELIVERY, start, i + 1, 64)
        a.process(None)
        r = a.report(OFF + 10 * S)
        assert r.messages_total == 201 and r.messages_lost_total == 799
        assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0, rule
        # Only the producer's own intervals: 10 ms apart, within its jitter.
        assert r.interval_wall.max_ns <= 10 * MS + 180_000
        assert r.interval_wall.min_ns >= 10 * MS - 180_000
        assert r.intervals_across_loss_total == 20
        assert r.interval_wall.count == 201 - 1 - 20
        assert r.lateness_max_ns == 6 * 30_000


def test_a_late_cycle_after_a_loss_still_skips():
    # Cycles 1..3 on time, 4 and 5 lost, cycle 6 starts 13 ms late: the slot of 6 passed
    # and the next, so one period was skipped on top of the two lost cycles.
    a = analyzer()
    starts = [OFF, OFF + 10 * MS, OFF + 20 * MS, OFF + 50 * MS + 13 * MS, OFF + 70 * MS]
    for seq, start in zip([1, 2, 3, 6, 7], starts, strict=True):
        a.record(start + DELIVERY, start, seq, 8)
    a.process(None)
    r = a.report(OFF + S)
    assert r.messages_lost_total == 2
    assert r.skipped_periods_total == 1
    assert r.intervals_across_loss_total == 1 and r.interval_wall.max_ns == 10 * MS


def test_stamps_going_back_every_tenth_message_are_not_skipped_periods():
    # A clean 50 Hz producer whose every 10th stamp reads 1 s early: 400 slots, no skip.
    a = analyzer(period_ns=20 * MS)
    for i in range(400):
        start = OFF + i * 20 * MS
        a.record(start + DELIVERY, start - (S if i % 10 == 9 else 0), i + 1, 8)
    a.process(None)
    r = a.report(OFF + 9 * S)
    assert r.messages_total == 400 and r.messages_lost_total == 0
    assert r.stamps_back_total == 40
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0
    assert r.interval_wall.max_ns == 20 * MS and r.interval_wall.min_ns == 20 * MS
    assert r.intervals_across_loss_total == 39  # the last one back has no cycle after it


def test_stamps_stepping_back_for_good_reanchor_once():
    # The producer's clock is stepped back 1 s after cycle 100: one stamp counted as going
    # back, the grid re-anchors on the next, no skipped period, no negative interval (the
    # interval rule: by the stamps, each cycle now ends a second after it started).
    a = analyzer('interval')
    for i in range(200):
        start = OFF + i * 10 * MS - (S if i >= 100 else 0)
        a.record(OFF + i * 10 * MS + DELIVERY, start, i + 1, 8)
    a.process(None)
    r = a.report(OFF + 3 * S)
    assert r.stamps_back_total == 1
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0
    assert r.interval_wall.min_ns == 10 * MS and r.interval_wall.max_ns == 10 * MS
    assert r.intervals_across_loss_total == 1


def test_bursts_sharing_one_stamp_are_not_skipped_periods():
    # 10 messages share one stamp every 100 ms, period 10 ms: several cycles share a slot.
    a = analyzer()
    seq = 0
    for burst in range(66):
        stamp = OFF + burst * 100 * MS
        for k in range(10):
            seq += 1
            a.record(stamp + DELIVERY + k * 10_000, stamp, seq, 8)
    a.process(None)
    r = a.report(OFF + 7 * S)
    assert r.messages_total == 660
    assert r.stamps_shared_total == 66 * 9 and r.stamps_back_total == 0
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0


def test_unplaced_cycles_carry_over_to_the_next_batch():
    # The stamp going back is the last event of one batch; its cycle still takes its slot.
    a = analyzer()
    for i in range(30):
        start = OFF + i * 10 * MS
        a.record(start + DELIVERY, start - (S if i == 14 else 0), i + 1, 8)
        if i == 14:
            a.process(None)
    a.process(None)
    r = a.report(OFF + S)
    assert r.stamps_back_total == 1 and r.skipped_periods_total == 0
    assert r.intervals_across_loss_total == 1


def test_arrival_timing_has_no_loss_exclusion_without_sequence_numbers():
    # No numbers (a bag): nothing is known lost, the long interval stays a skipped period.
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS))
    for i in [0, 1, 2, 5, 6]:
        a.record(OFF + i * 10 * MS, NO_VALUE, NO_VALUE, 8)
    a.process(None)
    r = a.report(OFF + S)
    assert r.skipped_periods_total == 2 and r.intervals_across_loss_total == 0
    assert np.isclose(r.interval_wall.max_ns, 30 * MS)


def test_ages_only_for_stamps_on_a_plausible_clock():
    # Arrival timing (stamp: none) on a wall topic: a stamp in 2038, one an hour ahead, one
    # 0.5 s ahead (skew between hosts: kept), the rest 3 ms old.
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS, stamp='none'))
    y2038 = 2_147_483_000 * S
    for i in range(50):
        arrival = OFF + i * 10 * MS
        stamp = {10: y2038, 20: arrival + 3600 * S, 30: arrival + 500 * MS}.get(
            i, arrival - 3 * MS)
        a.record(arrival, stamp, i + 1, 8)
    a.process(None)
    r = a.report(OFF + S)
    assert r.age_unknown_total == 2
    assert r.age_max_ns == 3 * MS
    assert r.age_mean_ns == (47 * 3 * MS - 500 * MS) / 48
    assert r.skipped_periods_total == 0  # arrival timing: the stamps place no cycle


def _taken(analyzer):
    """Cycles the analyzer made since the last call (the rows it hands the session)."""
    rows = analyzer.take_rows()
    return 0 if rows is None else len(rows['arrival'])


def _ten_khz(n, batched_until):
    """Yield ``(arrival, start, seq)`` of a 10 kHz producer (cycle k starts at k x 100 µs).

    Until cycle ``batched_until`` its messages arrive in batches of 10 every millisecond,
    2 µs apart (delivery batching).
    """
    for k in range(n):
        start = OFF + k * 100_000
        arrival = (OFF + (k // 10 + 1) * MS + (k % 10) * 2_000 if k < batched_until
                   else start + 50_000)
        yield arrival, start, k + 1


def test_a_burst_like_first_window_is_not_learned_from():
    # Arrival timing: the first window's intervals are 2 µs within a batch; a period learned
    # from them would call nine slots in ten skipped. Rejected; learned once regular.
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', stamp='none'))
    a.take_rows()
    cycles = 0
    for arrival, _, seq in _ten_khz(2000, batched_until=200):
        a.record(arrival, NO_VALUE, seq, 8)
        if seq % 50 == 0:
            a.process(None)
            cycles += _taken(a)
    a.process(None)
    cycles += _taken(a)
    r = a.report(OFF + S)
    assert r.period_learned and r.period_ns == 100_000
    assert r.unlearned_total > 0 and r.learn_note == ''
    assert r.skipped_periods_total == 0
    # Every message has its row (its interval counts); the unlearned ones, timed as events
    # only, are counted.
    assert r.messages_total == 2000 == cycles
    assert r.kind == 'timer'  # an event topic only until a window kept a timer's rhythm


def test_a_topic_batched_for_good_says_why_its_period_is_unknown():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', stamp='none'))
    for arrival, _, seq in _ten_khz(1000, batched_until=1000):
        a.record(arrival, NO_VALUE, seq, 8)
        if seq % 50 == 0:
            a.process(None)
    r = a.report(OFF + S)
    assert r.period_ns is None and r.skipped_periods_total == 0
    assert r.messages_total == 1000 and r.unlearned_total >= 950
    assert 'intervals came in bursts' in r.learn_note


def test_stamps_learn_the_period_of_a_batched_topic():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', stamp='start'))
    a.take_rows()
    cycles = 0
    for arrival, start, seq in _ten_khz(1000, batched_until=1000):
        a.record(arrival, start, seq, 8)
        if seq % 50 == 0:
            a.process(None)
            cycles += _taken(a)
    r = a.report(OFF + S)
    assert r.period_ns == 100_000 and r.unlearned_total == 0
    assert r.skipped_periods_total == 0 and r.messages_total == cycles


def test_a_pause_with_a_loss_before_it_is_still_an_outage():
    # 100 Hz, the message before a 5 s pause lost: 2 cycles in 5 s is a silence (timeout
    # 1 s), re-anchored as an outage, never 499 skipped periods.
    a = analyzer()
    starts = [OFF + i * 10 * MS for i in range(100)] + [OFF + 5 * S + i * 10 * MS
                                                         for i in range(100)]
    for seq, start in enumerate(starts, 1):
        if seq != 100:
            a.record(start + DELIVERY, start, seq, 8)
    a.process(None)
    r = a.report(OFF + 7 * S)
    assert r.messages_lost_total == 1
    assert r.outages_total == 1 and r.skipped_periods_total == 0
