"""5,000 configured topics, SIGINT a few seconds after monitoring starts (issue 47).

The issue saw a summary with 5-8 messages of about 470 queued. With a callback per message
(``take_period_s`` 0, and every topic with a QoS deadline), the executor lags seconds behind
its queues while 5,000 topics are polled and reported: the final report counted what the
executor had handed over (460 of 1,516 messages received before SIGINT in a probe), not what
the reader queues held. The final report now takes every queue, batched or not.

The monitor is the installed executable, the producer a process of its own: it publishes on
each of a few topics once the monitor matched them all (20 Hz for 2.5 s) and prints ``sent``
when every message is acknowledged (in the monitor's reader queue). The summary must count
each of them, exactly. Without the fix: 480 of 1,200 (callback).
"""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
import time

from own_names import ros_args  # test/plugins: the test's own names
import pytest

TOPICS = 5000
ACTIVE = 24
BURST = 50
"""Per active topic, at 20 Hz for 2.5 s: within a per-message subscription's queue of
unknown rate (100), so nothing is dropped by the monitor's own queue."""
START_TIMEOUT_S = 240.0
"""5,000 topics' parameters and graph looks take 30-50 s to start on a loaded 2-core host."""
PRODUCER = """
import sys, rclpy, rclpy.duration, time
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import Header
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node('scale_producer')
count, burst = int(sys.argv[1]), int(sys.argv[2])
publishers = [node.create_publisher(Header, f'scale/t{i}', QoSProfile(
    depth=burst, reliability=ReliabilityPolicy.RELIABLE)) for i in range(count)]
while not all(p.get_subscription_count() for p in publishers):
    time.sleep(0.01)
print('matched', flush=True)
next_ns = time.monotonic_ns()
for _ in range(burst):  # 20 Hz on each topic, while the monitor starts reporting
    for publisher in publishers:
        publisher.publish(Header())
    next_ns += 50_000_000
    time.sleep(max(0, next_ns - time.monotonic_ns()) / 1e9)
for publisher in publishers:  # every message is in the monitor's reader queue
    assert publisher.wait_for_all_acked(rclpy.duration.Duration(seconds=60))
print('sent', flush=True)
sys.stdin.readline()
node.destroy_node()
rclpy.try_shutdown()
"""


def _line(process: subprocess.Popen, timeout_s: float) -> str:
    """Return the next line the process prints, failing after ``timeout_s``."""
    ready, _, _ = select.select([process.stdout], [], [], timeout_s)
    assert ready, f'no line within {timeout_s} s'
    return process.stdout.readline().strip()


@pytest.mark.slow
@pytest.mark.parametrize('take_period_s', [0.0, 0.05], ids=['callback', 'batched'])
def test_sigint_soon_after_start_with_5000_topics_counts_every_queued_message(
        installed_executable, tmp_path, processes, take_period_s):
    params = tmp_path / 'topics.yaml'
    ids = [f't{i}' for i in range(TOPICS)]
    params.write_text('/**:\n  ros__parameters:\n    topics: [' + ', '.join(ids) + ']\n'
                      + ''.join(f'    topic.{i}.name: scale/{i}\n' for i in ids))
    summary = tmp_path / 'summary.json'
    log = open(tmp_path / 'monitor.log', 'w')  # noqa: SIM115 - closed by the processes fixture
    monitor = subprocess.Popen(
        [str(installed_executable('monitor')), '--ros-args', '--params-file', str(params),
         '-p', f'summary_file:={summary}', '-p', f'take_period_s:={take_period_s}',
         '--', *ros_args()],
        stdout=log, stderr=subprocess.STDOUT)
    monitor.log = log
    processes.append(monitor)
    producer = subprocess.Popen([sys.executable, '-c', PRODUCER, str(ACTIVE), str(BURST),
                                 *ros_args()],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    processes.append(producer)
    # Matched: the monitor subscribed to every active topic (and said it was monitoring).
    assert _line(producer, START_TIMEOUT_S) == 'matched'
    monitoring_at = time.monotonic()
    assert _line(producer, 60.0) == 'sent'
    # SIGINT 2-5 s after the monitor began monitoring, every message queued by then.
    assert time.monotonic() - monitoring_at < 5.0, 'the producer took too long to publish'
    monitor.send_signal(signal.SIGINT)
    assert monitor.wait(timeout=START_TIMEOUT_S) == 0
    producer.stdin.close()
    record = json.loads(summary.read_text())
    counted = {topic['id']: topic['messages'] for topic in record['topics']}
    assert len(counted) == TOPICS
    assert [counted[f't{i}'] for i in range(ACTIVE)] == [BURST] * ACTIVE, (
        f'summary counts {sum(counted[f"t{i}"] for i in range(ACTIVE))} of '
        f'{ACTIVE * BURST} queued')
    lost = {topic['id']: topic['messages_lost'] for topic in record['topics']
            if topic['id'] in {f't{i}' for i in range(ACTIVE)}}
    assert set(lost.values()) == {0}
