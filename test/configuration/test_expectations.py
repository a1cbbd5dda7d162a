"""Expectations: parsing, validation and evaluation against hand-made snapshots."""

from __future__ import annotations

import math

import pytest

from ros2_deadline_monitor.analysis.errors import ConfigError, ExpectationError
from ros2_deadline_monitor.analysis.reports import IntervalTotals, RunTotals
from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot
from ros2_deadline_monitor.configuration.expectations import (
    evaluate,
    expectation_names,
    Expectations,
    expectations_from,
    parse_limit,
)

MS = 1_000_000
S = 1_000_000_000


@pytest.fixture(autouse=True)
def _builder(snapshots) -> None:
    global BUILD
    BUILD = snapshots


def topic(topic_id: str = 'cmd', rate_count: int = 98, **report) -> TopicSnapshot:
    """500 messages (cycles) on sim time: 20 misses, 10 skipped, 0 lost, max 22.5 ms, 98 Hz."""
    values = dict(topic=f'/demo/{topic_id}', timer_clock='sim', messages_total=500,
                  deadline_misses_total=20, skipped_periods_total=10, messages_lost_total=0)
    values.update(report)
    sim = IntervalTotals('sim', rate_count, S if rate_count else 0,
                         22.5 * MS if rate_count else math.nan)
    return BUILD.topic(topic_id, topic=f'/demo/{topic_id}',
                       report=BUILD.topic_report(**values),
                       run=RunTotals(cycles=500, interval_sim=sim))


def run(*topics: TopicSnapshot, with_clock: bool = True) -> Snapshot:
    report = BUILD.clock_report(rtf_total=0.9995, rtf_bin_min_run=0.8,
                                messages_total=5000 if with_clock else 0)
    return BUILD.snapshot(topics=topics or (topic(),), clock=BUILD.clock(report=report))


# -- parsing ----------------------------------------------------------------------------------

def test_reads_topic_and_clock_limits_and_ignores_other_parameters() -> None:
    exp = expectations_from({
        'topics': ['cmd'], 'topic.cmd.name': '/demo/cmd', 'window_s': 5.0,
        'topic.cmd.expect.max_misses': 0, 'topic.cmd.expect.max_interval_ms': 12.5,
        'clock.expect.min_rtf': 0.95, 'clock.expect.min_rtf_bin': None,
    }, ['cmd'])
    assert {limit.key: limit.value for limit in exp.topics['cmd']} == {
        'max_misses': 0.0, 'max_interval_ms': 12.5}
    assert [(limit.key, limit.value) for limit in exp.clock] == [('min_rtf', 0.95)]
    assert not exp.empty
    assert expectations_from({'topics': ['cmd']}, ['cmd']).empty


def test_yaml_null_read_as_a_string_is_no_limit() -> None:
    # rcl reads `null` and `~` in a params file as strings; `ros2 param dump` writes an
    # unset expectation as `null`, and the dump must load back.
    exp = expectations_from({'clock.expect.min_rtf': 'null', 'clock.expect.min_rtf_bin': '~',
                             'topic.cmd.expect.max_misses': 'NULL',
                             'topic.cmd.expect.max_lost': 3}, ['cmd'])
    assert exp.clock == ()
    assert [(limit.key, limit.value) for limit in exp.topics['cmd']] == [('max_lost', 3.0)]
    with pytest.raises(ExpectationError, match='must be a number'):
        expectations_from({'clock.expect.min_rtf': 'none'}, [])


def test_unknown_key_is_named_with_a_close_match() -> None:
    with pytest.raises(ExpectationError, match=r"topic\.cmd\.expect\.max_mises: unknown "
                       r"expectation 'max_mises' \(did you mean topic\.cmd\.expect\.max_misses"):
        expectations_from({'topic.cmd.expect.max_mises': 0}, ['cmd'])
    with pytest.raises(ExpectationError, match=r'did you mean clock\.expect\.min_rtf\?'):
        expectations_from({'clock.expect.min_rft': 0.9}, [])
    with pytest.raises(ExpectationError, match=r"unknown expectation 'speed'; known: max_"):
        expectations_from({'topic.cmd.expect.speed': 1}, ['cmd'])


def test_misspelt_expect_section_is_an_error_not_ignored() -> None:
    with pytest.raises(ExpectationError, match=r'topic\.cmd\.expct\.max_misses: unknown '
                       r'parameter; expectations are written topic\.cmd\.expect\.<limit>'):
        expectations_from({'topic.cmd.expct.max_misses': 0}, ['cmd'])
    with pytest.raises(ExpectationError, match='clock.expect.<limit>'):
        expectations_from({'clock.min_rtf': 0.9}, [])
    with pytest.raises(ExpectationError, match='must be a mapping of limits'):
        expectations_from({'topic.cmd.expect': 3}, ['cmd'])


def test_expectation_for_an_unlisted_topic_is_an_error() -> None:
    with pytest.raises(ExpectationError, match=r"'imu' is not listed in topics \(cmd\)"):
        expectations_from({'topic.imu.expect.max_misses': 0}, ['cmd'])


@pytest.mark.parametrize(('key', 'value', 'match'), [
    ('max_misses', -1, 'must be ≥ 0'),
    ('max_interval_ms', -0.5, 'must be ≥ 0'),
    ('max_misses', 'none', 'must be a number'),
    ('max_misses', True, 'must be a number'),
    ('max_misses', 2.5, 'must be a whole number'),
    ('max_miss_ratio', 1.5, 'must be at most 1'),
    ('min_rate_hz', float('nan'), 'must be a finite number'),
    ('min_rate_hz', float('inf'), 'must be a finite number'),
])
def test_bad_limits_are_config_errors(key: str, value, match: str) -> None:
    with pytest.raises(ConfigError, match=f'topic.cmd.expect.{key} {match}'):
        expectations_from({f'topic.cmd.expect.{key}': value}, ['cmd'])


def test_flag_limits_parse_and_validate() -> None:
    assert parse_limit('max_misses', '3').value == 3.0
    assert parse_limit('min_rtf', '0.9', clock=True).value == 0.9
    with pytest.raises(ExpectationError, match=r'--expect-max-misses must be ≥ 0'):
        parse_limit('max_misses', '-1')
    with pytest.raises(ExpectationError, match=r"--expect-max-lost must be a number, got 'x'"):
        parse_limit('max_lost', 'x')


def test_names_for_declaring_parameters() -> None:
    names = expectation_names(['cmd'])
    assert 'clock.expect.min_rtf' in names and 'topic.cmd.expect.max_lost' in names
    assert len(names) == 2 + 8
    assert 'topic.cmd.expect.max_transform_gap_ms' in names


# -- evaluation -------------------------------------------------------------------------------

def test_reference_run_fails_misses_and_passes_rtf() -> None:
    exp = expectations_from({'topic.cmd.expect.max_misses': 0,
                             'topic.cmd.expect.max_skipped': 10,
                             'topic.cmd.expect.max_interval_ms': 20.0,
                             'topic.cmd.expect.min_rate_hz': 95,
                             'clock.expect.min_rtf': 0.99}, ['cmd'])
    verdict = evaluate(exp, run())
    assert not verdict.ok
    failed = {(o.key, o.measured, o.limit) for o in verdict.failed}
    assert failed == {('max_misses', 20, 0), ('max_interval_ms', 22.5, 20.0)}
    assert {o.key for o in verdict.passed} == {'max_skipped', 'min_rate_hz', 'min_rtf'}
    line = next(o for o in verdict.failed if o.key == 'max_interval_ms').line()
    assert line == ('FAIL /demo/cmd: max interval 22.5 ms, expected <= 20 ms '
                    '(max_interval_ms)')
    assert next(o for o in verdict.passed if o.key == 'min_rtf').line() == (
        'ok   /clock: RTF overall 0.9995, expected >= 0.99 (min_rtf)')


def test_limits_are_inclusive() -> None:
    exp = Expectations(every_topic=(parse_limit('max_misses', '20'),
                                    parse_limit('min_rate_hz', '98')))
    assert evaluate(exp, run()).ok


def test_unknown_loss_fails_as_unknown_never_passes() -> None:
    figures = run(topic(loss_known=False, loss_note='several writers'))
    verdict = evaluate(Expectations(every_topic=(parse_limit('max_lost', '1000'),)), figures)
    outcome, = verdict.failed
    assert outcome.measured is None and outcome.measured_text == 'unknown'
    assert outcome.line() == ('FAIL /demo/cmd: messages lost unknown, expected <= 1,000 '
                              '(max_lost): unknown: several writers')


def test_nan_figure_is_unknown() -> None:
    verdict = evaluate(Expectations(every_topic=(parse_limit('min_rate_hz', '1'),)),
                       run(topic(rate_count=0)))
    assert verdict.failed[0].reason == 'unknown: no interval on the sim clock'


def test_flags_apply_to_every_topic_and_override_the_file() -> None:
    exp = expectations_from({'topic.a.expect.max_misses': 0,
                             'topic.a.expect.max_skipped': 0}, ['a', 'b'])
    exp = exp.with_overrides(every_topic=[parse_limit('max_misses', '25')])
    verdict = evaluate(exp, run(topic('a'), topic('b')))
    by = {(o.topic_id, o.key): o.passed for o in verdict.outcomes}
    assert by == {('a', 'max_misses'): True, ('a', 'max_skipped'): False,
                  ('b', 'max_misses'): True}


def test_topic_missing_from_the_run_fails() -> None:
    exp = expectations_from({'topic.imu.expect.max_misses': 0}, ['cmd', 'imu'])
    outcome, = evaluate(exp, run(topic('cmd'))).outcomes
    assert (outcome.topic_id, outcome.passed) == ('imu', False)
    assert outcome.reason == 'unknown: the topic is not in the run'


def test_clock_limits_without_clock_fail() -> None:
    exp = Expectations(clock=(parse_limit('min_rtf_bin', '0.5', clock=True),))
    outcome, = evaluate(exp, run(with_clock=False)).outcomes
    assert not outcome.passed and outcome.reason == 'unknown: no /clock in the run'
    assert evaluate(exp, run()).ok


def test_no_expectations_is_a_vacuous_pass() -> None:
    verdict = evaluate(Expectations(), run())
    assert verdict.ok and verdict.outcomes == ()


def test_every_topic_limit_without_topics_fails() -> None:
    exp = Expectations(every_topic=(parse_limit('max_misses', '0'),))
    outcome, = evaluate(exp, BUILD.snapshot(topics=())).outcomes
    assert not outcome.passed
    assert outcome.line() == ('FAIL (every topic): deadline misses unknown, expected <= 0 '
                              '(max_misses): unknown: no topic was analyzed')
