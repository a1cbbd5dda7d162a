"""Parameter values to configs: defaults, conversions and every rejection reason."""

from __future__ import annotations

import math

import pytest

from ros2_deadline_monitor.analysis.config import (
    DEFAULT_JITTER_FRACTION,
    NS_PER_MS,
    resolve_timing,
)
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.parameters import (
    check_unique_topics,
    is_double,
    is_monitor_parameter,
    parse_topic_ids,
    settings_from,
    split_topic_param,
    topic_config_from,
    unknown_own_parameters,
    unknown_parameter_warnings,
)


def config(use_sim_time: bool = False, **values):
    return topic_config_from('imu', {f'topic.imu.{k}': v for k, v in values.items()},
                             use_sim_time)


def test_topic_defaults_follow_the_design():
    cfg = config()
    assert cfg.topic == 'imu'
    assert cfg.period_ns is None and cfg.deadline_ns is None
    assert cfg.jitter_tolerance_ns is None  # the core's 5 % of the (learned) period
    assert cfg.rule is None and cfg.effective_rule == 'interval'
    assert cfg.stamp == 'auto'  # docs/design.md, Cycles: the data decides
    assert cfg.stamp_field == 'header.stamp'
    assert cfg.clock == 'wall'
    assert config(use_sim_time=True).clock == 'sim'
    assert cfg.wall_budget_ns is None and cfg.timeout_ns is None and cfg.qos_deadline_ns is None


def test_units_are_converted_to_integer_nanoseconds():
    cfg = config(name='/imu/data', period_ms=10.0, deadline_ms=8.5, jitter_tolerance_ms=0.25,
                 rule='response', stamp='start', clock='sim', wall_budget_ms=12.0,
                 timeout_s=2.0, qos_deadline_ms=20.0)
    assert cfg.topic == '/imu/data'
    assert cfg.period_ns == 10 * NS_PER_MS
    assert cfg.deadline_ns == 8_500_000
    assert cfg.jitter_tolerance_ns == 250_000
    assert (cfg.rule, cfg.stamp, cfg.clock) == ('response', 'start', 'sim')
    assert cfg.wall_budget_ns == 12 * NS_PER_MS
    assert cfg.timeout_ns == 2_000_000_000
    assert cfg.qos_deadline_ns == 20 * NS_PER_MS


def test_rate_is_an_alternative_to_the_period():
    assert config(rate_hz=100.0).period_ns == 10 * NS_PER_MS
    assert config(rate_hz=3.0).period_ns == 333_333_333
    with pytest.raises(ConfigError, match='both set'):
        config(rate_hz=100.0, period_ms=10.0)


def jitter_ns(period_ns=10 * NS_PER_MS, **values):
    cfg = config(**values)
    return resolve_timing(cfg, cfg.period_ns or period_ns, cfg.period_ns is None, 1.0).jitter_ns


def test_jitter_percent_applies_when_no_jitter_in_ms_is_given():
    assert jitter_ns(period_ms=10.0, jitter_tolerance_percent=10.0) == 1_000_000
    assert jitter_ns(period_ms=10.0, jitter_tolerance_percent=0.0) == 0
    assert jitter_ns(period_ms=10.0) == round(10 * NS_PER_MS * DEFAULT_JITTER_FRACTION)
    assert jitter_ns(period_ms=10.0, jitter_tolerance_ms=1.5,
                     jitter_tolerance_percent=50.0) == 1_500_000
    # A learned period gets the configured percentage too.
    assert jitter_ns(period_ns=20 * NS_PER_MS, jitter_tolerance_percent=10.0) == 2_000_000


@pytest.mark.parametrize(('values', 'reason'), [
    ({'period_ms': -1.0}, 'topic.imu.period_ms'),
    ({'period_ms': math.nan}, 'topic.imu.period_ms'),
    ({'deadline_ms': math.inf}, 'topic.imu.deadline_ms'),
    ({'period_ms': 4e6}, 'at most one hour'),
    ({'rate_hz': 1e-6}, 'topic.imu.rate_hz'),
    ({'rule': 'bogus'}, 'topic.imu.rule must be one of auto, interval, response'),
    ({'stamp': 'end'}, 'topic.imu.stamp'),
    ({'stamp_field': 'header..stamp'}, 'topic.imu.stamp_field: '),
    ({'stamp_field': 'transforms[x].header.stamp'}, 'topic.imu.stamp_field: '),
    ({'stamp_field': ''}, 'topic.imu.stamp_field: '),
    ({'stamp_field': 5}, 'topic.imu.stamp_field: '),
    ({'clock': 'tai'}, 'topic.imu.clock'),
    ({'name': 'not a topic'}, 'topic.imu.name'),
    ({'name': '/a//b'}, 'topic.imu.name'),
    ({'jitter_tolerance_percent': 150.0}, 'jitter_tolerance_percent'),
])
def test_invalid_topic_values_are_rejected_with_the_parameter_named(values, reason):
    with pytest.raises(ConfigError, match=reason.replace('.', r'\.')):
        config(**values)


def test_topic_identifiers_are_checked():
    assert parse_topic_ids(['imu', 'cmd_vel2']) == ['imu', 'cmd_vel2']
    assert parse_topic_ids(None) == []
    with pytest.raises(ConfigError, match='listed twice'):
        parse_topic_ids(['imu', 'imu'])
    with pytest.raises(ConfigError, match='must start with a letter'):
        parse_topic_ids(['/imu'])


def test_two_identifiers_may_not_watch_one_topic():
    a = topic_config_from('a', {'topic.a.name': '/x'}, False)
    b = topic_config_from('b', {'topic.b.name': '/x'}, False)
    with pytest.raises(ConfigError, match="already monitored as 'a'"):
        check_unique_topics([a, b])


def test_global_settings_defaults_and_rejections():
    settings = settings_from({})
    assert settings.stats_period_ns == 1_000_000_000
    assert settings.clock_topic == '/clock'
    assert settings.simulator_rtf_topic == ''
    assert settings.arrival_timestamp == 'source_timestamp'
    assert settings.hardware_id
    received = settings_from({'arrival_timestamp': 'received'})
    assert received.arrival_timestamp == 'received_timestamp'
    with pytest.raises(ConfigError, match='window_cycles must be an integer'):
        settings_from({'window_cycles': 'many'})
    with pytest.raises(ConfigError, match='target_rtf must be a number'):
        settings_from({'target_rtf': '1.0'})
    with pytest.raises(ConfigError, match='rtf_error_fraction'):
        settings_from({'rtf_warn_fraction': 0.5, 'rtf_error_fraction': 0.9})
    with pytest.raises(ConfigError, match='stats_period_s'):
        settings_from({'stats_period_s': math.nan})
    with pytest.raises(ConfigError, match='arrival_timestamp'):
        settings_from({'arrival_timestamp': 'now'})
    with pytest.raises(ConfigError, match='clock_topic'):
        settings_from({'clock_topic': 'no spaces'})


def test_parameter_name_helpers():
    assert split_topic_param('topic.imu.period_ms') == ('imu', 'period_ms')
    assert split_topic_param('topic.imu.unknown') is None
    assert split_topic_param('stats_period_s') is None
    assert is_double('topic.imu.period_ms') and is_double('stats_period_s')
    assert not is_double('topic.imu.rule') and not is_double('window_cycles')


def test_the_monitor_owns_its_parameters_and_no_library_s():
    own = ['topics', 'use_sim_time', 'stats_period_s', 'all_topics', 'all_topics.stamp',
           'topic.imu.period_ms', 'topic.imu.expect.max_deadline_misses',
           'clock.expect.min_rtf']
    assert all(is_monitor_parameter(name) for name in own)
    others = ['diagnostic_updater.period', 'start_type_description_service',
              'qos_overrides./clock.subscription.depth', 'clock_topic_typo', 'topicsx']
    assert not any(is_monitor_parameter(name) for name in others)


def test_given_parameters_nothing_declared_are_named_with_a_close_match():
    known = ['topics', 'stats_period_s', 'topic.imu.period_ms', 'diagnostic_updater.period',
             'diagnostic_updater.use_fqn']
    given = ['stats_perod_s', 'topic.imu.period_ms', 'topic.gps.period_ms',
             'qos_overrides./clock.subscription.depth', 'diagnostic_updater.use_fqn',
             'diagnostic_updater.period']
    assert unknown_parameter_warnings(given, known, ['imu']) == [
        'parameter diagnostic_updater.period is ignored: /diagnostics is published at every '
        'report (stats_period_s)',
        'parameter stats_perod_s is unknown and ignored (did you mean stats_period_s?)',
        "parameter topic.gps.period_ms is ignored: 'gps' is not in topics (it is used if "
        "'gps' is added to topics at run time)",
    ]
    assert unknown_parameter_warnings(['diagnostic_updater.use_fqn'], ['topics'], []) == [
        'parameter diagnostic_updater.use_fqn is unknown and ignored']


def test_a_typo_under_the_monitors_own_prefixes_is_refused_with_a_close_match():
    known = ['topics', 'topic.imu.period_ms', 'topic.imu.name', 'clock.expect.min_rtf',
             'camera.exposure_ms']
    given = ['topic.imu.perod_ms', 'topic.gps.perod_ms', 'topic.gps.period_ms',
             'clock.expect.min_rft', 'all_topics.stampp', 'all_topics.stamp',
             'camera.exposure', 'frame_id', 'topic.imu.period_ms']
    assert unknown_own_parameters(given, known, ['imu']) == [
        'unknown parameter all_topics.stampp (did you mean all_topics.stamp?)',
        'unknown parameter clock.expect.min_rft (did you mean clock.expect.min_rtf?)',
        'unknown parameter topic.gps.perod_ms (did you mean topic.gps.period_ms?)',
        'unknown parameter topic.imu.perod_ms (did you mean topic.imu.period_ms?)',
    ]
    # Another node's parameters (a shared /** file) and settings that apply later: warnings.
    assert unknown_parameter_warnings(given, known, ['imu']) == [
        'parameter all_topics.stamp is ignored: all_topics is false',
        'parameter camera.exposure is unknown and ignored (did you mean camera.exposure_ms?)',
        'parameter frame_id is unknown and ignored',
        "parameter topic.gps.period_ms is ignored: 'gps' is not in topics (it is used if "
        "'gps' is added to topics at run time)",
    ]


def test_stamp_field_is_passed_on_after_its_syntax_is_checked():
    cfg = config(stamp_field='transforms[0].header.stamp', stamp='start')
    assert cfg.stamp_field == 'transforms[0].header.stamp'
