"""MuJoCo in the loop: the monitor against the simulator's and the controller's own records.

``mujoco_sim`` steps the shipped upright pendulum at 1 kHz paced to RTF 1 and publishes
/clock at every step; ``demo_controller`` (``control:=pd``) closes the loop on its joint
state with a 100 Hz sim-time timer and stalls 22 ms every 50th cycle; the monitor runs in
this process. The monitor's cycles, misses and skipped periods must equal the controller's
record, its RTF the simulator's, and /tf, written by both, has two producers. Under two CPU
hogs the simulator falls behind a target it cannot reach, says so, and the monitor's RTF is
the one the simulator recorded.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip('mujoco')  # scripts/requirements.txt installs it: CI runs all of this

PERIOD_NS = 10_000_000
STEP_NS = 1_000_000
DURATION_S = 5.0
PREFIX = '/test_mujoco_live'


def _sim_topics(prefix: str) -> dict[str, str]:
    return {'joint_states_topic': f'{prefix}/joint_states', 'imu_topic': f'{prefix}/imu',
            'command_topic': f'{prefix}/commands'}


def test_closed_loop_counts_rtf_and_tf_producers_equal_the_records(
        observer, start_monitor, run_tool, clock_tracker, message_times, cycle_truth, wait_for,
        tmp_path):
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    ctrl = f'{PREFIX}/ctrl'
    start_monitor(topics=['ctrl', 'tf'], topic__ctrl__name=ctrl, topic__ctrl__period_ms=10.0,
                  topic__ctrl__stamp='start', topic__ctrl__timeout_s=60.0,
                  topic__tf__name='/tf', topic__tf__period_ms=10.0, topic__tf__stamp='start',
                  topic__tf__stamp_field='transforms[0].header.stamp',
                  topic__tf__timeout_s=60.0, arrival_timestamp='source', use_sim_time=True,
                  stats_period_s=0.5)
    times = message_times(ctrl)
    record_path = tmp_path / 'cycles.json'
    controller = run_tool('demo_controller', rate_hz=100.0, topic=ctrl, duration_s=DURATION_S,
                          wait_for_subscribers=2, record_path=str(record_path),
                          use_sim_time=True, control='pd', stall_ms=22.0, stall_every=50,
                          publish_tf=True, **_sim_topics(PREFIX))
    sim_path = tmp_path / 'mujoco_sim.json'
    # /clock subscribers: the tracker, the monitor and the controller. The simulator stops
    # itself, so its record and the monitor's span end at the same last /clock message.
    sim = run_tool('mujoco_sim', wait_for_subscribers=3, duration_s=DURATION_S + 3.0,
                   record_path=str(sim_path), **_sim_topics(PREFIX))
    had_clock = wait_for(lambda: (s := observer.latest_stats()) is not None
                         and s.clock.messages_total > 0 and s, timeout=30.0,
                         what='/clock at the monitor')
    # /tf has two writers while both run, the simulator's bodies and the controller's
    # reference: the status names both from the graph.
    wait_for(lambda: (t := observer.topic_stats('tf')) is not None
             and 'mujoco_sim' in t.status and 'demo_controller' in t.status,
             timeout=30.0, what='/tf status naming the simulator and the controller')
    assert controller.wait(timeout=DURATION_S + 60) == 0
    record = CycleRecord.load(record_path)
    sent = len(record)
    left = times.left_ns(record)
    clock_tracker.wait_past(int(left.max()))
    truth = cycle_truth(record, clock_tracker, PERIOD_NS, left_ns=left)
    assert sim.wait(timeout=60) == 0
    simulated = json.loads(sim_path.read_text())
    last_sim_ns = round((simulated['start_sim_s'] + simulated['sim_s']) * 1e9)
    stats = wait_for(
        lambda: (t := observer.topic_stats('ctrl')) is not None and t.messages_total == sent
        and (s := observer.latest_stats()).clock.sim_time_s * 1e9 >= last_sim_ns - STEP_NS
        and s, timeout=30.0, what=f'stats covering all {sent} cycles and the last /clock')
    topic = next(t for t in stats.topics if t.name == 'ctrl')
    view_differs = clock_tracker.view_differs(had_clock.clock, stats.clock, STEP_NS)
    print(f'\nsent {sent}: record {truth.describe()}; monitor misses '
          f'{topic.deadline_misses_total} skipped {topic.skipped_periods_total}, RTF '
          f'{stats.clock.rtf_total:.4f}; mujoco_sim RTF {simulated["rtf"]:.4f}, '
          f'{simulated["reanchors"]} re-anchors, tracking error RMS '
          f'{simulated["tracking_error_rms_rad"]} max {simulated["tracking_error_max_rad"]}, '
          f'{simulated["stale_steps"]} stale steps')

    # The loop was closed: the simulator applied the controller's commands and measured the
    # tracking error from its own physics state.
    assert simulated['commands'] > 0 and simulated['commands_rejected'] == 0
    assert simulated['tracking_samples'] > 0
    assert simulated['tracking_error_rms_rad'] > 0
    # Each stall held the previous command for over 22 ms of wall time: more than the
    # 15 ms of sim time after which a step counts as stale, unless sim time stood still.
    if simulated['reanchors'] == 0 and record.injected.any():
        assert simulated['stale_steps'] > 0

    # The monitor's counts equal the controller's record.
    assert topic.messages_total == sent
    assert topic.messages_lost_total == 0
    assert topic.skipped_periods_total == truth.skipped
    truth.check(topic.deadline_misses_total, view_differs)

    # The monitor's RTF is the simulator's: both span the first to the last /clock message.
    # The monitor places them at their writer-side timestamps, the simulator at its own
    # monotonic reading just before publishing: equal to a few hundred microseconds of jitter.
    assert stats.clock.messages_total > 0
    assert stats.clock.rtf_total == pytest.approx(simulated['rtf'], rel=0.01)
    low, high = clock_tracker.rtf_bounds(round(had_clock.clock.sim_time_s * 1e9),
                                         round(stats.clock.sim_time_s * 1e9))
    assert low * 0.99 <= stats.clock.rtf_total <= high * 1.01

    # /tf: the simulator's bodies and the controller's reference, two writers, each stamping
    # its transforms on its own 10 ms grid of sim time.
    tf = next(t for t in stats.topics if t.name == 'tf')
    assert tf.messages_total > 0
    # Both writers number their messages from 1 at 100 Hz: their sequence runs cannot be
    # told apart, so the per-cycle figures of /tf are unknown with that reason, and its
    # loss is never a figure made of runs continued by the wrong writer.
    assert not tf.loss_known or tf.messages_lost_total == 0, tf.status
    if not tf.loss_known:
        assert tf.loss_note and 'lost' not in tf.status.split(';')[0], tf.status


HOG = 'import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n'


def test_under_two_cpu_hogs_the_simulator_slows_says_so_and_the_monitor_agrees(
        observer, start_monitor, run_tool, processes, wait_for, tmp_path):
    # A target of 50 asks for 50,000 steps a second: more than a share of two busy cores
    # gives, here or on a faster machine, so the simulator falls behind by itself.
    target = 50.0
    start_monitor(use_sim_time=True, target_rtf=target, stats_period_s=0.5)
    sim_path = tmp_path / 'mujoco_sim.json'
    duration_s = 4.0
    hogs = [subprocess.Popen([sys.executable, '-c', HOG.format(seconds=duration_s + 20)])
            for _ in range(2)]
    processes.extend(hogs)
    sim = run_tool('mujoco_sim', target_rtf=target, clock_publish_hz=10.0,
                   rtf_report_period_s=0.5, wait_for_subscribers=1, duration_s=duration_s,
                   record_path=str(sim_path), **_sim_topics(f'{PREFIX}/hogs'))
    assert sim.wait(timeout=duration_s + 60) == 0  # a slow simulator is no error
    for hog in hogs:
        hog.kill()
    simulated = json.loads(sim_path.read_text())
    last_sim_ns = round((simulated['start_sim_s'] + simulated['steps'] // 100 * 0.1) * 1e9)
    stats = wait_for(lambda: (s := observer.latest_stats()) is not None
                     and round(s.clock.sim_time_s * 1e9) >= last_sim_ns and s, timeout=30.0,
                     what="the monitor's report of the last /clock message")
    log = (tmp_path / 'mujoco_sim.log').read_text()
    print(f'\nunder two hogs: mujoco_sim RTF {simulated["rtf"]:.3f} (target {target:g}, '
          f'{simulated["slow_reports"]} slow reports, {simulated["reanchors"]} re-anchors), '
          f'monitor RTF {stats.clock.rtf_total:.3f}')

    # It fell behind and said so, in its log and its record, without bursting.
    assert simulated['rtf'] < 0.95 * target
    assert simulated['slow_reports'] > 0 and simulated['reanchors'] > 0
    assert 'running slower than the target' in log
    assert 'ERROR' not in log
    # The monitor measured the RTF the simulator recorded (its /clock every 100 ms of sim
    # time: the last whole 100 ms before the simulator's last step bounds its span).
    assert stats.clock.rtf_total == pytest.approx(simulated['rtf'], rel=0.03)
