"""Lost is not skipped, live (issue 47): a lossy reader on a clean stamped producer.

The monitor's own reader queue is made lossy (``take_queue_depth`` 10, ``take_period_s``
0.5) under a 100 Hz producer stamped with its cycle start, in a participant of its own (a
DDS participant, as a separate process would be). The producer records every stamp it
published; its truth is its own record by rcl's rule (``count_cycles``). Before the fix the
monitor counted every lost message as a skipped period too (599 lost and 599 skipped, truth
0) and read the spans across losses as the producer's intervals (410 ms against 13 ms).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from own_names import ns  # test/plugins: the test's own names

from ros2_deadline_monitor.analysis.cycles import count_cycles

MS = 1_000_000
PERIOD_NS = 10 * MS
JITTER_NS = MS // 2
MATCH_TIMEOUT_S = 20.0


class StampedTimer:
    """A 100 Hz timer stamping each cycle's start on the wall clock, publishing at once.

    Publishes only while the monitor's subscription is matched; after its first message it
    holds (its timer ticks on, publishing nothing) until ``release``, so that message is
    surely received and losses count from it. Its record is every stamp it published: the
    n-th is publication sequence number n (the hold is in the record, as a gap).
    """

    def __init__(self, node: Any, topic: str) -> None:
        from rclpy.qos import QoSProfile
        from std_msgs.msg import Header

        self.node = node
        self.header = Header
        self.publisher = node.create_publisher(Header, topic, QoSProfile(depth=100))
        self.stamps: list[int] = []
        self.lock = threading.Lock()
        self.released = False
        self.running = True
        self.timer = node.create_timer(PERIOD_NS / 1e9, self._tick)

    def _tick(self) -> None:
        now = self.node.get_clock().now()
        with self.lock:
            if (not self.running or not self.publisher.get_subscription_count()
                    or (self.stamps and not self.released)):
                return
            self.publisher.publish(self.header(stamp=now.to_msg()))
            self.stamps.append(now.nanoseconds)

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.stamps)

    def release(self) -> None:
        with self.lock:
            self.released = True

    def stop(self) -> None:
        with self.lock:
            self.running = False


def test_a_lossy_reader_counts_lost_never_skipped(participant, observer, start_monitor,
                                                  wait_for, key_values):
    start_monitor(topics=['cmd'], topic__cmd__name=ns('/lossy/cmd'), topic__cmd__period_ms=10.0,
                  topic__cmd__stamp='start', topic__cmd__rule='interval',
                  topic__cmd__jitter_tolerance_ms=JITTER_NS / MS, take_queue_depth=10,
                  topic__cmd__timeout_s=30.0, take_period_s=0.5, stats_period_s=1.0,
                  window_s=60.0)
    part = participant()
    producer = StampedTimer(part.node('clean_controller'), ns('/lossy/cmd'))
    part.start()
    wait_for(lambda: (t := observer.topic_stats('cmd')) is not None and t.messages_total == 1,
             timeout=MATCH_TIMEOUT_S, what='the first message counted')
    producer.release()
    wait_for(lambda: producer.count >= 400, timeout=40, what='400 cycles of the producer')
    producer.stop()
    sent = producer.count
    # The newest messages always stay queued: the last one sent is received.
    stats = wait_for(lambda: (t := observer.topic_stats('cmd')) is not None
                     and t.messages_total + t.messages_lost_total
                     + t.messages_lost_by_monitor_total == sent and t, timeout=20,
                     what=lambda: f'received + lost to cover all {sent} messages sent, saw '
                     f'{observer.topic_stats("cmd")}')
    # The producer lost nothing (one host, reliable): every message not received was dropped
    # by the monitor's own reader queue, a figure of its own.
    assert stats.messages_lost_total == 0
    assert stats.messages_lost_by_monitor_total == sent - stats.messages_total
    assert stats.messages_lost_by_monitor_total > 0, 'the reader queue was meant to overflow'
    starts = np.array(producer.stamps, np.int64)
    truth = count_cycles(starts, starts, PERIOD_NS, jitter_ns=JITTER_NS, rule='interval')
    status = wait_for(lambda: (s := observer.status(': topic cmd')) is not None
                      and key_values(s).get('messages total') == str(stats.messages_total)
                      and s, what='the topic diagnostic of the last report')
    across = int(key_values(status)['intervals across loss total'])
    assert 0 < across <= stats.messages_total - 1
    # Lost cycles took their slots: skipped = grid slots spanned - cycles seen - cycles known
    # lost, never one more per lost message. The grid's phase is the earliest start seen; a
    # lost cycle that started earlier in its slot than any seen one leaves the monitor's grid
    # that much late, so the cycle after a loss that starts within it is read as a period
    # later in its slot: at most one skipped period fewer per loss (grid.replay).
    assert truth.skipped - across <= stats.skipped_periods_total <= truth.skipped
    # The monitor's intervals are the producer's own (consecutive numbers only), so its
    # misses and its longest interval are at most those of the producer's whole record.
    assert stats.deadline_misses_total <= truth.misses
    assert stats.interval_wall.max_ms <= np.diff(starts).max() / 1e6
    print(f'\nlossy reader: sent {sent}, received {stats.messages_total}, lost by the '
          f'monitor {stats.messages_lost_by_monitor_total}, skipped '
          f'{stats.skipped_periods_total} (producer: '
          f'{truth.skipped}), misses {stats.deadline_misses_total} (producer at most '
          f'{truth.misses}), max interval {stats.interval_wall.max_ms:.3f} ms (producer '
          f'{np.diff(starts).max() / 1e6:.3f} ms), intervals across a loss left out: {across}')


class OddStamps:
    """A timer that stamps its cycles oddly and records what it did (its truth).

    ``back_every``: every n-th stamp reads 1 s early (stamps going back). ``burst``: each
    cycle publishes that many messages sharing the cycle's stamp, its scheduled time on the
    grid of its first cycle (so a late timer tick shows no skipped period of its own).
    Publishes only while the monitor's subscription is matched.
    """

    def __init__(self, node: Any, topic: str, period_ns: int, *, back_every: int = 0,
                 burst: int = 1) -> None:
        self.period_ns = period_ns
        from rclpy.qos import QoSProfile
        from std_msgs.msg import Header

        self.node = node
        self.header = Header
        self.publisher = node.create_publisher(Header, topic, QoSProfile(depth=1000))
        self.back_every = back_every
        self.burst = burst
        self.starts: list[int] = []
        self.sent = 0
        self.back = 0
        self.lock = threading.Lock()
        self.running = True
        self.timer = node.create_timer(period_ns / 1e9, self._tick)

    def _tick(self) -> None:
        now = self.node.get_clock().now().nanoseconds
        with self.lock:
            if not self.running or not self.publisher.get_subscription_count():
                return
            self.starts.append(now)
            stamp = now
            if self.burst > 1:
                stamp = self.starts[0] + (len(self.starts) - 1) * self.period_ns
            if self.back_every and len(self.starts) % self.back_every == 0:
                stamp -= 1_000_000_000
                self.back += 1
            sec, nanosec = divmod(stamp, 1_000_000_000)
            for _ in range(self.burst):
                msg = self.header()
                msg.stamp.sec, msg.stamp.nanosec = sec, nanosec
                self.publisher.publish(msg)
                self.sent += 1

    def stop(self) -> int:
        """Stop publishing; return the messages sent."""
        with self.lock:
            self.running = False
            return self.sent


def test_stamps_going_back_are_counted_never_skipped(participant, observer, start_monitor,
                                                     wait_for, key_values):
    # Issue 47: 1,948 skipped periods in a run of 400 slots, no note.
    start_monitor(topics=['cmd'], topic__cmd__name=ns('/back/cmd'), topic__cmd__period_ms=20.0,
                  topic__cmd__stamp='start', topic__cmd__rule='interval',
                  topic__cmd__timeout_s=30.0, stats_period_s=0.5, window_s=60.0)
    part = participant()
    producer = OddStamps(part.node('back_controller'), ns('/back/cmd'), 20 * MS, back_every=10)
    part.start()
    wait_for(lambda: len(producer.starts) >= 400, timeout=40, what='400 cycles')
    sent = producer.stop()
    stats = wait_for(lambda: (t := observer.topic_stats('cmd')) is not None
                     and t.messages_total == sent and t, timeout=20,
                     what='every message counted')
    truth = count_cycles(np.array(producer.starts, np.int64),
                         np.array(producer.starts, np.int64), 20 * MS)
    assert stats.messages_lost_total == 0
    assert stats.skipped_periods_total == truth.skipped
    status = wait_for(lambda: (s := observer.status(': topic cmd')) is not None
                      and key_values(s).get('messages total') == str(sent) and s,
                      what='the topic diagnostic of the last report')
    assert key_values(status)['stamps back total'] == str(producer.back)
    assert f'stamps went back {producer.back} times' in status.message
    print(f'\nstamps back: {producer.back} of {sent}, skipped {stats.skipped_periods_total} '
          f'(producer: {truth.skipped})')


def test_bursts_sharing_a_stamp_are_said_to_share_a_slot(participant, observer, start_monitor,
                                                         wait_for, key_values):
    # Issue 47: 10 messages sharing one stamp every 100 ms, period 10 ms: 629 of 661 skipped.
    start_monitor(topics=['cmd'], topic__cmd__name=ns('/burst/cmd'), topic__cmd__period_ms=10.0,
                  topic__cmd__stamp='start', topic__cmd__timeout_s=30.0, stats_period_s=0.5,
                  window_s=60.0)
    part = participant()
    producer = OddStamps(part.node('burst_controller'), ns('/burst/cmd'), 100 * MS, burst=10)
    part.start()
    wait_for(lambda: len(producer.starts) >= 30, timeout=40, what='30 bursts')
    sent = producer.stop()
    stats = wait_for(lambda: (t := observer.topic_stats('cmd')) is not None
                     and t.messages_total == sent and t, timeout=20,
                     what='every message counted')
    assert stats.messages_lost_total == 0
    assert stats.skipped_periods_total == 0
    status = wait_for(lambda: (s := observer.status(': topic cmd')) is not None
                      and key_values(s).get('messages total') == str(sent) and s,
                      what='the topic diagnostic of the last report')
    assert key_values(status)['shared stamps total'] == str(sent - len(producer.starts))
    assert 'several cycles share a slot' in status.message
