"""Latched topics: a ``transient_local`` message published before the monitor started.

A map server publishes its map once and keeps it for late readers. A volatile reader never
gets it: the monitor showed STALE "no message received yet" forever. The producer here is a
process of its own that publishes one message, says so, waits until the monitor's reader
matched it, then publishes ``count`` more and says how many: its truth.
"""

from __future__ import annotations

import subprocess
import sys

from own_names import ns, ros_args  # test/plugins: the test's own names
import pytest

TIMEOUT_S = 30.0
OK = bytes([0])

PRODUCER = """
import sys, time, rclpy
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import Header
topic, count = sys.argv[1], int(sys.argv[2])
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node('latched_producer')
qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                 durability=DurabilityPolicy.TRANSIENT_LOCAL)
publisher = node.create_publisher(Header, topic, qos)
msg = Header(frame_id='map')
msg.stamp = node.get_clock().now().to_msg()
publisher.publish(msg)
print('latched', flush=True)
sys.stdin.readline()  # the monitor holds the latched message: its reader matched this writer
for _ in range(count):
    time.sleep(0.02)
    msg.stamp = node.get_clock().now().to_msg()
    publisher.publish(msg)
    # A history of one: each message acknowledged before the next one replaces it.
    assert publisher.wait_for_all_acked(Duration(seconds=20))
print(f'sent {count}', flush=True)
try:
    sys.stdin.read()  # until the test closes stdin
except KeyboardInterrupt:
    pass
node.destroy_node()
rclpy.try_shutdown()
"""


def _producer(processes, topic: str, count: int) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, '-c', PRODUCER, topic, str(count), *ros_args()],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    processes.append(process)
    assert process.stdout.readline().strip() == 'latched'
    return process


def _monitor(installed_executable, processes, topic: str) -> subprocess.Popen:
    process = subprocess.Popen(
        [str(installed_executable('monitor')), topic, '--ros-args', '-p', 'stats_period_s:=0.3',
         *ros_args()],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(process)
    return process


@pytest.mark.parametrize('count', [0, 50], ids=['map', 'latched-then-live'])
def test_a_latched_message_is_received_counted_apart_and_named(
        installed_executable, processes, observer, wait_for, count):
    producer = _producer(processes, ns('/fault/map'), count)
    _monitor(installed_executable, processes, 'fault/map')  # relative: in the namespace
    note = 'latched: 1 message, published before the monitor started'

    def _said() -> str | None:
        return getattr(observer.status(': topic fault_map'), 'message', None)

    # Live messages only once the latched one arrived: the writer can count the monitor's
    # reader matched before that reader matched the writer, and a message published then
    # replaced the latched one in the writer's history of one (seen under load: no note).
    wait_for(lambda: (s := observer.status(': topic fault_map')) and note in s.message,
             timeout=TIMEOUT_S, what=lambda: f'the latched note; status: {_said()}')
    producer.stdin.write('go\n')
    producer.stdin.flush()
    assert producer.stdout.readline().strip() == f'sent {count}'
    status = wait_for(lambda: (s := observer.status(': topic fault_map')) and note in s.message
                      and (t := observer.topic_stats('fault_map')) and t.messages_total == count
                      and s, timeout=TIMEOUT_S,
                      what=lambda: f'the latched note and {count} messages; status: {_said()}')
    # Only the producer's live messages are cycles; the latched one is not one of them.
    assert observer.topic_stats('fault_map').messages_total == count
    if count == 0:  # with live messages the level is the figures' (timing: not tested here)
        assert status.level == OK, status.message
        assert status.message == f'{note}; none since'
    producer.stdin.close()
