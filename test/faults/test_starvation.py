"""Executor starvation inside the monitor's own process.

A node with a 200 ms busy callback every 250 ms shares the monitor's single-threaded
executor (in-process, as a component container would put them), so the monitor's stats timer,
takes and callbacks run up to 200 ms late. The producer is ``demo_controller`` in its own
process (100 Hz, a 30 ms stall every 25th cycle) writing its own cycle record.

The figures come from the middleware's timestamps, so the executor's lateness must not show
in them. The ground truth: the controller's record for the message count, and a recorder, a
raw subscription in a participant of its own, for the middleware timestamps of every message
(the source timestamp is the writer's, the same for every reader; the received timestamp is
this participant's reception, not the reader's executor). The counts from those timestamps
must equal the monitor's exactly and its longest interval must agree within 1 ms (a
tolerance for two readers' clocks, not for load). The controller's own publish times are not
the truth for these counts: on a loaded machine the controller itself can be preempted
between reading its clock and publishing.

Only ``arrival_timestamp: source`` is compared exactly. With ``received`` (the default) the
reception time is taken by the DDS receive thread, outside the executor, but a busy callback
burning a core of a 2-core machine delays that thread too: two participants in this process
disagreed by up to 5 ms per message, which moved a few borderline intervals across T + J.
That is the host's CPU contention showing, not the executor's queueing.

The report must also say the monitor itself was late: ``HostStats.stats_timer_late_max_ms``
over 100 ms and a WARN host status naming it.
"""

from __future__ import annotations

import time

import numpy as np
from own_names import ns, ros_args  # test/plugins: the test's own names
import pytest

from ros2_deadline_monitor.analysis.cycles import count_cycles
from ros2_deadline_monitor.tools.cycle_record import CycleRecord

MS = 1_000_000
PERIOD_MS = 10.0
JITTER_MS = 5.0
WARN = 1
TOPIC = '/starved/cmd'


class Recorder:
    """Keeps both middleware timestamps of every message on a topic."""

    def __init__(self, context, topic: str) -> None:
        from rclpy.node import Node
        from rclpy.qos import QoSProfile

        from ros2_deadline_monitor.live.message_types import import_message

        self.node = Node('recorder', context=context)
        self.stamps: dict[str, list[int]] = {'source': [], 'received': []}
        self.node.create_subscription(
            import_message('geometry_msgs/msg/TwistStamped'), topic, self._on_message,
            QoSProfile(depth=1000), raw=True)

    def _on_message(self, raw: bytes, info: dict) -> None:
        self.stamps['source'].append(info['source_timestamp'])
        self.stamps['received'].append(info['received_timestamp'])


class Busy:
    """Hogs the executor: a callback that spins for 200 ms, every 250 ms."""

    def __init__(self, context) -> None:
        from rclpy.node import Node

        self.node = Node('busy', context=context)
        self.runs = 0
        self.node.create_timer(0.25, self._hog)

    def _hog(self) -> None:
        end = time.monotonic() + 0.2
        while time.monotonic() < end:
            pass
        self.runs += 1


@pytest.mark.parametrize('arrival', ['source'])
def test_starved_monitor_keeps_exact_figures_and_says_it_was_late(
        ros_context, second_context, spin, observer, installed_executable, processes, tmp_path,
        wait_for, key_values, arrival):
    from rclpy.parameter import Parameter

    from ros2_deadline_monitor.live.monitor_node import MonitorNode

    monitor = MonitorNode(context=ros_context, parameter_overrides=[
        Parameter('topics', value=['cmd']), Parameter('topic.cmd.name', value=ns(TOPIC)),
        Parameter('topic.cmd.period_ms', value=PERIOD_MS),
        Parameter('topic.cmd.jitter_tolerance_ms', value=JITTER_MS),
        Parameter('topic.cmd.rule', value='interval'),
        # The middleware timestamps are what is compared: arrivals, not the stamps.
        Parameter('topic.cmd.stamp', value='none'),
        Parameter('arrival_timestamp', value=arrival),
        Parameter('stats_period_s', value=0.2), Parameter('window_s', value=60.0)])
    busy = Busy(ros_context)
    spin(monitor, busy.node)  # one executor: the busy callback delays the monitor's work
    recorder = Recorder(second_context, ns(TOPIC))
    spin(recorder.node, context=second_context)

    record_path = tmp_path / 'cycles.json'
    controller = _run(installed_executable, tmp_path, [
        '-p', f'topic:={ns(TOPIC)}', '-p', 'rate_hz:=100.0', '-p', 'stall_ms:=30.0',
        '-p', 'stall_every:=25', '-p', 'duration_s:=3.0', '-p', 'wait_for_subscribers:=2',
        '-p', f'record_path:={record_path}'])
    processes.append(controller)
    assert controller.wait(timeout=25) == 0
    record = CycleRecord.load(record_path)
    wait_for(lambda: len(recorder.stamps[arrival]) >= len(record), what='the recorder')
    times = np.array(recorder.stamps[arrival], np.int64)
    truth = count_cycles(times, times, round(PERIOD_MS * MS), jitter_ns=round(JITTER_MS * MS),
                         rule='interval')
    truth_max_ms = float(np.diff(times).max()) / MS
    print(f'{arrival}: truth {truth}, max {truth_max_ms:.3f} ms; controller max publish '
          f'interval {float(np.diff(record.end_system_ns).max()) / MS:.3f} ms')

    topic = wait_for(lambda: (t := observer.topic_stats('cmd'))
                     and t.messages_total >= len(record) and t, timeout=15.0,
                     what=f'every cycle counted ({len(record)}): '
                     f'{getattr(observer.topic_stats("cmd"), "messages_total", None)}')
    assert busy.runs >= 10
    assert topic.messages_total == len(record)
    assert topic.messages_lost_total == 0
    assert (topic.deadline_misses_total, topic.skipped_periods_total) == (
        truth.misses, truth.skipped), (truth, truth_max_ms)
    assert truth.misses >= len(record) // 25  # the stalls, at least
    assert topic.interval_wall.max_ms == pytest.approx(truth_max_ms, abs=1.0)

    with observer.lock:
        reports = list(observer.stats)
    late = max(s.host.stats_timer_late_max_ms for s in reports)
    assert late > 100.0, late
    starved = [s for a in list(observer.arrays) for s in a.status
               if s.name.endswith(': host') and 'starved' in s.message]
    assert starved, 'no host status said the monitor was starved'
    assert starved[0].level == bytes([WARN])
    assert float(key_values(starved[0])['stats timer late (ms)']) > 100.0


def _run(installed_executable, tmp_path, args):
    import subprocess

    log = open(tmp_path / 'controller.log', 'w')  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(
        [str(installed_executable('demo_controller')), '--ros-args', '--log-level', 'warn',
         *args, '--', *ros_args()], stdout=log, stderr=subprocess.STDOUT)
    process.log = log
    return process
