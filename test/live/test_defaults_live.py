"""Right by default, live (issue 44): a stalling stamped publisher needs no flag.

The demo controller (its own process) stamps each cycle's start and stalls 22 ms every 50th
cycle; its cycle record is the ground truth. The monitor is given the topic only: it finds
the stamps usable, learns the 10 ms period from them and counts what the record says.
"""

from __future__ import annotations

import dataclasses
import signal
import subprocess

from own_names import ns, ros_args  # test/plugins: the test's own names

TOPIC = '/defaults_live/cmd'
"""The test's own is ns(TOPIC) (own_names)."""
TOPIC_ID = 'defaults_live_cmd'


def test_a_stalling_stamped_publisher_is_counted_exactly_without_a_flag(
        installed_executable, processes, observer, message_times, cycle_truth, wait_for,
        key_values, tmp_path):
    from ros2_deadline_monitor.tools.cycle_record import CycleRecord

    times = message_times(ns(TOPIC))
    log = open(tmp_path / 'monitor.log', 'w+')  # noqa: SIM115 - closed by `processes`
    monitor = subprocess.Popen(
        [str(installed_executable('monitor')), TOPIC[1:], '--ros-args', '-p',
         'stats_period_s:=0.3', *ros_args()], stdout=log, stderr=subprocess.STDOUT, text=True)
    monitor.log = log
    processes.append(monitor)
    record_path = tmp_path / 'record.json'
    controller = subprocess.Popen(
        [str(installed_executable('demo_controller')), '--ros-args',
         '-p', f'topic:={ns(TOPIC)}', '-p', 'stall_ms:=22.0', '-p', 'stall_every:=50',
         '-p', 'duration_s:=3.0', '-p', 'wait_for_subscribers:=2',
         '-p', f'record_path:={record_path}', *ros_args()],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    processes.append(controller)
    assert controller.wait(timeout=30) == 0, controller.stdout.read()
    record = CycleRecord.load(record_path)
    left_ns = times.left_ns(record)

    def settled():
        stats = observer.topic_stats(TOPIC_ID)
        return stats if stats is not None and stats.messages_total >= len(record) else None

    stats = wait_for(settled, timeout=20.0, what='the monitor to count every cycle')
    # Under load a first learning window may keep no timer rhythm: its messages (the first
    # ones) are counted, and left out of the per-cycle figures (``unlearned total``).
    status = wait_for(lambda: observer.status(f'topic {TOPIC_ID}'), what='its status')
    text = key_values(status).get('unlearned total', '').replace(',', '')
    unlearned = int(text) if text.isdigit() else 0  # none: the figure is left out
    judged = dataclasses.replace(record, rows=record.rows[unlearned:])
    truth = cycle_truth(judged, None, 10_000_000, left_ns=left_ns[unlearned:])
    assert truth.observed > 0 and truth.skipped > 0
    assert stats.start_source == 'header' and stats.rule == 'response'
    assert stats.period_ms == 10.0 and stats.period_learned
    assert stats.messages_total == len(record)
    assert (stats.deadline_misses_total, stats.skipped_periods_total,
            stats.messages_lost_total) == (truth.observed, truth.skipped, 0), \
        f'{unlearned} unlearned; {truth.describe()}'
    monitor.send_signal(signal.SIGINT)
    assert monitor.wait(timeout=20) == 0
    log.seek(0)
    text = log.read()
    assert f'{ns(TOPIC)}: cycles timed by header (stamps increase on the wall clock' in text, text
