"""Live and offline give the same totals for the same stream (issue 11, item 2).

A producer process plays a small simulator: it publishes /clock in 1 ms steps paced to
RTF 1.0 and, on its sim time, a 100 Hz ``std_msgs/Header`` stream stamped with each cycle's
start, stalling 22 ms in every 50th cycle (its message leaves at the stall's end and the late
cycle follows at once, as an rcl timer does). It also publishes, through the same writer,
raw bytes too short for a stamp now and then, and twice resets its world (sim time jumps
back), the second reset 20 cycles after the first, with a stall between them.
One writer per topic, so messages lost stays meaningful.

The in-process monitor measures it live. The installed ``record`` executable writes the topic
and /clock into an MCAP bag, raw, with the log time the monitor uses: the writer-side
``source_timestamp`` of every message, the /clock samples included (the monitor's
``arrival_timestamp: source``, ``record``'s default ``--log-time``). Then
``analyze`` reads that bag with the same parameter file, and its totals (messages, misses,
skipped, lost, malformed, resets) must equal the live monitor's final report. Nothing in the
stream sits near a threshold (responses are 0, 12 or 22 ms against D = 10 ms; the cycle after
a reset starts 7 ms after it), so the few microseconds between the monitor's and the
recorder's receive times cannot change a count.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from own_names import ns, ros_args  # test/plugins: the test's own names

TOPIC = '/ctrl'
"""The test's own is ns(TOPIC) (own_names)."""
DURATION_S = 5.0
RESET_BEFORE = (215, 235)
"""Cycles (counted from 0) before which sim time jumps back; cycle 224 stalls."""
MALFORMED = b'\x00\x01\x00\x00\x01\x00\x00'
"""CDR header, then 3 of the 8 stamp bytes."""
PARAMS = {
    'use_sim_time': True,
    'topics': ['ctrl'],
    'topic.ctrl.name': TOPIC,
    'topic.ctrl.period_ms': 10.0,
    'topic.ctrl.stamp': 'start',
    'topic.ctrl.timeout_s': 60.0,
    'arrival_timestamp': 'source',
}
TOTALS = {'messages_total': 'messages', 'deadline_misses_total': 'deadline_misses',
          'skipped_periods_total': 'skipped_periods',
          'malformed_total': 'malformed', 'resets_total': 'resets'}
"""Live ``TopicStats`` field -> the key of the same whole-run figure in ``analyze --json``."""

PRODUCER = r"""
import json, sys, time
import rclpy
from rclpy.duration import Duration
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Header

topic, duration_s, reset_before, readers, malformed = (
    sys.argv[1], float(sys.argv[2]), [int(c) for c in sys.argv[3].split(',')], int(sys.argv[4]),
    bytes.fromhex(sys.argv[5]))
MS, S = 1_000_000, 1_000_000_000
PERIOD, STALL, STALL_EVERY, MALFORMED_EVERY = 10 * MS, 22 * MS, 50, 40
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node('agreement_producer')
qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
clock_pub = node.create_publisher(Clock, '/clock', qos)
pub = node.create_publisher(Header, topic, qos)
deadline = time.monotonic() + 20.0
while (clock_pub.get_subscription_count() < readers or pub.get_subscription_count() < readers):
    if time.monotonic() > deadline:
        sys.exit('readers did not match')
    time.sleep(0.01)
time.sleep(0.5)  # the matched readers' own discovery of this writer

def header(stamp):
    msg = Header()
    msg.stamp.sec, msg.stamp.nanosec = divmod(stamp, S)
    return msg

sim = 1 * S
expected = sim + 200 * MS  # the first cycle after 200 ms of /clock
busy = None                # (stamp, end) of a stalled cycle still running
cycle = sent = bad = clocks = resets = stalls = 0
first_ns = None            # monotonic time of the first cycle
t0, k = time.monotonic_ns(), 0
while True:
    now = time.monotonic_ns()
    if now < t0 + k * MS:
        time.sleep((t0 + k * MS - now) / S)
    elif now - (t0 + k * MS) > 2 * MS:  # late: re-anchor, never burst
        t0, k = now, 0
    k += 1
    msg = Clock()
    msg.clock.sec, msg.clock.nanosec = divmod(sim, S)
    clock_pub.publish(msg)
    clocks += 1
    if busy is not None and sim >= busy[1]:
        pub.publish(header(busy[0]))
        sent += 1
        busy = None
    if busy is None and sim >= expected and cycle in reset_before:
        # The world reset: sim time jumps back; the next cycle is 7 ms after it.
        reset_before.remove(cycle)
        sim = 1 * S + 3 * MS
        expected = 1 * S + PERIOD
        resets += 1
        continue
    if busy is None and sim >= expected:
        start, slot = sim, expected
        nxt = slot + PERIOD
        if nxt <= start:
            nxt += (1 + (start - nxt) // PERIOD) * PERIOD
        expected = nxt
        if (cycle + 1) % STALL_EVERY == STALL_EVERY // 2:
            busy = (start, start + STALL)
            stalls += 1
        else:
            pub.publish(header(start))
            sent += 1
            if cycle % MALFORMED_EVERY == 7:
                pub.publish(malformed)
                bad += 1
        cycle += 1
        if first_ns is None:
            first_ns = time.monotonic_ns()
    run_s = (time.monotonic_ns() - first_ns) / S if first_ns is not None else 0.0
    if busy is None and run_s >= duration_s and (not reset_before or run_s >= 3 * duration_s):
        break  # on a slow machine, later: once both resets are in
    sim += MS
for p in (pub, clock_pub):
    p.wait_for_all_acked(Duration(seconds=5))
print(json.dumps({'messages': sent + bad, 'cycles': sent, 'malformed': bad, 'clock': clocks,
                  'resets': resets, 'stalls': stalls}), flush=True)
node.destroy_node()
rclpy.try_shutdown()
"""


def test_analyze_on_the_recorded_bag_gives_the_live_totals(
        observer, start_monitor, installed_executable, processes, wait_for, tmp_path):
    import yaml

    from ros2_deadline_monitor.bag.reader import BagSource

    bag = tmp_path / 'run'
    record_log = open(tmp_path / 'record.log', 'w+')  # noqa: SIM115 - closed by `processes`
    # The test's own names: the topic, and /clock as the bag holds it (remapped).
    params = {**PARAMS, 'topic.ctrl.name': ns(TOPIC), 'clock_topic': ns('/clock')}
    recorder = subprocess.Popen([str(installed_executable('record')), ns(TOPIC), '-o', str(bag),
                                 *ros_args()],
                                stdout=record_log, stderr=subprocess.STDOUT)
    recorder.log = record_log
    processes.append(recorder)
    start_monitor(**{name.replace('.', '__'): value for name, value in params.items()})
    producer = subprocess.Popen(
        [sys.executable, '-c', PRODUCER, ns(TOPIC), str(DURATION_S),
         ','.join(map(str, RESET_BEFORE)), '2', MALFORMED.hex(), *ros_args()],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    processes.append(producer)
    out, err = producer.communicate(timeout=40)
    assert producer.returncode == 0, err
    sent = json.loads(out.strip().splitlines()[-1])
    assert sent['resets'] == len(RESET_BEFORE) and sent['malformed'] > 0

    # Every message was acknowledged by the recorder's reliable readers: SIGINT takes what is
    # still queued and closes the bag.
    recorder.send_signal(signal.SIGINT)
    assert recorder.wait(timeout=30) == 0, (tmp_path / 'record.log').read_text()
    with BagSource(bag) as source:
        assert {name: topic.count for name, topic in source.topics.items()} == {
            ns(TOPIC): sent['messages'], ns('/clock'): sent['clock']}
    stats = wait_for(lambda: (s := observer.latest_stats()) is not None and any(
        t.name == 'ctrl' and t.messages_total >= sent['cycles'] for t in s.topics)
        and s.clock.messages_total == sent['clock'] and s, timeout=15.0,
        what='a report covering the whole run (every /clock sample at the monitor)')
    # One more report: everything queued when the previous one was made is in it.
    stamp = stats.header.stamp
    stats = wait_for(lambda: (s := observer.latest_stats()) is not None
                     and s.header.stamp != stamp and s, what='the final report')
    live = next(t for t in stats.topics if t.name == 'ctrl')

    config = tmp_path / 'monitor.yaml'
    config.write_text(yaml.safe_dump({'deadline_monitor': {'ros__parameters': params}}))
    result_path = tmp_path / 'result.json'
    done = subprocess.run(
        [str(installed_executable('analyze')), str(bag), '--config', str(config), '--json',
         str(result_path), '--no-progress'], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads(result_path.read_text())
    offline = next(t for t in result['topics'] if t['name'] == 'ctrl')

    live_totals = {name: getattr(live, name) for name in TOTALS}
    offline_totals = {name: offline[key] for name, key in TOTALS.items()}
    print(f'sent {sent}; live {live_totals} clock resets {stats.clock.resets_total}; offline '
          f'{offline_totals} clock resets {result["clock"]["resets"]}')
    assert stats.clock.messages_total == result['clock']['messages'] == sent['clock']
    assert stats.clock.resets_total == result['clock']['resets'] == sent['resets']
    assert live_totals == offline_totals, {name: (live_totals[name], offline_totals[name])
                                           for name in TOTALS
                                           if live_totals[name] != offline_totals[name]}
    # And both are right: every message counted, the unreadable ones as malformed.
    assert live.messages_total == sent['messages']
    assert live.malformed_total == sent['malformed']
    assert live.messages_lost_total == 0
    # A bag has no publication sequence numbers: its loss is unknown (null), never 0.
    assert offline['messages_lost'] is None
    # Each stall makes two misses (itself, 22 ms; the late cycle after it, 12 ms) and skips
    # one period; a reset re-anchors the grid without either. A malformed message is a
    # message but no cycle: it has no start on the timer clock (placed at its arrival's sim
    # time it re-anchors the grid, and a late one counts a miss and skips that never were).
    assert live.deadline_misses_total == 2 * sent['stalls']
    assert live.skipped_periods_total == sent['stalls']

