"""Topics that are not one fast clean timer, and levels with state across reports (issue 12).

Event-driven topics, slow topics, the start-up grace, the hysteresis and the period offered by
the publishers' deadline QoS, fed to the session as integer-ns events, reported once a second
as the stats timer does. No sleeps, no ROS.
"""

import numpy as np
import pytest

from ros2_deadline_monitor.analysis import figures
from ros2_deadline_monitor.analysis.config import AnalysisConfig, Thresholds, TopicConfig
from ros2_deadline_monitor.analysis.cycles import learn_period
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.session import Session, TopicState
from ros2_deadline_monitor.configuration.parameters import settings_from, topic_config_from
from ros2_deadline_monitor.outputs.format import figure_text

MS = 1_000_000
S = 1_000_000_000
OFF = 1_700_000_000 * S
"""Wall time (system clock) when the session started."""


def wall_session(topics, **thresholds):
    analysis = AnalysisConfig(thresholds=Thresholds(**thresholds))
    s = Session(analysis, use_sim_time=False, start_wall_ns=OFF)
    s.configure({t.name: t for t in topics})
    return s


def run(s, arrivals, until_s, topic_id='t', every_ns=S, start_ns=OFF + S):
    """Feed ``arrivals`` (wall ns) and report every second; return each report's topic."""
    arrivals = sorted(arrivals)
    seq = 0
    out = []
    now = start_ns
    while now <= OFF + until_s * S:
        while arrivals and arrivals[0] <= now:
            seq += 1
            s.message(topic_id, arrivals.pop(0), seq=seq, size_bytes=16)
        snap = s.snapshot(now)
        out.append((now, next(t for t in snap.topics if t.topic_id == topic_id), snap))
        now += every_ns
    return out


def shown(snap, topic):
    """Return the figures a topic's status shows, by key."""
    return {figure.key: text for figure in figures.TOPIC
            if (text := figure_text(figure, snap, topic)) is not None}


# -- event-driven topics -----------------------------------------------------------------

# A planner's output: bursts, then long quiet stretches.
EVENTS = [OFF + ms * MS for ms in (500, 550, 1250, 1270, 1290, 4000, 9000, 9005)]


def test_an_event_topic_raises_no_false_alarm_where_a_timer_topic_does():
    event = TopicConfig(name='t', topic='/plan', kind='event')
    timer = TopicConfig(name='t', topic='/plan', period_ns=100 * MS)
    levels = {}
    for config in (event, timer):
        s = wall_session([config])
        s.topic_status('t', TopicState.RECEIVING, writers=1)
        levels[config.kind] = run(s, EVENTS, 40)
    assert {topic.level for _, topic, _ in levels['event']} == {Level.OK}
    assert Level.ERROR in {topic.level for _, topic, _ in levels['timer']}  # timed out
    assert levels['timer'][9][1].report.skipped_periods_total > 0
    s = wall_session([event])
    s.topic_status('t', TopicState.RECEIVING, writers=1)
    run(s, EVENTS[:-1], 9)
    s.message('t', EVENTS[-1], seq=len(EVENTS), size_bytes=16)
    snap = s.snapshot(OFF + 10 * S, final=True)  # 10 s: every event in the window
    topic = snap.topics[0]
    r = topic.report
    assert (r.kind, r.messages, r.deadline_misses_total, r.skipped_periods_total) == (
        'event', 8, 0, 0)
    assert r.period_ns is None and r.timeout_ns is None
    assert r.interval_wall.max_ns == 5000 * MS  # the longest gap
    assert topic.reason == 'event topic: 8 messages in window, max gap 5 s'
    values = shown(snap, topic)
    for key in ('deadline misses', 'skipped periods', 'deadline misses total',
                'skipped periods total', 'rule'):
        assert values[key] == 'n/a', key
    assert values['kind'] == 'event'
    assert 'miss ratio (%)' not in values and 'max response (ms)' not in values
    assert values['max interval wall (ms)'] == '5000.000'


def test_an_event_topic_times_out_only_when_a_timeout_is_configured():
    s = wall_session([TopicConfig(name='t', topic='/plan', kind='event', timeout_ns=3 * S)])
    s.topic_status('t', TopicState.RECEIVING, writers=1)
    reports = run(s, EVENTS, 14)
    levels = [(now - OFF) // S for now, topic, _ in reports if topic.level is Level.ERROR]
    assert levels == [8, 13, 14]  # 4 s -> 9 s and after 9.005 s: silent for over 3 s
    assert reports[-1][1].reason == ('no message for 5 s (timeout 3 s); since start 1 '
                                     'outage(s), longest 5.0 s (ended 9.0 s after start); '
                                     'the max interval since start includes it')


def test_a_topic_switched_to_event_at_run_time_keeps_its_counts_and_drops_the_grid():
    s = wall_session([TopicConfig(name='t', topic='/plan', period_ns=100 * MS)])
    s.topic_status('t', TopicState.RECEIVING, writers=1)
    run(s, EVENTS[:5], 2)  # 0.7 s gap: misses and skipped periods on the 100 ms grid
    before = s.snapshot(OFF + 2 * S).topics[0].report
    assert before.skipped_periods_total > 0
    s.configure({'t': TopicConfig(name='t', topic='/plan', kind='event')})
    run(s, EVENTS[5:], 10, start_ns=OFF + 3 * S)
    topic = s.snapshot(OFF + 11 * S, final=True).topics[0]
    r = topic.report
    assert r.messages_total == 8 and r.period_ns is None
    assert (r.deadline_misses_total, r.skipped_periods_total) == (
        before.deadline_misses_total, before.skipped_periods_total)  # kept, none added
    assert topic.level is Level.OK and topic.reason.startswith('event topic: ')


def test_kind_is_a_parameter_with_choices():
    assert topic_config_from('t', {'topic.t.kind': 'event'}, False).kind == 'event'
    assert topic_config_from('t', {}, False).kind == 'timer'
    with pytest.raises(ConfigError, match=r'topic.t.kind must be one of timer, event'):
        topic_config_from('t', {'topic.t.kind': 'periodic'}, False)
    with pytest.raises(ConfigError, match=r'topic.t.kind is event, which has no period'):
        topic_config_from('t', {'topic.t.kind': 'event', 'topic.t.rate_hz': 10.0}, False)


# -- slow topics -------------------------------------------------------------------------

SLOW = [OFF + S // 2 + i * 5 * S for i in range(40)]  # 0.2 Hz for 200 s


@pytest.mark.parametrize('period_ns', [None, 5 * S])
def test_a_slow_topic_is_ok_between_messages_and_has_a_rate(period_ns):
    s = wall_session([TopicConfig(name='t', topic='/slow', period_ns=period_ns)])
    s.topic_status('t', TopicState.RECEIVING, writers=1)
    reports = run(s, SLOW, 120)
    assert {topic.level for _, topic, _ in reports} == {Level.OK}
    # Learned from the first window (3 intervals over 15 s), not 20 intervals (100 s).
    learned_at = next((now - OFF) // S for now, topic, _ in reports
                      if topic.report.period_ns is not None)
    assert learned_at == (1 if period_ns else 16)
    for now, topic, _ in reports:
        if now >= OFF + 30 * S:
            r = topic.report
            assert r.period_ns == 5 * S
            assert r.messages in (5, 6)  # the window stretches to 5 periods: 25 s
            assert r.interval_wall.count >= 4
            assert r.rate_wall_hz == pytest.approx(0.2)
            assert r.period_source == ('configured' if period_ns else 'learned')


def test_a_slow_period_is_snapped_to_tenths_of_a_second_when_close():
    assert learn_period(np.array([4_998_900_000, 5_001_000_000, 4_999_000_000])) == 5 * S
    assert learn_period(np.array([2_500_000_000] * 3)) == 2500 * MS
    assert learn_period(np.array([1_234_000_000] * 3)) == 1234 * MS  # 2.8 % from 1.2 s


def test_a_topic_slower_than_the_window_still_has_intervals_and_times_out():
    slower = [OFF + S // 2 + i * 20 * S for i in range(5)]  # 0.05 Hz, window 10 s
    s = wall_session([TopicConfig(name='t', topic='/slower', period_ns=20 * S)])
    s.topic_status('t', TopicState.RECEIVING, writers=1)
    reports = run(s, slower, 300)
    on = [topic for now, topic, _ in reports if OFF + 41 * S <= now <= OFF + 81 * S]
    assert all(t.level is Level.OK and t.report.rate_wall_hz == pytest.approx(0.05) for t in on)
    errors = [(now - OFF) // S for now, topic, _ in reports if topic.level is Level.ERROR]
    assert errors[0] == 281  # last message at 80.5 s, default timeout 10 T = 200 s


# -- start-up grace ----------------------------------------------------------------------

def test_without_grace_a_topic_that_never_appears_stays_stale():
    s = wall_session([TopicConfig(name='t', topic='/never')])
    reports = run(s, [], 100)
    assert {topic.level for _, topic, _ in reports} == {Level.STALE}


def test_a_topic_that_never_appears_is_stale_during_the_grace_then_an_error():
    s = wall_session([TopicConfig(name='t', topic='/never')], grace_ns=3 * S)
    reports = run(s, [], 5)
    assert [topic.level for _, topic, _ in reports] == [Level.STALE] * 2 + [Level.ERROR] * 3
    assert reports[2][1].reason == 'no publisher on /never for 3 s (grace 3 s)'


def test_the_grace_counts_from_when_a_topic_appears():
    s = wall_session([TopicConfig(name='t', topic='/late', period_ns=100 * MS)],
                     grace_ns=3 * S)
    run(s, [], 4)  # 4 s: an ERROR already, no publisher
    s.topic_status('t', TopicState.RECEIVING, writers=1)  # appears; sends nothing yet
    reports = run(s, [], 9, start_ns=OFF + 5 * S)
    assert [topic.level for _, topic, _ in reports] == [Level.STALE] * 3 + [Level.ERROR] * 2
    assert reports[3][1].reason == 'no message since it appeared for 3 s (grace 3 s)'


def test_a_restarted_publisher_gets_the_grace_before_its_timeout_is_an_error():
    s = wall_session([TopicConfig(name='t', topic='/r', period_ns=100 * MS, timeout_ns=S)],
                     grace_ns=3 * S)
    s.topic_status('t', TopicState.RECEIVING, writers=1)
    before = [OFF + S + i * 100 * MS for i in range(20)]  # until 2.9 s
    run(s, before, 3)
    s.topic_status('t', TopicState.RECEIVING, writers=0)  # the writer left ...
    quiet = run(s, [], 6, start_ns=OFF + 4 * S)
    assert quiet[-1][1].level is Level.ERROR  # past the grace after start: a timeout
    s.topic_status('t', TopicState.RECEIVING, writers=1)  # ... and is back, starting up
    back = run(s, [], 12, start_ns=OFF + 7 * S)
    assert [t.level for _, t, _ in back] == [Level.WARN] * 3 + [Level.ERROR] * 3
    assert back[0][1].reason.startswith('no message for 4.1 s (timeout 1 s), within the '
                                        'grace of 3 s after it appeared')


def test_grace_and_level_windows_are_parameters():
    settings = settings_from({'grace_s': 2.5, 'level_rise_windows': 3, 'level_fall_windows': 2})
    thresholds = settings.analysis.thresholds
    assert (thresholds.grace_ns, thresholds.level_rise_windows,
            thresholds.level_fall_windows) == (2500 * MS, 3, 2)
    defaults = settings_from({}).analysis.thresholds
    assert (defaults.grace_ns, defaults.level_rise_windows, defaults.level_fall_windows) == (
        0, 1, 1)
    with pytest.raises(ConfigError, match='level_rise_windows must be an integer within'):
        settings_from({'level_rise_windows': 0})
    with pytest.raises(ConfigError, match='grace_s must be'):
        settings_from({'grace_s': -1.0})


# -- hysteresis --------------------------------------------------------------------------

def bursts_of_misses(windows):
    """Return a 10 Hz stream with a 250 ms gap (misses, a skipped period) in the seconds given."""
    arrivals = []
    for second in range(1, 20):
        ms = [0, 100, 200, 300, 400, 500, 600, 700, 800, 900]
        if second in windows:
            ms = [0, 100, 350, 450, 550, 650, 750, 850, 950]  # 250 ms: misses, a skip
        arrivals += [OFF + second * S + m * MS + 50 * MS for m in ms]
    return arrivals


def hysteresis_levels(rise, fall, windows):
    s = Session(AnalysisConfig(window_ns=S, thresholds=Thresholds(
        level_rise_windows=rise, level_fall_windows=fall, miss_ratio_error=0.5)),
        use_sim_time=False, start_wall_ns=OFF)
    s.configure({'t': TopicConfig(name='t', topic='/h', period_ns=100 * MS)})
    s.topic_status('t', TopicState.RECEIVING, writers=1)
    reports = run(s, bursts_of_misses(windows), 14, start_ns=OFF + 2 * S)
    return [topic.level.name[0] for _, topic, _ in reports], reports


def test_default_level_windows_change_the_level_at_once():
    levels, _ = hysteresis_levels(1, 1, {4, 8, 9, 10})
    # Reports from 2 s; each covers the second before it: the gap of second 4 shows at 5 s.
    assert ''.join(levels) == 'OOOWOOOWWWOOO'


def test_a_level_rises_after_n_windows_and_falls_after_m():
    levels, reports = hysteresis_levels(3, 2, {4, 8, 9, 10})
    assert ''.join(levels) == 'OOOOOOOOOWWOO'  # WARN from the third report, OK the second
    held = reports[3][1].reason
    assert held.startswith('OK held (1 of 3 reports at WARN): ')
    assert reports[10][1].reason.startswith('WARN held (1 of 2 reports at OK): ')


# -- the period from the graph -------------------------------------------------------------

def test_the_offered_deadline_is_the_period_before_learning():
    s = wall_session([TopicConfig(name='t', topic='/q')])
    s.topic_status('t', TopicState.RECEIVING, writers=1, offered_deadline_ns=50 * MS)
    stream = [OFF + S + i * 50 * MS for i in range(10)]
    _, topic, snap = run(s, stream, 2)[-1]
    r = topic.report
    assert (r.period_ns, r.period_source, r.period_learned, r.messages) == (
        50 * MS, 'graph deadline QoS', False, 10)
    assert shown(snap, topic)['period source'] == 'graph deadline QoS'


def test_a_configured_period_wins_over_the_offered_deadline():
    s = wall_session([TopicConfig(name='t', topic='/q', period_ns=20 * MS)])
    s.topic_status('t', TopicState.RECEIVING, writers=1, offered_deadline_ns=50 * MS)
    r = run(s, [OFF + S + i * 20 * MS for i in range(10)], 2)[-1][1].report
    assert (r.period_ns, r.period_source) == (20 * MS, 'configured')


def test_an_offer_made_while_learning_analyses_the_waiting_cycles_with_it():
    s = wall_session([TopicConfig(name='t', topic='/q')])
    s.topic_status('t', TopicState.RECEIVING, writers=1)
    stream = [OFF + S + i * 50 * MS for i in range(10)]
    r = run(s, stream, 2)[-1][1].report
    assert (r.period_ns, r.messages) == (None, 0)  # 9 of 20 intervals learned so far
    s.topic_status('t', TopicState.RECEIVING, writers=1, offered_deadline_ns=50 * MS)
    r = run(s, [], 3, start_ns=OFF + 3 * S)[-1][1].report
    assert (r.period_ns, r.period_source, r.messages, r.interval_wall.count) == (
        50 * MS, 'graph deadline QoS', 10, 9)


def test_without_an_offer_the_period_is_learned_and_says_so():
    s = wall_session([TopicConfig(name='t', topic='/q')])
    s.topic_status('t', TopicState.RECEIVING, writers=1, offered_deadline_ns=0)
    r = run(s, [OFF + S + i * 50 * MS for i in range(30)], 3)[-1][1].report
    assert (r.period_ns, r.period_source, r.period_learned) == (50 * MS, 'learned', True)


# -- latched messages ----------------------------------------------------------------------

def test_a_latched_message_is_ok_named_and_never_a_cycle():
    # A map: one message kept by a transient_local writer, handed over on subscribing.
    s = wall_session([TopicConfig(name='t', topic='/map', period_ns=100 * MS)],
                     grace_ns=2 * S)
    s.topic_status('t', TopicState.RECEIVING, type_name='nav_msgs/msg/OccupancyGrid')
    s.latched('t')
    for _, topic, _ in run(s, [], until_s=10):  # long past the grace: still OK
        assert topic.level is Level.OK
        assert topic.reason == ('latched: 1 message, published before the monitor started; '
                                'none since')
        assert topic.report.messages_total == 0
    # Then live cycles: only they are counted; the latched one stays named.
    arrivals = [OFF + 11 * S + i * 100 * MS for i in range(20)]
    *_, (_, topic, _) = run(s, arrivals, until_s=14, start_ns=OFF + 11 * S)
    assert topic.report.messages_total == 20
    assert 'latched: 1 message, published before the monitor started (not a cycle)' in (
        topic.notes)
