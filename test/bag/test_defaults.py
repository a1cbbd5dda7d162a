"""``analyze`` right by default on bags shaped like real recordings (issue 44), no flag set."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ros2_deadline_monitor.bag import replay
from ros2_deadline_monitor.bag.analyze import main
from ros2_deadline_monitor.bag.plan import build_plan, Overrides
from ros2_deadline_monitor.bag.reader import BagSource
from ros2_deadline_monitor.outputs import plots
from ros2_deadline_monitor.outputs.tables import format_table

MS = 1_000_000
T0 = 1_700_000_000_000_000_000
HEADER = 'std_msgs/msg/Header'
CLOCK = 'rosgraph_msgs/msg/Clock'


def analyze_json(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / 'result.json'
    assert main([*args, '--no-progress', '--json', str(out)]) == 0
    return json.loads(out.read_text())


def by_topic(data: dict) -> dict[str, dict]:
    return {t['topic']: t for t in data['topics']}


def run(path: Path, **overrides: object) -> replay.BagResult:
    with BagSource(path) as bag:
        plan, _ = build_plan(bag, None, Overrides(**overrides))
        return replay.BagAnalysis(bag, plan, keep_series=True).run()


@pytest.fixture
def nav2(bags, tmp_path: Path) -> Path:
    """Odometry stamped exactly 36 ms apart (wall clock), logged 0.3-0.9 ms later, a 2.16 s gap."""
    n = 2638
    stamps = T0 + np.arange(n, dtype=np.int64) * 36 * MS
    stamps[1000:] += 2_160 * MS - 36 * MS
    logged = stamps + np.random.default_rng(7).integers(300_000, 900_000, n)
    messages = [('/odom', int(t), bags.header_cdr(int(s), b'odom'))
                for s, t in zip(stamps, logged, strict=True)]
    return bags.write(tmp_path / 'nav2', 'mcap', {'/odom': HEADER}, messages)


def test_nav2_like_bag_exact_period_and_the_gap_in_the_max(nav2: Path, tmp_path: Path) -> None:
    odom = by_topic(analyze_json(tmp_path, str(nav2)))['/odom']
    assert (odom['start_source'], odom['rule'], odom['period_ms']) == ('header', 'response',
                                                                       36.0)
    assert 'span the arrivals' in odom['timing_reason']
    assert (odom['deadline_misses'], odom['skipped_periods']) == (0, 0)
    assert odom['max_interval_wall_ms'] == pytest.approx(2160.0)
    assert odom['outages'] == 1 and odom['outage_max_ms'] is not None
    assert odom['rate_wall_hz'] == pytest.approx(2637 / ((2636 * 36 + 2160) / 1e3))
    table = format_table(run(nav2))
    assert '2160.00' in table and 'outage' in table


def test_nav2_like_bag_fails_the_max_interval_gate(nav2: Path, capsys) -> None:
    code = main([str(nav2), '--no-progress', '--check', '--expect-max-interval-ms', '300'])
    out = capsys.readouterr().out
    assert code == 3
    failed = [line for line in out.splitlines() if line.startswith('FAIL ')]
    assert failed == ['FAIL /odom: max interval 2,160 ms, expected <= 300 ms (max_interval_ms)']


def test_outages_are_shaded_in_the_timeline(nav2: Path, topic_views) -> None:
    pytest.importorskip('matplotlib')
    result = run(nav2)
    (topic,) = topic_views(result)
    timeline = result.series['timelines'][topic.name]
    figure = plots._figure(6, 3)
    ax = figure.subplots()
    plots._outages(ax, timeline, topic)
    spans = [p for p in ax.patches if p.get_label().startswith('outage > timeout')]
    assert len(spans) == 1  # one silence, labelled once
    span = spans[0]
    width = (span.get_width() if hasattr(span, 'get_width')
             else span.get_xy()[2][0] - span.get_xy()[0][0])
    assert width == pytest.approx(2.16, abs=1e-3)
    images = plots.render_plots(result)
    assert images[f'timeline_{topic.name}.png'].startswith(b'\x89PNG')


@pytest.fixture
def gazebo(bags, tmp_path: Path) -> Path:
    """Gazebo Classic's 10 Hz /clock, a 200 Hz IMU and a 5 Hz scan stamped in sim time."""
    messages = bags.clock_messages(6_000 * MS, 100 * MS, 100 * MS)
    messages += [('/imu', T0 + k * 5 * MS + 200_000, bags.header_cdr(k * 5 * MS, b'imu'))
                 for k in range(1200)]
    messages += [('/scan', T0 + k * 200 * MS + 300_000, bags.header_cdr(k * 200 * MS, b'l'))
                 for k in range(30)]
    return bags.write(tmp_path / 'gazebo', 'mcap', {'/clock': CLOCK, '/imu': HEADER,
                                                    '/scan': HEADER}, messages)


def test_gazebo_like_bag_stamped_sensors_are_exact(gazebo: Path, tmp_path: Path) -> None:
    topics = by_topic(analyze_json(tmp_path, str(gazebo)))
    for name, period_ms in (('/imu', 5.0), ('/scan', 200.0)):
        t = topics[name]
        assert (t['timer_clock'], t['start_source'], t['period_ms']) == ('sim', 'header',
                                                                         period_ms), t['note']
        assert (t['deadline_misses'], t['skipped_periods']) == (0, 0)
        assert t['max_interval_sim_ms'] == pytest.approx(period_ms)  # not 301 ms


def test_gazebo_like_bag_arrivals_under_a_coarser_clock_are_unknown(gazebo: Path,
                                                                    tmp_path: Path) -> None:
    imu = by_topic(analyze_json(tmp_path, str(gazebo), '--topic', '/imu', '--stamp',
                                'none'))['/imu']
    assert imu['start_source'] == 'arrival'
    assert imu['deadline_misses'] is None and imu['skipped_periods'] is None
    assert imu['counts_note'].startswith('/clock every 100 ms is coarser than this topic')
    assert imu['note'].count('/clock every 100 ms is coarser') == 1  # said once, not twice
    assert imu['max_interval_sim_ms'] is None  # no 100 ms "sim interval"
    assert imu['max_interval_wall_ms'] == pytest.approx(5.0)


@pytest.fixture
def jittered_imu(bags, tmp_path: Path) -> tuple[Path, np.ndarray]:
    """Write a 10 Hz /clock and a 200 Hz IMU stamped in sim time, logged 0.2-4.4 ms late."""
    messages = bags.clock_messages(6_000 * MS, 100 * MS, 100 * MS)
    stamps = np.arange(1200, dtype=np.int64) * 5 * MS
    logged = T0 + stamps + np.random.default_rng(55).integers(200_000, 4_400_000, len(stamps))
    messages += [('/imu', int(t), bags.header_cdr(int(s), b'imu'))
                 for s, t in zip(stamps, logged, strict=True)]
    path = bags.write(tmp_path / 'imu', 'mcap', {'/clock': CLOCK, '/imu': HEADER}, messages)
    return path, logged


def test_a_sim_stamped_sensor_under_a_coarse_clock_keeps_its_logged_wall_intervals(
        jittered_imu: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    path, logged = jittered_imu
    wall = np.diff(logged)
    assert wall.max() <= 9_400_000
    imu = by_topic(analyze_json(tmp_path, str(path)))['/imu']
    assert (imu['timer_clock'], imu['start_source'], imu['period_ms']) == ('sim', 'header', 5.0)
    assert (imu['deadline_misses'], imu['skipped_periods']) == (0, 0)
    assert imu['max_interval_sim_ms'] == pytest.approx(5.0)
    # The log times' own intervals, not the stamps through the /clock mapping (101 ms).
    assert imu['max_interval_wall_ms'] == pytest.approx(wall.max() / 1e6)
    assert 'runs at most' not in (imu['note'] or '')
    # The plot's wall series is the same: no 0/100 ms sawtooth drawn as data.
    result = run(path)
    timeline = result.series['timelines']['imu']
    wall_row = list(timeline.COLUMNS).index('interval_wall')
    filled = timeline.b_count[wall_row] > 0
    assert timeline.b_max[wall_row][filled].max() == wall.max()
    assert timeline.b_min[wall_row][filled].min() == wall.min() > 0


def test_a_sim_time_timer_faster_than_the_clock_is_explained(bags, tmp_path: Path) -> None:
    # A 100 Hz sim-time controller under a 10 Hz /clock fires once per /clock message.
    messages = bags.clock_messages(3_000 * MS, 100 * MS, 100 * MS)
    messages += [('/cmd', T0 + k * 100 * MS + 400_000, bags.header_cdr(k * 100 * MS))
                 for k in range(1, 30)]
    path = bags.write(tmp_path / 'ctl', 'mcap', {'/clock': CLOCK, '/cmd': HEADER}, messages)
    cmd = by_topic(analyze_json(tmp_path, str(path), '--period-ms', '10'))['/cmd']
    assert cmd['skipped_periods'] == 9 * 28
    assert ('/clock every 100 ms: a 100 Hz sim-time timer runs at most 10 Hz (rcl fires it '
            'once per /clock message and skips the periods in between; measured 10 Hz)'
            ) in cmd['note']


def test_small_topics_show_what_is_computable(bags, tmp_path: Path) -> None:
    messages = []
    for name, n in (('/one', 1), ('/two', 2), ('/twenty', 20)):
        messages += [(name, T0 + k * 10 * MS + MS, bags.header_cdr(T0 + k * 10 * MS))
                     for k in range(n)]
    path = bags.write(tmp_path / 'small', 'mcap', dict.fromkeys(('/one', '/two', '/twenty'),
                                                                 HEADER), messages)
    topics = by_topic(analyze_json(tmp_path, str(path)))
    for name, n in (('/one', 1), ('/two', 2), ('/twenty', 20)):
        t = topics[name]
        assert t['messages'] == n and t['period_ms'] is None
        assert t['deadline_misses'] is None and t['skipped_periods'] is None
        assert t['counts_note'].startswith(f'period not learned: {n} cycles, it needs 21')
        assert t['intervals_wall'] == n - 1
        assert t['max_interval_wall_ms'] == (10.0 if n > 1 else None)
        assert t['rate_wall_hz'] == (pytest.approx(100.0) if n > 1 else None)
    table = format_table(run(path))
    row = next(line for line in table.splitlines() if line.startswith('/twenty'))
    assert ' 0 ' not in row.split('interval')[-1]  # misses and skipped read '-', not 0
