"""One producer per cycle stream, live (issue 12): several producers, restarts, nested stamps.

Producers live in participants of their own (a Context = a DDS participant, as a separate
process would be) and record every stamp they published; the monitor's figures are compared
with what those records give by the same grid rule (``count_cycles``), never with timing.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from own_names import ns  # test/plugins: the test's own names

from ros2_deadline_monitor.analysis.cycles import count_cycles

OK, WARN, ERROR = 0, 1, 2
NS_PER_S = 1_000_000_000
PERIOD_NS = 10_000_000


class StampedProducer:
    """A timer that stamps each cycle's start with its node's clock and publishes it.

    Publishes only while the monitor's subscription is matched, so its record is what the
    monitor can see. ``stamps`` are the start stamps (ns) in publishing order.
    """

    def __init__(self, node: Any, topic: str, period_s: float = PERIOD_NS / NS_PER_S,
                 make: Any = None) -> None:
        from rclpy.qos import QoSProfile
        from std_msgs.msg import Header

        self.make = make or (lambda stamp: Header(stamp=stamp))
        msg_type = type(self.make(node.get_clock().now().to_msg()))
        self.node = node
        self.publisher = node.create_publisher(msg_type, topic, QoSProfile(depth=200))
        self.stamps: list[int] = []
        self.lock = threading.Lock()
        self.stopped = False
        self.timer = node.create_timer(period_s, self._tick)

    @property
    def count(self) -> int:
        """Messages published so far."""
        with self.lock:
            return len(self.stamps)

    def _tick(self) -> None:
        now = self.node.get_clock().now()
        with self.lock:
            if self.stopped or not self.publisher.get_subscription_count():
                return
            self.publisher.publish(self.make(now.to_msg()))
            self.stamps.append(now.nanoseconds)

    def stop(self) -> None:
        """Stop publishing; the writer stays until its participant closes.

        A writer destroyed at once takes the messages still on their way along (seen under
        load: the monitor counted fewer than were published): the count would be the
        middleware's, not the monitor's.
        """
        with self.lock:
            self.stopped = True
            self.node.destroy_timer(self.timer)

    def skipped(self) -> int:
        """Skipped periods of this producer's own record, by rcl's rule."""
        starts = np.array(self.stamps, np.int64)
        return count_cycles(starts, starts, PERIOD_NS).skipped


def sim_node(part: Any, name: str) -> Any:
    from rclpy.parameter import Parameter

    return part.node(name, parameter_overrides=[Parameter('use_sim_time', value=True)])


def test_a_wall_clock_producer_next_to_a_sim_producer(
        participant, observer, start_monitor, clock_process, wait_for):
    """The user's case: no absurd figure, the status says why, the sim producer is exact."""
    clock_process(rtf=0.5, step_ms=1.0)
    start_monitor(topics=['cmd'], topic__cmd__name=ns('/cmd'), topic__cmd__period_ms=10.0,
                  topic__cmd__stamp='start', use_sim_time=True, stats_period_s=0.2)
    first = participant()
    sim = StampedProducer(sim_node(first, 'controller'), ns('/cmd'))
    first.start()
    # 3 s of wall time at RTF 0.5: 150 cycles of sim time.
    wait_for(lambda: sim.count >= 150, timeout=30, what='the sim producer running 3 s')
    second = participant()
    wall = StampedProducer(second.node('leftover_controller'), ns('/cmd'))
    second.start()
    # WARN in a report with new foreign stamps: a report in which the loaded test process
    # delivered none keeps the note at the level of the figures.
    both = wait_for(lambda: (t := observer.topic_stats('cmd')) and wall.count >= 50
                    and t.foreign_stamps_total > 0 and 'leftover_controller' in t.status
                    and t.level == WARN and t, timeout=30,
                    what='the second producer named in a WARN status')
    assert 'start stamps on the wall (Unix) clock' in both.status
    assert ns('/controller') in both.status and not both.loss_known
    wait_for(lambda: wall.count >= 400, timeout=30, what='the wall producer running 4 s')
    wall.stop()
    more = sim.count + 50
    wait_for(lambda: sim.count >= more, timeout=30, what='the sim producer going on alone')
    sim.stop()
    sent = sim.count + wall.count
    done = wait_for(lambda: (t := observer.topic_stats('cmd')) and t.messages_total == sent
                    and t, timeout=30, what='every message counted')
    assert done.foreign_stamps_total == wall.count
    assert done.skipped_periods_total == sim.skipped()
    assert done.messages_lost_total == 0 and done.malformed_total == 0
    assert done.producer_runs_total == 2
    assert done.interval_sim.max_ms < 1000.0 and done.interval_wall.max_ms < 1000.0
    print(f'\nmonitor after both producers: skipped_periods_total '
          f'{done.skipped_periods_total} (producer: {sim.skipped()}), foreign_stamps_total '
          f'{done.foreign_stamps_total} of {wall.count}, max interval sim '
          f'{done.interval_sim.max_ms:.3f} ms, lost {done.messages_lost_total}, '
          f'loss_known {done.loss_known}; status: {both.status}')


def test_two_producers_on_one_clock_each_on_their_own_grid(
        participant, observer, start_monitor, wait_for):
    start_monitor(topics=['cmd'], topic__cmd__name=ns('/cmd'), topic__cmd__period_ms=10.0,
                  topic__cmd__stamp='start', stats_period_s=0.2, window_s=60.0)
    first = participant()
    a = StampedProducer(first.node('left_controller'), ns('/cmd'))
    first.start()
    wait_for(lambda: a.count >= 100, what='the first producer running')
    second = participant()
    b = StampedProducer(second.node('right_controller'), ns('/cmd'))
    second.start()
    named = wait_for(lambda: (t := observer.topic_stats('cmd')) and t.producers == 2
                     and 'right_controller' in t.status and t, timeout=30,
                     what='both producers named')
    assert ns('/left_controller') in named.status and not named.loss_known
    wait_for(lambda: b.count >= 300, timeout=30, what='300 cycles of the second producer')
    a.stop()
    b.stop()
    sent = a.count + b.count
    done = wait_for(lambda: (t := observer.topic_stats('cmd')) and t.messages_total == sent
                    and t, what=lambda: f'every message counted ({sent}): '
                    f'{getattr(observer.topic_stats("cmd"), "messages_total", None)}')
    # Each producer's intervals and skipped periods as by its own record: never an interval
    # between two producers' cycles.
    own = np.concatenate([np.diff(np.array(p.stamps, np.int64)) for p in (a, b)]) / 1e6
    assert done.skipped_periods_total == a.skipped() + b.skipped()
    assert done.interval_wall.count == len(own)
    assert done.interval_wall.min_ms == own.min() and done.interval_wall.max_ms == own.max()
    assert done.producer_runs_total == 2 and done.messages_lost_total == 0
    print(f'\ntwo producers: skipped {done.skipped_periods_total} (own: {a.skipped()} + '
          f'{b.skipped()}), min/max interval {done.interval_wall.min_ms:.3f} / '
          f'{done.interval_wall.max_ms:.3f} ms (own: {own.min():.3f} / {own.max():.3f}); '
          f'status: {named.status}')


def test_a_restart_is_an_outage_not_skipped_periods(
        participant, observer, start_monitor, wait_for):
    start_monitor(topics=['cmd'], topic__cmd__name=ns('/cmd'), topic__cmd__period_ms=10.0,
                  topic__cmd__stamp='start', topic__cmd__timeout_s=0.5, stats_period_s=0.2)
    first = participant()
    before = StampedProducer(first.node('controller'), ns('/cmd'))
    first.start()
    wait_for(lambda: before.count >= 100, what='the first run')
    before.stop()
    # Every message of the first run received before its participant goes: a writer
    # destroyed with messages still on their way takes them along.
    wait_for(lambda: (t := observer.topic_stats('cmd')) and t.messages_total == before.count,
             what=lambda: f'all {before.count} messages of the first run at the monitor')
    first.close()
    gone = wait_for(lambda: (t := observer.topic_stats('cmd')) and t.level == ERROR and t,
                    what='the timeout')
    assert gone.messages_total == before.count
    second = participant()
    after = StampedProducer(second.node('controller'), ns('/cmd'))
    second.start()
    wait_for(lambda: after.count >= 100, what='the second run')
    after.stop()
    sent = before.count + after.count
    back = wait_for(lambda: (t := observer.topic_stats('cmd')) and t.messages_total == sent
                    and t, what='both runs counted')
    silence_s = (after.stamps[0] - before.stamps[-1]) / NS_PER_S
    assert back.outages_total == 1
    assert 0.5 < back.outage_max_s <= silence_s + 0.1
    assert back.skipped_periods_total == before.skipped() + after.skipped()
    assert back.producer_runs_total == 2 and back.messages_lost_total == 0
    assert 'outage(s), longest' in back.status
    print(f'\nrestart after {silence_s:.2f} s: outages_total {back.outages_total}, longest '
          f'{back.outage_max_s:.2f} s, skipped_periods_total {back.skipped_periods_total} '
          f'(producers: {before.skipped()} + {after.skipped()})')


def test_a_nested_stamp_is_read_from_the_raw_bytes(
        participant, observer, start_monitor, wait_for, test_msgs):
    from std_msgs.msg import Header

    def tf_like(stamp: Any) -> Any:
        element = test_msgs.TransformStampedLike(header=Header(stamp=stamp),
                                                 child_frame_id='base_link')
        return test_msgs.TFMessageLike(transforms=[element])

    start_monitor(topics=['tf', 'bad'], topic__tf__name=ns('/tf_like'), topic__tf__period_ms=10.0,
                  topic__tf__stamp='start', topic__tf__stamp_field='transforms[0].header.stamp',
                  topic__bad__name=ns('/tf_like_bad'), topic__bad__stamp='start',
                  topic__bad__stamp_field='transforms[0].child_frame_id', stats_period_s=0.2)
    part = participant()
    good = StampedProducer(part.node('tf_producer'), ns('/tf_like'), make=tf_like)
    bad = StampedProducer(part.node('tf_bad_producer'), ns('/tf_like_bad'), make=tf_like)
    part.start()
    wait_for(lambda: good.count >= 200, what='200 nested-stamp messages')
    good.stop()
    seen = wait_for(lambda: (t := observer.topic_stats('tf')) and t.messages_total == good.count
                    and t, what='every message counted')
    assert seen.start_source == 'header' and seen.malformed_total == 0
    assert seen.skipped_periods_total == good.skipped()
    assert seen.foreign_stamps_total == 0
    assert 0.0 <= seen.age_max_ms < 1000.0  # the stamp is the cycle start, on the wall clock
    refused = wait_for(lambda: (t := observer.topic_stats('bad')) and t.level == ERROR and t,
                       what='the unreadable stamp_field refused')
    assert 'stamp_field transforms[0].child_frame_id' in refused.status
    assert refused.messages_total == 0
    bad.stop()
    print(f'\nnested stamp: {seen.messages_total} of {good.count} messages, skipped '
          f'{seen.skipped_periods_total} (producer: {good.skipped()}); refused: '
          f'{refused.status}')
