"""Tests for the figures (outputs/plots.py): every branch draws a real PNG."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ros2_deadline_monitor.bag import replay
from ros2_deadline_monitor.bag.plan import build_plan, Overrides
from ros2_deadline_monitor.bag.reader import BagSource
from ros2_deadline_monitor.outputs.plots import file_stem, render_plots
from ros2_deadline_monitor.outputs.series import Timeline

T0 = 1_700_000_000_000_000_000
MS = 1_000_000


def analyze(path: Path, **overrides: object) -> replay.BagResult:
    with BagSource(path) as bag:
        plan, _ = build_plan(bag, None, Overrides(**overrides))
        return replay.BagAnalysis(bag, plan, keep_series=True).run()


def test_long_runs_are_drawn_as_envelopes_and_counts(bags, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond the point and marker caps the timeline shows bins instead of points."""
    monkeypatch.setattr(replay, 'Timeline', functools.partial(Timeline, raw_cap=100,
                                                              mark_cap=5))
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    result = analyze(ref.path, stamp='start')
    timeline = result.series['timelines']['demo_cmd']
    assert timeline.raw_points() is None and not timeline.misses_complete
    images = render_plots(result)
    assert sorted(images) == ['ecdf.png', 'lateness_demo_cmd.png', 'timeline_demo_cmd.png']
    assert all(png.startswith(b'\x89PNG') for png in images.values())


def test_clock_only_bag_gets_an_rtf_figure(bags, tmp_path: Path) -> None:
    path = bags.write(tmp_path / 'bag', 'mcap', {'/clock': 'rosgraph_msgs/msg/Clock'},
                      bags.clock_messages(3_000 * MS, 2 * MS, MS))
    result = analyze(path)
    assert result.topics == () and result.snapshot.clock.report.rtf_total == pytest.approx(0.5)
    assert list(render_plots(result)) == ['rtf.png']


def test_results_without_series_have_no_figures(bags, tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', 'sqlite3')
    with BagSource(ref.path) as bag:
        plan, _ = build_plan(bag, None, Overrides())
        result = replay.BagAnalysis(bag, plan).run()
    assert render_plots(result) == {}


def test_file_stem() -> None:
    assert file_stem('demo_cmd') == 'demo_cmd'
    assert file_stem('a/b c') == 'a_b_c'
