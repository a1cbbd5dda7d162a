"""A monitored topic's publisher dies and comes back.

The publisher lives in a participant of its own (a Context = a DDS participant, as a separate
process would be); closing it removes the writer from the graph. The topic must go ERROR once
its ``timeout_s`` passed without a message, come back when a new publisher starts, and keep
every cumulative counter running across the gap. Under sim time the timeout is stretched by
1 / RTF: at RTF 0.5 a 0.5 s timeout is 1 s of wall time.
"""

from __future__ import annotations

import re
import time

from own_names import ns  # test/plugins: the test's own names

ERROR = 2
NS_PER_S = 1_000_000_000

TIMEOUT_RE = re.compile(r'\(timeout ([0-9.]+) s\)')


def test_dead_publisher_times_out_and_recovers_with_counters_kept(
        participant, make_beat, observer, start_monitor, wait_for, capfd):
    start_monitor(topics=['beat', 'other'], topic__beat__name=ns('/beat'),
                  topic__beat__period_ms=20.0, topic__beat__jitter_tolerance_ms=30.0,
                  topic__beat__timeout_s=0.5, topic__other__name=ns('/other'),
                  topic__other__period_ms=20.0, topic__other__jitter_tolerance_ms=30.0,
                  stats_period_s=0.2, window_s=1.0)
    first = participant()
    beat = make_beat(first.node('beat_producer'), ns('/beat'), 0.02)
    other = participant()
    other_beat = make_beat(other.node('other_producer'), ns('/other'), 0.02)
    first.start()
    other.start()
    beat.wait_matched(wait_for)
    other_beat.wait_matched(wait_for)
    # Both monitored before one dies: the other participant may be discovered later.
    wait_for(lambda: all((t := observer.topic_stats(name)) and t.messages_total >= 20
                         for name in ('beat', 'other')),
             what='the beat and other topics monitored')

    first.close()
    sent_before = beat.count
    # Under load the producer's timer skips periods, and the miss ratio may make the topic
    # ERROR before it falls silent: the timeout is the ERROR that says so.
    dead = wait_for(lambda: (t := observer.topic_stats('beat')) and t.level == ERROR
                    and 'no message for' in t.status and t,
                    what='the dead publisher reported ERROR for its silence')
    assert '(timeout 0.5 s)' in dead.status
    assert dead.messages_total == sent_before
    wait_for(lambda: (s := observer.status(': topic beat')) and s.level == bytes([ERROR])
             and 'no message for' in s.message, what='the ERROR diagnostic of the silence')
    # The other topic does not time out.
    other_stats = observer.topic_stats('other')
    assert 'no message for' not in other_stats.status, other_stats.status

    second = participant()
    again = make_beat(second.node('beat_producer'), ns('/beat'), 0.02)
    second.start()
    again.wait_matched(wait_for)
    # Back: no longer timed out (its level is the new run's, a loaded machine's skips too).
    back = wait_for(lambda: (t := observer.topic_stats('beat'))
                    and 'no message for' not in t.status
                    and t.messages_total > sent_before + 20 and t,
                    what='the topic back with counting continued')
    assert back.level != ERROR or 'miss ratio' in back.status, back.status
    # The silence is an outage that re-anchored the grid, not ~25+ skipped periods of 20 ms:
    # the new run's skips are its timer's own (a few more where the delivery was late).
    assert back.outages_total == 1 and back.outage_max_s > 0.5
    run_skips = again.skipped_periods(0, back.messages_total - sent_before - 1)
    assert back.skipped_periods_total - dead.skipped_periods_total <= run_skips + 5, run_skips
    # A restarted writer restarts its sequence numbers: that is not a loss.
    assert back.messages_lost_total == 0 and back.producer_runs_total == 2
    assert back.malformed_total == 0
    assert 'Traceback' not in capfd.readouterr().err


def test_timeout_is_stretched_by_the_rtf_under_sim_time(
        participant, make_beat, observer, start_monitor, clock_process, wait_for):
    clock_process(rtf=0.5, step_ms=2.0)
    # The truth: /clock as another participant receives it, (wall ns, sim ns) per sample.
    # Under load the clock process falls behind its 0.5, and the stretch must follow.
    from rclpy.qos import qos_profile_sensor_data
    from rosgraph_msgs.msg import Clock

    clock_seen: list[tuple[int, int]] = []
    clock_watch = participant()
    clock_watch.node('clock_watch').create_subscription(
        Clock, '/clock', lambda m: clock_seen.append(
            (time.time_ns(), m.clock.sec * NS_PER_S + m.clock.nanosec)),
        qos_profile_sensor_data)
    clock_watch.start()
    start_monitor(topics=['beat'], topic__beat__name=ns('/beat'), topic__beat__period_ms=20.0,
                  topic__beat__timeout_s=0.5, use_sim_time=True, stats_period_s=0.2)
    # The stretch needs the RTF: the /clock process may be discovered seconds after the
    # in-process producer on a loaded machine, and until a sample arrives the wall timeout
    # holds. So /clock first, then the producer.
    wait_for(lambda: (s := observer.latest_stats()) is not None and s.clock.messages_total > 0
             and clock_seen, what='/clock at the monitor and at the clock watch')
    producer = participant()
    beat = make_beat(producer.node('beat_producer'), ns('/beat'), 0.02)
    producer.start()
    beat.wait_matched(wait_for)

    def seen() -> str:
        t, s = observer.topic_stats('beat'), observer.latest_stats()
        return (f'the beat topic monitored on sim time (published {beat.count}; monitor: '
                + (f'{t.messages_total} messages, timer clock {t.timer_clock!r}, {t.status!r}; '
                   if t else 'no TopicStats; ')
                + (f'/clock {s.clock.messages_total} messages, {s.clock.status!r})'
                   if s else 'no stats)'))
    wait_for(lambda: (t := observer.topic_stats('beat')) and t.messages_total >= 20
             and t.timer_clock == 'sim', what=seen)

    producer.close()
    dead = wait_for(lambda: (t := observer.topic_stats('beat')) and t.level == ERROR and t,
                    what='the dead publisher reported ERROR')
    match = TIMEOUT_RE.search(dead.status)
    assert match, dead.status
    stretched = float(match.group(1))
    silent = float(re.search(r'no message for ([0-9.]+) s', dead.status).group(1))
    assert silent >= 0.8 and stretched >= 0.8, dead.status  # 0.5 s at RTF <= ~0.5
    # 0.5 s of sim time over the RTF /clock really had since the last message.
    report_ns = dead.header.stamp.sec * NS_PER_S + dead.header.stamp.nanosec
    samples = list(clock_seen)
    rtf = ((_sim_at(samples, report_ns) - _sim_at(samples, report_ns - silent * 1e9))
           / (silent * 1e9))
    assert abs(stretched - 0.5 / rtf) <= 0.15 * 0.5 / rtf, (dead.status, rtf)


def _sim_at(samples: list[tuple[int, int]], wall_ns: float) -> int:
    """Return the sim time of the last /clock sample received by ``wall_ns``."""
    return next(sim for wall, sim in reversed(samples) if wall <= wall_ns)
