"""Tests for replaying bags through the core in bounded rounds (bag/replay.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ros2_deadline_monitor.analysis import AnalysisConfig, cycles, NO_VALUE, Session, TopicConfig
from ros2_deadline_monitor.bag import replay
from ros2_deadline_monitor.bag.plan import build_plan, Overrides
from ros2_deadline_monitor.bag.reader import BagSource

MS = 1_000_000
T0 = 1_700_000_000_000_000_000


def run(path: Path, **overrides: object) -> replay.BagResult:
    with BagSource(path) as bag:
        plan, _ = build_plan(bag, None, Overrides(**overrides))
        return replay.BagAnalysis(bag, plan, keep_series=True).run()


def test_same_answer_as_one_session_fed_everything(bags, tmp_path: Path, topic_views) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    result = run(ref.path, stamp='start', clock='wall')
    direct = Session(AnalysisConfig(window_ns=3600 * 10**9, window_cycles=100_000),
                     use_sim_time=True, start_wall_ns=T0)
    direct.configure({'demo_cmd': TopicConfig('demo_cmd', '/demo/cmd', stamp='start',
                                              clock='wall')})
    for k in range(5101):  # the bag's /clock: sim k ms at T0 + k ms
        direct.clock_sample(T0 + k * MS, k * MS)
    for arrival, stamp in zip(ref.arrivals.tolist(), ref.stamps.tolist(), strict=True):
        direct.message('demo_cmd', arrival, stamp, NO_VALUE, 22)
    report = direct.snapshot(int(ref.arrivals[-1]), final=True).topics[0].report
    (topic,) = topic_views(result)
    assert topic.messages_total == report.messages_total
    assert topic.deadline_misses_total == report.deadline_misses_total
    assert topic.skipped_periods_total == report.skipped_periods_total
    for ours, theirs in ((topic.interval_wall, report.interval_wall),
                         (topic.interval_sim, report.interval_sim)):
        assert ours.count == theirs.count
        assert ours.mean_ns == pytest.approx(theirs.mean_ns, rel=1e-12)
        assert (ours.min_ns, ours.max_ns, ours.max_at_ns) == (theirs.min_ns, theirs.max_ns,
                                                               theirs.max_at_ns)
        assert (ours.p50_ns, ours.p95_ns, ours.p99_ns) == (theirs.p50_ns, theirs.p95_ns,
                                                           theirs.p99_ns)
    assert topic.response_max_ns == report.response_max_ns
    assert topic.response_p99_ns == report.response_p99_ns
    assert topic.lateness_mean_ns == pytest.approx(report.lateness_mean_ns)


def test_rounds_do_not_change_the_answer(bags, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    ref = bags.reference(tmp_path / 'bag', 'sqlite3', sim_stamps=True)
    coarse = run(ref.path, stamp='start')
    monkeypatch.setattr(replay, 'TICK_MESSAGES', 37)
    monkeypatch.setattr(replay, 'TICK_NS', 30 * MS)
    fine = run(ref.path, stamp='start')
    assert fine.topics == coarse.topics
    assert fine.snapshot.clock.report.rtf_total == coarse.snapshot.clock.report.rtf_total
    assert fine.snapshot.clock.report.messages_total == coarse.snapshot.clock.report.messages_total
    assert fine.clock.max_wall_gap_ns == coarse.clock.max_wall_gap_ns


def test_sim_reset_is_counted_and_handled(bags, tmp_path: Path, topic_views) -> None:
    """The simulator restarts at 2 s wall: sim time jumps back to 0 and runs on."""
    messages = []
    for k in range(4000):
        wall = T0 + k * MS
        sim = (k if k < 2000 else k - 2000) * MS
        messages.append(('/clock', wall, bags.clock_cdr(sim)))
        if k % 10 == 0:
            messages.append(('/cmd', wall + 100_000, bags.header_cdr(sim)))
    path = bags.write(tmp_path / 'bag', 'mcap', {'/clock': 'rosgraph_msgs/msg/Clock',
                                                 '/cmd': 'std_msgs/msg/Header'}, messages)
    result = run(path, stamp='start')
    (topic,) = topic_views(result)
    assert result.snapshot.clock.report.resets_total == 1
    assert topic.resets_total == 1
    assert topic.timer_clock == 'sim'
    assert topic.messages_total == 400
    assert topic.deadline_misses_total == 0
    assert topic.interval_sim.max_ns == 10 * MS  # no interval across the reset
    assert result.snapshot.clock.report.rtf_total == pytest.approx(1.0, abs=1e-3)


def test_malformed_messages_are_counted(bags, tmp_path: Path, topic_views) -> None:
    messages = [('/cmd', T0 + k * 10 * MS, bags.header_cdr(T0 + k * 10 * MS))
                for k in range(100)]
    messages[50] = ('/cmd', messages[50][1], b'\x00\x01\x00')
    path = bags.write(tmp_path / 'bag', 'mcap', {'/cmd': 'std_msgs/msg/Header'}, messages)
    (topic,) = topic_views(run(path, stamp='start'))
    assert topic.malformed_total == 1
    assert topic.messages_total == 100 and topic.cycles == 99  # a message, not a cycle
    # The cycle whose message was unreadable ran: it took its slot, no skipped period.
    assert topic.skipped_periods_total == 0


def test_too_few_messages_to_learn_a_period(bags, tmp_path: Path, topic_views) -> None:
    messages = [('/cmd', T0 + k * 10 * MS, bags.header_cdr(0)) for k in range(10)]
    path = bags.write(tmp_path / 'bag', 'mcap', {'/cmd': 'std_msgs/msg/Header'}, messages)
    (topic,) = topic_views(run(path))
    # What can be computed is (issue 44): intervals and rate; misses and skipped periods
    # need a period and are unknown (null), never a 0 that looks like a pass.
    assert topic.messages_total == 10 and topic.cycles == 10
    assert topic.period_ns is None
    assert topic.deadline_misses_total is None and topic.skipped_periods_total is None
    assert 'period not learned: 10 cycles, it needs 21' in topic.note
    assert topic.interval_wall.count == 9
    assert topic.interval_wall.mean_ns == topic.interval_wall.max_ns == 10 * MS
    assert topic.rate_wall_hz == pytest.approx(100.0)


def test_series_are_bounded(bags, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    result = run(ref.path, stamp='start')
    timeline = result.series['timelines']['demo_cmd']
    assert timeline.raw_points() is not None
    assert timeline.marks('miss')[0].size == 20
    assert timeline.marks('skip')[2].sum() == 10
    assert len(result.series['rtf_windows']) == 6


def test_a_wall_clock_producer_recorded_next_to_a_sim_producer(bags, tmp_path: Path,
                                                               topic_views) -> None:
    """The user's case in a bag (no sequence numbers): the same figures as live."""
    wall_step = 2 * MS  # RTF 0.5: 1 ms of sim time every 2 ms of wall time
    messages = bags.clock_messages(10_000 * MS, wall_step, MS)
    sim_cycles = 10_000 * MS // wall_step // 10
    for k in range(sim_cycles):
        messages.append(('/cmd', T0 + k * 10 * wall_step + 500_000, bags.header_cdr(k * 10 * MS)))
    second = [T0 + 3_000 * MS + i * 10 * MS for i in range(400)]
    messages += [('/cmd', t + 30_000, bags.header_cdr(t)) for t in second]
    bags.write(tmp_path / 'bag', 'mcap', {'/cmd': 'std_msgs/msg/Header',
                                         '/clock': 'rosgraph_msgs/msg/Clock'}, messages)
    (topic,) = topic_views(run(tmp_path / 'bag', stamp='start', clock='sim', period_ns=10 * MS))
    assert topic.messages_total == sim_cycles + 400
    assert topic.foreign_stamps_total == 400
    assert topic.skipped_periods_total == 0 and topic.deadline_misses_total == 0
    assert topic.interval_sim.max_ns == 10 * MS
    assert '400 start stamps on the wall (Unix) clock, not the sim timer clock' in topic.note


def test_a_restart_gap_in_a_bag_is_an_outage(bags, tmp_path: Path, topic_views) -> None:
    starts = [T0 + i * 10 * MS for i in range(300)]
    starts += [T0 + 3_000 * MS + 9_700 * MS + i * 10 * MS for i in range(300)]
    messages = [('/cmd', t + 200_000, bags.header_cdr(t)) for t in starts]
    bags.write(tmp_path / 'bag', 'mcap', {'/cmd': 'std_msgs/msg/Header'}, messages)
    (topic,) = topic_views(run(tmp_path / 'bag', stamp='start', clock='wall', period_ns=10 * MS))
    assert topic.skipped_periods_total == 0  # before: ~970
    assert topic.outages_total == 1 and topic.outage_max_ns == 9_710 * MS


def _as_json(result: replay.BagResult) -> str:
    from ros2_deadline_monitor.outputs.tables import to_json

    return json.dumps(to_json(result), sort_keys=True)


def test_columns_give_what_message_by_message_gives(bags, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay in chunk columns against the per-message path, on bags that need care.

    Sim stamps and the auto clock, a sim-time reset, malformed stamps and /clock messages,
    pending buffers near full and rounds cut small: every figure alike.
    """
    messages = []
    for k in range(6000):
        wall = T0 + k * MS
        sim = (k if k < 2500 else k - 2500) * MS
        messages.append(('/clock', wall, bags.clock_cdr(sim) if k % 997 else b'\x00'))
        if k % 4 == 0:
            raw = bags.header_cdr(sim) if k % 1001 else b'\x00\x01\x00'
            messages.append(('/cmd', wall + 100_000, raw))
    reset = bags.write(tmp_path / 'reset', 'mcap', {'/clock': 'rosgraph_msgs/msg/Clock',
                                                    '/cmd': 'std_msgs/msg/Header'}, messages)
    cases = [(reset, {'stamp': 'start'}), (reset, {}),
             (bags.reference(tmp_path / 'sim', 'mcap', sim_stamps=True).path,
              {'stamp': 'start'}),
             (bags.reference(tmp_path / 'wall', 'sqlite3').path, {'stamp': 'start'})]
    for tick, capacity in ((None, None), (37, 50)):
        if tick is not None:
            monkeypatch.setattr(replay, 'TICK_MESSAGES', tick)
            monkeypatch.setattr(replay, 'BATCH_MIN', 5)
            monkeypatch.setattr(cycles, 'PENDING_CAPACITY', capacity)
        for path, overrides in cases:
            batched = _as_json(run(path, **overrides))
            with monkeypatch.context() as patch:
                patch.setattr(replay, 'BATCH_MIN', 10**9)  # every message on its own
                assert _as_json(run(path, **overrides)) == batched


def test_stamps_going_back_in_a_bag_are_named_never_skipped(bags, tmp_path: Path,
                                                            topic_views) -> None:
    # Issue 47: a clean 50 Hz producer whose every 10th stamp reads 1 s early.
    messages = [('/cmd', T0 + k * 20 * MS + MS,
                 bags.header_cdr(T0 + k * 20 * MS - (10**9 if k % 10 == 9 else 0)))
                for k in range(400)]
    path = bags.write(tmp_path / 'bag', 'mcap', {'/cmd': 'std_msgs/msg/Header'}, messages)
    (topic,) = topic_views(run(path, stamp='start', clock='wall', period_ns=20 * MS))
    assert topic.messages_total == 400 and topic.cycles == 360
    assert topic.skipped_periods_total == 0 and topic.deadline_misses_total == 0
    assert topic.interval_wall.max_ns == 20 * MS
    assert 'stamps went back 40 times' in topic.note
