"""The `monitor` executable: start-up checks, exit codes, clean shutdown, the shipped YAML."""

from __future__ import annotations

from pathlib import Path
import signal
import subprocess
import time

from own_names import ros_args  # test/plugins: the test's own names
import pytest
import yaml

from ros2_deadline_monitor.live.parameter_declarations import GLOBAL_SPECS, TOPIC_SPECS

REPO = Path(__file__).resolve().parents[2]
MONITOR_YAML = REPO / 'config' / 'monitor.yaml'
AGGREGATOR_YAML = REPO / 'config' / 'diagnostic_aggregator.yaml'


@pytest.fixture
def run_monitor(installed_executable, tmp_path):
    """Return a function starting the installed `monitor` with ROS arguments."""
    processes = []

    def start(*args: str) -> subprocess.Popen:
        out = open(tmp_path / f'monitor{len(processes)}.log', 'w+')  # noqa: SIM115
        process = subprocess.Popen(
            [str(installed_executable('monitor')), '--ros-args', *args, '--', *ros_args()],
            stdout=out, stderr=subprocess.STDOUT, text=True)
        process.log = out
        processes.append(process)
        return process

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.log.close()


def output(process: subprocess.Popen) -> str:
    process.log.flush()
    process.log.seek(0)
    return process.log.read()


def test_nothing_valid_to_monitor_exits_with_2(run_monitor):
    process = run_monitor('-p', 'topics:=[a]', '-p', 'topic.a.rule:=bogus')
    assert process.wait(timeout=20) == 2
    text = output(process)
    assert 'ERROR: ' in text
    assert 'topic.a.rule must be one of' in text


def test_invalid_global_setting_exits_with_2(run_monitor):
    process = run_monitor('-p', 'stats_period_s:=-1.0')
    assert process.wait(timeout=20) == 2
    assert 'stats_period_s' in output(process)


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=['SIGINT', 'SIGTERM'])
def test_shutdown_publishes_final_stats_and_a_summary(run_monitor, observer, wait_for, sig):
    process = run_monitor('--params-file', str(MONITOR_YAML), '-p', 'stats_period_s:=0.3',
                          '-p', 'topics:=[controller, imu, broken, whole]',
                          '-p', 'topic.imu.name:=/imu/data',
                          '-p', 'topic.broken.rule:=bogus', '-p', 'topic.broken.name:=/b',
                          '-p', 'topic.whole.period_ms:=10', '-p', 'topic.whole.name:=/w')
    # A periodic report first: it shows the stats writer has matched the observer.
    wait_for(observer.latest_stats, timeout=20.0, what='the monitor to report')
    signalled_ns = time.time_ns()
    process.send_signal(sig)
    assert process.wait(timeout=20) == 0

    def stamp_ns(stats) -> int:
        return stats.header.stamp.sec * 1_000_000_000 + stats.header.stamp.nanosec

    final = wait_for(lambda: (s := observer.latest_stats()) and stamp_ns(s) >= signalled_ns
                     and s, what='the final stats, reported after the signal')
    assert sorted(t.name for t in final.topics) == ['controller', 'imu', 'whole']
    # Absolute names (the shipped file's among them) are not the namespace's: no producer here.
    assert {t.topic for t in final.topics} == {'/demo/cmd', '/imu/data', '/w'}
    # An integer for a double parameter is taken as that number, as `ros2 param set` does.
    assert next(t for t in final.topics if t.name == 'whole').period_ms == 10.0
    text = output(process)
    assert 'deadline_monitor summary (totals since start)' in text
    assert '/demo/cmd' in text and '/imu/data' in text
    # The bad value is named, and only that topic is skipped.
    assert 'topic.broken.rule must be one of' in text
    assert "topic 'broken' is not monitored" in text


def test_an_empty_topic_list_monitors_the_clock_only(run_monitor, observer, wait_for):
    process = run_monitor('-p', 'stats_period_s:=0.2')
    stats = wait_for(observer.latest_stats, timeout=20.0, what='stats')
    assert list(stats.topics) == []
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=20) == 0
    assert 'no topics configured' in output(process)


def test_shipped_yaml_documents_every_parameter():
    text = MONITOR_YAML.read_text()
    params = yaml.safe_load(text)['/**']['ros__parameters']
    topics = params['topics']
    assert topics
    for topic_id in topics:
        for spec in TOPIC_SPECS:
            name = f'topic.{topic_id}.{spec.name}'
            assert name in params, name
            assert type(params[name]) is type(spec.default), name
    for spec in GLOBAL_SPECS:
        if spec.name in params:
            assert params[spec.name] == spec.default, spec.name
        else:
            assert f'# {spec.name}:' in text, spec.name  # host-dependent default, commented


def test_aggregator_config_matches_the_status_names():
    analyzers = yaml.safe_load(AGGREGATOR_YAML.read_text())['analyzers']['ros__parameters']
    group = analyzers['deadline_monitor']['analyzers']
    assert group['topics']['startswith'] == ['deadline_monitor: topic ']
    assert group['clock']['expected'] == ['deadline_monitor: clock']
    assert group['host']['expected'] == ['deadline_monitor: host']
