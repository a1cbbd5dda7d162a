"""The live gate's adapter: whole-run figures of a session snapshot, and the summary record."""

import json
import math

import numpy as np
import pytest

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.figures import record as run_record
from ros2_deadline_monitor.analysis.figures import RUN_CLOCK, RUN_TOPIC
from ros2_deadline_monitor.analysis.session import Session
from ros2_deadline_monitor.configuration.expectations import evaluate, expectations_from
from ros2_deadline_monitor.outputs.gate import (
    exit_code,
    EXIT_FAILED,
    EXIT_OK,
    SUMMARY_FORMAT,
    summary_record,
)

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S


def wall_session(**topic):
    s = Session(AnalysisConfig(window_cycles=8), use_sim_time=False, start_wall_ns=OFF)
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', stamp='start', **topic)})
    return s


def feed(s, starts, run_ns=MS, report_every=None):
    """Messages stamped with ``starts``, each ending ``run_ns`` later; reports now and then."""
    for i, start in enumerate(starts):
        s.message('cmd', int(start) + run_ns, int(start), i + 1, 64)
        if report_every and i % report_every == report_every - 1:
            s.snapshot(int(start) + run_ns)


def test_whole_run_figures_are_exact_beyond_the_window():
    # 100 cycles of 10 ms, one 30 ms gap early: the window (8 cycles) forgot it long ago.
    starts = OFF + 10 * MS * np.arange(100)
    starts[20:] += 20 * MS
    s = wall_session(period_ns=10 * MS)
    feed(s, starts, report_every=7)
    snap = s.snapshot(int(starts[-1]) + 2 * MS, final=True)
    topic = snap.topics[0]
    assert topic.report.interval_wall.max_ns == 10 * MS  # the window's
    run = topic.run
    assert run.cycles == 100
    assert run.interval_wall.count == 99
    assert run.interval_wall.max_ns == 30 * MS
    assert run.interval_wall.sum_ns == int(starts[-1] - starts[0])
    figures = run_record(RUN_TOPIC, snap, topic)
    assert figures['max_interval_ms'] == 30
    assert figures['rate_hz'] == pytest.approx(99 / ((starts[-1] - starts[0]) / S))
    assert figures['deadline_misses'] == topic.report.deadline_misses_total
    assert figures['miss_ratio'] == pytest.approx(topic.report.deadline_misses_total / 100)
    assert figures['messages_lost'] == 0


def test_a_topic_without_messages_fails_every_expectation_as_unknown():
    s = wall_session()
    snap = s.snapshot(OFF + S, final=True)
    expectations = expectations_from({'topic.cmd.expect.max_misses': 0,
                                      'topic.cmd.expect.min_rate_hz': 5.0}, ['cmd'])
    verdict = evaluate(expectations, snap)
    assert [o.passed for o in verdict.outcomes] == [False, False]
    assert verdict.outcomes[0].reason == 'unknown: no message received'
    assert verdict.outcomes[1].reason == 'unknown: no interval on the wall clock'
    assert exit_code(verdict) == EXIT_FAILED


def test_no_clock_fails_clock_expectations_and_a_clock_gives_the_worst_bin_of_the_run():
    s = Session(AnalysisConfig(rtf_bin_ns=100 * MS), use_sim_time=True, start_wall_ns=OFF)
    expectations = expectations_from({'clock.expect.min_rtf_bin': 0.9}, [])
    none = evaluate(expectations, s.snapshot(OFF + S))
    assert none.outcomes[0].reason == 'unknown: no /clock in the run'
    # 1 ms steps at RTF 1, except 100 ms of wall in which sim time advances 50 ms (RTF 0.5),
    # reported early; later reports only see RTF 1 windows.
    wall, sim = OFF, 0
    for i in range(3000):
        s.clock_sample(wall, sim)
        wall += 2 * MS if 1000 <= i < 1050 else MS
        sim += MS
        if i % 250 == 0:
            s.snapshot(wall)
    snap = s.snapshot(wall, final=True)
    assert snap.clock.report.rtf_bin_min == pytest.approx(1.0)  # the last window
    clock = run_record(RUN_CLOCK, snap, snap.clock)
    assert clock['rtf_bin_min'] == pytest.approx(0.5)
    verdict = evaluate(expectations, snap)
    assert not verdict.ok and verdict.outcomes[0].measured == pytest.approx(0.5)


def test_summary_record_is_json_with_every_expectation():
    starts = OFF + 10 * MS * np.arange(50)
    starts[30:] += 15 * MS  # one 25 ms interval: misses and skipped periods
    s = wall_session(period_ns=10 * MS)
    feed(s, starts)
    snap = s.snapshot(int(starts[-1]) + 2 * MS, final=True)
    expectations = expectations_from({'topic.cmd.expect.max_misses': 0,
                                      'topic.cmd.expect.max_interval_ms': 30.0}, ['cmd'])
    verdict = evaluate(expectations, snap)
    record = json.loads(json.dumps(
        summary_record(snap, verdict, node='/deadline_monitor', stopped_by='duration'),
        allow_nan=False))
    assert record['format'] == SUMMARY_FORMAT and record['version'] == 3
    assert record['stopped_by'] == 'duration'
    topic = record['topics'][0]
    report = snap.topics[0].report
    assert topic['messages'] == topic['cycles'] == 50
    assert topic['deadline_misses'] == report.deadline_misses_total > 0
    assert topic['skipped_periods'] == report.skipped_periods_total == 1
    assert topic['max_interval_wall_ms'] == 25.0
    assert topic['max_interval_sim_ms'] is None  # no /clock: null, never NaN
    assert record['clock']['rtf_total'] is None
    outcomes = record['verdict']['expectations']
    assert [(o['key'], o['passed']) for o in outcomes] == [('max_misses', False),
                                                           ('max_interval_ms', True)]
    assert outcomes[0]['measured'] == report.deadline_misses_total
    assert outcomes[0]['limit'] == 0
    assert outcomes[1]['measured'] == 25.0
    assert record['verdict']['ok'] is False and record['exit_code'] == EXIT_FAILED


def test_no_expectations_pass():
    s = wall_session()
    verdict = evaluate(expectations_from({}, ['cmd']), s.snapshot(OFF))
    assert verdict.ok and exit_code(verdict) == EXIT_OK


def test_an_invalid_topic_fails_its_expectations_with_the_reason():
    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    s.configure({}, {'cmd': 'topic.cmd.rule must be one of interval, response'})
    verdict = evaluate(expectations_from({'topic.cmd.expect.max_skipped': 0}, ['cmd']),
                       s.snapshot(OFF))
    assert verdict.outcomes[0].reason.startswith('unknown: not monitored: invalid config')
    assert not math.isnan(verdict.outcomes[0].limit)


def test_a_configured_topic_that_never_showed_up_passes_no_count():
    # A period is configured, yet no message came: 0 misses is no figure a gate may pass.
    s = wall_session(period_ns=10 * MS)
    snap = s.snapshot(OFF + S, final=True)
    verdict = evaluate(expectations_from({'topic.cmd.expect.max_misses': 0,
                                          'topic.cmd.expect.max_skipped': 0,
                                          'topic.cmd.expect.max_miss_ratio': 0.1}, ['cmd']),
                       snap)
    assert [(o.passed, o.reason) for o in verdict.outcomes] == [
        (False, 'unknown: no message received')] * 3
