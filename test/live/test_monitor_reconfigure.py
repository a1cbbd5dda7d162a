"""Reconfiguring mid-run never changes figures of cycles already received (issue 11, item 1).

A stalling sim-time producer in its own process: the shipped ``sim_clock`` at RTF 0.5 and the
shipped ``demo_controller`` at 100 Hz on sim time, stamping the cycle start and stalling
44 ms of wall time (22 ms of sim time at RTF 0.5) in every 50th cycle. While it runs, valid
per-topic and monitor-wide parameters are set through the monitor's real parameter service,
each right after a stall reached the monitor, while its events may still wait to be
processed. None of those settings can change a count: the rule is ``response`` (J plays no
part), and timeouts, thresholds, the stats period and the window only change levels and
window figures. So messages, deadline misses and skipped periods must equal the producer's
own record, exactly as in a run without changes. The record gives the response by the
reference rule: start delay on the timer clock plus execution time (monotonic); see
``CycleTruth`` in conftest.py for the rare cycle whose miss depends on the view of sim time.
"""

from __future__ import annotations

import time

from own_names import ns  # test/plugins: the test's own names

PERIOD_NS = 10_000_000
STALL_EVERY = 50
RTF = 0.5
STALL_WALL_MS = 44.0
"""22 ms of sim time at RTF 0.5."""
DURATION_S = 7.0
"""7 s of wall time: 3.5 s of sim time, 350 cycles, 7 stalls."""
SETTLE_S = 0.1
"""After a stall was seen here: time for the monitor's batched take (50 ms) to have it too."""

CHANGES = [
    {'topic__ctrl__jitter_tolerance_ms': 2.0},
    {'topic__ctrl__timeout_s': 30.0},
    {'miss_ratio_error': 0.5},
    {'stats_period_s': 2.0},
    {'window_s': 5.0},
    {'topic__ctrl__jitter_tolerance_percent': 10.0, 'topic__ctrl__timeout_s': 40.0},
]


def test_parameter_changes_mid_run_keep_the_counts_of_the_producers_record(
        observer, start_monitor, run_tool, clock_tracker, message_times, cycle_truth, wait_for,
        tmp_path):
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    run_tool('sim_clock', step_ms=1.0, target_rtf=RTF, max_lag_ms=100.0, spin_us=0)
    start_monitor(topics=['ctrl'], topic__ctrl__name=ns('/ctrl'), topic__ctrl__period_ms=10.0,
                  topic__ctrl__stamp='start', topic__ctrl__timeout_s=60.0,
                  arrival_timestamp='source', use_sim_time=True)
    watcher = message_times(ns('/ctrl'))
    wait_for(lambda: clock_tracker.sim and (s := observer.latest_stats()) is not None
             and s.clock.messages_total > 0, timeout=20.0,
             what='/clock at the tracker and the monitor')
    record_path = tmp_path / 'cycles.json'
    controller = run_tool('demo_controller', rate_hz=100.0, topic=ns('/ctrl'),
                          duration_s=DURATION_S, stall_ms=STALL_WALL_MS,
                          stall_every=STALL_EVERY, wait_for_subscribers=2,
                          record_path=str(record_path), use_sim_time=True)

    applied = []
    for number, change in enumerate(CHANGES, 1):
        wait_for(lambda n=number: watcher.stalls(PERIOD_NS) >= n or controller.poll() is not None,
                 timeout=20.0, what=f'stall {number}')
        if watcher.stalls(PERIOD_NS) < number:
            break
        time.sleep(SETTLE_S)  # not a wait for a result: places the change after the take
        results = observer.set_parameters(**change)
        assert all(r.successful for r in results), [r.reason for r in results]
        applied.append(change)
    assert controller.wait(timeout=30) == 0
    assert len(applied) >= 4, f'only {len(applied)} changes made during the run'
    for change in applied[-1:]:
        for name, value in change.items():
            assert observer.get_parameter(name.replace('__', '.')) == value

    record = CycleRecord.load(record_path)
    assert record.timer_clock == 'sim'
    sent = len(record)
    assert clock_tracker.wall[0] < record.end_system_ns[0], 'the tracker missed the first cycles'
    truth = cycle_truth(record, clock_tracker, PERIOD_NS, left_ns=watcher.left_ns(record))
    stats = wait_for(
        lambda: (t := observer.topic_stats('ctrl')) is not None and t.messages_total == sent
        and observer.latest_stats(), timeout=15.0, what=f'stats covering all {sent} messages')
    topic = next(t for t in stats.topics if t.name == 'ctrl')
    print(f'{len(applied)} changes; sent {sent}, {int(record.injected.sum())} stalled; record: '
          f'{truth.describe()}; monitor misses {topic.deadline_misses_total} skipped '
          f'{topic.skipped_periods_total}')
    assert truth.misses > 0 and truth.skipped > 0
    assert topic.messages_total == sent
    assert topic.messages_lost_total == 0
    # Exact unless a cycle's miss depends on which view of sim time one takes (CycleTruth).
    assert topic.deadline_misses_total == truth.observed, \
        f'monitor {topic.deadline_misses_total} misses, the record {truth.describe()}'
    assert topic.skipped_periods_total == truth.skipped
