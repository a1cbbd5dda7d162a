"""The same streams with the reporter's reuse on and off: what may differ, and what may not.

With ``reuse_reports`` on, a steady slow topic keeps the snapshot of its previous refresh
(``outputs/reporter.py``). The contract checked here, report by report, on synthetic ns input
(60 slow topics, half of them stamped, fast ones, quiet ones, event topics, one still
learning its period, an outage, a late message, a lost one, a stamp going back, one on
another clock, a sim-time reset, a start-up grace and the hysteresis):

- every topic's level and reason, and the clock's snapshot, are the same at every report;
- a topic refreshed at a report is the same snapshot as without reuse (every figure and
  total), and so are its diagnostic key/values;
- a topic that stands is the very object of its previous refresh: only its figures lag;
- the final report is the same, topic by topic and key by key.

Left out on purpose (the reporter's module docstring says why): a run of stamps on another
clock at the topic's own pace, and a malformed message processed alone (its report's
``start_source``).
"""

from __future__ import annotations

from ros2_deadline_monitor.analysis import figures
from ros2_deadline_monitor.analysis.config import AnalysisConfig, Thresholds, TopicConfig
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot
from ros2_deadline_monitor.outputs import diagnostics
from ros2_deadline_monitor.outputs.reporter import DECIDING, Reporter

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S
SLOW = 60
REPORTS = 110
RESET_AT = 95
"""The report before which sim time jumps back to 0."""


def configured(reuse: bool) -> tuple[Session, Reporter]:
    analysis = AnalysisConfig(
        max_steady_refreshes_per_s=4.0,
        thresholds=Thresholds(grace_ns=3 * S, level_rise_windows=2, level_fall_windows=3))
    s = Session(analysis, use_sim_time=True, start_wall_ns=OFF)
    topics = {f'slow{i}': TopicConfig(name=f'slow{i}', topic=f'/slow{i}', period_ns=S,
                                      clock='wall') for i in range(SLOW)}
    topics |= {f'fast{i}': TopicConfig(name=f'fast{i}', topic=f'/fast{i}', period_ns=10 * MS,
                                       clock='wall') for i in range(3)}
    topics |= {f'quiet{i}': TopicConfig(name=f'quiet{i}', topic=f'/quiet{i}',
                                        period_ns=100 * MS) for i in range(4)}
    topics |= {f'event{i}': TopicConfig(name=f'event{i}', topic=f'/event{i}', kind='event',
                                        clock='wall') for i in range(3)}
    topics['learning'] = TopicConfig(name='learning', topic='/learning', clock='wall')
    topics['sim'] = TopicConfig(name='sim', topic='/sim', period_ns=100 * MS, clock='sim')
    s.configure(topics)
    for topic_id in topics:
        if not topic_id.startswith('quiet'):
            s.topic_status(topic_id, TopicState.RECEIVING, type_name='std_msgs/msg/Header',
                           writers=1)
    return s, Reporter(s, reuse_reports=reuse)


def feed(s: Session, k: int) -> None:
    """Second ``k`` of the stream: /clock at 10 Hz, then each topic's messages of it."""
    for j in range(10):
        sim_ns = ((k - RESET_AT) if k >= RESET_AT else k) * S + j * 100 * MS
        s.clock_sample(OFF + k * S + j * 100 * MS, sim_ns)
    events = []
    for i in range(SLOW):
        if i == 3 and 40 <= k < 55:  # an outage of 15 s
            continue
        if i == 7 and k == 80:  # one message lost: a gap in the sequence numbers
            continue
        late = 600 * MS if i == 5 and k == 70 else 0  # one late message
        seq = k + 1 - 15 if i == 3 and k >= 55 else k + 1  # slow3 paused: no numbers lost
        stamp = OFF + k * S if i % 2 == 0 else NO_VALUE  # half of them stamped
        if i == 10 and k == 60:
            stamp -= 3 * S  # a stamp going back
        if i == 12 and k == 65:
            stamp = 5 * S  # a stamp on another clock
        events.append((f'slow{i}', OFF + k * S + (i + 1) * MS + late, seq, stamp))
    for i in range(3):
        events += [(f'fast{i}', OFF + k * S + j * 10 * MS + (i + 1) * MS, k * 100 + j + 1,
                    NO_VALUE) for j in range(100)]
    for i in range(3):
        if (k * 7 + i) % 5 == 0:
            events.append((f'event{i}', OFF + k * S + 300 * MS, k + 1, NO_VALUE))
    events.append(('learning', OFF + k * S + 500 * MS, k + 1, NO_VALUE))
    events += [('sim', OFF + k * S + j * 100 * MS + 5 * MS, k * 10 + j + 1, NO_VALUE)
               for j in range(10)]
    for topic_id, arrival_ns, seq, stamp_ns in sorted(events, key=lambda event: event[1]):
        s.message(topic_id, arrival_ns, stamp_ns, seq=seq, size_bytes=16)


def same(a: object, b: object) -> bool:
    """Equality where NaN equals NaN (the snapshots' reprs spell every field)."""
    return repr(a) == repr(b)


def keys(snapshot: Snapshot, topic: TopicSnapshot) -> list[tuple[str, str]]:
    """Return the diagnostic key/values of one topic, as ``/diagnostics`` shows them."""
    return [] if topic.report is None else diagnostics.key_values(figures.TOPIC, snapshot, topic)


def test_reuse_on_and_off_give_the_same_levels_refreshes_and_final_report() -> None:
    on_session, on = configured(True)
    off_session, off = configured(False)
    previous: dict[str, TopicSnapshot] = {}
    refreshed_at: dict[str, TopicSnapshot] = {}
    stood = differed = 0
    for k in range(REPORTS):
        feed(on_session, k)
        feed(off_session, k)
        now, final = OFF + (k + 1) * S, k == REPORTS - 1
        standing = frozenset() if final else on.standing(now)
        with_reuse = on.snapshot(now, final=final, standing=standing)
        fresh = off.snapshot(now, final=final)
        assert same(with_reuse.clock, fresh.clock), k
        assert [t.topic_id for t in with_reuse.topics] == [t.topic_id for t in fresh.topics]
        for kept, made in zip(with_reuse.topics, fresh.topics, strict=True):
            topic_id = kept.topic_id
            assert (kept.level, kept.reason) == (made.level, made.reason), (k, topic_id)
            if topic_id in standing:
                assert kept is previous[topic_id] is refreshed_at[topic_id], (k, topic_id)
                stood += 1
                differed += not same(kept, made)
            else:
                assert kept is not previous.get(topic_id), (k, topic_id)
                assert same(kept, made), (k, topic_id)
                assert keys(with_reuse, kept) == keys(fresh, made), (k, topic_id)
                refreshed_at[topic_id] = kept
        previous = {t.topic_id: t for t in with_reuse.topics}
    # Reuse did happen, and a standing topic's figures did lag (else this proves nothing).
    assert stood > SLOW * REPORTS // 2, stood
    assert differed > SLOW * 10, differed
    ids = {t.topic_id: t for t in with_reuse.topics}
    assert ids['slow5'].report.deadline_misses_total == 1
    assert ids['slow7'].report.messages_lost_total == 1
    assert ids['slow3'].report.outages_total == 1
    assert ids['sim'].report.resets_total == 1
    assert ids['slow10'].report.stamps_back_total == 1
    assert ids['slow12'].report.foreign_stamps_total == 1


def test_reuse_off_reports_every_topic_afresh_at_every_report() -> None:
    s, reporter = configured(False)
    previous: dict[str, TopicSnapshot] = {}
    for k in range(30):
        feed(s, k)
        now = OFF + (k + 1) * S
        assert reporter.standing(now) == frozenset()
        snapshot = reporter.snapshot(now)
        assert all(t is not previous.get(t.topic_id) for t in snapshot.topics)
        previous = {t.topic_id: t for t in snapshot.topics}


def test_a_topic_removed_and_added_again_is_not_shown_with_its_old_snapshot() -> None:
    s, reporter = configured(True)
    for k in range(30):
        feed(s, k)
        reporter.snapshot(OFF + (k + 1) * S)
    now = OFF + 30 * S + 500 * MS
    assert 'slow0' in reporter.standing(now)
    topics = {topic_id: s.config(topic_id) for topic_id in s.topic_ids()}
    moved = dict(topics, slow0=TopicConfig(name='slow0', topic='/elsewhere', period_ns=S))
    s.configure(moved)  # a new name: the topic starts anew
    assert 'slow0' not in reporter.standing(now)
    topic = next(t for t in reporter.snapshot(now).topics if t.topic_id == 'slow0')
    assert topic.topic == '/elsewhere' and topic.report.messages_total == 0


def test_the_deciding_wording_is_the_analyzers() -> None:
    # The reporter refreshes a topic at every report while its stamps are judged; it knows
    # that from the report's ``timing_reason``: a changed wording must fail here.
    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    s.configure({'a': TopicConfig(name='a', topic='/a', period_ns=S, clock='wall')})
    s.topic_status('a', TopicState.RECEIVING, type_name='std_msgs/msg/Header', writers=1)
    s.message('a', OFF + 2 * MS, OFF, seq=1, size_bytes=16)
    assert s.snapshot(OFF + S).topics[0].report.timing_reason == DECIDING


def test_an_identifier_listed_twice_keeps_its_monitored_snapshot() -> None:
    # 'a' is monitored and, listed a second time, also an invalid entry of the same
    # identifier: the kept snapshot was the invalid one (no report), and the topic vanished
    # from MonitorStats for as long as it stood.
    s = Session(AnalysisConfig(), use_sim_time=False, start_wall_ns=OFF)
    s.configure({'a': TopicConfig(name='a', topic='/a', period_ns=S, clock='wall')},
                {'a': "topics: identifier 'a' is listed twice"})
    reporter = Reporter(s, reuse_reports=True)
    for k in range(1, 20):
        snapshot = reporter.snapshot(OFF + k * S // 5)
        monitored = [t for t in snapshot.topics if t.topic_id == 'a' and t.report is not None]
        assert len(monitored) == 1, k
        assert [t.reason for t in snapshot.topics if t.report is None] == [
            "invalid configuration: topics: identifier 'a' is listed twice"]
    assert reporter.stood == {'a'}  # the monitored snapshot stands
