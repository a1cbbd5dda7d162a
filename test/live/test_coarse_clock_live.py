"""A 100 Hz sim-time controller under Gazebo Classic's default 10 Hz /clock (issue 44).

The shipped ``sim_clock`` advances sim time in 1 ms steps at RTF 1.0 but publishes /clock at
10 Hz (``publish_rate_hz``, Gazebo's ``publish_rate``); the shipped ``demo_controller`` runs a
100 Hz timer on sim time. rcl fires a sim-time timer once per /clock update and skips the
periods in between, so the controller runs about 10 cycles a second while the RTF reads 1.0:
"RTF says 1.0, the control loop did not run". The monitor's counts (messages, skipped
periods, misses) must equal the controller's own record, and its RTF must be the simulator's.
"""

from __future__ import annotations

import json
import signal

from own_names import ns  # test/plugins: the test's own names
import pytest

PERIOD_NS = 10_000_000
CLOCK_STEP_NS = 100_000_000
"""Sim time between two /clock messages: 1 ms steps published at 10 Hz, RTF 1."""
DURATION_S = 10.0


def test_a_100_hz_sim_time_controller_under_a_10_hz_clock(
        observer, start_monitor, run_tool, clock_tracker, message_times, cycle_truth, wait_for,
        tmp_path):
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    summary_path = tmp_path / 'sim_clock.json'
    sim_clock = run_tool('sim_clock', step_ms=1.0, publish_rate_hz=10.0, target_rtf=1.0,
                         spin_us=0, summary_path=str(summary_path))
    wait_for(lambda: clock_tracker.sim, timeout=20.0, what='/clock at the tracker')
    start_monitor(topics=['ctrl'], topic__ctrl__name=ns('/ctrl'), topic__ctrl__period_ms=10.0,
                  topic__ctrl__stamp='start', topic__ctrl__timeout_s=60.0,
                  arrival_timestamp='source', use_sim_time=True)
    had_clock = wait_for(lambda: (s := observer.latest_stats()) is not None
                         and s.clock.messages_total > 0 and s, timeout=20.0,
                         what='/clock at the monitor')
    times = message_times(ns('/ctrl'))
    record_path = tmp_path / 'cycles.json'
    controller = run_tool('demo_controller', rate_hz=100.0, topic=ns('/ctrl'),
                          duration_s=DURATION_S, wait_for_subscribers=2,
                          record_path=str(record_path), use_sim_time=True)
    assert controller.wait(timeout=DURATION_S + 30) == 0
    record = CycleRecord.load(record_path)
    assert record.timer_clock == 'sim'
    sent = len(record)
    assert clock_tracker.wall[0] < record.end_system_ns[0], 'the tracker missed the first cycles'

    left = times.left_ns(record)
    clock_tracker.wait_past(int(left.max()))  # its samples place the ends
    truth = cycle_truth(record, clock_tracker, PERIOD_NS, left_ns=left)
    assert truth.cycles == sent
    stats = wait_for(
        lambda: (t := observer.topic_stats('ctrl')) is not None and t.messages_total == sent
        and observer.latest_stats(), timeout=15.0, what=f'stats covering all {sent} messages')
    topic = next(t for t in stats.topics if t.name == 'ctrl')
    view_differs = clock_tracker.view_differs(had_clock.clock, stats.clock, CLOCK_STEP_NS)
    sim_clock.send_signal(signal.SIGINT)
    assert sim_clock.wait(timeout=15) == 0
    summary = json.loads(summary_path.read_text())
    print(f'sent {sent} in {DURATION_S:g} s: record {truth.describe()}; monitor misses '
          f'{topic.deadline_misses_total} skipped {topic.skipped_periods_total}, RTF total '
          f'{stats.clock.rtf_total:.4f}, /clock step {stats.clock.step_ms:g} ms; sim_clock '
          f'{summary["messages"]} messages, {summary["reanchors"]} re-anchors')

    # The case occurred: every /clock message ran at most one cycle, 100 ms of sim time
    # apart, and each cycle after the first skipped the nine periods in between.
    assert summary['publish_period_ms'] == 100.0
    starts = record.start_timer_ns
    assert ((starts[1:] - starts[:-1]) % CLOCK_STEP_NS == 0).all()
    assert truth.skipped >= 9 * (sent - 1)

    # The monitor's counts equal the controller's record.
    assert topic.messages_total == sent
    assert topic.messages_lost_total == 0
    assert topic.skipped_periods_total == truth.skipped
    truth.check(topic.deadline_misses_total, view_differs)
    assert topic.interval_sim.max_ms >= 100.0

    # RTF 1.0: the simulator kept pace while the controller ran a tenth of its cycles.
    assert stats.clock.messages_total > 0
    assert stats.clock.step_ms == pytest.approx(100.0)
    low, high = clock_tracker.rtf_bounds(round(had_clock.clock.sim_time_s * 1e9),
                                         round(stats.clock.sim_time_s * 1e9))
    assert low * 0.99 <= stats.clock.rtf_total <= high * 1.01
    if summary['reanchors'] == 0:
        assert stats.clock.rtf_total == pytest.approx(1.0, abs=0.02)

    # ... and the status says why, with the numbers (not left for the user to work out).
    assert ('/clock every 100 ms: a 100 Hz sim-time timer runs at most 10 Hz'
            in topic.status), topic.status
