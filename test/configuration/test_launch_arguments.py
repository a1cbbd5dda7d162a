"""The launch files' shared checks as pure logic: numeric arguments and a node that exits.

Launch itself is not installable here; the functions take what launch hands them (the
launch configurations as a mapping, a ProcessExited event and a context), written out below
as plain objects with the same attributes.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ros2_deadline_monitor.configuration.launch_arguments import (
    check_numeric_arguments,
    stop_on_exit,
)

NUMBERS = {'target_rtf': float, 'stall_every': int, 'duration': float}
MINIMUMS = {'duration': 0.0}
GOOD = {'target_rtf': '0.5', 'stall_every': '50', 'duration': '0', 'model_path': ''}


def test_good_numbers_pass():
    check_numeric_arguments(GOOD, NUMBERS, MINIMUMS)
    check_numeric_arguments({**GOOD, 'duration': '-1'}, NUMBERS)  # no floor asked for


@pytest.mark.parametrize('name, text, message', [
    ('target_rtf', 'abc', "launch argument target_rtf:='abc' is not a number"),
    ('target_rtf', 'nan', "launch argument target_rtf:='nan' is not a number"),
    ('target_rtf', 'inf', "launch argument target_rtf:='inf' is not a number"),
    ('stall_every', '2.5', "launch argument stall_every:='2.5' is not an integer"),
    ('duration', '-1', "launch argument duration:='-1' must be >= 0 (0 runs until Ctrl-C)"),
])
def test_a_bad_number_is_refused_naming_the_argument(name, text, message):
    with pytest.raises(ValueError) as raised:
        check_numeric_arguments({**GOOD, name: text}, NUMBERS, MINIMUMS)
    assert str(raised.value) == message


def test_a_node_that_exits_stops_the_launch_with_its_exit_code():
    stop = stop_on_exit(lambda reason: ('Shutdown', reason))
    event = SimpleNamespace(process_name='mujoco_sim-1', returncode=2)
    assert stop(event, SimpleNamespace(is_shutdown=False)) == (
        'Shutdown', 'mujoco_sim-1 exited with code 2')


def test_a_node_that_exits_while_the_launch_shuts_down_adds_nothing():
    stop = stop_on_exit(lambda reason: ('Shutdown', reason))
    event = SimpleNamespace(process_name='demo_controller-2', returncode=0)
    assert stop(event, SimpleNamespace(is_shutdown=True)) is None
