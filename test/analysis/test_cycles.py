import numpy as np
import pytest

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.cycles import (
    count_cycles,
    CycleAnalyzer,
    MALFORMED,
)
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer

MS = 1_000_000
S = 1_000_000_000
DELIVERY = 150_000


def feed(analyzer, starts, ends, *, stamp=True, seq=True):
    for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        analyzer.record(e + DELIVERY, s if stamp else NO_VALUE, i + 1 if seq else NO_VALUE, 64)


def report(analyzer, now, clock=None, **kwargs):
    """Process what is pending (as the session does before a report), then report."""
    analyzer.process(clock)
    return analyzer.report(now, **kwargs)


def test_reference_scenario_counts(timer_cycles):
    starts, ends = timer_cycles()
    counts = count_cycles(starts, ends, 10 * MS)
    assert (counts.misses, counts.skipped) == (20, 10)
    assert counts.cycles + counts.skipped == counts.grid_periods
    a = CycleAnalyzer(TopicConfig(name='cmd', topic='/cmd', period_ns=10 * MS, stamp='start'))
    feed(a, starts, ends)
    r = report(a, int(ends[-1]) + MS)
    assert r.rule == 'response' and r.start_source == 'header'
    assert (r.deadline_misses_total, r.skipped_periods_total) == (20, 10)
    assert r.messages_total == len(starts) and r.messages_lost_total == 0
    assert r.interval_wall.max_ns == pytest.approx(22 * MS, abs=0.2 * MS)
    assert r.interval_wall.min_ns == pytest.approx(8 * MS, abs=0.2 * MS)
    assert r.interval_wall.mean_ns == pytest.approx(10.2 * MS, abs=0.05 * MS)
    assert r.response_max_ns == 22 * MS + DELIVERY
    assert r.lateness_max_ns == 12 * MS


def test_interval_rule_counts_intervals_over_period_plus_jitter(timer_cycles):
    starts, ends = timer_cycles()
    a = CycleAnalyzer(TopicConfig(name='cmd', topic='/cmd', period_ns=10 * MS, stamp='start',
                                  rule='interval', jitter_tolerance_ns=MS // 2))
    feed(a, starts, ends)
    r = report(a, int(ends[-1]))
    expected = int((np.diff(starts) > 10.5 * MS).sum())
    assert r.deadline_misses_total == expected == 10
    assert r.skipped_periods_total == 10


def test_baseline_has_no_misses_or_skips(timer_cycles):
    starts, ends = timer_cycles(stall_every=0)
    a = CycleAnalyzer(TopicConfig(name='cmd', topic='/cmd', stamp='start'))
    feed(a, starts, ends)
    r = report(a, int(ends[-1]))
    assert (r.deadline_misses_total, r.skipped_periods_total) == (0, 0)
    assert r.period_learned and r.period_ns == 10 * MS
    assert count_cycles(starts, ends, 10 * MS)[1:3] == (0, 0)


def test_a_1_khz_topic_whose_first_stamp_came_late_counts_no_phantom_skips():
    # Learned 2 µs short (1002 Hz from the span), the grid would count a skip every 500 cycles.
    starts = 1_700_000_000 * S + np.arange(5000, dtype=np.int64) * MS
    starts[0] += 30_000
    assert count_cycles(starts, starts + 100_000, 998_004).skipped > 0
    a = CycleAnalyzer(TopicConfig(name='fast', topic='/fast', stamp='start'))
    for i, start in enumerate(starts.tolist()):  # taken as they come: learned from 20 intervals
        a.record(start + 100_000 + DELIVERY, start, i + 1, 64)
        if i % 25 == 24:
            a.process(None)
    r = report(a, int(starts[-1]) + 10 * MS)
    assert r.period_learned and r.period_ns == MS
    assert (r.deadline_misses_total, r.skipped_periods_total) == (0, 0)


def test_batches_give_the_same_answer_as_one_pass(timer_cycles):
    starts, ends = timer_cycles()
    one = CycleAnalyzer(TopicConfig(name='a', topic='/a', stamp='start'))
    many = CycleAnalyzer(TopicConfig(name='a', topic='/a', stamp='start'))
    feed(one, starts, ends)
    for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        many.record(e + DELIVERY, s, i + 1, 64)
        if i % 7 == 0:
            many.process(None)
    r1, r2 = report(one, int(ends[-1])), report(many, int(ends[-1]))
    assert (r1.deadline_misses_total, r1.skipped_periods_total) == (
        r2.deadline_misses_total, r2.skipped_periods_total) == (20, 10)


def test_sequence_gaps_count_as_lost_and_restarts_do_not():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS))
    for i, seq in enumerate([1, 2, 3, 7, 8, 1, 2, 4]):
        a.record(S + i * 10 * MS, NO_VALUE, seq, 10)
    r = report(a, S + 100 * MS)
    assert r.messages_lost_total == 3 + 1
    assert r.loss_known
    assert not report(a, S + 100 * MS, writers=2).loss_known


def test_headerless_topic_falls_back_to_arrival_times():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS, stamp='start'))
    for i in range(50):  # from cycle 20 on, the producer runs one period and 3 ms later
        a.record(S + i * 10 * MS + (13 * MS if i >= 20 else 0))
    r = report(a, S + 600 * MS)
    assert r.start_source == 'arrival'
    assert r.interval_wall.max_ns == 23 * MS
    assert r.skipped_periods_total == 1


def test_window_is_bounded_by_count_and_time():
    analysis = AnalysisConfig(window_ns=S, window_cycles=50)
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS), analysis)
    for i in range(1000):
        a.record(S + i * 10 * MS, NO_VALUE, i + 1, 10)
    r = report(a, S + 999 * 10 * MS)
    assert r.messages == 50 and r.messages_total == 1000
    r = report(a, S + 999 * 10 * MS + S - 100 * MS)
    assert r.messages == 11  # arrivals within the last second: 9.89 s .. 9.99 s


def test_a_slow_topic_keeps_the_rows_of_its_window_not_of_the_run():
    """An hour at 1 Hz: the rows older than the window are forgotten, no figure changes."""
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=S), AnalysisConfig())
    reference = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=S), AnalysisConfig())
    for k in range(3600):
        arrival = S + k * S + (300 * MS if k == 3590 else 0)  # one late message at the end
        for analyzer in (a, reference):
            analyzer.record(arrival, arrival - MS, k + 1, 10)
        if k % 10 == 9:
            a.process(None)  # a report every 10 messages, as the session refreshes it
    r, full = report(a, 3601 * S), report(reference, 3601 * S)
    assert len(a._rows) <= 11 < len(reference._rows) == 3600
    assert r == full
    assert r.messages == 10 and r.interval_wall.max_ns == 1300 * MS and r.messages_total == 3600


def test_a_consumer_that_takes_rows_gets_every_row_once_even_past_the_window():
    """The session's whole-run figures take the rows of each processing: none forgotten."""
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=S), AnalysisConfig())
    assert a.take_rows() is None  # a consumer from the start
    taken = []
    for k in range(30):
        a.record(S + k * S, S + k * S - MS, k + 1, 10)
        if k % 10 == 9:
            a.process(None)  # three batches spanning 30 s, more than the 10 s window
            taken.append(a.take_rows()['arrival'])
    assert a.take_rows() is None  # each row handed over once
    assert np.concatenate(taken).tolist() == [S + k * S for k in range(30)]
    assert len(a._rows) < 30  # while the report's window keeps only its own rows


def test_sim_clock_topic_maps_arrival_to_sim_time_and_resets_cleanly(timer_cycles):
    # /clock at 1 kHz, RTF 1.0, separate from the producer: sim = wall - offset.
    starts, ends = timer_cycles()
    offset = int(starts[0]) - 5 * S
    clock = RtfAnalyzer()
    wall = int(starts[0]) - 10 * MS
    while wall <= int(ends[-1]) + 10 * MS:
        clock.record(wall, (wall - offset) // MS * MS)
        wall += MS
    sim_starts = (starts - offset) // MS * MS  # the producer's ROS time is the latest /clock
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS, stamp='start',
                                  clock='sim'))
    for i, (s, e) in enumerate(zip(sim_starts.tolist(), ends.tolist(), strict=True)):
        a.record(e + DELIVERY, s, i + 1, 64)
    r = report(a, int(ends[-1]) + MS, clock)
    # Ends keep the time they lie inside their /clock step (interpolated at RTF 1.0).
    truth = count_cycles(sim_starts, ends + DELIVERY - offset, 10 * MS)
    assert (r.deadline_misses_total, r.skipped_periods_total) == (truth.misses, truth.skipped)
    assert r.interval_sim.max_ns == pytest.approx(22 * MS, abs=MS)
    # Wall intervals are the arrivals' own, never the sim stamps mapped through /clock.
    assert r.interval_wall.max_ns == int(np.diff(ends).max())
    a.process(clock, resets=1)
    assert report(a, int(ends[-1]) + MS).messages == 0
    assert report(a, int(ends[-1]) + MS).resets_total == 1


def test_a_full_pending_buffer_says_so():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=MS))
    n = 1 << 16
    assert not any(a.record(S + i * MS) for i in range(n - 1))
    assert a.record(S + n * MS) and a.pending_full
    assert report(a, S + n * MS).messages_total == n and not a.pending_full


def test_malformed_messages_count_as_messages_not_cycles():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS, stamp='start'))
    for i in range(30):
        a.record(S + i * 10 * MS, MALFORMED if i == 10 else S + i * 10 * MS, i + 1, 8)
    r = report(a, 2 * S)
    assert (r.messages_total, r.malformed_total, r.messages_lost_total) == (30, 1, 0)
    # The producer ran the malformed message's cycle: the 20 ms across it is none of its
    # intervals (left out, counted) and no skipped period.
    assert r.messages == 29 and r.interval_wall.max_ns == 10 * MS
    assert r.interval_wall.count == 27 and r.intervals_across_loss_total == 1
    assert r.skipped_periods_total == 0


def test_events_after_the_horizon_wait_for_the_next_clock_sample():
    clock = RtfAnalyzer()
    for wall in range(S, S + 100 * MS + 1, MS):
        clock.record(wall, wall - S)
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS, clock='sim'))
    for i in range(12):
        a.record(S + i * 10 * MS + MS // 2, NO_VALUE, i + 1, 8)
    a.process(clock, horizon_ns=S + 100 * MS)
    assert a.report(2 * S).messages_total == 10  # 100.5 ms and 110.5 ms wait
    a.process(clock)
    assert a.report(2 * S).messages_total == 12


def test_reconfigure_applies_to_later_events():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS, rule='interval'))
    for i in range(10):
        a.record(S + i * 12 * MS)
    assert report(a, S + S).deadline_misses_total == 9
    a.reconfigure(a.config.with_changes(period_ns=12 * MS), AnalysisConfig())
    for i in range(10, 20):
        a.record(S + i * 12 * MS)
    assert report(a, S + S).deadline_misses_total == 9


def test_deferred_reset_applies_between_the_events_before_and_after_it():
    # /clock at 1 kHz from sim 100 s; at wall 2 s sim time jumps back to 10 s.
    clock = RtfAnalyzer()
    for wall in range(S, 3 * S, MS):
        clock.record(wall, (100 * S if wall < 2 * S else 10 * S - 2 * S) + wall)
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS, clock='sim'))
    for i, wall in enumerate(range(S + 5 * MS, 3 * S, 10 * MS)):
        a.record(wall, NO_VALUE, i + 1, 8)
    # The reset is handed over while later events are still pending (batched takes).
    a.process(clock, [2 * S], resets=1)
    r = a.report(3 * S)
    assert r.resets_total == 1 and r.messages_total == 200
    # Only the events after the reset remain in the window; none has a negative interval.
    assert r.messages == 100
    assert r.interval_sim.min_ns == pytest.approx(10 * MS)
    assert r.skipped_periods_total == 0 and r.deadline_misses_total == 0


def test_a_start_before_the_previous_one_has_no_interval():
    # Stamps jump back before the monitor heard of the reset: no negative interval.
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS, stamp='start',
                                  rule='interval'))
    starts = [100 * S + i * 10 * MS for i in range(50)] + [S + i * 10 * MS for i in range(50)]
    for i, start in enumerate(starts):  # arrivals after the stamps: none is in the future
        a.record(101 * S + i * 10 * MS, start, i + 1, 8)
    r = report(a, 101 * S + 100 * 10 * MS)
    assert r.foreign_stamps_total == 0
    # The first stamp back is no cycle start (counted, not placed); the next one, back too,
    # re-anchors the grid: 97 intervals, none across the step, no skipped period.
    assert r.stamps_back_total == 1
    assert r.interval_wall.count == 97 and r.interval_wall.min_ns == 10 * MS
    assert r.deadline_misses_total == 0 and r.skipped_periods_total == 0


def test_events_recorded_out_of_arrival_order_are_processed_in_arrival_order():
    # Two writers on one topic, taken writer by writer: their events interleave in time.
    ordered = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=5 * MS))
    grouped = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=5 * MS))
    writer_a = [S + i * 10 * MS for i in range(20)]
    writer_b = [S + 5 * MS + i * 10 * MS for i in range(20)]
    for t in sorted(writer_a + writer_b):
        ordered.record(t)
    for t in writer_a + writer_b:
        grouped.record(t)
    r1, r2 = report(ordered, S + S), report(grouped, S + S)
    assert r2.interval_wall == r1.interval_wall
    assert r2.interval_wall.max_ns == 5 * MS
    assert (r2.deadline_misses_total, r2.skipped_periods_total) == (0, 0)


def test_a_loss_counted_while_several_writers_were_in_the_graph_stays_unknown():
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS, rule='interval'))
    for i in range(100):
        if i != 50:  # sequence number 51 never arrives: one gap
            a.record(S + i * 10 * MS, seq=i + 1)
    a.process(None)
    one = a.report(S + 100 * 10 * MS)
    assert one.loss_known and one.messages_lost_total == 1 and not one.run_loss_note
    a.report(S + 100 * 10 * MS, writers=2)
    after = a.report(S + 101 * 10 * MS, writers=1)
    assert not after.loss_known and after.run_loss_note == '2 writers on the topic during the run'
