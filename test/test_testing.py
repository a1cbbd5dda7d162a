"""``ros2_deadline_monitor.testing`` without a monitor: parameters, results, watched figures.

The helper against the installed monitor and the demo controller: test/live/test_gate_live.py.
"""

from __future__ import annotations

import json
import math

import pytest

from ros2_deadline_monitor import testing
from ros2_deadline_monitor.analysis.figures import record, RUN_CLOCK, RUN_TOPIC
from ros2_deadline_monitor.analysis.stats_fold import StatsFold

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


def _stats(messages, misses, window_max_ms, rtf_bin_min, period_ms=10.0, *, cycles=None,
           intervals=0, sum_s=0.0, max_run_ms=NAN, rate=NAN):
    """Return a ``MonitorStats`` of one wall-clock topic 'cmd' and the clock."""
    from ros2_deadline_monitor.msg import ClockStats, IntervalStats, MonitorStats, TopicStats

    topic = TopicStats(
        name='cmd', topic='/cmd', timer_clock='wall', messages_total=messages,
        deadline_misses_total=misses, skipped_periods_total=0, messages_lost_total=0,
        loss_known=True, period_ms=period_ms, rate_wall_hz=rate,
        interval_wall=IntervalStats(clock='wall', max_ms=window_max_ms), kind='timer',
        cycles_total=messages if cycles is None else cycles, intervals_wall_total=intervals,
        interval_wall_sum_s=sum_s, interval_wall_max_run_ms=max_run_ms)
    clock = ClockStats(messages_total=10, rtf_total=1.0, rtf_bin_min=rtf_bin_min,
                       rtf_bin_s=0.1)
    return MonitorStats(topics=[topic], clock=clock)


def _watched(*reports, expect=None, clock_expect=None):
    fold = StatsFold()
    for stats in reports:
        fold.add(stats)
    return testing.judge_watched(fold, reports[-1], expect, clock_expect)


def test_watched_reports_fold_into_whole_run_figures():
    # The whole run's figures come from the last report's cumulative fields: the longest
    # interval of the run (30 ms, although no report's window still holds it at the end) and
    # the mean rate over every interval (299 in 3.05 s), not the lowest window's (90 Hz).
    result = _watched(
        _stats(100, 0, 30.0, 0.4, intervals=99, sum_s=1.0, max_run_ms=30.0, rate=99.0),
        _stats(200, 2, 12.0, 0.9, intervals=199, sum_s=2.03, max_run_ms=30.0, rate=90.0),
        _stats(300, 2, NAN, NAN, intervals=299, sum_s=3.05, max_run_ms=30.0, rate=NAN),
        expect={'cmd': {'max_interval_ms': 20.0, 'min_rate_hz': 95.0, 'max_misses': 2}},
        clock_expect={'min_rtf_bin': 0.5})
    cmd = record(RUN_TOPIC, result.snapshot, result.snapshot.topics[0])
    assert (cmd['messages'], cmd['deadline_misses'], cmd['skipped_periods']) == (300, 2, 0)
    assert cmd['max_interval_ms'] == 30.0
    assert cmd['rate_hz'] == pytest.approx(299 / 3.05)
    assert cmd['miss_ratio'] == pytest.approx(2 / 300)
    clock = record(RUN_CLOCK, result.snapshot, result.snapshot.clock)
    assert clock['rtf_bin_min'] == 0.4  # the worst watched window
    assert [(o.key, o.passed) for o in result.verdict.outcomes] == [
        ('max_misses', True), ('max_interval_ms', False), ('min_rate_hz', True),
        ('min_rtf_bin', False)]
    assert result.reports == 3


def test_a_monitor_restart_adds_the_runs():
    # The counters drop: the monitor restarted. Totals of both runs are added, the longest
    # interval is the longest of both, the rate is over both runs' intervals.
    result = _watched(
        _stats(100, 1, 10.0, NAN, intervals=99, sum_s=1.0, max_run_ms=25.0),
        _stats(50, 2, 10.0, NAN, intervals=49, sum_s=0.5, max_run_ms=11.0))
    cmd = record(RUN_TOPIC, result.snapshot, result.snapshot.topics[0])
    assert (cmd['messages'], cmd['deadline_misses'], cmd['cycles']) == (150, 3, 150)
    assert cmd['max_interval_ms'] == 25.0
    assert cmd['rate_hz'] == pytest.approx(148 / 1.5)


def test_a_watched_topic_without_a_period_is_unknown():
    result = _watched(_stats(5, 0, NAN, NAN, period_ms=NAN),
                      expect={'cmd': {'max_misses': 0, 'min_rate_hz': 1.0}})
    assert [o.reason for o in result.verdict.outcomes] == [
        'unknown: the period was never learned (5 messages)',
        'unknown: no interval on the wall clock']


def test_reports_without_the_whole_run_fields_leave_them_unknown():
    # A bag recorded by an older monitor: its TopicStats lack cycles_total and the interval
    # totals. Counts still add up; the run's figures are unknown, never 0.
    from types import SimpleNamespace

    old = {'kind', 'counts_note', 'cycles_total', 'intervals_wall_total',
           'intervals_sim_total', 'interval_wall_sum_s', 'interval_sim_sum_s',
           'interval_wall_max_run_ms', 'interval_sim_max_run_ms'}
    stats = _stats(100, 3, 20.0, NAN, intervals=99, sum_s=1.0, max_run_ms=20.0)
    topic = stats.topics[0]
    stats = SimpleNamespace(header=stats.header, window_wall_s=stats.window_wall_s,
                            clock=stats.clock, topics=[SimpleNamespace(**{
                                name: getattr(topic, name)
                                for name in topic.get_fields_and_field_types()
                                if name not in old})])
    result = _watched(stats, expect={'cmd': {'max_misses': 3, 'max_miss_ratio': 0.5,
                                             'min_rate_hz': 1.0}})
    assert [(o.key, o.passed, o.measured) for o in result.verdict.outcomes] == [
        ('max_misses', True, 3), ('max_miss_ratio', False, None),
        ('min_rate_hz', False, None)]
    assert result.verdict.outcomes[1].reason == 'unknown: no cycle was analyzed'
