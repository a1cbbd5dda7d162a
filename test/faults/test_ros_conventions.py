"""ROS conventions the monitor must keep: what ``ros2 param dump`` writes loads back.

``ros2 param dump /deadline_monitor`` lists every parameter through the parameter services
and writes them nested by their dots, an unset one as ``null`` (ros2param's ``get_value``).
ros2cli is not among this repository's dependencies, so ``dump`` below does what the verb
does, through the same services of a real monitor process; the YAML goes back through rcl's
params file parser when a second monitor starts with it.
"""

from __future__ import annotations

import signal
import subprocess
from typing import Any

from own_names import namespace, ns, ros_args  # test/plugins: the test's own names
import yaml

TIMEOUT_S = 20.0


def dump(observer: Any, wait_for: Any) -> dict[str, Any]:
    """Return what ``ros2 param dump /deadline_monitor`` writes, as a dictionary."""
    from rclpy.parameter import parameter_value_to_python

    assert observer.params.wait_for_services(timeout_sec=TIMEOUT_S)
    listed = observer.params.list_parameters([], 0)
    wait_for(listed.done, what='the list_parameters response')
    names = sorted(listed.result().result.names)
    got = observer.params.get_parameters(names)
    wait_for(got.done, what='the get_parameters response')
    parameters: dict[str, Any] = {}
    for name, value in zip(names, got.result().values, strict=True):
        level = parameters
        *parents, leaf = name.split('.')
        for part in parents:
            level = level.setdefault(part, {})
        level[leaf] = parameter_value_to_python(value)
    return {ns('/deadline_monitor'): {'ros__parameters': parameters}}


def _start(installed_executable, processes, tmp_path, *args: str) -> subprocess.Popen:
    log = open(tmp_path / f'monitor{len(processes)}.log', 'w+')  # noqa: SIM115 - processes
    process = subprocess.Popen([str(installed_executable('monitor')), *args, *ros_args()],
                               stdout=log, stderr=subprocess.STDOUT, text=True)
    process.log = log
    processes.append(process)
    return process


def test_a_param_dump_loads_back_as_what_was_dumped(installed_executable, processes,
                                                     observer, wait_for, tmp_path):
    first = _start(installed_executable, processes, tmp_path, 'fault/dumped',
                   '--period-ms', '10', '--ros-args', '-p', 'stats_period_s:=0.5',
                   '-p', 'topic.fault_dumped.expect.max_misses:=5',
                   '-p', 'clock.expect.min_rtf:=0.9')
    dumped = dump(observer, wait_for)
    values = dumped[ns('/deadline_monitor')]['ros__parameters']
    # Unset expectations are in the dump, as null: the case that did not load back.
    assert values['clock']['expect'] == {'min_rtf': 0.9, 'min_rtf_bin': None}
    assert values['topic']['fault_dumped']['expect']['max_lost'] is None
    first.send_signal(signal.SIGINT)
    assert first.wait(timeout=TIMEOUT_S) == 3  # no /clock, no producer: expectations fail
    wait_for(lambda: not observer.params.services_are_ready(), timeout=TIMEOUT_S,
             what='the first monitor to leave the graph')
    path = tmp_path / 'dump.yaml'
    path.write_text(yaml.dump(dumped, default_flow_style=False))  # as ros2 param dump
    second = _start(installed_executable, processes, tmp_path, '--ros-args',
                    '--params-file', str(path))
    again = dump(observer, wait_for)
    assert second.poll() is None, second.log.name
    assert again == dumped


def test_debug_level_of_the_monitor_logger_shows_the_monitors_debug_lines(
        installed_executable, publisher_process, processes, observer, wait_for, tmp_path):
    """``monitor.launch.py log_level:=debug`` passes ``--log-level deadline_monitor:=debug``.

    The level reached the monitor, but it had nothing to say at debug level: no line.
    """
    publisher_process(ns('/fault/debugged'), 'std_msgs.msg.Header', 'debugged_producer', 0.02)
    log = tmp_path / 'monitor.log'
    # In a namespace a node's logger is named <namespace>.<node>.
    logger = f'{namespace()[1:]}.deadline_monitor'
    with open(log, 'w') as out:
        monitor = subprocess.Popen(
            [str(installed_executable('monitor')), 'fault/debugged', '--ros-args',
             '--log-level', f'{logger}:=debug', '-p', 'stats_period_s:=0.3',
             *ros_args()],
            stdout=out, stderr=out, text=True)
        processes.append(monitor)
        wait_for(lambda: (t := observer.topic_stats('fault_debugged')) and t.messages_total,
                 timeout=TIMEOUT_S, what='the monitor counting the producer')
        monitor.send_signal(signal.SIGINT)
        assert monitor.wait(timeout=TIMEOUT_S) == 0
    debug = [line for line in log.read_text().splitlines() if line.startswith('[DEBUG]')]
    assert debug and all(f'[{logger}]:' in line for line in debug), debug[:5]
    said = '\n'.join(debug)
    assert 'take period 0.05 s' in said  # the settings in force
    assert f'fault_debugged: subscribed to {ns("/fault/debugged")}: batched takes' in said
    assert 'SIGINT received: final report' not in said  # that one is info
    assert 'final report: 1 topic(s)' in said
