"""A foreign monitor on the same domain changes nothing in a test (``own_names``).

Two runs of the suite on one host with the same ``ROS_DOMAIN_ID`` failed each other: the
other run's ``/deadline_monitor/stats`` were taken for the test's own, parameter calls were
answered by a monitor of the same name without that topic, producers on the same topic
name were counted by both monitors. Here a real ``monitor`` process in the root namespace
with the default name, a producer on ``/beat`` and a ``sim_clock`` on ``/clock`` run beside
the test's own monitor, which watches its own ``beat`` topic (the same identifier) without
any /clock: the test's figures, statuses, parameter calls and watched verdict are its own.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

from own_names import ns
import pytest

from ros2_deadline_monitor.testing import MonitorProcess, watch_monitor

TIMEOUT_S = 30.0
FOREIGN_PRODUCER = """
import signal, rclpy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import Header
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node('beat_producer')
publisher = node.create_publisher(Header, '/beat', 100)
node.create_timer(0.005, lambda: publisher.publish(Header()))
running = [True]
signal.signal(signal.SIGINT, lambda *_: running.__setitem__(0, False))
while running[0]:
    rclpy.spin_once(node, timeout_sec=0.05)
node.destroy_node()
rclpy.try_shutdown()
"""
"""A producer in the root namespace, as a neighbour's is (no ``own_names.ros_args``)."""


class RootWatch:
    """Reads the root namespace's ``/deadline_monitor/stats``: the foreign monitor's."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.qos import QoSProfile

        from ros2_deadline_monitor.msg import MonitorStats

        self.context = Context()
        # No __ns remapping: the root, where a neighbour's monitor lives.
        rclpy.init(args=[], context=self.context)
        self.node = rclpy.create_node('neighbour_watch', context=self.context)
        self.lock = threading.Lock()
        self.latest: Any = None
        self.node.create_subscription(MonitorStats, '/deadline_monitor/stats', self._on_stats,
                                      QoSProfile(depth=10))

    def _on_stats(self, msg: Any) -> None:
        with self.lock:
            self.latest = msg

    def beat_total(self) -> int:
        """Messages the foreign monitor counted on its own /beat so far."""
        with self.lock:
            topics = self.latest.topics if self.latest is not None else ()
        return next((t.messages_total for t in topics if t.name == 'beat'), 0)


@pytest.fixture
def neighbour(processes, installed_executable, stop_process) -> Any:
    """Start a foreign monitor of /beat, a producer on /beat and sim_clock, all in the root."""
    from node_fixtures import Spinner
    import rclpy

    foreign = MonitorProcess({'beat': '/beat'}, params={'stats_period_s': 0.2,
                                                        'use_sim_time': True})
    foreign.start()
    producer = subprocess.Popen([sys.executable, '-c', FOREIGN_PRODUCER],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(producer)
    processes.append(subprocess.Popen(
        [str(installed_executable('sim_clock')), '--ros-args', '--log-level', 'warn'],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    watch = RootWatch()
    spinner = Spinner(watch.context, watch.node)
    try:
        foreign.wait_ready()
        yield watch
    finally:
        spinner.stop()
        watch.node.destroy_node()
        rclpy.try_shutdown(context=watch.context)
        foreign.stop()


def test_a_foreign_default_named_monitor_changes_nothing(
        neighbour, participant, make_beat, observer, start_monitor, ros_context, wait_for):
    monitor = start_monitor(topics=['beat'], topic__beat__name=ns('/beat'),
                            topic__beat__period_ms=20.0, stats_period_s=0.2)
    # The neighbour runs: its monitor counts its producer on /beat, under its /clock.
    wait_for(lambda: neighbour.beat_total() > 50, timeout=TIMEOUT_S,
             what='the foreign monitor counting its /beat')
    producer = participant()
    beat = make_beat(producer.node('beat_producer'), ns('/beat'), 0.02)
    producer.start()
    beat.wait_matched(wait_for)
    wait_for(lambda: beat.count >= 100, timeout=TIMEOUT_S, what='100 beats of our producer')
    # Parameter calls reach the test's own monitor: a foreign one has other values.
    (result,) = observer.set_parameters(topic__beat__jitter_tolerance_ms=3.0)
    assert result.successful, result.reason
    assert observer.get_parameter('topic.beat.jitter_tolerance_ms') == 3.0
    assert observer.get_parameter('topic.beat.name') == ns('/beat')
    assert 'topic.beat.period_ms' in observer.list_parameters('topic.beat')
    beat.pause()  # every message on its way still arrives
    done = wait_for(lambda: (t := observer.topic_stats('beat')) and t.messages_total == beat.count
                    and t, timeout=TIMEOUT_S,
                    what=lambda: f'our {beat.count} beats counted, exactly')
    assert neighbour.beat_total() > 0, 'the neighbour stopped early: nothing was tested'
    assert done.topic == ns('/beat') and done.messages_lost_total == 0
    # Every report the observer took is our monitor's: our topic, no /clock at all.
    with observer.lock:
        reports = list(observer.stats)
    assert {t.topic for s in reports for t in s.topics} == {ns('/beat')}
    assert all(s.clock.messages_total == 0 for s in reports), 'a foreign /clock was heard'
    assert monitor.count_subscribers(ns('/beat')) >= 1
    # Every status is our monitor's: the beat status counts our producer only.
    status = wait_for(lambda: (s := observer.status(': topic beat'))
                      and dict((kv.key, kv.value) for kv in s.values).get('messages total')
                      == str(beat.count) and s, timeout=TIMEOUT_S,
                      what='the status of our beat with every message')
    totals = {dict((kv.key, kv.value) for kv in s.values).get('messages total')
              for a in observer.report_arrays() for s in a.status
              if s.name.endswith(': topic beat')}
    assert all(int(total) <= beat.count for total in totals if total), (totals, status)
    # watch_monitor's default stats topic is relative: the monitor in its context's namespace.
    watched = watch_monitor({'beat': {'max_lost': 0}}, duration_s=0.0, context=ros_context)
    assert watched.reports >= 1 and watched.last.topics[0].topic == ns('/beat')
    watched.assert_ok()
