from dataclasses import replace

from ros2_deadline_monitor.analysis.config import Thresholds, TopicConfig
from ros2_deadline_monitor.analysis.cycles import CycleAnalyzer
from ros2_deadline_monitor.analysis.levels import (
    clock_level,
    host_level,
    several_clocks_level,
    topic_level,
)
from ros2_deadline_monitor.analysis.reports import HostReport, Level
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer

MS = 1_000_000
S = 1_000_000_000


def topic_report(late_every=0, n=100):
    a = CycleAnalyzer(TopicConfig(name='a', topic='/a', period_ns=10 * MS, rule='interval'))
    for i in range(n):
        a.record(S + i * 10 * MS + (5 * MS if late_every and i % late_every == 0 else 0))
    a.process(None)
    return a.report(S + n * 10 * MS)


def test_topic_levels():
    t = Thresholds(miss_ratio_error=0.1)
    now = S + 1000 * MS
    empty = CycleAnalyzer(TopicConfig(name='a', topic='/a')).report(now)
    assert topic_level(empty, t, now, S)[0] == Level.STALE
    assert topic_level(topic_report(), t, now, S)[0] == Level.OK
    assert topic_level(topic_report(late_every=50), t, now, S)[0] == Level.WARN
    assert topic_level(topic_report(late_every=5), t, now, S)[0] == Level.ERROR
    level, reason = topic_level(topic_report(), t, now + 5 * S, S)
    assert level == Level.ERROR and 'no message' in reason
    assert topic_level(topic_report(), t, now + 5 * S, None)[0] == Level.OK


def test_a_loss_that_is_no_figure_neither_warns_nor_is_named():
    t = Thresholds(miss_ratio_error=0.1)
    now = S + 1000 * MS
    known = replace(topic_report(), messages_lost=7, loss_known=True)
    level, reason = topic_level(known, t, now, None)
    assert level == Level.WARN and '7 lost' in reason
    unknown = replace(known, loss_known=False, loss_note='sequence runs of several producers '
                      'could not be told apart')
    level, reason = topic_level(unknown, t, now, None)
    assert level == Level.OK and 'lost' not in reason
    event = replace(unknown, kind='event')
    assert 'lost' not in topic_level(event, t, now, None)[1]
    assert '7 lost' in topic_level(replace(known, kind='event'), t, now, None)[1]


def test_clock_levels():
    t = Thresholds()
    clock = RtfAnalyzer()
    now = S
    assert clock_level(clock.report(now), t, now, 1.0, expected=True)[0] == Level.STALE
    assert clock_level(clock.report(now), t, now, 1.0, expected=False)[0] == Level.OK
    for i in range(100):
        clock.record(i * 10 * MS, i * 10 * MS)
    r = clock.report(S)
    assert clock_level(r, t, S, 1.0, True)[0] == Level.OK
    assert clock_level(r, t, S, 1.2, True)[0] == Level.WARN
    assert clock_level(r, t, S, 2.5, True)[0] == Level.ERROR
    assert clock_level(r, t, 5 * S, 1.0, True)[0] == Level.ERROR


def test_host_levels():
    assert host_level(HostReport())[0] == Level.OK
    assert host_level(HostReport(cgroup_available=True))[0] == Level.OK
    assert host_level(HostReport(cgroup_available=True, cgroup_nr_throttled=2))[0] == Level.WARN
    level, text = host_level(HostReport(), 600 * MS, S)
    assert level == Level.WARN and 'starved' in text
    assert host_level(HostReport(), 400 * MS, S)[0] == Level.OK


def test_several_clock_publishers_are_named():
    assert several_clocks_level(Level.OK, 'RTF 1.000', 1, 0, '/clock') == (Level.OK, 'RTF 1.000')
    level, text = several_clocks_level(Level.OK, 'RTF 1.000', 2, 0, '/clock')
    assert level == Level.WARN and text.startswith('2 publishers on /clock')
    level, text = several_clocks_level(Level.OK, 'RTF 1.000', 2, 7, '/clock')
    assert level == Level.ERROR and 'disagree' in text and '7 time(s)' in text


def test_a_reset_is_named_next_to_a_low_rtf():
    clock = RtfAnalyzer()
    for i in range(50):
        clock.record(i * 10 * MS, 100 * S + i * 5 * MS)
    for i in range(50, 100):
        clock.record(i * 10 * MS, i * 2 * MS)  # world reset, then RTF 0.2
    level, text = clock_level(clock.report(S), Thresholds(), S, 1.0, True)
    assert level == Level.ERROR
    assert 'below' in text and 'jumped back 1 time(s)' in text


def test_reasons_are_rounded_and_tell_a_figure_from_its_limit():
    from ros2_deadline_monitor.analysis.reports import ClockReport

    r = topic_report()
    level, reason = topic_level(r, Thresholds(), r.last_arrival_wall_ns + 1_234_000_000,
                                1_005_500_000)
    assert level == Level.ERROR
    assert reason == 'no message for 1.23 s (timeout 1.01 s)'
    clock = ClockReport(
        messages_total=10, messages=10, window_wall_ns=S, window_sim_ns=S, sim_time_ns=S,
        rtf=0.9497, rtf_total=0.95, rtf_bin_ns=100 * MS, rtf_bin_min=0.9, rtf_bin_min_at_ns=S,
        rtf_bin_max=1.0, step_ns=MS, max_wall_gap_ns=MS, max_wall_gap_at_ns=S, resets_total=0,
        resets=0, paused=False, last_wall_ns=S)
    t = Thresholds(rtf_warn_fraction=0.95, rtf_error_fraction=0.5)
    level, reason = clock_level(clock, t, S, 1.0, True)
    assert level == Level.WARN
    assert reason == 'RTF 0.9497 below 0.9500 (95% of target 1)'
    level, reason = clock_level(replace(clock, rtf=0.3), t, S, 0.5, True)
    assert reason == 'RTF 0.300 below 0.475 (95% of target 0.5)'
    level, reason = topic_level(topic_report(late_every=5), Thresholds(miss_ratio_error=0.1),
                                S + 1000 * MS, S)
    assert level == Level.ERROR and reason.startswith('miss ratio 19.0 % above 10.0 %: ')

