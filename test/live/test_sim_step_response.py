"""Under sim time, execution inside a /clock step counts live too (issue 11, item 3).

The shipped ``sim_clock`` (1 ms steps, RTF 1.0) and ``demo_controller`` (100 Hz on sim time,
cycle start stamped, 20 ms stall in every 10th cycle) run in their own processes. A 20 ms
stall lasts two periods of sim time, so the cycle after it often starts exactly one period
late, on a /clock step (when the stall and the wake-up end within the same 1 ms step), and
runs some 20 µs: its response is just over 10 ms by the reference rule (start delay on the
timer clock + execution time), a miss at D = 10 ms. The controller's own record holds both
parts: ``start_timer_ns`` and the monotonic execution ``end_mono_ns - start_mono_ns``. The
monitor must count the misses that rule gives; mapping the end to the last /clock sample
before it reads 10.000 ms and misses half of them.
"""

from __future__ import annotations

import numpy as np
from own_names import ns  # test/plugins: the test's own names

PERIOD_NS = 10_000_000
STALL_EVERY = 10
"""~40 stalls in 5 s (~10 ties unloaded): on a loaded machine many stalls end a step late,
and with the reference's 10 stalls one run in a few dozen had no cycle one period late."""
STALL_MS = 20.0
STEP_NS = 1_000_000
"""The /clock step of the ``sim_clock`` run here: each sample advances sim time by it."""


def test_a_cycle_one_period_late_on_a_clock_step_is_a_miss(
        observer, start_monitor, run_tool, clock_tracker, message_times, cycle_truth, wait_for,
        tmp_path):
    from ros2_deadline_monitor.analysis.cycles import count_cycles
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    run_tool('sim_clock', step_ms=1.0, target_rtf=1.0, max_lag_ms=100.0, spin_us=0)
    start_monitor(topics=['ctrl'], topic__ctrl__name=ns('/ctrl'), topic__ctrl__period_ms=10.0,
                  topic__ctrl__stamp='start', topic__ctrl__timeout_s=60.0,
                  arrival_timestamp='source', use_sim_time=True)
    wait_for(lambda: clock_tracker.sim and (s := observer.latest_stats()) is not None
             and s.clock.messages_total > 0, timeout=20.0,
             what='/clock at the tracker and the monitor')
    times = message_times(ns('/ctrl'))
    clock_before = observer.latest_stats().clock
    record_path = tmp_path / 'cycles.json'
    controller = run_tool('demo_controller', rate_hz=100.0, topic=ns('/ctrl'), duration_s=5.0,
                          stall_ms=STALL_MS, stall_every=STALL_EVERY, wait_for_subscribers=2,
                          record_path=str(record_path), use_sim_time=True)
    assert controller.wait(timeout=25) == 0
    record = CycleRecord.load(record_path)
    assert record.timer_clock == 'sim'
    sent = len(record)

    left = times.left_ns(record)
    clock_tracker.wait_past(int(left.max()))  # its samples place the ends
    truth = cycle_truth(record, clock_tracker, PERIOD_NS, left_ns=left)
    floor = count_cycles(record.start_timer_ns, clock_tracker.sim_at(record.end_system_ns),
                         PERIOD_NS, PERIOD_NS, None, 'response')
    execution = record.end_mono_ns - record.start_mono_ns
    ties = list(truth.ties)
    stats = wait_for(
        lambda: (t := observer.topic_stats('ctrl')) is not None and t.messages_total == sent
        and observer.latest_stats(), timeout=15.0, what=f'stats covering all {sent} messages')
    topic = next(t for t in stats.topics if t.name == 'ctrl')
    print(f'sent {sent}, {int(record.injected.sum())} stalled; {truth.describe()} (their '
          f'execution {np.round(execution[ties] / 1e3).astype(int).tolist()} us); the last '
          f'/clock sample before the end gives {floor.misses} misses; monitor misses '
          f'{topic.deadline_misses_total} skipped {topic.skipped_periods_total}, RTF '
          f'{clock_tracker.rtf():.4f}')

    assert len(ties) > 0, 'no cycle started exactly one period late: the case did not occur'
    assert topic.messages_total == sent
    assert topic.messages_lost_total == 0
    assert topic.skipped_periods_total == truth.skipped
    truth.check(topic.deadline_misses_total,
                clock_tracker.view_differs(clock_before, stats.clock, STEP_NS))
