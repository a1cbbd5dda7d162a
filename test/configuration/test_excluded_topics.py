"""Which topics "every topic" means, and the settings every discovered topic gets."""

from __future__ import annotations

import pytest

from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.excluded_topics import (
    excluded_reason,
    EXCLUDED_TOPICS,
    is_hidden,
)
from ros2_deadline_monitor.configuration.parameters import (
    discovered_config,
    is_double,
    settings_from,
    template_names,
    template_param,
)


@pytest.mark.parametrize('topic', sorted(EXCLUDED_TOPICS))
def test_infrastructure_topics_are_excluded(topic):
    assert excluded_reason(topic) == 'infrastructure topic'


@pytest.mark.parametrize('topic', ['/_hidden', '/arm/_private/x', '/nav/_action/feedback',
                                   '/nav/_action/status'])
def test_hidden_topics_and_action_topics_are_excluded(topic):
    assert is_hidden(topic)
    assert excluded_reason(topic) == 'hidden topic'


def test_the_monitors_own_topics_the_clock_and_other_monitors_are_excluded():
    own = '/robot/deadline_monitor'
    assert excluded_reason('/robot/deadline_monitor/stats', own_namespace=own) is not None
    assert excluded_reason('/robot/deadline_monitor_2/stats', own_namespace=own) is None
    assert excluded_reason('/sim/clock', clock_topic='/sim/clock') == 'infrastructure topic'
    assert excluded_reason('/other/stats', ('ros2_deadline_monitor/msg/MonitorStats',))


@pytest.mark.parametrize('topic', ['/tf', '/cmd_vel', '/arm/joint_states', '/a_b/c_'])
def test_ordinary_topics_are_kept(topic):
    assert excluded_reason(topic, ('std_msgs/msg/Header',),
                           own_namespace='/deadline_monitor') is None


def test_all_topics_is_a_setting_and_false_by_default():
    assert settings_from({}).all_topics is False
    assert settings_from({'all_topics': True}).all_topics is True
    with pytest.raises(ConfigError, match='all_topics must be true or false'):
        settings_from({'all_topics': 'yes'})


def test_a_discovered_topic_gets_the_template_settings():
    template = {template_param('period_ms'): 10.0, template_param('stamp'): 'start',
                template_param('clock'): 'auto'}
    config = discovered_config('arm_joints', '/arm/joints', template, use_sim_time=True)
    assert config.name == 'arm_joints'
    assert config.topic == '/arm/joints'
    assert config.period_ns == 10_000_000
    assert config.stamp == 'start'
    assert config.clock == 'sim'
    learned = discovered_config('x', '/x', {}, use_sim_time=False)
    assert learned.period_ns is None
    assert learned.clock == 'wall'


def test_an_invalid_template_names_the_template_parameter():
    with pytest.raises(ConfigError, match=r'all_topics\.period_ms and all_topics\.rate_hz'):
        discovered_config('x', '/x', {template_param('period_ms'): 10.0,
                                      template_param('rate_hz'): 5.0}, use_sim_time=False)


def test_template_parameters_exist_for_every_setting_but_the_name():
    names = template_names()
    assert template_param('name') not in names
    assert template_param('period_ms') in names
    assert is_double(template_param('period_ms'))
    assert not is_double(template_param('stamp'))
