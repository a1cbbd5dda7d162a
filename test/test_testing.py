"""``ros2_deadline_monitor.testing`` without a monitor: parameters, results, watched figures.

The helper against the installed monitor and the demo controller: test/shell/test_gate_live.py.
"""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from ros2_deadline_monitor import testing
from ros2_deadline_monitor.core.expectations import evaluate, expectations_from

NAN = math.nan


def test_expectation_parameters_use_the_monitors_names():
    assert testing.expectation_parameters({'cmd': {'max_misses': 0, 'min_rate_hz': 95.0}},
                                          {'min_rtf': 0.9}) == {
        'topic.cmd.expect.max_misses': 0, 'topic.cmd.expect.min_rate_hz': 95.0,
        'clock.expect.min_rtf': 0.9}
    assert testing.expectation_parameters() == {}


def test_monitor_process_command_line(tmp_path):
    monitor = testing.MonitorProcess(
        {'cmd': '/cmd_vel'}, params={'topic.cmd.stamp': 'start', 'use_sim_time': True},
        expect={'cmd': {'max_misses': 0}}, duration_s=5, executable='/bin/monitor',
        params_file=tmp_path / 'm.yaml')
    assert monitor.command == [
        '/bin/monitor', '--ros-args', '--params-file', str(tmp_path / 'm.yaml'),
        '-p', 'topics:=[cmd]', '-p', 'topic.cmd.name:=/cmd_vel', '-p', 'topic.cmd.stamp:=start',
        '-p', 'use_sim_time:=true', '-p', 'topic.cmd.expect.max_misses:=0',
        '-p', 'duration_s:=5.0', '-p', f'summary_file:={monitor.summary_path}']


def _summary(*outcomes):
    return {'verdict': {'expectations': [
        {'passed': passed, 'line': line} for passed, line in outcomes]}}


def test_results_raise_with_every_failed_line(tmp_path):
    failed = testing.MonitorResult(3, _summary(
        (False, 'FAIL /a: deadline misses 3, expected <= 0 (max_misses)'),
        (True, 'ok   /a: rate 100 Hz, expected >= 95 Hz (min_rate_hz)'),
        (False, 'FAIL /clock: RTF overall 0.5, expected >= 0.9 (min_rtf)')), '')
    assert not failed.ok
    with pytest.raises(AssertionError) as info:
        failed.assert_ok()
    assert str(info.value).splitlines() == [
        'deadline expectations failed:',
        'FAIL /a: deadline misses 3, expected <= 0 (max_misses)',
        'FAIL /clock: RTF overall 0.5, expected >= 0.9 (min_rtf)']
    testing.MonitorResult(0, _summary((True, 'ok')), '').assert_ok()
    with pytest.raises(AssertionError, match='exited with 2 and no summary:\nERROR: bad'):
        testing.MonitorResult(2, None, 'ERROR: bad\n').assert_ok()
    path = tmp_path / 'summary.json'
    path.write_text(json.dumps(_summary((False, 'FAIL /a: x'))))
    with pytest.raises(AssertionError, match='FAIL /a: x'):
        testing.assert_summary(path)
    path.write_text(json.dumps(_summary((True, 'ok'))))
    assert testing.assert_summary(path)['verdict']


def _interval(max_ms):
    return SimpleNamespace(max_ms=max_ms)


def _stats(messages, misses, max_ms, rate, rtf_bin_min, period_ms=10.0):
    topic = SimpleNamespace(
        name='cmd', topic='/cmd', timer_clock='wall', messages_total=messages,
        deadline_misses_total=misses, skipped_periods_total=0, messages_lost_total=0,
        loss_known=True, period_ms=period_ms, interval_wall=_interval(max_ms),
        interval_sim=_interval(NAN), rate_wall_hz=rate, rate_sim_hz=NAN)
    clock = SimpleNamespace(messages_total=10, rtf_total=1.0, rtf_bin_min=rtf_bin_min,
                            rtf_bin_s=0.1)
    return SimpleNamespace(topics=[topic], clock=clock)


def test_watched_reports_fold_into_whole_run_figures():
    topics, clock = {}, {}
    for stats in (_stats(100, 0, 30.0, 99.0, 0.4), _stats(200, 2, 12.0, 90.0, 0.9),
                  _stats(300, 2, NAN, NAN, NAN)):
        testing._fold(topics, clock, stats)
    figures = testing._figures(topics, clock)
    cmd = figures.topics[0]
    assert (cmd.messages, cmd.deadline_misses, cmd.skipped_periods) == (300, 2, 0)
    assert cmd.max_interval_ns == 30e6  # the longest of every window
    assert cmd.rate_hz == 90.0  # the lowest window rate
    assert cmd.miss_ratio == pytest.approx(2 / 300)
    assert figures.clock.rtf_bin_min == 0.4
    verdict = evaluate(expectations_from({'topic.cmd.expect.max_interval_ms': 20.0,
                                          'clock.expect.min_rtf': 0.9}, ['cmd']), figures)
    assert [o.passed for o in verdict.outcomes] == [False, True]


def test_a_watched_topic_without_a_period_is_unknown():
    topics, clock = {}, {}
    testing._fold(topics, clock, _stats(5, 0, NAN, NAN, NAN, period_ms=NAN))
    verdict = evaluate(expectations_from({'topic.cmd.expect.max_misses': 0}, ['cmd']),
                       testing._figures(topics, clock))
    assert verdict.outcomes[0].reason == 'unknown: the period was never learned'
