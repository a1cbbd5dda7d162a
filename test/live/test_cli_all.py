"""`monitor --all`: parsing and the parameters it stands for (no ROS run)."""

from __future__ import annotations

import pytest

from ros2_deadline_monitor.configuration.usage import UsageError
from ros2_deadline_monitor.live.cli import parse_command_line, topic_overrides


def test_all_alone_sets_all_topics_and_leaves_topics_as_configured():
    command = parse_command_line(['--all'])
    assert command.all_topics
    values = topic_overrides(command, {'cmd': '/demo/cmd'})
    assert values == {'all_topics': True}


def test_flags_with_all_go_to_the_template_and_to_the_explicit_topics():
    command = parse_command_line(['--all', '/demo/cmd', '--rate-hz', '100', '--stamp',
                                  'start'])
    values = topic_overrides(command, {})
    assert values['all_topics'] is True
    assert values['all_topics.rate_hz'] == 100.0
    assert values['all_topics.period_ms'] == 0.0
    assert values['all_topics.stamp'] == 'start'
    assert values['topics'] == ['demo_cmd']
    assert values['topic.demo_cmd.rate_hz'] == 100.0
    assert values['topic.demo_cmd.stamp'] == 'start'


def test_flags_without_topics_or_all_are_still_refused():
    with pytest.raises(UsageError, match='give --all'):
        parse_command_line(['--period-ms', '10'])


def test_without_all_nothing_about_all_topics_is_set():
    values = topic_overrides(parse_command_line(['/x']), {})
    assert 'all_topics' not in values
    assert not any(name.startswith('all_topics.') for name in values)
