import math

import pytest

from ros2_deadline_monitor.analysis.config import (
    AnalysisConfig,
    duration_ns,
    NS_PER_MS,
    resolve_timing,
    Thresholds,
    TopicConfig,
)
from ros2_deadline_monitor.analysis.errors import ConfigError

MS = NS_PER_MS


def test_defaults_follow_the_design():
    c = TopicConfig(name='cmd', topic='/cmd', stamp='start', clock='sim')
    assert c.effective_rule == 'response'
    t = resolve_timing(c, 10 * MS, True, target_rtf=0.5)
    assert (t.deadline_ns, t.jitter_ns, t.wall_budget_ns) == (10 * MS, MS // 2, 20 * MS + MS // 2)
    assert TopicConfig(name='a', topic='/a').effective_rule == 'interval'
    learned = resolve_timing(TopicConfig(name='a', topic='/a', jitter_fraction=0.2), 10 * MS,
                             True, 1.0)
    assert learned.jitter_ns == 2 * MS


@pytest.mark.parametrize('changes, match', [
    ({'period_ns': -1}, 'topic.cmd.period'),
    ({'period_ns': 0}, 'topic.cmd.period'),
    ({'deadline_ns': 10 ** 19}, 'topic.cmd.deadline'),
    ({'rule': 'fastest'}, 'topic.cmd.rule'),
    ({'stamp': 'end'}, 'topic.cmd.stamp'),
    ({'stamp_field': 'a.[0]'}, r'topic\.cmd\.stamp_field: .*part 2'),
    ({'clock': 'steady'}, 'topic.cmd.clock'),
    ({'topic': 'not a topic'}, 'invalid topic name'),
    ({'topic': '/a//b'}, 'invalid topic name'),
    ({'name': 'has/slash'}, 'identifier'),
    ({'jitter_fraction': float('nan')}, 'topic.cmd.jitter_tolerance_percent'),
    ({'jitter_fraction': 2.0}, 'topic.cmd.jitter_tolerance_percent'),
])
def test_invalid_values_are_rejected_with_the_parameter_named(changes, match):
    with pytest.raises(ConfigError, match=match):
        TopicConfig(**{'name': 'cmd', 'topic': '/cmd', **changes})


@pytest.mark.parametrize('value', [math.nan, math.inf, -1.0, 0.0, 1e30])
def test_duration_conversion_rejects_nonsense(value):
    with pytest.raises(ConfigError, match='topic.x.period_ms'):
        duration_ns('topic.x.period_ms', value, MS)


def test_duration_conversion():
    assert duration_ns('p', 10.5, MS) == 10_500_000
    assert duration_ns('j', 0.0, MS, zero_ok=True) == 0


def test_thresholds_and_analysis_validation():
    with pytest.raises(ConfigError, match='miss_ratio_error'):
        Thresholds(miss_ratio_error=math.nan)
    with pytest.raises(ConfigError, match='rtf_error_fraction'):
        Thresholds(rtf_warn_fraction=0.5, rtf_error_fraction=0.9)
    with pytest.raises(ConfigError, match='target_rtf'):
        AnalysisConfig(target_rtf=0)
    with pytest.raises(ConfigError, match='window_cycles'):
        AnalysisConfig(window_cycles=1)


def test_a_stamp_is_required_for_start_or_a_chosen_field():
    assert not TopicConfig(name='a', topic='/a').stamp_required
    assert TopicConfig(name='a', topic='/a', stamp='start').stamp_required
    assert TopicConfig(name='a', topic='/a', stamp_field='transforms[0].header.stamp'
                       ).stamp_required
