"""The table of figures: keys, order, what is left out, and the key list generated from it."""

from __future__ import annotations

import math
from pathlib import Path
import subprocess
import sys

from ros2_deadline_monitor.analysis import figures
from ros2_deadline_monitor.outputs.figure_docs import tables
from ros2_deadline_monitor.outputs.format import figure_text

ROOT = Path(__file__).resolve().parents[2]
UNITS = {'', 'ms', 's', 'Hz', '%', 'bytes', 'bytes/s', 'MB', 'p99/p50', 's since start',
         's sim time'}
NAN = math.nan


def _pairs(table, snapshot, part):
    """Return the shown key/values of ``part`` in table order, as a status carries them."""
    return [(figure.key, text) for figure in table
            if (text := figure_text(figure, snapshot, part)) is not None]


def test_keys_are_unique_and_name_a_known_unit():
    for status, (table, _) in tables().items():
        keys = [f.key for f in table]
        assert len(keys) == len(set(keys)), status
        for figure in table:
            assert figure.unit in UNITS, figure.key
            assert figure.description and figure.group, figure.key
            assert '/' not in figure.name or figure.name in {'intervals wall over wall budget'}


def test_the_inspector_shows_the_headline_figures_first(snapshots):
    snap = snapshots.snapshot()
    keys = [k for k, _ in _pairs(figures.TOPIC, snap, snap.topics[0])]
    assert keys[:5] == ['deadline misses', 'skipped periods', 'max interval wall (ms)',
                        'max interval sim (ms)', 'RTF']
    assert keys.index('messages total') < keys.index('mean interval wall (ms)')
    assert keys.index('mean interval wall (ms)') < keys.index('period (ms)')
    assert keys[-3:] == ['receive', 'reader queue depth', 'queue overflows total']
    clock_keys = [k for k, _ in _pairs(figures.CLOCK, snap, snap.clock)]
    assert clock_keys[0] == 'RTF'
    host_keys = [k for k, _ in _pairs(figures.HOST, snap, snap.host)]
    assert host_keys[:3] == ['cgroup throttled periods', 'cgroup throttled (ms)',
                             'stats timer late (ms)']


def test_values_are_rounded_and_points_in_time_are_relative_to_the_start(snapshots):
    snap = snapshots.snapshot()
    topic = dict(_pairs(figures.TOPIC, snap, snap.topics[0]))
    assert topic['deadline misses'] == '20'
    assert topic['max interval wall (ms)'] == '22.500'
    assert topic['max interval wall at (s since start)'] == '1.06'
    assert topic['max interval sim at (s sim time)'] == '1006.05'
    assert topic['RTF'] == '1.000'  # 0.9995 to three places
    assert topic['miss ratio (%)'] == '4.00'
    assert topic['since last message (s)'] == '0.1'
    assert topic['timeout (s)'] == '1.01'
    assert topic['publishers'] == '/imu_driver'
    assert topic['receive'] == 'batched every 50 ms'
    assert topic['reader queue depth'] == '2000'
    assert topic['period learned'] == 'false'
    clock = dict(_pairs(figures.CLOCK, snap, snap.clock))
    assert clock['RTF min bin at (s since start)'] == '4.50'
    assert clock['max wall gap at (s since start)'] == '4.20'
    assert clock['sim time (s)'] == '1005.000'
    host = dict(_pairs(figures.HOST, snap, snap.host))
    assert host['monitor CPU (%)'] == '5.2'
    assert host['cgroup throttled (ms)'] == '3.500'
    assert not any(' at (s)' in key for key, _ in [*topic.items(), *clock.items()])


def test_a_topic_without_traffic_shows_only_what_it_has(snapshots):
    from ros2_deadline_monitor.analysis.reports import IntervalSummary, Level
    from ros2_deadline_monitor.analysis.snapshot import Receive

    report = snapshots.topic_report(
        messages_total=0, deadline_misses_total=0, skipped_periods_total=0,
        messages_lost_total=0, malformed_total=0, qos_deadline_events_total=0, messages=0,
        deadline_misses=0, skipped_periods=0, messages_lost=0, miss_ratio=0.0,
        rate_wall_hz=NAN, rate_sim_hz=NAN, interval_wall=IntervalSummary('wall'),
        interval_sim=IntervalSummary('sim'), lateness_mean_ns=NAN, lateness_max_ns=NAN,
        response_mean_ns=NAN, response_max_ns=NAN, response_p99_ns=NAN,
        size_mean_bytes=NAN, size_max_bytes=NAN, bandwidth_bytes_per_s=NAN,
        age_mean_ns=NAN, age_max_ns=NAN, last_arrival_wall_ns=None, period_ns=None,
        deadline_ns=None, jitter_ns=None, wall_budget_ns=None, period_learned=True,
        foreign_stamps_total=0, outages_total=0, outage_total_ns=0, outage_max_ns=0,
        producer_runs_total=0, producers=0, unattributed_total=0)
    topic = snapshots.topic(report=report, type_name='', publishers=(), level=Level.STALE,
                            receive=Receive('callback'))
    snap = snapshots.snapshot(topics=[topic], clock=snapshots.clock(
        report=snapshots.clock_report(rtf=NAN)))
    pairs = _pairs(figures.TOPIC, snap, topic)
    keys = [k for k, _ in pairs]
    assert len(pairs) <= 25, keys
    assert [v for _, v in pairs].count('n/a') == 0
    assert keys[:2] == ['deadline misses', 'skipped periods']
    assert 'mean age (ms)' not in keys and 'max interval wall (ms)' not in keys
    assert 'intervals wall over period' not in keys
    assert 'period learned' not in keys  # nothing learned yet
    assert dict(pairs)['receive'] == 'callback per message'
    assert 'reader queue depth' not in keys


def test_lost_messages_with_several_writers_read_unknown(snapshots):
    topic = snapshots.topic(report=snapshots.topic_report(loss_known=False))
    snap = snapshots.snapshot(topics=[topic])
    assert dict(_pairs(figures.TOPIC, snap, topic))['messages lost'].startswith('unknown')


def test_cgroup_figures_are_left_out_when_cpu_stat_is_unreadable(snapshots):
    from ros2_deadline_monitor.analysis.reports import HostReport

    host = snapshots.host(report=HostReport())
    snap = snapshots.snapshot(host=host)
    values = dict(_pairs(figures.HOST, snap, host))
    assert values['cgroup cpu.stat'] == 'unavailable'
    assert not [k for k in values if k.startswith('cgroup ') and k != 'cgroup cpu.stat']
    assert values['stats timer late (ms)'] == '2.000'


def test_every_limit_reads_one_whole_run_figure_with_a_json_key():
    from ros2_deadline_monitor.configuration.expectations import CLOCK_LIMITS, TOPIC_LIMITS

    for table, limits in ((figures.RUN_TOPIC + figures.TRANSFORM, TOPIC_LIMITS),
                          (figures.RUN_CLOCK, CLOCK_LIMITS)):
        bounded = [f for f in table if f.limit]
        assert sorted(f.limit for f in bounded) == sorted(spec.key for spec in limits)
        assert all(f.json for f in bounded)
    keys = [f.json for f in figures.RUN_TOPIC if f.json]
    assert len(keys) == len(set(keys))


def test_the_table_and_formats_import_without_ros():
    code = ('import sys; sys.modules["rclpy"] = None; sys.modules["std_msgs"] = None; '
            'import ros2_deadline_monitor.analysis.figures, ros2_deadline_monitor.outputs.format, '
            'ros2_deadline_monitor.outputs.figure_docs')
    subprocess.run([sys.executable, '-c', code], check=True, cwd=ROOT)
