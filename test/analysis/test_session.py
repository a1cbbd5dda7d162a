import numpy as np

from ros2_deadline_monitor.analysis.config import AnalysisConfig, Thresholds, TopicConfig
from ros2_deadline_monitor.analysis.cycles import count_cycles, MALFORMED
from ros2_deadline_monitor.analysis.grid import GridState, replay
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.session import Session, TopicState

MS = 1_000_000
US = 1_000
S = 1_000_000_000
OFF = 1_700_000_000 * S
"""Wall time (system clock) when sim time was 0."""


def session(**kwargs):
    kwargs.setdefault('use_sim_time', True)
    return Session(kwargs.pop('analysis', AnalysisConfig()), start_wall_ns=OFF, **kwargs)


def sim_timer_run(cycles=500, period=10 * MS, stall=20 * MS, every=50, run=20 * US,
                  step=MS, latency=10 * US):
    """Return a sim-time rcl timer run at RTF 1.0 next to a /clock of ``step`` steps.

    Returns the /clock samples, and per cycle the start stamp (sim), the end (wall, what
    the middleware stamps) and the truth by the reference rule: response = start delay on
    the timer clock + execution time.
    """
    def sim_now(wall):
        return (wall - OFF) // step * step

    stamps, ends, runs = [], [], []
    expected = 0
    prev_end = OFF
    for i in range(cycles):
        start_wall = max(prev_end, OFF + expected + latency)
        stamp = sim_now(start_wall)
        length = stall if every and i % every == every // 2 else run
        stamps.append(stamp)
        ends.append(start_wall + length)
        runs.append(length)
        nxt = expected + period
        if nxt <= stamp:
            nxt += (1 + (stamp - nxt) // period) * period
        expected = nxt
        prev_end = start_wall + length
    last = prev_end - OFF + 5 * step
    clock = [(OFF + sim, sim) for sim in range(0, last, step)]
    stamps = np.array(stamps, np.int64)
    slots, skipped = replay(stamps, period, GridState())
    response = stamps - slots + np.array(runs, np.int64)
    return clock, stamps, np.array(ends, np.int64), int((response > period).sum()), int(
        skipped.sum())


def feed(s, topic_id, clock, stamps, ends, batch=50):
    """Clock samples and messages in batches, as the batched takes hand them over."""
    ci = 0
    for i in range(0, len(ends), batch):
        until = ends[min(i + batch, len(ends)) - 1]
        while ci < len(clock) and clock[ci][0] <= until:
            s.clock_sample(*clock[ci])
            ci += 1
        for j in range(i, min(i + batch, len(ends))):
            s.message(topic_id, int(ends[j]), int(stamps[j]), j + 1, 64)
        s.process(int(until))
    for sample in clock[ci:]:
        s.clock_sample(*sample)


def sim_topic(**changes):
    return TopicConfig(name='cmd', topic='/cmd', period_ns=10 * MS, stamp='start', clock='sim',
                       **changes)


def test_execution_inside_a_clock_step_is_kept_at_a_tie():
    clock, stamps, ends, misses, skipped = sim_timer_run()
    assert misses == 20 and skipped == 10  # each stall: the stalled cycle and the next one
    s = session()
    s.configure({'cmd': sim_topic()})
    feed(s, 'cmd', clock, stamps, ends)
    r = s.snapshot(int(ends[-1]) + 10 * MS, final=True).topics[0].report
    assert (r.messages_total, r.deadline_misses_total, r.skipped_periods_total) == (
        500, misses, skipped)
    assert r.response_max_ns >= 20 * MS


def test_a_reconfiguration_never_changes_figures_of_cycles_received():
    clock, stamps, ends, misses, skipped = sim_timer_run(stall=22 * MS)
    s = session()
    s.configure({'cmd': sim_topic()})
    for k, part in enumerate(np.array_split(np.arange(len(ends)), 5)):
        feed(s, 'cmd', [c for c in clock if ends[part[0]] - 20 * MS < c[0] <= ends[part[-1]]],
             stamps[part], ends[part])
        changes = s.configure(
            {'cmd': sim_topic(jitter_tolerance_ns=(k + 1) * MS, timeout_ns=(k + 2) * S)},
            analysis=AnalysisConfig(window_ns=(k + 5) * S,
                                    thresholds=Thresholds(miss_ratio_error=0.2)))
        assert changes.changed['cmd'] == ('jitter_tolerance_ns', 'timeout_ns')
    r = s.snapshot(int(ends[-1]) + 10 * MS, final=True).topics[0].report
    assert (r.deadline_misses_total, r.skipped_periods_total) == (misses, skipped)


def test_a_reset_applies_between_the_events_before_and_after_it():
    s = session()
    s.configure({'a': TopicConfig(name='a', topic='/a', period_ns=10 * MS, clock='sim')})
    for wall in range(OFF + S, OFF + 3 * S, MS):
        # At wall 2 s, sim time jumps from 101 s back to 10 s.
        s.clock_sample(wall, (wall - OFF + 99 * S) if wall < OFF + 2 * S else wall - OFF + 8 * S)
        if (wall - OFF) % (10 * MS) == 5 * MS:
            s.message('a', wall + 100 * US, NO_VALUE, (wall - OFF) // (10 * MS), 8)
    snap = s.snapshot(OFF + 3 * S, final=True)
    r = snap.topics[0].report
    assert r.resets_total == 1 and snap.clock.report.resets_total == 1
    assert r.messages_total == 200 and r.messages == 100  # the window starts anew
    assert r.interval_sim.min_ns == 10 * MS
    assert (r.skipped_periods_total, r.deadline_misses_total) == (0, 0)


def test_processing_in_one_go_or_in_rounds_gives_the_same_figures():
    clock, stamps, ends, misses, skipped = sim_timer_run(stall=22 * MS)
    one, rounds = session(), session()
    for s in (one, rounds):
        s.configure({'cmd': sim_topic()})
    feed(one, 'cmd', clock, stamps, ends, batch=len(ends))
    feed(rounds, 'cmd', clock, stamps, ends, batch=7)
    now = int(ends[-1]) + 10 * MS
    r1 = one.snapshot(now, final=True).topics[0].report
    r2 = rounds.snapshot(now, final=True).topics[0].report
    assert r1.interval_sim == r2.interval_sim
    assert (r1.deadline_misses_total, r1.skipped_periods_total) == (
        r2.deadline_misses_total, r2.skipped_periods_total) == (misses, skipped)


def test_malformed_messages_count_the_same_through_the_recorder():
    s = session(use_sim_time=False)
    s.configure({'a': TopicConfig(name='a', topic='/a', period_ns=10 * MS, stamp='start')})

    def read(raw):
        if len(raw) < 4:
            from ros2_deadline_monitor.analysis.errors import CdrError
            raise CdrError('short')
        return int.from_bytes(raw[:8], 'little')

    record = s.recorder('a', read)
    for i in range(20):
        t = OFF + i * 10 * MS
        record(t + 100 * US, b'x' if i == 5 else t.to_bytes(8, 'little'), i + 1)
    r = s.snapshot(OFF + S, final=True).topics[0].report
    assert (r.messages_total, r.malformed_total, r.messages_lost_total) == (20, 1, 0)
    assert r.messages == 19


def test_levels_come_from_the_graph_first_then_from_the_figures():
    s = session(use_sim_time=False)
    s.configure({'a': TopicConfig(name='a', topic='/a', period_ns=10 * MS)},
                {'bad': 'topic.bad.period_ms must be a number'})
    snap = s.snapshot(OFF)
    by_id = {t.topic_id: t for t in snap.topics}
    assert by_id['a'].level == Level.STALE and 'waiting' in by_id['a'].reason
    assert by_id['bad'].level == Level.ERROR and by_id['bad'].report is None
    s.topic_status('a', TopicState.RECEIVING, type_name='std_msgs/msg/Header',
                   publishers=('/p',), writers=1)
    for i in range(100):
        s.message('a', OFF + i * 10 * MS)
    topic = s.snapshot(OFF + S).topics[0]
    assert topic.level == Level.OK and topic.publishers == ('/p',)
    assert s.snapshot(OFF + 3 * S).topics[0].level == Level.ERROR  # silent > 1 s timeout
    s.topic_status('a', TopicState.ERROR, 'publishers on /a disagree on the type: A, B')
    topic = s.snapshot(OFF + S).topics[0]
    assert topic.level == Level.ERROR and 'disagree' in topic.reason


def test_a_sim_clock_topic_times_out_later_at_a_low_rtf_and_never_while_paused():
    s = session()
    s.configure({'a': TopicConfig(name='a', topic='/a', period_ns=10 * MS, clock='sim',
                                  timeout_ns=S)})
    s.topic_status('a', TopicState.RECEIVING)
    for wall in range(OFF, OFF + 3 * S, MS):
        s.clock_sample(wall, (wall - OFF) // 2)  # RTF 0.5
        if (wall - OFF) % (20 * MS) == 0 and wall < OFF + S:
            s.message('a', wall + 100 * US)
        if wall == OFF + 2500 * MS:
            # 1.5 s of silence at RTF 0.5 is 0.75 s of sim time: not over the 1 s timeout.
            assert s.snapshot(wall).topics[0].level != Level.ERROR
    assert s.snapshot(OFF + 3 * S).topics[0].level == Level.ERROR
    s2 = session()
    s2.configure({'a': TopicConfig(name='a', topic='/a', period_ns=10 * MS, clock='sim',
                                   timeout_ns=S)})
    s2.topic_status('a', TopicState.RECEIVING)
    for wall in range(OFF, OFF + 5 * S, MS):
        s2.clock_sample(wall, S)  # paused: sim time stands still
        if wall < OFF + 500 * MS and (wall - OFF) % (10 * MS) == 0:
            s2.message('a', wall + 100 * US)
    s2.snapshot(OFF + 4 * S)
    topic = s2.snapshot(OFF + 5 * S).topics[0]
    assert topic.level != Level.ERROR


def test_configure_reports_what_it_did():
    s = session(use_sim_time=False)
    a = TopicConfig(name='a', topic='/a')
    changes = s.configure({'a': a, 'b': TopicConfig(name='b', topic='/b')})
    assert changes.added == ('a', 'b') and not changes.removed
    changes = s.configure({'a': a.with_changes(period_ns=5 * MS),
                           'b': TopicConfig(name='b', topic='/other')})
    assert changes.removed == ('b',) and changes.added == ('b',)
    assert changes.changed == {'a': ('period_ns',)}
    assert s.configure({}).removed == ('a', 'b')


def test_several_clock_publishers_that_disagree_are_an_error_of_the_clock():
    s = session()
    s.clock_publishers(2)
    for i in range(100):
        s.clock_sample(OFF + i * MS, (400 * S if i % 2 else 0) + i * MS)
    clock = s.snapshot(OFF + 100 * MS).clock
    assert clock.level == Level.ERROR and '2 publishers on /clock disagree' in clock.reason
    assert clock.report.resets == 49


def test_wall_topic_reference_scenario_through_the_session(timer_cycles):
    starts, ends = timer_cycles()
    s = session(use_sim_time=False)
    s.configure({'cmd': TopicConfig(name='cmd', topic='/cmd', period_ns=10 * MS,
                                    stamp='start')})
    for i, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        s.message('cmd', end + 150 * US, start, i + 1, 64)
    r = s.snapshot(int(ends[-1]) + MS, final=True).topics[0].report
    truth = count_cycles(starts, ends + 150 * US, 10 * MS)
    assert (r.deadline_misses_total, r.skipped_periods_total) == (truth.misses,
                                                                   truth.skipped) == (20, 10)


def test_message_stamped_malformed_is_not_a_cycle():
    s = session(use_sim_time=False)
    s.configure({'a': TopicConfig(name='a', topic='/a', period_ns=10 * MS, stamp='start')})
    s.message('a', OFF, MALFORMED)
    r = s.snapshot(OFF + MS, final=True).topics[0].report
    assert (r.messages_total, r.malformed_total, r.messages) == (1, 1, 0)


def test_a_sim_clock_topic_times_out_on_sim_time_not_on_the_last_window_rtf():
    # RTF 0.5 since the last message, then one window at RTF 1.0: 1.5 s of wall silence is
    # 0.8 s of sim time, under the 1 s timeout (the window's RTF alone would say 1.5 s).
    s = session()
    s.configure({'a': TopicConfig(name='a', topic='/a', period_ns=10 * MS, clock='sim',
                                  timeout_ns=S)})
    s.topic_status('a', TopicState.RECEIVING)
    sim = 0
    for wall in range(OFF, OFF + 2500 * MS, MS):
        sim += MS if wall >= OFF + 2400 * MS else MS // 2
        s.clock_sample(wall, sim)
        if wall < OFF + S and (wall - OFF) % (20 * MS) == 0:
            s.message('a', wall + 100 * US)
        if wall == OFF + 2400 * MS:
            s.snapshot(wall)
    assert s.snapshot(OFF + 2500 * MS).topics[0].level != Level.ERROR


def test_batches_and_rounds_without_topic_reports_give_the_same_figures():
    """The bag replay's calls give what the calls one by one and full snapshots give.

    ``record_batch``, ``clock_batch`` and ``advance``: the same clock reports, final totals
    and rows, across a sim-time reset.
    """
    clock, stamps, ends, misses, skipped = sim_timer_run(stall=22 * MS)
    clock = clock[:700] + [(w, s - 300 * MS) for w, s in clock[700:]]  # a reset
    one, many = session(), session()
    taken = {one: [], many: []}
    for s in (one, many):
        s.configure({'cmd': sim_topic()})
        s.on_rows = lambda topic_id, rows, mine=taken[s]: mine.append(rows)
    record = one.recorder('cmd', lambda raw: int.from_bytes(raw, 'little'))
    bounds = np.arange(0, int(ends[-1]) + 40 * MS - OFF, 33 * MS) + OFF
    ci = mi = 0
    for hi in bounds[1:].tolist():
        cj = next((k for k in range(ci, len(clock)) if clock[k][0] >= hi), len(clock))
        mj = int(np.searchsorted(ends, hi, side='left'))
        for k in range(ci, cj):
            one.clock_sample(*clock[k])
        for k in range(mi, mj):
            record(int(ends[k]), int(stamps[k]).to_bytes(8, 'little'), NO_VALUE)
        walls = np.array([c[0] for c in clock[ci:cj]], np.int64)
        sims = np.array([c[1] for c in clock[ci:cj]], np.int64)
        many.clock_batch(walls, sims)
        assert many.room('cmd') >= mj - mi
        many.record_batch('cmd', ends[mi:mj], stamps[mi:mj], np.full(mj - mi, 8, np.int64))
        assert repr(one.snapshot(hi).clock.report) == repr(many.advance(hi))
        ci, mi = cj, mj
    now = int(bounds[-1])
    r1 = one.snapshot(now, final=True).topics[0].report
    r2 = many.snapshot(now, final=True).topics[0].report
    assert (r1.messages_total, r1.deadline_misses_total, r1.skipped_periods_total,
            r1.resets_total, r1.malformed_total) == (
        r2.messages_total, r2.deadline_misses_total, r2.skipped_periods_total,
        r2.resets_total, r2.malformed_total)
    assert r1.resets_total == 1
    rows1, rows2 = ({k: np.concatenate([r[k] for r in taken[s]]).tolist() for k in taken[s][0]}
                    for s in (one, many))
    assert len(rows1['arrival']) > 100
    assert rows1 == rows2
