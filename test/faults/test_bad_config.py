"""Bad configuration given to the installed ``monitor`` through ``--params-file``.

Each bad setting is rejected with a message naming the parameter and the reason; the monitor
refuses to start (exit code 2) only when nothing valid is left to monitor, otherwise it
monitors what is valid, reports each skipped topic as an ERROR status and exits 0 on SIGINT.
Covered elsewhere: an invalid monitor-wide setting exits 2 and an empty topic list monitors
the clock only (``test/live/test_monitor_main.py``); every per-topic rule on its own
(``test/live/test_parameter_declarations.py``); rejected changes at run time
(``test/live/test_monitor_parameters.py``).
"""

from __future__ import annotations

import signal
import subprocess

from own_names import ros_args  # test/plugins: the test's own names
import pytest

ERROR = 2
# identifier -> (its settings, a text the rejection must contain)
BAD_TOPICS = {
    'negative': ({'period_ms': -10.0}, 'topic.negative.period_ms'),
    'not_a_number': ({'period_ms': '.nan'}, 'topic.not_a_number.period_ms'),
    'huge': ({'period_ms': 1.0e12}, 'topic.huge.period_ms'),
    'infinite': ({'deadline_ms': '.inf'}, 'topic.infinite.deadline_ms'),
    'bad_rule': ({'rule': 'sometimes'}, 'topic.bad_rule.rule must be one of'),
    'bad_name': ({'name': '/has space'}, 'topic.bad_name.name: invalid topic name'),
    'same_topic': ({'name': '/good'}, "/good is already monitored as 'good'"),
}


def _yaml(topics: list[str], settings: dict[str, dict[str, object]],
          extra: dict[str, object] | None = None) -> str:
    lines = ['/**:', '  ros__parameters:', '    stats_period_s: 0.2',
             '    topics: [' + ', '.join(repr(t) for t in topics) + ']']
    for topic_id, values in settings.items():
        for field, value in values.items():
            lines.append(f'    topic.{topic_id}.{field}: {value}')
    for name, value in (extra or {}).items():
        lines.append(f'    {name}: {value}')
    return '\n'.join(lines) + '\n'


def _start(installed_executable, tmp_path, processes, text: str):
    path = tmp_path / f'params{len(processes)}.yaml'
    path.write_text(text)
    log = tmp_path / f'monitor{len(processes)}.log'
    process = run(installed_executable, path, log)
    processes.append(process)
    return process, log


def run(installed_executable, params, log_path):
    log = open(log_path, 'w')  # noqa: SIM115 - closed by the processes fixture
    process = subprocess.Popen(
        [str(installed_executable('monitor')), '--ros-args', '--params-file', str(params),
         '--', *ros_args()],
        stdout=log, stderr=subprocess.STDOUT, text=True)
    process.log = log
    return process


def test_bad_topics_are_skipped_each_named_and_the_valid_one_monitored(
        installed_executable, tmp_path, processes, observer, wait_for, key_values):
    settings = {topic_id: values for topic_id, (values, _) in BAD_TOPICS.items()}
    settings['good'] = {'name': '/good', 'period_ms': 10.0}
    # An integer for a double is that number, in a file as with `ros2 param set`.
    settings['integer'] = {'name': '/integer', 'period_ms': 10}
    # A setting for an identifier not in the list, and a list with an invalid and a
    # repeated identifier (a typo in a key refuses the start: test_a_typo_..._refuses).
    settings['unlisted'] = {'period_ms': 10.0}
    topics = ['good', 'integer', *BAD_TOPICS, 'good', '/slash']
    process, log = _start(installed_executable, tmp_path, processes,
                          _yaml(topics, settings))
    stats = wait_for(observer.latest_stats, timeout=20.0, what='the monitor to report')
    assert [t.name for t in stats.topics] == ['good', 'integer']
    assert stats.topics[1].period_ms == 10.0
    for topic_id, (_, reason) in BAD_TOPICS.items():
        status = wait_for(lambda i=topic_id: observer.status(f': topic {i}'),
                          what=f'the status of {topic_id}')
        assert status.level == bytes([ERROR]), topic_id
        assert 'invalid configuration' in status.message and reason in status.message, (
            topic_id, status.message)
    slash = wait_for(lambda: observer.status(': topic _slash'), what='the /slash status')
    assert slash.level == bytes([ERROR]) and 'must start with a letter' in slash.message
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=20) == 0
    text = log.read_text()
    for topic_id, (_, reason) in BAD_TOPICS.items():
        assert f"topic '{topic_id}' is not monitored" in text, topic_id
        assert reason in text, reason
    assert 'topic.unlisted.period_ms' in text and "'unlisted' is not in topics" in text
    assert "identifier 'good' is listed twice" in text
    assert 'Traceback' not in text


def test_nothing_valid_left_refuses_to_start_naming_every_reason(
        installed_executable, tmp_path, processes):
    settings = {topic_id: values for topic_id, (values, _) in BAD_TOPICS.items()
                if topic_id != 'same_topic'}
    process, log = _start(installed_executable, tmp_path, processes,
                          _yaml([*settings, '/slash'], settings))
    assert process.wait(timeout=20) == 2
    text = log.read_text()
    assert 'ERROR: ' in text
    for topic_id, (_, reason) in BAD_TOPICS.items():
        if topic_id != 'same_topic':
            assert reason in text, reason
    assert "'/slash'" in text
    assert 'Traceback' not in text


TYPOS = {
    'topic.good.perod_ms: 10.0':
        'ERROR: unknown parameter topic.good.perod_ms (did you mean topic.good.period_ms?)',
    'topic.good.expect.max_mises: 0':
        "unknown expectation 'max_mises' (did you mean topic.good.expect.max_misses?)",
    'clock.expect.min_rft: 0.5': "unknown expectation 'min_rft' (did you mean "
                                 'clock.expect.min_rtf?)',
    'topic.unlisted.perod_ms: 10.0':
        'ERROR: unknown parameter topic.unlisted.perod_ms (did you mean '
        'topic.unlisted.period_ms?)',
    'clock.rtf_window_s: 2.0': 'clock.rtf_window_s',
}
"""A typo under the monitor's own prefixes -> what the one ERROR line must say."""


@pytest.mark.parametrize('typo', list(TYPOS))
def test_a_typo_under_the_monitors_own_prefixes_refuses_to_start(
        installed_executable, tmp_path, processes, typo):
    # Running on would learn a period instead of the one meant, or gate on nothing; analyze
    # refuses the same file.
    process, log = _start(installed_executable, tmp_path, processes,
                          _yaml(['good'], {'good': {'name': '/good'}}) + f'    {typo}\n')
    assert process.wait(timeout=30) == ERROR
    text = log.read_text()
    assert TYPOS[typo] in text
    assert [line for line in text.splitlines() if line.startswith('ERROR: ')], text
    assert 'Traceback' not in text


def test_a_typo_in_a_global_key_is_named(installed_executable, tmp_path, processes,
                                         observer, wait_for):
    # diagnostic_updater declares its period once the monitor's own parameters are declared
    # (when installed): it is named as ignored either way, never as unknown. Another node's
    # parameters in the same /** file (camera.*, frame_id) are named and change nothing.
    process, log = _start(installed_executable, tmp_path, processes, _yaml(
        ['good'], {'good': {'name': '/good'}},
        {'stats_perod_s': 0.5, 'diagnostic_updater.period': 2.0, 'camera.exposure_ms': 4.0,
         'frame_id': 'base_link'}))
    wait_for(observer.latest_stats, timeout=20.0, what='the monitor to report')
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=20) == 0
    text = log.read_text()
    assert 'stats_perod_s' in text and 'did you mean stats_period_s' in text
    assert ('diagnostic_updater.period is ignored: /diagnostics is published at every report'
            in text)
    assert 'diagnostic_updater.period is unknown' not in text
    assert 'parameter camera.exposure_ms is unknown and ignored' in text
    assert 'parameter frame_id is unknown and ignored' in text


def _refused(installed_executable, *ros_args: str, program: str = 'monitor') -> str:
    """Run ``program`` with ``ros_args``; return the one error line it must exit 2 with."""
    done = subprocess.run([str(installed_executable(program)), '--ros-args', *ros_args],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'Traceback' not in done.stdout + done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith('ERROR: '), done.stderr
    return lines[0]


@pytest.mark.parametrize(('value', 'given_as'), [
    ('yes_please', "'yes_please' of type 'STRING'"),
    ('1', "'1' of type 'INTEGER'"),
], ids=['string', 'integer'])
def test_rclpys_own_parameter_of_a_wrong_type_is_one_error_line(
        installed_executable, value, given_as):
    # rclpy declares use_sim_time and start_type_description_service in Node.__init__ and
    # raised there, a traceback.
    line = _refused(installed_executable, '-p', f'use_sim_time:={value}')
    assert f"parameter 'use_sim_time' to {given_as}" in line and 'BOOL' in line
    line = _refused(installed_executable, '-p', f'start_type_description_service:={value}')
    assert f"parameter 'start_type_description_service' to {given_as}" in line
    line = _refused(installed_executable, '-p', f'use_sim_time:={value}', program='watch')
    assert f"parameter 'use_sim_time' to {given_as}" in line


def test_a_params_file_with_wrong_types_names_every_one(installed_executable, tmp_path):
    path = tmp_path / 'params.yaml'
    # Quoted "yes" is a string in YAML (unquoted yes would be true).
    path.write_text(_yaml(['good'], {'good': {'name': '/good'}}, {
        'use_sim_time': '"yes"', 'start_type_description_service': 'maybe',
        'take_period_s': '"fast"'}))
    line = _refused(installed_executable, '--params-file', str(path))
    for name, value in (('use_sim_time', 'yes'), ('start_type_description_service', 'maybe'),
                        ('take_period_s', 'fast')):
        assert f"parameter '{name}' to '{value}' of type 'STRING'" in line, name
