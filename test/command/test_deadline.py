"""``deadline`` and the ``ros2 deadline`` extension: each verb is its program, without ros2cli.

ros2cli is not installable here; the extension must import and register without it (its
stand-in in ``command/extension.py``), and ``deadline <verb>`` must take exactly the program's
arguments and answer as the program does.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from ros2_deadline_monitor.command import deadline, extension
from ros2_deadline_monitor.command.verbs import verb_arguments, VERBS

HELP_MARKS = {
    'monitor': ('--period-ms', '--watch', '--metrics-port', '--ros-args'),
    'watch': ('--namespace', '--count', '--ros-args'),
    'analyze': ('BAG', '--check', '--expect-max-misses', '--junit'),
    'record': ('--output', '--log-time', '--ros-args'),
    'demo': ('--phases', '--duration-s', '--stall-every'),
    'sim_clock': ('ROS parameters', 'target_rtf', '--ros-args'),
    'demo_controller': ('ROS parameters', 'stall_every', '--ros-args'),
    'mujoco_sim': ('ROS parameters', 'model_path', '--ros-args'),
}
"""A few of what each verb's --help must show: the program's own arguments."""


def _options(parser: argparse.ArgumentParser) -> dict[str, tuple]:
    """Every argument of ``parser`` by its first option string or dest, with how it parses."""
    return {(action.option_strings or [action.dest])[0]: (
        action.nargs, action.choices, action.default, action.required, type(action).__name__)
        for action in parser._actions if action.dest not in ('help', 'ros_args')}


def _verb_parser(name: str) -> argparse.ArgumentParser:
    parser, _ = deadline.build_parser([name])
    [subparsers] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return subparsers.choices[name]


def test_the_verbs_are_the_programs_of_ros2_run():
    assert list(VERBS) == list(HELP_MARKS)


@pytest.mark.parametrize('name', list(VERBS))
def test_each_verb_takes_exactly_its_programs_arguments(name):
    program = VERBS[name]().program()
    verb_parser = _verb_parser(name)
    assert _options(verb_parser) == _options(program.build_parser())
    assert verb_parser.epilog == program.build_parser().epilog
    assert verb_parser.prog == f'deadline {name}'
    taken = [a.option_strings for a in verb_parser._actions if a.dest == 'ros_args']
    assert taken == ([['--ros-args']] if VERBS[name].ROS_ARGS else [])


@pytest.mark.parametrize('name', list(VERBS))
def test_each_verbs_help_lists_its_arguments(name, capsys):
    assert deadline.main([name, '--help']) == 0
    out = capsys.readouterr().out
    assert out.startswith(f'usage: deadline {name} [-h]')
    for mark in HELP_MARKS[name]:
        assert mark in out


def test_the_commands_help_lists_every_verb_with_a_line(capsys):
    assert deadline.main(['--help']) == 0
    out = capsys.readouterr().out
    for name, verb in VERBS.items():
        assert f'{name}  ' in out
        assert extension.first_doc_line(verb) in out
    assert deadline.main([]) == 0  # no verb: the help, as `ros2 topic` without a verb
    assert 'Call `deadline <command> -h`' in capsys.readouterr().out


def test_a_verb_hands_the_program_what_follows_it():
    assert verb_arguments(['--use-python-default-buffering', 'deadline', 'monitor', '/a',
                           '--period-ms', '10', '--ros-args', '-p', 'x:=monitor'],
                          'monitor') == ['/a', '--period-ms', '10', '--ros-args', '-p',
                                         'x:=monitor']
    assert verb_arguments(['analyze', 'run1', '--json', '-'], 'analyze') == [
        'run1', '--json', '-']
    assert verb_arguments(['demo'], 'demo') == []


def test_deadline_analyze_answers_as_analyze(tmp_path, capsys, make_reference):
    from ros2_deadline_monitor.bag import analyze

    missing = str(tmp_path / 'no_such_bag')
    assert deadline.main(['analyze', missing]) == analyze.main([missing]) == 1
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 2 and errors[0] == errors[1] and errors[0].startswith('ERROR: ')

    bag = str(make_reference('mcap').path)
    args = [bag, '--period-ms', '10', '--stamp', 'start', '--json', '-']
    assert deadline.main(['analyze', *args]) == 0
    through_verb = capsys.readouterr().out
    assert analyze.main(args) == 0
    assert through_verb == capsys.readouterr().out
    assert '"format": "ros2_deadline_monitor/analyze"' in through_verb


def test_a_bad_verb_or_flag_is_a_usage_error(capsys):
    assert deadline.main(['monitr']) == 2
    assert "invalid choice: 'monitr'" in capsys.readouterr().err
    assert deadline.main(['analyze', 'bag', '--no-such-flag']) == 2
    assert 'unrecognized arguments: --no-such-flag' in capsys.readouterr().err


WITHOUT_ROS2CLI = """
import argparse, sys
sys.modules['ros2cli'] = None  # as where ros2cli is not installed
sys.modules['argcomplete'] = None
from importlib.metadata import distribution
found = {e.name: e for e in distribution('ros2_deadline_monitor').entry_points
         if e.group in ('ros2cli.command', 'ros2deadline.verb')}
command = found['deadline'].load()()  # as ros2cli instantiates it
command.NAME = 'deadline'
parser = argparse.ArgumentParser(prog='ros2')
command.add_arguments(parser, 'ros2 deadline', argv=['deadline', 'analyze', '--help'])
verb = found['analyze'].load()()
print(type(command).__mro__[1].__module__, verb.MODULE)
sys.exit(command.main(parser=parser, args=parser.parse_args(['analyze', '--help'])))
"""


def test_the_extension_imports_and_registers_without_ros2cli():
    result = subprocess.run([sys.executable, '-c', WITHOUT_ROS2CLI], capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    first, *rest = result.stdout.splitlines()
    assert first == ('ros2_deadline_monitor.command.extension '
                     'ros2_deadline_monitor.bag.analyze')
    assert any('--expect-max-misses' in line for line in rest)
    assert extension.CommandExtension.__module__ in (
        'ros2cli.command', 'ros2_deadline_monitor.command.extension')


def test_under_ros2cli_a_flag_typo_names_the_closest_flag(capsys):
    # ros2cli parses the whole line with its root parser and hands it to a verb as
    # _root_parser while the verb adds its arguments (add_subparsers_on_demand).
    root = argparse.ArgumentParser(prog='ros2')
    verb_parser = root.add_subparsers().add_parser('monitor')
    verb_parser._root_parser = root
    VERBS['monitor']().add_arguments(verb_parser, 'ros2 deadline monitor')
    with pytest.raises(SystemExit) as exit_:
        root.parse_args(['monitor', '/a', '--perod-ms', '10'])
    assert exit_.value.code == 2
    assert ('unrecognized arguments: --perod-ms 10 (did you mean --period-ms?)'
            in capsys.readouterr().err)
