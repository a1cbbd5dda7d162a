"""The `monitor` command line: parsing, checks and the parameters it stands for (no ROS run)."""

from __future__ import annotations

import pytest

from ros2_deadline_monitor.configuration.topic_flags import TopicFlags
from ros2_deadline_monitor.configuration.usage import (
    check_ros_arguments,
    ros_arguments,
    UsageError,
)
from ros2_deadline_monitor.live import watch
from ros2_deadline_monitor.live.cli import (
    build_parser,
    CommandLine,
    main,
    parse_command_line,
    topic_overrides,
)
from ros2_deadline_monitor.live.parameter_declarations import TOPIC_SPECS
from ros2_deadline_monitor.live.rcl_arguments import rcl_reason


def test_topics_and_flags_become_per_topic_parameters():
    command = parse_command_line(['/demo/cmd', '/imu/data', '--period-ms', '10',
                                  '--stamp', 'start', '--deadline-ms', '8', '--rule',
                                  'response', '--clock', 'wall', '--timeout-s', '2'])
    assert command.topics == ('/demo/cmd', '/imu/data')
    assert not command.watch
    values = topic_overrides(command, {})
    assert values['topics'] == ['demo_cmd', 'imu_data']
    assert values['topic.demo_cmd.name'] == '/demo/cmd'
    assert values['topic.imu_data.name'] == '/imu/data'
    for topic_id in ('demo_cmd', 'imu_data'):
        assert values[f'topic.{topic_id}.period_ms'] == 10.0
        assert values[f'topic.{topic_id}.rate_hz'] == 0.0
        assert values[f'topic.{topic_id}.deadline_ms'] == 8.0
        assert values[f'topic.{topic_id}.stamp'] == 'start'
        assert values[f'topic.{topic_id}.rule'] == 'response'
        assert values[f'topic.{topic_id}.clock'] == 'wall'
        assert values[f'topic.{topic_id}.timeout_s'] == 2.0


def test_every_value_has_the_type_of_its_parameter():
    """A float where the node declares a double: an int would be refused like in YAML."""
    command = parse_command_line(['/x', '--rate-hz', '200', '--jitter-ms', '0', '--deadline-ms',
                                  '5', '--timeout-s', '3', '--stamp', 'none', '--rule',
                                  'interval', '--clock', 'sim', '--stamp-field',
                                  'transforms[0].header.stamp'])
    specs = {spec.name: spec for spec in TOPIC_SPECS}
    values = topic_overrides(command, {})
    assert values['topic.x.stamp_field'] == 'transforms[0].header.stamp'
    for name, value in values.items():
        if name.startswith('topic.x.'):
            assert type(value) is type(specs[name.rsplit('.', 1)[1]].default), name


def test_a_rate_clears_a_period_and_a_jitter_in_ms_clears_the_percentage():
    """A flag must win over the params file, not clash with what the file set."""
    assert TopicFlags(rate_hz=200.0).parameters() == {'rate_hz': 200.0, 'period_ms': 0.0}
    assert TopicFlags(jitter_ms=0.0).parameters() == {'jitter_tolerance_ms': 0.0,
                                                      'jitter_tolerance_percent': 0.0}
    assert TopicFlags().parameters() == {}


def test_without_topics_the_configured_list_is_left_alone():
    assert topic_overrides(CommandLine(), {'cmd': '/demo/cmd'}) == {}
    assert parse_command_line([]) == CommandLine()


def test_a_configured_topic_keeps_its_identifier_and_gets_the_flags():
    command = parse_command_line(['/demo/cmd', '/other', '--period-ms', '5'])
    values = topic_overrides(command, {'controller': '/demo/cmd', 'imu': '/imu/data'})
    assert values['topics'] == ['controller', 'imu', 'other']
    assert values['topic.controller.period_ms'] == 5.0
    assert 'topic.controller.name' not in values
    assert not any(name.startswith('topic.imu.') for name in values)
    assert values['topic.other.name'] == '/other'


def test_names_are_compared_resolved():
    command = parse_command_line(['cmd'])
    values = topic_overrides(command, {'controller': '/robot/cmd'},
                             resolve=lambda topic: f'/robot/{topic}')
    assert values == {'topics': ['controller']}


def test_identifiers_are_unique_and_valid():
    command = parse_command_line(['/a/b', '/a_b', '/_9lives', '/controller'])
    values = topic_overrides(command, {'controller': '/demo/cmd'})
    assert values['topics'] == ['controller', 'a_b', 'a_b_2', 't_9lives', 'controller_2']
    assert values['topic.controller_2.name'] == '/controller'


@pytest.mark.parametrize(('argv', 'says'), [
    (['--bogus'], 'unrecognized arguments: --bogus'),
    (['--period-ms', '10'], '--period-ms given but no TOPIC'),
    (['--stamp', 'start', '--rate-hz', '5'], '--rate-hz, --stamp given but no TOPIC'),
    (['bad-name'], "invalid topic name 'bad-name'"),
    (['/a//b'], 'invalid topic name'),
    (['/x', '--period-ms', '0'], 'expected a positive number of milliseconds'),
    (['/x', '--period-ms', 'nan'], 'expected a finite number'),
    (['/x', '--period-ms', '-1'], 'expected a positive number'),
    (['/x', '--period-ms', '1e12'], 'up to one hour'),
    (['/x', '--rate-hz', '0'], 'expected a rate between'),
    (['/x', '--period-ms', '10', '--rate-hz', '100'], 'not allowed with argument'),
    (['/x', '--stamp', 'header'], "invalid choice: 'header'"),
    (['/x', '/x'], 'topic /x is given twice'),
    (['/x', '--stamp-field', 'header..stamp'], 'is not a field path'),
])
def test_bad_command_lines_are_refused_with_a_reason(argv, says):
    with pytest.raises(UsageError) as caught:
        parse_command_line(argv)
    assert says in str(caught.value)


@pytest.mark.parametrize('argv', [
    ['--ros-args', '--log-level', 'bogus'],
    ['--ros-args', '--log-level', 'deadline_monitor:=loud'],
    ['--ros-args', '--log-level'],
    ['--ros-args', '-p', 'a:=1', '--', '--ros-args', '--log-level', 'x'],
])
def test_a_bad_log_level_is_refused_before_rcl_sees_it(argv):
    with pytest.raises(UsageError, match='expected one of debug, info'):
        check_ros_arguments(['/x', *argv])


@pytest.mark.parametrize('level', ['debug', 'INFO', 'Warn', 'deadline_monitor:=debug',
                                   'robot1.deadline_monitor:=error', 'unset'])
def test_valid_log_levels_pass(level):
    check_ros_arguments(['--ros-args', '--log-level', level])


def test_a_missing_params_file_is_named(tmp_path):
    with pytest.raises(UsageError, match='no such file'):
        check_ros_arguments(['--ros-args', '--params-file', str(tmp_path / 'nope.yaml')])
    present = tmp_path / 'monitor.yaml'
    present.write_text('{}\n')
    check_ros_arguments(['--ros-args', '--params-file', str(present)])


def test_ros_argument_sections():
    argv = ['/x', '--ros-args', '-p', 'a:=1', '--', '--watch', '--ros-args', '-r', 'b:=c']
    assert list(ros_arguments(argv)) == [['-p', 'a:=1'], ['-r', 'b:=c']]
    assert list(ros_arguments(['/x'])) == []


def test_rcl_errors_lose_their_source_locations():
    err = RuntimeError("Failed to parse ROS arguments: Couldn't parse remap rule: '-r x'. "
                       'Error: Expected lexeme type (18) not found, at '
                       '/project/src/rcl/lexer_lookahead.c:239, at '
                       '/project/src/rcl/arguments.c:352')
    assert rcl_reason(err) == ("Couldn't parse remap rule: '-r x'. Error: Expected lexeme "
                                'type (18) not found')


def test_help_lists_every_option_and_points_to_the_parameters():
    text = build_parser().format_help()
    for option in ('TOPIC', '--period-ms', '--rate-hz', '--deadline-ms', '--jitter-ms',
                   '--stamp', '--stamp-field', '--rule', '--clock', '--timeout-s', '--watch'):
        assert option in text, option
    assert 'config/monitor.yaml' in text and 'docs/parameters.md' in text
    assert '--params-file' in text and 'Precedence' in text


@pytest.mark.parametrize('argv', [
    ['--bogus'], ['--period-ms', '10'], ['bad-name'], ['/x', '--period-ms', 'nan'],
    ['/x', '--ros-args', '--log-level', 'bogus'], ['/x', '--ros-args', '-r', '__node:='],
    ['/x', '--ros-args', '--params-file', '/nonexistent/monitor.yaml'],
])
def test_main_prints_one_error_line_and_returns_2(argv, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith('ERROR: '), captured.err
    assert 'Traceback' not in captured.err and captured.out == ''


def test_main_help_exits_0(capsys):
    assert main(['--help']) == 0
    assert 'usage: monitor' in capsys.readouterr().out


@pytest.mark.parametrize('argv', [
    ['--bogus'], ['--count', '-1'], ['--count', 'x'], ['--node', 'bad name'],
    ['--ros-args', '--log-level', 'bogus'], ['--ros-args', '-r', '__node:='],
])
def test_watch_refuses_a_bad_command_line_in_one_line(argv, capsys):
    assert watch.main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith('ERROR: '), captured.err
    assert 'Traceback' not in captured.err


def test_quiet_and_watch_choose_the_view():
    assert not parse_command_line(['/a']).quiet
    assert parse_command_line(['/a', '--quiet']).quiet
    assert parse_command_line(['/a', '--watch']).watch
    with pytest.raises(UsageError, match='--quiet: not allowed with argument --watch'):
        parse_command_line(['/a', '--watch', '--quiet'])
