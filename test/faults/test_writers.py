"""Three producers starting together on one topic at 10, 50 and 100 Hz (issue 55).

Each is a ``demo_controller`` process of its own, started at once and waiting for the
monitor's reader, so their publication sequence numbers run alike at first; their cycle
records are the ground truth. No period is configured: a period learned from three
producers would be none of theirs. Per-cycle figures are unknown with the reason (never the
skipped periods of a timer that does not exist), every message is counted, and a loss is
never made up, while they run or after they left.
"""

from __future__ import annotations

from pathlib import Path
import subprocess

import numpy as np
from own_names import ns, ros_args  # test/plugins: the test's own names

TOPIC = '/writers55/cmd'
TOPIC_ID = 'writers55_cmd'
RATES_HZ = (10.0, 50.0, 100.0)


def own_skipped(record) -> int:
    """Periods the producer's own timer skipped, by rcl's rule on its recorded starts."""
    from ros2_deadline_monitor.analysis.cycles import count_cycles

    starts = np.asarray(record.start_system_ns, np.int64)
    return count_cycles(starts, starts, record.period_ns).skipped


def test_three_producers_starting_together_keep_to_their_own_records(
        installed_executable, processes, start_monitor, observer, wait_for,
        tmp_path: Path) -> None:
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    start_monitor(topics=[TOPIC_ID], **{f'topic__{TOPIC_ID}__name': ns(TOPIC)},
                  stats_period_s=0.2, window_s=2.0)
    controllers = []
    for rate in RATES_HZ:
        record_path = tmp_path / f'record_{rate:g}.json'
        controller = subprocess.Popen(
            [str(installed_executable('demo_controller')), '--ros-args',
             '-r', f'__node:=writers55_{rate:g}hz', '-p', f'rate_hz:={rate}',
             '-p', f'topic:={ns(TOPIC)}', '-p', 'duration_s:=3.0',
             '-p', 'wait_for_subscribers:=1', '-p', f'record_path:={record_path}',
             *ros_args()],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        processes.append(controller)
        controllers.append((controller, record_path))


    def unknown_while_together():
        stats = observer.topic_stats(TOPIC_ID)
        return stats if stats is not None and (
            'per-cycle figures need one producer' in stats.counts_note) else None

    # While they run together: per-cycle figures unknown, and why.
    together = wait_for(unknown_while_together, timeout=60.0,
                        what='per-cycle figures unknown while the three producers run')
    assert not together.loss_known or together.messages_lost_total == 0, together.loss_note
    records = []
    for controller, record_path in controllers:
        # Discovery and 3 s of cycles on a loaded 2-core machine.
        assert controller.wait(timeout=60) == 0, controller.stdout.read()
        records.append(CycleRecord.load(record_path))
    sent = sum(len(record) for record in records)
    skipped = [own_skipped(record) for record in records]
    assert all(len(record) for record in records)

    def counted():
        stats = observer.topic_stats(TOPIC_ID)
        return stats if stats is not None and stats.messages_total >= sent else None

    done = wait_for(counted, timeout=20.0, what=f'the monitor to count all {sent} messages')
    assert done.messages_total == sent
    # Never more skipped periods than their own timers skipped (a producer alone for a
    # while, as discovery let it start, is timed on its own grid).
    assert done.skipped_periods_total <= sum(skipped), (done.skipped_periods_total, skipped)
    # Never a made-up loss: unknown, or what was really lost (nothing here).
    assert not done.loss_known or done.messages_lost_total == 0, done.loss_note

    def left():  # the window (2 s) no longer holds any of their messages
        stats = observer.topic_stats(TOPIC_ID)
        return stats if stats is not None and stats.messages == 0 else None

    after = wait_for(left, timeout=20.0, what='the window to empty after the producers left')
    assert after.messages_total == sent
    assert not after.loss_known or after.messages_lost_total == 0, after.loss_note
    assert after.skipped_periods_total <= sum(skipped)
    print(f'\nthree producers at 10/50/100 Hz: {sent} messages, own skipped {skipped}; '
          f'monitor skipped_periods_total {done.skipped_periods_total}, misses '
          f'{done.deadline_misses_total}, lost {done.messages_lost_total} (known '
          f'{done.loss_known}: {done.loss_note}); after they left: lost '
          f'{after.messages_lost_total} known {after.loss_known}; while together: '
          f'{together.counts_note}')
