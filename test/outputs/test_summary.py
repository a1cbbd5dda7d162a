"""The final one-screen summary, from the last snapshot."""

from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.outputs.summary import summary_text


def test_summary_shows_totals_max_intervals_ever_and_the_rtf(snapshots):
    invalid = snapshots.topic('bad', topic='', report=None, level=Level.ERROR,
                              reason='invalid configuration: period_ms: must be > 0')
    text = summary_text('deadline_monitor', snapshots.snapshot(
        topics=[snapshots.topic(), invalid]))
    lines = text.splitlines()
    assert lines[0] == 'deadline_monitor summary (totals since start):'
    imu = lines[2].split()
    assert imu == ['/imu', '500', '20', '10', '1', '30.00', '25.00', 'response']
    assert lines[3].startswith('bad') and 'invalid configuration' in lines[3]
    # The RTF with the table's 3 decimals, counts grouped: as every other output writes them.
    assert lines[-1] == ('clock: 5,000 messages, RTF since start 1.000, last window 1.000, '
                         'sim resets 1')


def test_summary_without_topics_or_clock(snapshots):
    snap = snapshots.snapshot(topics=[], clock=snapshots.clock(
        report=snapshots.clock_report(messages_total=0)))
    assert summary_text('m', snap).splitlines()[2:] == ['(no topics monitored)',
                                                         'clock: no /clock received']


def test_summary_ends_with_each_failed_expectation(snapshots):
    from ros2_deadline_monitor.configuration.expectations import evaluate, expectations_from

    snap = snapshots.snapshot(topics=[snapshots.topic()])
    verdict = evaluate(expectations_from({'topic.imu.expect.max_misses': 0,
                                          'topic.imu.expect.max_skipped': 10}, ['imu']),
                       snap)
    lines = summary_text('m', snap, verdict).splitlines()
    assert lines[-2:] == ['FAIL /imu: deadline misses 20, expected <= 0 (max_misses)',
                          'expectations: 1 of 2 held (exit code 3)']
    ok = evaluate(expectations_from({'topic.imu.expect.max_skipped': 10}, ['imu']),
                  snap)
    assert summary_text('m', snap, ok).splitlines()[-1] == 'expectations: 1 of 1 held'
    none = evaluate(expectations_from({}, ['imu']), snap)
    assert summary_text('m', snap, none) == summary_text('m', snap)


def test_notes_of_a_topic_follow_its_line(snapshots):
    topic = snapshots.topic(notes=('2 producers (/a, /b), each analyzed on its own grid',))
    lines = summary_text('m', snapshots.snapshot(topics=[topic])).splitlines()
    assert lines[3] == '  /imu: 2 producers (/a, /b), each analyzed on its own grid'


def test_the_timing_source_and_unknown_counts_are_named(snapshots):
    report = snapshots.topic_report(timing_reason='every stamp is zero (an unset header)',
                                    start_source='arrival', period_ns=None,
                                    counts_note='period not learned: 3 cycles, it needs 21')
    lines = summary_text('m', snapshots.snapshot(
        topics=[snapshots.topic(report=report)])).splitlines()
    assert lines[2].split()[2:4] == ['-', '-']  # misses and skipped: unknown, not 0
    assert lines[3] == ('  /imu: cycles timed by arrival (every stamp is zero (an unset '
                        'header)); misses and skipped periods unknown: period not learned: '
                        '3 cycles, it needs 21')


def test_a_topic_without_a_message_has_unknown_counts_not_zero(snapshots):
    silent = snapshots.topic(report=snapshots.topic_report(
        messages_total=0, deadline_misses_total=0, skipped_periods_total=0))
    lines = summary_text('m', snapshots.snapshot(topics=[silent])).splitlines()
    assert lines[2].split()[:4] == ['/imu', '0', '-', '-']
    assert lines[3] == '  /imu: no message received: misses and skipped periods unknown'


def test_a_removed_topic_is_listed_with_its_totals_marked_removed_with_when(snapshots):
    from dataclasses import replace

    from ros2_deadline_monitor.analysis.snapshot import RemovedTopic
    from ros2_deadline_monitor.configuration.expectations import Verdict
    from ros2_deadline_monitor.outputs.gate import summary_record

    at = snapshots.T0 + 2_500_000_000  # 2.5 s after start
    gone = RemovedTopic(snapshots.topic('gone', topic='/gone'), at)
    snap = replace(snapshots.snapshot(topics=[snapshots.topic()]), removed=(gone,),
                   removed_beyond=2)
    lines = summary_text('m', snap).splitlines()
    assert lines[3].split() == ['/gone', '(removed)', '500', '20', '10', '1', '30.00', '25.00',
                                'response']
    assert lines[4] == ('  /gone: removed from topics at 2026-12-01 06:33:59.500 UTC '
                        '(2.5 s after start): totals up to then')
    assert lines[5] == '(2 more removed topics, not kept)'
    record = summary_record(snap, Verdict(()), node='/m', stopped_by='signal')
    assert [t['id'] for t in record['topics']] == ['imu']
    (removed,) = record['removed_topics']
    assert (removed['id'], removed['removed'], removed['removed_wall_ns'],
            removed['removed_after_s']) == ('gone', True, at, 2.5)
    assert (removed['messages'], removed['deadline_misses']) == (500, 20)
    assert record['removed_topics_beyond'] == 2
