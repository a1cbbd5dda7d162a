"""Slow topics: refreshed every ~10 messages, at once when something happens, exact at the end."""

from typing import Any

from ros2_deadline_monitor.analysis.config import AnalysisConfig, TopicConfig
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.session import Session as Measuring
from ros2_deadline_monitor.analysis.session import TopicState
from ros2_deadline_monitor.outputs.reporter import REFRESH_PERIODS, Reporter


class Session:
    """A session with a reporter in front of it, as the live node has (``outputs/reporter.py``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.session = Measuring(*args, **kwargs)
        self.reporter = Reporter(self.session)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)

    def snapshot(self, *args: Any, **kwargs: Any) -> Any:
        return self.reporter.snapshot(*args, **kwargs)

    def standing(self, now_wall_ns: int) -> frozenset[str]:
        return self.reporter.standing(now_wall_ns)


MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S


def slow_session(analysis: AnalysisConfig | None = None) -> Session:
    s = Session(analysis or AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    s.configure({'slow': TopicConfig(name='slow', topic='/slow', period_ns=S),
                 'fast': TopicConfig(name='fast', topic='/fast', period_ns=10 * MS)})
    for topic_id in ('slow', 'fast'):
        s.topic_status(topic_id, TopicState.RECEIVING, type_name='std_msgs/msg/Header',
                       writers=1)
    return s


def run(s: Session, seconds: int, late_at: int | None = None, gap_at: int | None = None,
        start: int = 0) -> list:
    """1 Hz and 100 Hz messages on time, a report each second; return the slow snapshots."""
    slow = []
    seq = start + 1
    for k in range(start, start + seconds):
        delay = 600 * MS if k == late_at else MS
        if k != gap_at:
            s.message('slow', OFF + k * S + delay, seq=seq)
        seq += 1
        for i in range(100):
            s.message('fast', OFF + k * S + i * 10 * MS + MS, seq=k * 100 + i + 1)
        snap = s.snapshot(OFF + (k + 1) * S)
        slow.append(next(t for t in snap.topics if t.topic_id == 'slow'))
    return slow


def test_a_steady_slow_topic_is_refreshed_every_ten_messages_and_exact_then() -> None:
    s = slow_session()
    slow = run(s, 40)
    refreshed = [k for k in range(1, 40) if slow[k] is not slow[k - 1]]
    steady = [k for k in refreshed if k > 15]  # once its first reports are behind it
    gaps = {b - a for a, b in zip(steady, steady[1:], strict=False)}
    assert gaps == {REFRESH_PERIODS}, refreshed
    for k in refreshed:
        assert slow[k].report.messages_total == k + 1  # exact at each refresh
    assert all(t.level == Level.OK for t in slow[5:])


def many_slow_session(n: int, analysis: AnalysisConfig | None = None) -> tuple[Session, list]:
    s = Session(analysis or AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    names = [f's{i}' for i in range(n)]
    s.configure({n: TopicConfig(name=n, topic=f'/{n}', period_ns=S) for n in names})
    for n in names:
        s.topic_status(n, TopicState.RECEIVING, type_name='std_msgs/msg/Header', writers=1)
    return s, names


def test_the_refresh_budget_stretches_the_turns_of_many_slow_topics_not_their_alerts() -> None:
    # 100 topics at 1 Hz and 5 routine refreshes a second: each stands 20 s, not 10.
    s, names = many_slow_session(100, AnalysisConfig(max_steady_refreshes_per_s=5.0))
    previous: dict = {}
    refreshes = []
    turns: dict[str, list[int]] = {n: [] for n in names}
    for k in range(130):
        for i, n in enumerate(names):
            late = n == 's7' and k == 100  # refreshed at the next report whatever its turn
            s.message(n, OFF + k * S + (600 if late else i + 1) * MS, seq=k + 1)
        snap = s.snapshot(OFF + (k + 1) * S)
        fresh = [t for t in snap.topics if previous.get(t.topic_id) is not t]
        previous = {t.topic_id: t for t in snap.topics}
        if k >= 50:  # the turns stretched (the first refreshes knew of no slow topic)
            refreshes.append(len(fresh))
            for t in fresh:
                turns[t.topic_id].append(k)
                assert t.report.messages_total == k + 1  # exact at each refresh
    assert 100 in turns['s7'] and previous['s7'].report.deadline_misses_total == 1
    del turns['s7']
    for n, ks in turns.items():
        assert {b - a for a, b in zip(ks, ks[1:], strict=False)} == {20}, (n, ks)
    assert max(refreshes) <= 15, refreshes  # 5 a report on average
    assert sum(refreshes[:60]) <= 3 * 100 + 10  # every 20 reports (s7: a few more)


def test_topics_that_learn_their_period_together_keep_the_budget_from_the_first_turn() -> None:
    # 400 topics at 1 Hz learn their period in the same report; 10 refreshes a second: each
    # stands 40 s from its first turn on, not 10 s at its own pace until the count caught up.
    s = Session(AnalysisConfig(max_steady_refreshes_per_s=10.0), use_sim_time=False,
                start_wall_ns=OFF)
    names = [f's{i}' for i in range(400)]
    s.configure({n: TopicConfig(name=n, topic=f'/{n}') for n in names})
    for n in names:
        s.topic_status(n, TopicState.RECEIVING, type_name='std_msgs/msg/Header', writers=1)
    previous: dict = {}
    refreshes = []
    for k in range(80):
        for i, n in enumerate(names):
            s.message(n, OFF + k * S + (i + 1) * MS, seq=k + 1)
        snap = s.snapshot(OFF + (k + 1) * S)
        refreshes.append(sum(previous.get(t.topic_id) is not t for t in snap.topics))
        previous = {t.topic_id: t for t in snap.topics}
    learned = max(k for k, n in enumerate(refreshes) if n == len(names))
    after = refreshes[learned + 1:learned + 41]
    assert max(after) <= 25 and sum(after) <= len(names) + 20, (learned, after)


def test_without_a_budget_many_slow_topics_keep_their_own_pace() -> None:
    s, names = many_slow_session(400, AnalysisConfig(max_steady_refreshes_per_s=0.0))
    previous: dict = {}
    turns: dict[str, list[int]] = {n: [] for n in names}
    for k in range(60):
        for i, n in enumerate(names):
            s.message(n, OFF + k * S + (i + 1) * MS, seq=k + 1)
        snap = s.snapshot(OFF + (k + 1) * S)
        for t in snap.topics:
            if k >= 20 and previous.get(t.topic_id) is not t:
                turns[t.topic_id].append(k)
        previous = {t.topic_id: t for t in snap.topics}
    for n, ks in turns.items():  # the default 20 a second would stand them 20 s
        assert {b - a for a, b in zip(ks, ks[1:], strict=False)} == {REFRESH_PERIODS}, (n, ks)


def test_a_late_message_or_a_gap_is_reported_at_the_next_report() -> None:
    s = slow_session()
    run(s, 20)
    late = run(s, 3, late_at=21, start=20)
    assert late[1].report.deadline_misses_total == 1 and late[1].level == Level.WARN
    gap = run(s, 3, gap_at=24, start=23)
    assert gap[2].report.messages_lost_total == 1  # the message after the gap


def test_a_slow_topic_that_gets_faster_is_refreshed_at_the_next_report() -> None:
    # Its pace is no longer the one it stands for: an interval under 3/4 period refreshes it.
    s = slow_session()
    run(s, 15)
    now = OFF + 16 * S
    assert s.standing(now) == {'slow'}
    s.message('slow', OFF + 15 * S + MS, seq=16)
    s.message('slow', OFF + 15 * S + 500 * MS + MS, seq=17)
    assert s.standing(now) == frozenset()
    slow = next(t for t in s.snapshot(now).topics if t.topic_id == 'slow')
    assert slow.report.messages_total == 17


def test_silence_beyond_the_timeout_is_reported_at_once() -> None:
    s = slow_session()
    run(s, 20)
    snap = s.snapshot(OFF + 20 * S + 10 * S + 500 * MS)  # timeout: 10 periods
    slow = next(t for t in snap.topics if t.topic_id == 'slow')
    assert slow.level == Level.ERROR and 'no message for' in slow.reason


def test_reports_every_second_end_with_the_totals_of_one_final_report() -> None:
    every, once = slow_session(), slow_session()
    run(every, 33, late_at=17, gap_at=26)
    for k in range(33):  # the same messages, no report until the end
        if k != 26:
            once.message('slow', OFF + k * S + (600 * MS if k == 17 else MS), seq=k + 1)
        for i in range(100):
            once.message('fast', OFF + k * S + i * 10 * MS + MS, seq=k * 100 + i + 1)
    a = {t.topic_id: t for t in every.snapshot(OFF + 33 * S, final=True).topics}
    b = {t.topic_id: t for t in once.snapshot(OFF + 33 * S, final=True).topics}
    for topic_id in ('slow', 'fast'):
        ra, rb = a[topic_id].report, b[topic_id].report
        assert (ra.messages_total, ra.deadline_misses_total, ra.skipped_periods_total,
                ra.messages_lost_total) == (rb.messages_total, rb.deadline_misses_total,
                                            rb.skipped_periods_total, rb.messages_lost_total)
    # The late one; the interval across the lost message is none of the producer's.
    assert a['slow'].report.deadline_misses_total == 1
    assert a['slow'].report.messages_lost_total == 1
    assert a['slow'].report.intervals_across_loss_total == 1


def test_slow_topics_that_start_together_are_refreshed_in_turns_not_all_in_one_report() -> None:
    # 1,000 such topics made one report in ten take over half a second.
    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    names = [f's{i}' for i in range(100)]
    s.configure({n: TopicConfig(name=n, topic=f'/{n}', period_ns=S) for n in names})
    for n in names:
        s.topic_status(n, TopicState.RECEIVING, type_name='std_msgs/msg/Header', writers=1)
    previous: dict = {}
    refreshes = []
    turns: dict[str, list[int]] = {n: [] for n in names}
    for k in range(45):
        for i, n in enumerate(names):
            s.message(n, OFF + k * S + (i + 1) * MS, seq=k + 1)
        snap = s.snapshot(OFF + (k + 1) * S)
        fresh = [t for t in snap.topics if previous.get(t.topic_id) is not t]
        previous = {t.topic_id: t for t in snap.topics}
        if k >= 15:  # their first reports behind them
            refreshes.append(len(fresh))
            for t in fresh:
                turns[t.topic_id].append(k)
                assert t.report.messages_total == k + 1  # exact at each refresh
    assert max(refreshes) <= 25, refreshes  # about a tenth each report (all 100 before)
    assert sum(refreshes) == 3 * len(names)  # each once in ten reports, as before
    for n, ks in turns.items():
        assert {b - a for a, b in zip(ks, ks[1:], strict=False)} == {REFRESH_PERIODS}, (n, ks)


def test_the_topics_said_to_stand_are_the_ones_reused_and_wait_unprocessed() -> None:
    # The live node takes only the other topics' queues before a report (``standing``).
    s = slow_session()
    slow = run(s, 15)
    now = OFF + 15 * S + 500 * MS
    standing = s.standing(now)
    assert standing == {'slow'}  # refreshed at report 15, its next turn ten reports on
    assert s.standing(now) == standing  # asking changes nothing
    s.message('slow', OFF + 15 * S + MS, seq=16)  # arrives, and waits for the refresh
    snap = s.snapshot(now, standing=standing)
    topics = {t.topic_id: t for t in snap.topics}
    assert topics['slow'] is slow[-1]
    assert topics['fast'].report.messages_total == 1500
    assert s.snapshot(now + S, standing=frozenset()).topics[0].report.messages_total == 16
    final = s.snapshot(now + 2 * S, standing=frozenset({'slow'}), final=True)
    assert final.topics[0] is not slow[-1]  # a final report refreshes every topic


def test_a_topic_said_to_stand_stands_even_if_it_changed_since() -> None:
    # What came between ``standing`` and the report waits for the next report.
    s = slow_session()
    run(s, 15)
    now = OFF + 15 * S + 500 * MS
    standing = s.standing(now)
    s.message('slow', OFF + 15 * S + 400 * MS, seq=17)  # a gap: would refresh it
    kept = next(t for t in s.snapshot(now, standing=standing).topics if t.topic_id == 'slow')
    assert kept.report.messages_lost_total == 0
    assert 'slow' not in s.standing(now + S)
    fresh = next(t for t in s.snapshot(now + S).topics if t.topic_id == 'slow')
    assert fresh.report.messages_lost_total == 1


def test_a_new_stats_period_refreshes_at_once_then_paces_the_turns_anew() -> None:
    # What a refresh decided about standing (``_arm``) counts in reports of the old period.
    s = slow_session()
    slow = run(s, 15)  # refreshed at report 11: it would stand until report 21
    s.configure({'slow': s.config('slow'), 'fast': s.config('fast')},
                stats_period_ns=2 * S)
    snapshots = []
    for k in range(15, 55, 2):  # a report every 2 s now
        for j in (k, k + 1):
            s.message('slow', OFF + j * S + MS, seq=j + 1)
        snapshots.append(next(t for t in s.snapshot(OFF + (k + 2) * S).topics
                              if t.topic_id == 'slow'))
    assert snapshots[0] is not slow[-1]  # the change refreshes it at once
    refreshed = [i for i in range(1, len(snapshots)) if snapshots[i] is not snapshots[i - 1]]
    assert {b - a for a, b in zip(refreshed, refreshed[1:], strict=False)} == {5}, refreshed
    for i in refreshed:  # ten periods are five reports of 2 s; exact at each refresh
        assert snapshots[i].report.messages_total == 15 + 2 * (i + 1)


def test_a_slow_event_topic_is_refreshed_every_ten_messages_or_window_and_at_a_gap():
    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    s.configure({'t': TopicConfig(name='t', topic='/plan', kind='event')})
    s.topic_status('t', TopicState.RECEIVING, writers=1)
    shown_totals = []
    for k in range(40):  # 1 Hz, no period to pace it; a report each second
        s.message('t', OFF + k * S + 300 * MS, seq=k + 1, size_bytes=16)
        shown_totals.append(s.snapshot(OFF + (k + 1) * S).topics[0].report.messages_total)
    refreshed = [k for k in range(1, len(shown_totals)) if shown_totals[k] != shown_totals[k - 1]]
    assert len(refreshed) <= 5, shown_totals  # not at every report
    assert all(b - a <= 10 for a, b in zip([0, *refreshed], refreshed, strict=False)), shown_totals
    assert max(k + 1 - shown_totals[k] for k in range(len(shown_totals))) <= 10
    # A gap in the sequence numbers (messages lost) is shown at the next report.
    s.message('t', OFF + 40 * S + 300 * MS, seq=45, size_bytes=16)
    topic = s.snapshot(OFF + 41 * S).topics[0]
    assert (topic.report.messages_total, topic.report.messages_lost_total) == (41, 4)
    final = s.snapshot(OFF + 42 * S, final=True).topics[0]
    assert final.report.messages_total == 41
