"""A monitored topic's publisher dies and comes back.

The publisher lives in a participant of its own (a Context = a DDS participant, as a separate
process would be); closing it removes the writer from the graph. The topic must go ERROR once
its ``timeout_s`` passed without a message, come back when a new publisher starts, and keep
every cumulative counter running across the gap. Under sim time the timeout is stretched by
1 / RTF: at RTF 0.5 a 0.5 s timeout is 1 s of wall time.
"""

from __future__ import annotations

import re

OK, WARN, ERROR = 0, 1, 2

TIMEOUT_RE = re.compile(r'\(timeout ([0-9.]+) s\)')


def test_dead_publisher_times_out_and_recovers_with_counters_kept(
        participant, make_beat, observer, start_monitor, wait_for, capfd):
    start_monitor(topics=['beat', 'other'], topic__beat__name='/beat',
                  topic__beat__period_ms=20.0, topic__beat__jitter_tolerance_ms=30.0,
                  topic__beat__timeout_s=0.5, topic__other__name='/other',
                  topic__other__period_ms=20.0, topic__other__jitter_tolerance_ms=30.0,
                  stats_period_s=0.2, window_s=1.0)
    first = participant()
    beat = make_beat(first.node('beat_producer'), '/beat', 0.02)
    other = participant()
    make_beat(other.node('other_producer'), '/other', 0.02)
    first.start()
    other.start()
    # Both monitored before one dies: the other participant may be discovered later.
    wait_for(lambda: all((t := observer.topic_stats(name)) and t.messages_total >= 20
                         and t.level in (OK, WARN) for name in ('beat', 'other')),
             what='the beat and other topics monitored')

    first.close()
    sent_before = beat.count
    dead = wait_for(lambda: (t := observer.topic_stats('beat')) and t.level == ERROR and t,
                    what='the dead publisher reported ERROR')
    assert 'no message for' in dead.status and '(timeout 0.5 s)' in dead.status
    assert dead.messages_total == sent_before
    status = wait_for(lambda: (s := observer.status(': topic beat')) and s.level == bytes([ERROR])
                      and s, what='the ERROR diagnostic')
    assert 'no message for' in status.message
    # The other topic does not notice.
    other_stats = observer.topic_stats('other')
    assert other_stats.level in (OK, WARN), other_stats.status

    second = participant()
    make_beat(second.node('beat_producer'), '/beat', 0.02)
    second.start()
    # Back to OK, or WARN for the skipped periods of the gap (and of a noisy machine).
    back = wait_for(lambda: (t := observer.topic_stats('beat')) and t.level in (OK, WARN)
                    and t.messages_total > sent_before + 20 and t,
                    what='the topic back with counting continued')
    assert 'no message for' not in back.status
    # The silence is an outage that re-anchored the grid, not ~25+ skipped periods of 20 ms.
    assert back.outages_total == 1 and back.outage_max_s > 0.5
    assert back.skipped_periods_total - dead.skipped_periods_total < 10
    # A restarted writer restarts its sequence numbers: that is not a loss.
    assert back.messages_lost_total == 0 and back.producer_runs_total == 2
    assert back.malformed_total == 0
    assert 'Traceback' not in capfd.readouterr().err


def test_timeout_is_stretched_by_the_rtf_under_sim_time(
        participant, make_beat, observer, start_monitor, clock_process, wait_for):
    clock_process(rtf=0.5, step_ms=2.0)
    start_monitor(topics=['beat'], topic__beat__name='/beat', topic__beat__period_ms=20.0,
                  topic__beat__timeout_s=0.5, use_sim_time=True, stats_period_s=0.2)
    # The stretch needs the RTF: the /clock process may be discovered seconds after the
    # in-process producer on a loaded machine, and until a sample arrives the wall timeout
    # holds. So /clock first, then the producer.
    wait_for(lambda: (s := observer.latest_stats()) is not None and s.clock.messages_total > 0,
             what='/clock at the monitor')
    producer = participant()
    beat = make_beat(producer.node('beat_producer'), '/beat', 0.02)
    producer.start()

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
    # 0.5 s of sim time at RTF ~0.5 is ~1 s of wall time (the RTF is measured, not exact).
    assert 0.8 <= float(match.group(1)) <= 1.25, dead.status
    silent = float(re.search(r'no message for ([0-9.]+) s', dead.status).group(1))
    assert silent >= 0.8, dead.status
