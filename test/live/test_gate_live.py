"""The live gate (issue 14): the installed monitor's exit code, summary JSON and diagnostics.

The monitor runs as users run it, in a subprocess, through ``ros2_deadline_monitor.testing``;
the shipped ``demo_controller`` (100 Hz on the wall clock, stamping the cycle start) writes
its own record, and the summary must equal what the record says, exactly: the messages, the
misses by the rule the monitor can see (``cycle_truth``), the skipped periods, and the
longest interval between cycle starts (the stamps themselves).
"""

from __future__ import annotations

import re

import numpy as np
from own_names import ns, ros_args  # test/plugins: the test's own names
import pytest

from ros2_deadline_monitor.analysis.figures import record as run_record
from ros2_deadline_monitor.analysis.figures import RUN_TOPIC
from ros2_deadline_monitor.outputs.gate import EXIT_CONFIG_ERROR, EXIT_FAILED, EXIT_OK
from ros2_deadline_monitor.testing import MonitorProcess, run_monitor, watch_monitor

CTRL = {'topic.ctrl.stamp': 'start', 'topic.ctrl.timeout_s': 60.0,
        'arrival_timestamp': 'source', 'stats_period_s': 0.5}


# Without stalls at 20 Hz: a loaded machine delays a 100 Hz timer past its deadline now and
# then (then the monitor must say so, and fail, as the record does).
@pytest.mark.parametrize(('stall', 'rate_hz'), [(True, 100.0), (False, 20.0)],
                         ids=['stalls', 'no-stalls'])
def test_exit_code_and_summary_equal_the_producers_record(
        run_tool, message_times, cycle_truth, observer, wait_for, key_values, ros_context,
        tmp_path, stall, rate_hz):
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    period_ns = round(1e9 / rate_hz)
    with MonitorProcess({'ctrl': ns('/ctrl')},
                        params={**CTRL, 'topic.ctrl.period_ms': period_ns / 1e6},
                        expect={'ctrl': {'max_misses': 0, 'max_lost': 0}},
                        ros_args=ros_args()) as monitor:
        times = message_times(ns('/ctrl'))
        record_path = tmp_path / 'cycles.json'
        controller = run_tool('demo_controller', rate_hz=rate_hz, topic=ns('/ctrl'),
                              duration_s=3.0,
                              stall_ms=22.0 if stall else 0.0, stall_every=50,
                              wait_for_subscribers=2, record_path=str(record_path))
        assert controller.wait(timeout=25) == 0
        record = CycleRecord.load(record_path)
        sent = len(record)
        truth = cycle_truth(record, None, period_ns, left_ns=times.left_ns(record))
        wait_for(lambda: (t := observer.topic_stats('ctrl')) is not None
                 and t.messages_total == sent, timeout=20.0,
                 what=f'the monitor to report all {sent} messages')
        status = wait_for(lambda: (s := observer.status(': topic ctrl')) is not None
                          and key_values(s).get('messages total') == str(sent) and s,
                          what='the diagnostics covering every message')
        # A running monitor can be watched too: the same verdict from its reports.
        watched = watch_monitor({'ctrl': {'max_misses': 0}}, duration_s=0.0,
                                context=ros_context)
        result = monitor.stop()
    print(f'sent {sent}: record {truth.describe()}; exit code {result.exit_code}')
    failed = truth.observed > 0
    assert result.exit_code == (EXIT_FAILED if failed else EXIT_OK), result.output
    assert 'ignored' not in result.output  # declared: no unknown-parameter warning
    if stall:
        assert truth.observed > 0 and truth.skipped > 0

    summary = result.summary
    assert summary['format'] == 'ros2_deadline_monitor/summary'
    assert summary['stopped_by'] == 'signal' and summary['exit_code'] == result.exit_code
    topic = result.topic('ctrl')
    assert topic['topic'] == ns('/ctrl') and topic['timer_clock'] == 'wall'
    assert topic['messages'] == topic['cycles'] == sent
    assert topic['deadline_misses'] == truth.observed
    assert topic['skipped_periods'] == truth.skipped
    assert topic['messages_lost'] == 0
    starts = record.start_timer_ns  # stamp = cycle start: the wall intervals are theirs
    assert topic['max_interval_wall_ms'] == pytest.approx(np.diff(starts).max() / 1e6, abs=1e-9)
    assert topic['rate_wall_hz'] == pytest.approx((sent - 1) * 1e9 / (starts[-1] - starts[0]))
    outcomes = {o['key']: o for o in summary['verdict']['expectations']}
    assert outcomes['max_misses'] == {
        'topic_id': 'ctrl', 'topic': ns('/ctrl'), 'key': 'max_misses', 'figure': 'deadline misses',
        'bound': 'max', 'unit': '', 'measured': truth.observed, 'limit': 0,
        'passed': not failed, 'reason': '',
        'line': f'{"FAIL" if failed else "ok  "} {ns("/ctrl")}: deadline misses '
                f'{truth.observed:,}, expected <= 0 (max_misses)'}
    assert outcomes['max_lost']['passed'] and outcomes['max_lost']['measured'] == 0
    assert summary['verdict']['ok'] is not failed

    values = key_values(status)
    assert values['expectations'] == f'{1 if failed else 2} held, {int(failed)} failed'
    assert ('expectation failed: max_misses' in values) is failed
    assert watched.reports > 0 and watched.verdict.ok is not failed
    # The watched reports fold into the same whole-run counts the monitor judged.
    folded = run_record(RUN_TOPIC, watched.snapshot, watched.snapshot.topics[0])
    assert (folded['messages'], folded['deadline_misses']) == (sent, truth.observed)
    if failed:
        ctrl = re.escape(ns('/ctrl'))
        with pytest.raises(AssertionError, match=rf'FAIL {ctrl}: deadline misses \d+, expected '
                                                 r'<= 0 \(max_misses\)'):
            result.assert_ok()
        with pytest.raises(AssertionError, match=rf'FAIL {ctrl}: deadline misses'):
            watched.assert_ok()
    else:
        result.assert_ok()
        watched.assert_ok()


def test_duration_ends_the_run_and_an_unmeasured_figure_fails():
    result = run_monitor(duration_s=1.0, clock_expect={'min_rtf': 0.9},
                         params={'stats_period_s': 0.2}, ros_args=ros_args())
    assert result.exit_code == EXIT_FAILED, result.output
    assert result.summary['stopped_by'] == 'duration'
    assert result.summary['duration_s'] >= 1.0
    assert result.failures == ['FAIL /clock: RTF overall unknown, expected >= 0.9 (min_rtf): '
                               'unknown: no /clock in the run']
    assert 'FAIL /clock: RTF overall unknown' in result.output


def test_no_expectation_exits_0():
    result = run_monitor({'ctrl': ns('/ctrl')}, duration_s=0.5, ros_args=ros_args())
    assert result.exit_code == EXIT_OK, result.output
    assert result.summary['verdict'] == {'ok': True, 'passed': 0, 'failed': 0,
                                         'expectations': []}
    result.assert_ok()


@pytest.mark.parametrize(('params', 'message'), [
    ({'topic.ctrl.expect.max_mises': 0},
     "ERROR: invalid expectation: topic.ctrl.expect.max_mises: unknown expectation "
     "'max_mises' (did you mean topic.ctrl.expect.max_misses?)"),
    ({'topic.ctrl.expect.max_misses': -1},
     'ERROR: invalid expectation: topic.ctrl.expect.max_misses must be ≥ 0 (a limit cannot be '
     'negative), got -1'),
    ({'clock.expect.min_rtf_bins': 0.5},
     "ERROR: invalid expectation: clock.expect.min_rtf_bins: unknown expectation "
     "'min_rtf_bins' (did you mean clock.expect.min_rtf_bin?)"),
    ({'topic.other.expect.max_misses': 0},
     "ERROR: invalid expectation: topic.other.expect.max_misses: 'other' is not listed in "
     'topics (ctrl)'),
    ({'summary_file': '/nonexistent/dir/summary.json'}, 'ERROR: summary_file: directory'),
], ids=['unknown-key', 'negative', 'unknown-clock-key', 'unlisted-topic', 'summary-dir'])
def test_bad_expectations_exit_2_with_one_line(params, message):
    monitor = MonitorProcess({'ctrl': ns('/ctrl')}, params=params, ros_args=ros_args()).start()
    result = monitor.wait(timeout_s=30.0)
    assert result.exit_code == EXIT_CONFIG_ERROR
    errors = [line for line in result.output.splitlines() if line.startswith('ERROR')]
    assert len(errors) == 1 and errors[0].startswith(message), result.output
    assert result.summary is None


def test_expectations_are_parameters_validated_at_run_time(start_monitor, observer, wait_for,
                                                           key_values):
    node = start_monitor(topics=['ctrl'], topic__ctrl__name=ns('/ctrl'),
                         topic__ctrl__expect__max_misses=0, stats_period_s=0.2)
    assert observer.get_parameter('topic.ctrl.expect.max_misses') == 0
    assert observer.get_parameter('topic.ctrl.expect.max_skipped') is None  # unset
    assert observer.get_parameter('clock.expect.min_rtf') is None
    future = observer.params.describe_parameters(['topic.ctrl.expect.max_misses'])
    wait_for(future.done, what='the describe_parameters response')
    described, = future.result().descriptors
    assert described.dynamic_typing
    assert described.description.startswith('Most deadline misses allowed over the whole run.')
    assert described.description.endswith('Not set (the default): not checked.')
    negative, = observer.set_parameters(topic__ctrl__expect__max_skipped=-2)
    assert not negative.successful
    assert negative.reason == ('topic.ctrl.expect.max_skipped must be ≥ 0 (a limit cannot be '
                               'negative), got -2')
    text, = observer.set_parameters(clock__expect__min_rtf='fast')
    assert not text.successful and 'must be a number' in text.reason
    ratio, = observer.set_parameters(topic__ctrl__expect__max_miss_ratio=1.5)
    assert not ratio.successful and 'at most 1' in ratio.reason
    results = observer.set_parameters(topic__ctrl__expect__max_skipped=3,
                                      clock__expect__min_rtf=0.5)
    assert all(r.successful for r in results)
    keys = {limit.key for limit in node.expectations().for_topic('ctrl')}
    assert keys == {'max_misses', 'max_skipped'}
    assert [limit.value for limit in node.expectations().clock] == [0.5]
    # No message yet: each expectation of the topic fails as unknown, shown in diagnostics.
    status = wait_for(lambda: (s := observer.status(': topic ctrl')) is not None
                      and key_values(s).get('expectations') == '0 held, 2 failed' and s,
                      what='both expectations in the diagnostics')
    values = key_values(status)
    assert values['expectation failed: max_misses'] == (
        'deadline misses unknown, expected <= 0: unknown: no message received')
    clock = key_values(wait_for(
        lambda: (s := observer.status(': clock')) is not None
        and 'expectation failed: min_rtf' in key_values(s) and s,
        what='the clock expectation in the diagnostics'))
    assert clock['expectation failed: min_rtf'] == (
        'RTF overall unknown, expected >= 0.5: unknown: no /clock in the run')
    # Dropping the topic undeclares its expectations; listing it again declares them anew.
    assert observer.set_parameters(topics=['other'])[0].successful
    assert not node.has_parameter('topic.ctrl.expect.max_misses')
    assert node.has_parameter('topic.other.expect.max_misses')


MIN_RTF_HELD = 0.01
"""Held by any simulator that advances at all (sim_clock aims at 1.0)."""
MIN_RTF_BIN_FAILED = 1.5
"""Failed by a simulator paced at RTF 1.0: its windows average 1.0, so the worst is below."""


def test_sigterm_under_sim_time_judges_the_clock_over_the_whole_run(run_tool, observer,
                                                                    wait_for):
    import signal
    import time

    run_tool('sim_clock', step_ms=1.0, target_rtf=1.0, max_lag_ms=100.0, spin_us=0)
    with MonitorProcess(params={'use_sim_time': True, 'stats_period_s': 0.3},
                        clock_expect={'min_rtf': MIN_RTF_HELD,
                                      'min_rtf_bin': MIN_RTF_BIN_FAILED},
                        ros_args=ros_args()) as monitor:
        wait_for(lambda: (s := observer.latest_stats()) is not None
                 and s.clock.messages_total > 1000, timeout=30.0,
                 what='a second of /clock at the monitor')
        signalled_ns = time.time_ns()
        monitor.process.send_signal(signal.SIGTERM)
        result = monitor.wait(timeout_s=20.0)

    def stamp_ns(stats) -> int:
        return stats.header.stamp.sec * 1_000_000_000 + stats.header.stamp.nanosec

    final = wait_for(lambda: (s := observer.latest_stats()) and stamp_ns(s) >= signalled_ns
                     and s, what='the final stats')
    assert result.exit_code == EXIT_FAILED, result.output
    assert result.summary['stopped_by'] == 'signal'
    clock = result.summary['clock']
    # The summary and the final MonitorStats are one snapshot; the worst window of the run is
    # at least as bad as the worst of any report's window.
    assert clock['use_sim_time'] is True and clock['messages'] == final.clock.messages_total
    assert clock['rtf_total'] == final.clock.rtf_total
    with observer.lock:
        worst_seen = min(s.clock.rtf_bin_min for s in observer.stats
                         if s.clock.rtf_bin_min == s.clock.rtf_bin_min)
    assert 0 < clock['rtf_bin_min'] <= worst_seen
    # Each expectation's outcome follows from the figure it judged, whatever the load.
    assert clock['rtf_total'] >= MIN_RTF_HELD and clock['rtf_bin_min'] < MIN_RTF_BIN_FAILED
    rtf, rtf_bin = result.summary['verdict']['expectations']
    assert (rtf['key'], rtf['passed'], rtf['measured']) == ('min_rtf', True, clock['rtf_total'])
    assert (rtf_bin['key'], rtf_bin['passed'], rtf_bin['measured']) == (
        'min_rtf_bin', False, clock['rtf_bin_min'])
    assert result.failures == [rtf_bin['line']]
    assert rtf_bin['line'].startswith('FAIL /clock: worst RTF window ')


def test_two_clock_writers_leave_the_whole_run_rtf_unknown_and_the_gate_says_why(
        installed_executable, processes, stop_process, observer, wait_for):
    """Two simulators on one /clock, then one: no whole-run RTF, and ``min_rtf`` says why.

    After the second writer left, the window's RTF is measured again, but an RTF since the
    last of the many resets the two caused is no figure of the run; the gate must not judge
    it. Every name is the test's own (its namespace; the simulators' node names).
    """
    import math
    import subprocess

    def simulator(name: str, start_sim_s: float) -> subprocess.Popen:
        process = subprocess.Popen(
            [str(installed_executable('sim_clock')), '--ros-args', '--log-level', 'warn',
             '-r', f'__node:={name}', '-p', f'start_sim_s:={start_sim_s}',
             '-p', 'step_ms:=2.0', *ros_args()],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(process)
        return process

    with MonitorProcess(params={'use_sim_time': True, 'stats_period_s': 0.2},
                        clock_expect={'min_rtf': 0.5}, ros_args=ros_args()) as monitor:
        simulator('simulator_a', 100.0)
        second = simulator('simulator_b', 500.0)
        # A process with rclpy starts and is discovered in about 1 s on an idle 2-core
        # machine; 60 s bounds a loaded one.
        wait_for(lambda: (s := observer.latest_stats()) and s.clock.resets_total > 20
                 and '2 publishers on /clock' in s.clock.status, timeout=60.0,
                 what='both /clock writers received and counted')
        assert stop_process(second) == 0
        calm = wait_for(lambda: (s := observer.latest_stats())
                        and 'publishers on' not in s.clock.status
                        and 'jumped back' not in s.clock.status
                        and s.clock.messages > 10 and not math.isnan(s.clock.rtf) and s,
                        timeout=30.0, what='one /clock writer left, its window measured')
        assert math.isnan(calm.clock.rtf_total), calm.clock  # before: the last writer's RTF
        result = monitor.stop()
    why = '2 publishers on /clock during the run: their sim times mixed'
    assert result.exit_code == EXIT_FAILED, result.output
    assert result.summary['clock']['rtf_total'] is None
    assert result.failures == [f'FAIL /clock: RTF overall unknown, expected >= 0.5 (min_rtf): '
                               f'unknown: {why}']
    assert re.search(rf'RTF since start \S+ \({re.escape(why)}\), last window', result.output)
