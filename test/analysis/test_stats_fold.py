"""Stats messages folded back into a snapshot: how each field folds is the figure table's."""

from __future__ import annotations

import copy

import pytest

from ros2_deadline_monitor.analysis import figures, stats_fold
from ros2_deadline_monitor.analysis.stats_fold import StatsFold


def _read(msg, field: str):
    for name in field.split('.'):
        msg = getattr(msg, name)
    return msg


def _write(msg, field: str, value) -> None:
    *path, last = field.split('.')
    for name in path:
        msg = getattr(msg, name)
    setattr(msg, last, type(getattr(msg, last))(value))


def test_the_fold_rules_are_the_tables():
    """Every field the fold sums or takes the worst of is a figure's, marked so in the table."""
    by_field = {f.field: f for f in (*figures.TOPIC, *figures.RUN_TOPIC) if f.field}
    for field in stats_fold.COUNTERS:
        assert by_field[field].metric == figures.COUNTER
    for field in stats_fold.RUN_COUNTERS:
        assert by_field[field].fold == figures.SUMMED
    for field in stats_fold.WORST_FIELDS + stats_fold.RUN_LONGEST:
        assert by_field[field].fold == figures.WORST
    marked = {f for f, figure in by_field.items()
              if figure.fold or figure.metric == figures.COUNTER}
    assert marked == set(stats_fold.COUNTERS + stats_fold.RUN_COUNTERS + stats_fold.WORST_FIELDS
                         + stats_fold.RUN_LONGEST)


def test_each_marked_field_folds_as_the_table_says(snapshots):
    """Two reports of one run: worst fields take the larger, counters the later total."""
    from ros2_deadline_monitor.outputs import conversions

    first = conversions.monitor_stats(snapshots.snapshot()).topics[0]
    stats = conversions.monitor_stats(snapshots.snapshot())
    second = stats.topics[0]
    for field in stats_fold.WORST_FIELDS:
        _write(second, field, _read(first, field) / 2)  # the first report had the worst
    fold = StatsFold()
    one = copy.deepcopy(stats)
    one.topics = [first]
    fold.add(one)
    fold.add(stats)
    topic = fold.snapshot().topics[0]
    by_field = {f.field: f for f in figures.TOPIC if f.field}
    for field in stats_fold.WORST_FIELDS:
        figure = by_field[field]
        shown = (figure.message or figure.get)(fold.snapshot(), topic)
        assert shown == pytest.approx(_read(first, field) * figure.field_scale, nan_ok=True), field


def test_a_monitor_restart_sums_every_counter_of_the_table(snapshots):
    """A counter that drops is a restarted monitor: each counter of the table adds both runs."""
    from ros2_deadline_monitor.outputs import conversions

    before = conversions.monitor_stats(snapshots.snapshot())
    after = copy.deepcopy(before)
    topic = after.topics[0]
    for field in stats_fold.COUNTERS:
        _write(topic, field, 1)  # the restarted monitor's first totals: all lower
    _write(topic, 'messages_total', 0)
    fold = StatsFold()
    fold.add(before)
    fold.add(after)
    assert fold.reports()['imu'][2] == 1  # one restart
    folded = fold.snapshot().topics[0].report
    report = snapshots.snapshot().topics[0].report
    assert folded.messages_lost_total == report.messages_lost_total + 1
    assert folded.lost_by_monitor_total == report.lost_by_monitor_total + 1
    assert folded.malformed_total == report.malformed_total + 1
