"""A topic removed at run time keeps its totals in the summary file, marked removed (issue 56).

The installed monitor runs in a subprocess with two topics; the shipped ``demo_controller``
publishes one of them and writes its own record. Once the monitor reported every message,
``topics`` is set to the other topic alone through the monitor's parameter service (the
test's own node), then the monitor is stopped: the summary file lists the removed topic,
with the counts of the record, exactly, and when it was removed.
"""

from __future__ import annotations

import time

import numpy as np
from own_names import ns, ros_args  # test/plugins: the test's own names
import pytest

from ros2_deadline_monitor.testing import MonitorProcess

PERIOD_NS = 20_000_000


def test_a_topic_removed_at_run_time_keeps_its_totals_in_the_summary_file(
        run_tool, message_times, cycle_truth, observer, wait_for, tmp_path):
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    params = {'topic.ctrl.stamp': 'start', 'topic.ctrl.timeout_s': 60.0,
              'topic.ctrl.period_ms': PERIOD_NS / 1e6, 'topic.idle.period_ms': 10.0,
              'arrival_timestamp': 'source', 'stats_period_s': 0.5}
    with MonitorProcess({'ctrl': ns('/ctrl'), 'idle': ns('/idle')}, params=params,
                        ros_args=ros_args()) as monitor:
        times = message_times(ns('/ctrl'))
        record_path = tmp_path / 'cycles.json'
        controller = run_tool('demo_controller', rate_hz=1e9 / PERIOD_NS, topic=ns('/ctrl'),
                              duration_s=2.0, stall_ms=45.0, stall_every=25,
                              wait_for_subscribers=2, record_path=str(record_path))
        assert controller.wait(timeout=25) == 0
        record = CycleRecord.load(record_path)
        sent = len(record)
        truth = cycle_truth(record, None, PERIOD_NS, left_ns=times.left_ns(record))
        wait_for(lambda: (t := observer.topic_stats('ctrl')) is not None
                 and t.messages_total == sent, timeout=20.0,
                 what=f'the monitor to report all {sent} messages')
        before_ns = time.time_ns()
        (result,) = observer.set_parameters(topics=['idle'])
        after_ns = time.time_ns()
        assert result.successful, result.reason
        wait_for(lambda: (s := observer.latest_stats()) is not None
                 and [t.name for t in s.topics] == ['idle'],
                 what='reports without the removed topic')
        stopped = monitor.stop()
    summary = stopped.summary
    print(f'sent {sent}: record {truth.describe()}')
    assert [t['id'] for t in summary['topics']] == ['idle']
    (removed,) = summary['removed_topics']
    assert summary['removed_topics_beyond'] == 0
    assert removed['id'] == 'ctrl' and removed['topic'] == ns('/ctrl')
    assert removed['removed'] is True
    assert before_ns <= removed['removed_wall_ns'] <= after_ns
    assert removed['removed_after_s'] == pytest.approx(
        (removed['removed_wall_ns'] - summary['start_wall_ns']) / 1e9)
    assert removed['messages'] == removed['cycles'] == sent
    assert removed['deadline_misses'] == truth.observed
    assert removed['skipped_periods'] == truth.skipped and truth.skipped > 0
    assert removed['messages_lost'] == 0
    starts = record.start_timer_ns  # stamp = cycle start: the wall intervals are theirs
    assert removed['max_interval_wall_ms'] == pytest.approx(np.diff(starts).max() / 1e6,
                                                            abs=1e-9)
    assert f'{ns("/ctrl")} (removed)' in stopped.output
    assert 'removed from topics at ' in stopped.output
