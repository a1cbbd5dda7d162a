"""Tests for summarizing recorded MonitorStats (outputs/recorded_stats.py) through ``analyze``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ros2_deadline_monitor.analysis.figures import record, RUN_TOPIC
from ros2_deadline_monitor.bag.analyze import main

MS = 1_000_000
T0 = 1_700_000_000_000_000_000
STATS = 'ros2_deadline_monitor/msg/MonitorStats'


def topic(messages: int, misses: int, skipped: int, **extra: object) -> dict:
    return {'name': 'cmd', 'topic': '/demo/cmd', 'type': 'std_msgs/msg/Header',
            'rule': 'response', 'timer_clock': 'wall', 'period_ms': 10.0,
            'messages_total': messages, 'deadline_misses_total': misses,
            'skipped_periods_total': skipped, **extra}


REPORTS = [
    (T0 + 1_000 * MS,
     [topic(100, 4, 2, **{'interval_wall.max_ms': 22.4, 'interval_wall.p99_ms': 21.0,
                          'level': 1, 'rate_wall_hz': 98.0, 'miss_ratio': 0.04}),
      {'name': 'imu', 'topic': '/imu', 'messages_total': 1000, 'level': 0}],
     {'messages_total': 1000, 'rtf': 0.99, 'rtf_total': 0.99, 'rtf_bin_min': 0.95,
      'rtf_bin_min_at_s': (T0 + 500 * MS) / 1e9, 'rtf_bin_s': 0.1, 'rtf_bin_max': 1.01,
      'max_wall_gap_ms': 3.0}),
    (T0 + 2_000 * MS,
     [topic(200, 8, 4, **{'interval_wall.max_ms': 30.0, 'interval_wall.p99_ms': 25.0,
                          'level': 2, 'rate_wall_hz': 97.0, 'response_max_ms': 31.0}),
      {'name': 'imu', 'topic': '/imu', 'messages_total': 2000, 'level': 3}],
     {'messages_total': 2000, 'rtf': 0.9, 'rtf_total': 0.95, 'rtf_bin_min': 0.8,
      'rtf_bin_min_at_s': (T0 + 1_700 * MS) / 1e9, 'rtf_bin_s': 0.1, 'rtf_bin_max': 1.0,
      'max_wall_gap_ms': 9.5}),
    # The monitor restarted: its counters start again from zero.
    (T0 + 3_000 * MS,
     [topic(50, 1, 0, **{'interval_wall.max_ms': 12.0, 'level': 0, 'rate_wall_hz': 99.0}),
      {'name': 'imu', 'topic': '/imu', 'messages_total': 900, 'level': 0}],
     {'messages_total': 500, 'rtf': 1.0, 'rtf_total': 1.0, 'rtf_bin_min': 0.97,
      'rtf_bin_s': 0.1, 'rtf_bin_max': 1.0, 'resets_total': 1}),
]


def analyze_json(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / 'result.json'
    assert main([*args, '--no-progress', '--json', str(out)]) == 0
    return json.loads(out.read_text())


def test_recorded_stats_are_summarized(bags, storage: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = bags.stats(tmp_path / 'bag', storage, REPORTS)
    data = analyze_json(tmp_path, str(path))
    assert data['topics'] == [] and data['clock'] is None
    recorded = data['recorded']
    assert recorded['stats_topics'] == ['/deadline_monitor/stats']
    assert recorded['messages'] == 3 and recorded['malformed'] == 0
    cmd, imu = recorded['topics']
    assert cmd['topic'] == '/demo/cmd' and imu['topic'] == '/imu'
    assert cmd['reports'] == 3
    assert cmd['messages'] == 250
    assert cmd['deadline_misses'] == 9
    assert cmd['skipped_periods'] == 4
    assert cmd['monitor_restarts'] == 1
    worst = cmd['worst_window']
    assert worst['interval_wall_max_ms'] == 30.0
    assert worst['interval_wall_p99_ms'] == 25.0
    assert worst['response_max_ms'] == 31.0
    assert worst['miss_ratio'] == 0.04
    assert cmd['worst_level'] == 'ERROR'
    # These reports carry no whole-run intervals (all 0): the run's rate is unknown, not 0.
    assert cmd['rate_wall_hz'] is None and cmd['max_interval_ms'] is None
    assert (cmd['rule'], cmd['period_ms']) == ('response', 10.0)
    assert recorded['first_report_s'] == pytest.approx((T0 + 1_000 * MS) / 1e9)
    assert imu['messages'] == 2900 and imu['worst_level'] == 'OK'  # STALE is not worse
    clock = recorded['clock']
    assert clock['reports'] == 3
    assert clock['messages'] == 2500
    assert clock['rtf_bin_min'] == 0.8
    assert clock['rtf_bin_min_at_s'] == pytest.approx(0.7)  # since the first report
    assert clock['worst_window']['rtf'] == 0.9
    assert clock['rtf_total'] == 1.0
    assert clock['worst_window']['max_wall_gap_ms'] == 9.5
    assert clock['resets'] == 1

    assert main([str(path), '--no-progress']) == 0
    out = capsys.readouterr().out
    assert 'Recorded monitor stats (/deadline_monitor/stats: 3 reports)' in out
    assert 'worst 100 ms window 0.800 at +0.70 s' in out


def test_stats_next_to_raw_topics(bags, tmp_path: Path) -> None:
    """A bag recorded with -a holds both: both are reported, the stats are not analyzed."""
    store = bags.typestore(with_stats=True)
    msg = bags.stats_message(store, T0, [topic(10, 0, 0)])
    messages = [('/deadline_monitor/stats', T0, bytes(store.serialize_cdr(msg, STATS)))]
    messages += [('/demo/cmd', T0 + k * 10 * MS, bags.header_cdr(T0 + k * 10 * MS))
                 for k in range(100)]
    path = bags.write(tmp_path / 'bag', 'mcap', {'/deadline_monitor/stats': STATS,
                                                 '/demo/cmd': 'std_msgs/msg/Header'},
                      messages, store)
    data = analyze_json(tmp_path, str(path))
    assert [t['topic'] for t in data['topics']] == ['/demo/cmd']
    assert data['topics'][0]['messages'] == 100
    assert data['recorded']['topics'][0]['messages'] == 10


def test_a_bag_of_the_live_nodes_stats(bags, tmp_path: Path) -> None:
    """Stats made by the node's own conversions and rclpy's serializer decode the same."""
    pytest.importorskip('rclpy')
    pytest.importorskip('ros2_deadline_monitor.msg')
    from rclpy.serialization import serialize_message

    from ros2_deadline_monitor.analysis import AnalysisConfig, TopicConfig
    from ros2_deadline_monitor.analysis.session import Session
    from ros2_deadline_monitor.outputs import conversions

    starts, ends = bags.rcl_timer_cycles()
    session = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=T0)
    session.configure({'cmd': TopicConfig('cmd', '/demo/cmd', stamp='start')})
    messages = []
    k = 0
    for second in range(1, 7):
        now = T0 + second * 1_000 * MS
        while k < len(starts) and ends[k] < now:
            session.message('cmd', int(ends[k]), int(starts[k]))
            k += 1
        live = session.snapshot(now)
        stats = conversions.monitor_stats(live)
        messages.append(('/deadline_monitor/stats', now, serialize_message(stats)))
    path = bags.write(tmp_path / 'bag', 'mcap', {'/deadline_monitor/stats': STATS}, messages,
                      bags.typestore(with_stats=True))
    data = analyze_json(tmp_path, str(path))
    (cmd,) = data['recorded']['topics']
    assert (cmd['messages'], cmd['deadline_misses'], cmd['skipped_periods']) == (
        len(starts), 20, 10)
    # The whole-run figures the monitor published are the live snapshot's, through the table.
    figures = record(RUN_TOPIC, live, live.topics[0])
    for key in ('cycles', 'max_interval_ms', 'max_interval_wall_ms', 'rate_hz', 'miss_ratio'):
        assert cmd[key] == pytest.approx(figures[key]), key
    assert cmd['cycles'] == len(starts)
