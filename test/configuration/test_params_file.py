"""Tests for reading the monitor's parameter file without ROS (configuration/params_file.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ros2_deadline_monitor.analysis.config import AnalysisConfig
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.configuration.params_file import flatten, load_config, parse_parameters

MS = 1_000_000
REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / 'monitor.yaml'
    path.write_text(text)
    return path


def test_the_shipped_config_file() -> None:
    path = REPO / 'config' / 'monitor.yaml'
    if not path.exists():
        pytest.skip('config/monitor.yaml not written yet')
    config = load_config(path)
    assert [t.name for t in config.topics] == ['controller']
    controller = config.topics[0]
    assert controller.topic == '/demo/cmd'
    assert controller.period_ns == 10 * MS
    assert controller.stamp == 'start'
    assert config.auto_clock == frozenset({'controller'})
    assert config.clock_topic == '/clock'
    assert config.analysis.rtf_bin_ns == 100 * MS
    assert config.warnings == ()


def test_dotted_and_nested_keys_mean_the_same(tmp_path: Path) -> None:
    dotted = load_config(write(tmp_path, (
        'deadline_monitor:\n  ros__parameters:\n    topics: [cmd]\n'
        '    topic.cmd.name: /demo/cmd\n    topic.cmd.rate_hz: 50.0\n'
        '    topic.cmd.rule: interval\n    topic.cmd.clock: sim\n    window_s: 5.0\n')))
    nested = load_config(write(tmp_path, (
        'deadline_monitor:\n  ros__parameters:\n    topics: [cmd]\n'
        '    topic:\n      cmd:\n        name: /demo/cmd\n        rate_hz: 50.0\n'
        '        rule: interval\n        clock: sim\n    window_s: 5.0\n')))
    assert dotted.topics == nested.topics
    cmd = dotted.topics[0]
    assert (cmd.period_ns, cmd.rule, cmd.clock) == (20 * MS, 'interval', 'sim')
    assert dotted.auto_clock == frozenset()
    assert dotted.analysis.window_ns == 5_000 * MS


def test_node_section_over_the_wildcard(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, (
        '/**:\n  ros__parameters:\n    topics: [a]\n    topic.a.period_ms: 5.0\n'
        '    use_sim_time: true\n'
        'other_node:\n  ros__parameters:\n    topics: [zzz]\n'
        '/robot/deadline_monitor:\n  ros__parameters:\n    topic.a.period_ms: 8.0\n')))
    assert config.node == '/robot/deadline_monitor'
    (a,) = config.topics
    assert (a.topic, a.period_ns) == ('/robot/a', 8 * MS)  # relative name, node namespace
    assert config.use_sim_time is True


def test_defaults_follow_the_node(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, 'deadline_monitor:\n  ros__parameters:\n'
                                         '    topics: [scan]\n'))
    (scan,) = config.topics
    assert scan.topic == '/scan'
    assert (scan.period_ns, scan.deadline_ns, scan.jitter_tolerance_ns, scan.rule) == (
        None, None, None, None)
    assert scan.stamp == 'auto'
    assert config.analysis == AnalysisConfig()


def test_percent_jitter(tmp_path: Path) -> None:
    config = parse_parameters({'topics': ['a'], 'topic.a.period_ms': 20.0,
                               'topic.a.jitter_tolerance_percent': 10.0})
    assert config.topics[0].jitter_tolerance_ns is None
    assert config.topics[0].jitter_fraction == pytest.approx(0.1)


@pytest.mark.parametrize('values, message', [
    ({'topics': ['a'], 'topic.a.period_ms': 10.0, 'topic.a.rate_hz': 100.0}, 'both set'),
    ({'topics': ['a'], 'topic.a.rule': 'sometimes'}, 'topic.a.rule must be one of'),
    ({'topics': ['a'], 'topic.a.stamp': 'end'}, 'topic.a.stamp must be one of'),
    ({'topics': ['a'], 'topic.a.period_ms': 'ten'}, 'topic.a.period_ms must be a number'),
    ({'topics': ['a'], 'topic.a.name': 'bad name'}, 'topic.a.name'),
    ({'topics': ['a', 'a']}, 'listed twice'),
    ({'topics': ['a', 'b'], 'topic.a.name': '/x', 'topic.b.name': '/x'}, 'already monitored'),
    ({'topics': 'a'}, 'topics must be a list'),
    ({'topics': [], 'window_cycles': 1}, 'window_cycles'),
    ({'topics': [], 'clock_topic': 'not valid'}, 'clock_topic'),
])
def test_invalid_values_are_rejected(values: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_parameters(values)


def test_typos_are_errors_with_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r'^unknown parameter topic\.a\.perod_ms \(did you '
                                          r'mean topic\.a\.period_ms\?\)$'):
        parse_parameters({'topics': ['a'], 'topic.a.perod_ms': 3.0, 'stats_period_s': 2.0})


def test_settings_of_unlisted_topics_are_warnings() -> None:
    config = parse_parameters({'topics': ['a'], 'topic.b.period_ms': 3.0,
                               'stats_period_s': 2.0})
    assert config.warnings == ("topic.b.period_ms: 'b' is not listed in topics, ignored",)


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match='no "<node>: ros__parameters:" section'):
        load_config(write(tmp_path, 'deadline_monitor:\n  topics: [a]\n'))
    with pytest.raises(ConfigError, match='no section for deadline_monitor'):
        load_config(write(tmp_path, 'a:\n  ros__parameters: {}\nb:\n  ros__parameters: {}\n'))


def test_flatten() -> None:
    assert flatten({'a': {'b': {'c': 1}, 'd': [1]}, 'e': 2}) == {'a.b.c': 1, 'a.d': [1], 'e': 2}
