"""Snapshot to MonitorStats: every message field the table of figures names holds its value.

The conversion is driven by the tables (``Figure.field``); these tests check the tables
cover every field but the few set by hand, and that each field holds what the figure shows.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from ros2_deadline_monitor.analysis import figures
from ros2_deadline_monitor.msg import ClockStats, HostStats, TopicStats
from ros2_deadline_monitor.outputs import conversions, figure_docs

# Message fields that are no figure in the diagnostics (or a figure shown another way there).
NOT_IN_TABLE = {
    'TopicStats': {'header', 'name', 'level', 'status', 'loss_known', 'loss_note',
                   'interval_wall.clock',
                   'interval_sim.clock', 'interval_wall.max_at_s',
                   'interval_sim.over_wall_budget'},  # always 0: the budget is on the wall
    'ClockStats': {'header', 'level', 'status', 'receiving', 'rtf_bin_min_at_s',
                   'max_wall_gap_at_s'},
    'HostStats': {'cgroup_available'},
}
MESSAGES = {'TopicStats': TopicStats, 'ClockStats': ClockStats, 'HostStats': HostStats}


def _fields(message_type: Any, prefix: str = '') -> set[str]:
    """Dotted names of every leaf field, nested IntervalStats included."""
    names = set()
    for name, kind in message_type.get_fields_and_field_types().items():
        if kind == 'ros2_deadline_monitor/IntervalStats':
            from ros2_deadline_monitor.msg import IntervalStats
            names |= _fields(IntervalStats, f'{prefix}{name}.')
        else:
            names.add(prefix + name)
    return names


def _get(message: Any, path: str) -> Any:
    for part in path.split('.'):
        message = getattr(message, part)
    return message


def _tables():
    """Each message's figures: the diagnostics' table, and for a topic its whole-run one."""
    for table, message in figure_docs.tables().values():
        yield (table + figures.RUN_TOPIC if message == 'TopicStats' else table), message


def test_every_field_the_table_names_exists_and_every_figure_field_is_in_the_table():
    for table, message in _tables():
        named = {f.field for f in table if f.field}
        fields = _fields(MESSAGES[message])
        assert named <= fields, (message, named - fields)
        assert fields - named == NOT_IN_TABLE[message], message


def test_each_field_holds_the_value_the_diagnostics_show(snapshots):
    snap = snapshots.snapshot()
    stats = conversions.monitor_stats(snap)
    parts = {'TopicStats': (stats.topics[0], snap.topics[0]),
             'ClockStats': (stats.clock, snap.clock), 'HostStats': (stats.host, snap.host)}
    for table, message in _tables():
        msg, part = parts[message]
        for figure in table:
            if not figure.field:
                continue
            shown = figure.value(snap, part)
            field = _get(msg, figure.field)
            if isinstance(shown, float):
                assert math.isclose(field * figure.field_scale, shown), figure.key
            else:
                assert field == shown, figure.key


def test_monitor_stats_bundles_the_topics_with_a_report(snapshots):
    invalid = snapshots.topic('bad', report=None, reason='invalid configuration: x')
    snap = snapshots.snapshot(topics=[snapshots.topic(), invalid])
    stats = conversions.monitor_stats(snap)
    assert [t.name for t in stats.topics] == ['imu']
    topic = stats.topics[0]
    assert topic.level == 1 and topic.status == snap.topics[0].reason
    assert topic.header.stamp.sec == snap.wall_ns // 10**9
    assert topic.interval_wall.max_at_s == snap.topics[0].report.interval_wall.max_at_ns / 1e9
    assert stats.window_wall_s == 5.0
    assert stats.clock.status == 'RTF 1.000' and stats.clock.simulator_rtf == 0.999
    assert stats.host.stats_timer_late_max_ms == 2.0


def test_nothing_measured_is_nan_in_the_message(snapshots):
    from ros2_deadline_monitor.analysis.reports import HostReport

    snap = snapshots.snapshot(
        topics=[snapshots.topic(report=snapshots.topic_report(age_mean_ns=math.nan,
                                                              last_arrival_wall_ns=None))],
        host=snapshots.host(report=HostReport()))
    stats = conversions.monitor_stats(snap)
    assert math.isnan(stats.topics[0].age_mean_ms)
    assert math.isnan(stats.topics[0].since_last_message_s)
    assert math.isnan(stats.host.monitor_cpu_percent)


def test_a_hidden_value_is_the_plain_counter_in_the_message(snapshots):
    # The diagnostics show an unknown count as 'unknown (why)' and leave out a zero counter;
    # the message carries the counter (and the counts note says why it is no figure).
    report = snapshots.topic_report(period_ns=None, counts_note='period not learned',
                                    deadline_misses_total=0, outages_total=0,
                                    foreign_stamps_total=0, producers=1)
    snap = snapshots.snapshot(topics=[snapshots.topic(report=report)])
    topic = conversions.monitor_stats(snap).topics[0]
    assert (topic.deadline_misses_total, topic.outages_total, topic.foreign_stamps_total,
            topic.producers) == (0, 0, 0, 1)
    assert topic.counts_note == 'period not learned'
    assert topic.cycles_total == snap.topics[0].run.cycles == 5000
    assert topic.interval_wall_max_run_ms == 30.0 and topic.intervals_wall_total == 4999


def test_messages_fold_back_into_the_same_whole_run_figures(snapshots):
    # One adapter each way: snapshot -> MonitorStats (conversions) -> snapshot (stats_fold).
    # Every whole-run figure reads the same from the folded snapshot as from the original.
    from ros2_deadline_monitor.analysis.stats_fold import StatsFold

    event = snapshots.topic('ev', report=snapshots.topic_report(
        name='ev', kind='event', period_ns=None, loss_known=False, loss_note='several'))
    snap = snapshots.snapshot(topics=[snapshots.topic(), event])
    fold = StatsFold()
    fold.add(conversions.monitor_stats(snap))
    back = fold.snapshot()
    assert [t.topic_id for t in back.topics] == ['imu', 'ev']
    for original, folded in zip(snap.topics, back.topics, strict=True):
        assert figures.record(figures.RUN_TOPIC, back, folded) == pytest.approx(
            figures.record(figures.RUN_TOPIC, snap, original), nan_ok=True), original.topic_id
        assert (figures.unknowns(figures.RUN_TOPIC, back, folded)
                == figures.unknowns(figures.RUN_TOPIC, snap, original))
    clock = figures.record(figures.RUN_CLOCK, back, back.clock)
    assert clock == {**figures.record(figures.RUN_CLOCK, snap, snap.clock),
                     'rtf_bin_min': 0.98, 'rtf_bin_min_at_s': pytest.approx(4.4)}
    # The messages carry the window's worst bin only: the fold's worst is that of the reports
    # (here one, its window starting 0.1 s after the session: 4.5 s - 0.1 s).
