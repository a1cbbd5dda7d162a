"""Fixtures of the live adapter's tests: late producers, the /clock tracker, cycle truth.

The fixtures that drive a monitor node (``spin``, ``observer``, ``start_monitor``,
``wait_for``, ``run_tool``, ...) are shared with the other suites
(``test/plugins/node_fixtures.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import threading
from typing import Any, NamedTuple

from node_fixtures import _stop_all, _wait_for, Spinner
import pytest

TRACKER_DEPTH = 20_000
"""Queue of the /clock tracker (``ClockTracker``)."""


class LateProducer:
    """A publisher in another DDS participant that sends exactly ``count`` Headers.

    It publishes every 10 ms once the monitor's reader matched it (a message sent before
    would be lost, not missed by the monitor); ``sent`` is the ground truth. ``others`` get
    the same messages at the same time.
    """

    def __init__(self, context: Any, node_name: str, topic: str, count: int,
                 others: tuple[str, ...] = ()) -> None:
        from rclpy.node import Node
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from std_msgs.msg import Header

        self._header = Header
        self.node = Node(node_name, context=context)
        qos = QoSProfile(depth=count, reliability=ReliabilityPolicy.RELIABLE)
        self.publisher = self.node.create_publisher(Header, topic, qos)
        self._others = [self.node.create_publisher(Header, name, qos) for name in others]
        self.count = count
        self.sent = 0

    def publish(self) -> None:
        """Send the next message, until ``count`` are sent."""
        if self.sent < self.count:
            self.publisher.publish(self._header())
            for other in self._others:
                other.publish(self._header())
            self.sent += 1


@pytest.fixture
def late_producer(second_context: Any,
                  wait_for: Callable[..., Any]) -> Iterator[Callable[..., LateProducer]]:
    """Return ``start(node_name, topic, count, others=())``: a spinning ``LateProducer``.

    It starts publishing once the monitor subscribed to ``topic``; it stops spinning before
    its context (another DDS participant) shuts down.
    """
    spinners: list[Spinner] = []

    def start(node_name: str, topic: str, count: int,
              others: tuple[str, ...] = ()) -> LateProducer:
        producer = LateProducer(second_context, node_name, topic, count, others)
        wait_for(lambda: producer.publisher.get_subscription_count() >= 1, timeout=15.0,
                 what=f'the monitor to subscribe to {topic}')
        producer.node.create_timer(0.01, producer.publish)
        spinners.append(Spinner(second_context, producer.node, destroy=True))
        return producer

    yield start
    _stop_all(spinners)


class ClockTracker:
    """Records ``(writer-side wall time, sim time)`` of every /clock message, off the producer.

    The writer-side ``source_timestamp`` is what the monitor places /clock samples at (with
    its default ``arrival_timestamp: source``), and it is the same for every subscriber.
    """

    def __init__(self, context: Any) -> None:
        from rclpy.node import Node
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock

        self.node = Node('clock_tracker', context=context)
        self.wall: list[int] = []
        self.sim: list[int] = []
        # 20 s of a 1 kHz clock: a test process starved by a CPU hog stalled its spinner for
        # ~3 s and lost ~1,900 samples from a queue of 1,000.
        self.node.create_subscription(
            Clock, '/clock', self._on_clock,
            QoSProfile(depth=TRACKER_DEPTH, reliability=ReliabilityPolicy.BEST_EFFORT))

    def _on_clock(self, msg: Any, info: dict) -> None:
        self.sim.append(msg.clock.sec * 1_000_000_000 + msg.clock.nanosec)
        self.wall.append(info['source_timestamp'])

    def rtf(self) -> float:
        """Return the RTF the /clock process achieved, as received here."""
        return (self.sim[-1] - self.sim[0]) / (self.wall[-1] - self.wall[0])

    def rtf_bounds(self, first_sim_at_most_ns: int, last_sim_ns: int) -> tuple[float, float]:
        """Return the lowest and highest RTF over the spans a later subscriber could have seen.

        Its span ends at its latest sample (sim time ``last_sim_ns``) and starts at its first,
        which lies at or before ``first_sim_at_most_ns`` and, when it subscribed after this
        tracker had samples, after this tracker's first: an RTF since start compares with
        one of these, not with ``rtf()`` over a longer span (a simulator held up before
        the subscriber had /clock lowers only the latter). Sim time must not go back.
        """
        import numpy as np

        n = min(len(self.wall), len(self.sim))
        wall, sim = np.array(self.wall[:n], np.int64), np.array(self.sim[:n], np.int64)
        end = int(np.searchsorted(sim, last_sim_ns, side='right')) - 1
        starts = np.flatnonzero(sim[:end] <= first_sim_at_most_ns)
        assert end > 0 and len(starts), (first_sim_at_most_ns, last_sim_ns, sim[:1], sim[-1:])
        rtf = (sim[end] - sim[starts]) / (wall[end] - wall[starts])
        return float(rtf.min()), float(rtf.max())

    def sim_at(self, wall_ns: Any) -> Any:
        """Return the sim time in force (the latest sample) at each wall time."""
        import numpy as np

        wall, sim = np.array(self.wall), np.array(self.sim)
        return sim[np.searchsorted(wall, np.array(wall_ns), side='right') - 1]

    def sim_between(self, wall_ns: Any) -> Any:
        """Return the sim time at each wall time, interpolated between the samples around it.

        Never reaching the next sample; after the last one, the last one's sim time.
        """
        import numpy as np

        wall, sim = np.array(self.wall, np.int64), np.array(self.sim, np.int64)
        at = np.asarray(wall_ns, np.int64)
        i = np.searchsorted(wall, at, side='right') - 1
        j = np.minimum(i + 1, len(wall) - 1)
        span = wall[j] - wall[i]
        step = np.maximum(sim[j] - sim[i], 0)
        inside = np.where(span > 0, (at - wall[i]) * step // np.maximum(span, 1), 0)
        return sim[i] + np.where(step > 0, np.minimum(inside, step - 1), 0)

    def wait_past(self, wall_ns: int) -> None:
        """Wait for a sample after ``wall_ns``: the steps around earlier times are all here."""
        _wait_for(lambda: self.wall and self.wall[-1] > wall_ns,
                  what=f'/clock at the tracker past {wall_ns}')

    def view_differs(self, before: Any, after: Any, step_ns: int) -> str:
        """Say how the monitor's /clock samples differ from this tracker's ('': the same).

        ``before`` and ``after``: ``ClockStats`` of two of the monitor's reports. Both readers
        are best effort, as /clock is: on a loaded machine either may lose a sample, and a
        cycle ending in that step then ends at another sim time for one of them (a tie's end
        falls back to its start: no miss). The tracker saw every step when its samples
        advance by ``step_ns`` each; the monitor saw the same ones when it counted as many.
        """
        import numpy as np

        first, last = round(before.sim_time_s * 1e9), round(after.sim_time_s * 1e9)
        _wait_for(lambda: self.sim and self.sim[-1] >= last,
                  what="/clock at the tracker up to the monitor's last sample")
        sims = np.array(self.sim[:len(self.wall)], np.int64)
        span = sims[(sims > first) & (sims <= last)]
        steps = np.diff(np.concatenate(([first], span)))
        if len(span) == 0 or (steps != step_ns).any():
            return f'the tracker lost {int((steps // step_ns - 1).clip(0).sum())} samples'
        counted = after.messages_total - before.messages_total
        if counted != len(span):
            return f'the monitor counted {counted} samples, the tracker {len(span)}'
        return ''


class MessageTimes:
    """Sees a stamped topic raw, as the monitor does: each message's stamp and the time it left.

    The time it left is the writer-side ``source_timestamp``: the moment the monitor takes as
    a cycle's end. It can be later than the record's ``end_system_ns`` (taken just before
    ``publish``) when the producer is preempted in between, on a loaded machine by ms.
    """

    def __init__(self, context: Any, topic: str, msg_type: Any = None) -> None:
        from geometry_msgs.msg import TwistStamped
        from rclpy.node import Node
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        self.node = Node('message_times', context=context)
        self.lock = threading.Lock()
        self.stamps: list[int] = []
        self.left: list[int] = []
        self.node.create_subscription(
            msg_type or TwistStamped, topic, self._on_message,
            QoSProfile(depth=10_000, reliability=ReliabilityPolicy.RELIABLE), raw=True)

    def _on_message(self, raw: bytes, info: dict) -> None:
        from ros2_deadline_monitor.analysis.cdr import read_stamp_ns

        with self.lock:
            self.stamps.append(read_stamp_ns(raw))
            self.left.append(info['source_timestamp'])

    def stalls(self, period_ns: int) -> int:
        """Return how many start-to-start steps so far exceed 1.5 periods (stalls)."""
        import numpy as np

        with self.lock:
            stamps = np.array(self.stamps, np.int64)
        return int((np.diff(stamps) > 1.5 * period_ns).sum())

    def left_ns(self, record: Any) -> Any:
        """Return the time each cycle of ``record`` left, in record order (all must arrive)."""
        import numpy as np

        _wait_for(lambda: len(self.stamps) >= len(record),
                  what=f'all {len(record)} messages of the record at message_times')
        with self.lock:
            stamps = np.array(self.stamps, np.int64)
            left = np.array(self.left, np.int64)
        assert len(stamps) == len(record), \
            f'{len(stamps)} messages seen here, {len(record)} in the record'
        assert (stamps == record.start_timer_ns).all(), 'messages seen out of record order'
        return left


@pytest.fixture
def message_times(ros_context: Any, spin: Callable[..., Spinner]) -> Callable[..., Any]:
    """Return ``message_times(topic, msg_type=TwistStamped)``: a spinning ``MessageTimes``."""
    def make(topic: str, msg_type: Any = None) -> MessageTimes:
        times = MessageTimes(ros_context, topic, msg_type)
        spin(times.node, destroy=True)
        return times

    return make


class CycleTruth(NamedTuple):
    """Counts of a controller's record by the reference rule, and what is ambiguous in them.

    ``misses``/``skipped``: response = start delay on the timer clock + execution time
    (monotonic), the rule the controller measures itself by. A cycle is ambiguous when that
    rule and the timer clock at its end disagree on whether it missed. Under sim time that
    end is the sim time when its message left (``left_ns``, else the record's end), mapped
    between the /clock samples received here: the two disagree when the controller's timer
    clock lagged the real /clock (its executor took the sample late) or a sample reached a
    reader after the message left. On the wall clock it is the time the message left. A
    monitor sees only the second view, so such a cycle can go either way:
    ``misses_low``..``misses_high`` bounds the count; without ambiguous cycles both equal
    ``misses``. ``observed`` counts by the second view: what the monitor must report exactly.
    """

    cycles: int
    misses: int
    skipped: int
    misses_low: int
    misses_high: int
    ambiguous: tuple[int, ...]
    ties: tuple[int, ...]
    observed: int
    """Cycles that started exactly one period late (on a /clock step, under sim time)."""

    def check(self, monitor_misses: int, view_differs: str = '') -> None:
        """Assert the monitor's misses: exactly ``observed`` when it saw /clock as the truth.

        Exact unless a cycle's miss depends on which view of sim time one takes; when the
        views of /clock differed (``ClockTracker.view_differs``), within the bounds.
        """
        message = f'monitor {monitor_misses} misses, the record {self.describe()}'
        if not view_differs:
            assert monitor_misses == self.observed, message
            return
        print(f'the /clock views differ ({view_differs}): the misses within the bounds')
        assert self.misses_low <= monitor_misses <= self.misses_high, message

    def describe(self) -> str:
        """Return a one-line summary for the test output."""
        return (f'{self.cycles} cycles: rule misses {self.misses} (bounds {self.misses_low}..'
                f'{self.misses_high}, ambiguous cycles {list(self.ambiguous)}, as a monitor '
                f'sees them {self.observed}), skipped {self.skipped}, {len(self.ties)} cycles '
                'exactly one period late')


def _cycle_truth(record: Any, tracker: ClockTracker | None, period_ns: int,
                 deadline_ns: int | None = None, left_ns: Any = None) -> CycleTruth:
    """Count ``record`` (a CycleRecord) by the reference rule; see ``CycleTruth``."""
    import numpy as np

    from ros2_deadline_monitor.analysis.cycles import count_cycles
    from ros2_deadline_monitor.analysis.grid import GridState, replay

    deadline = period_ns if deadline_ns is None else deadline_ns
    starts = record.start_timer_ns
    ends = starts + (record.end_mono_ns - record.start_mono_ns)
    counts = count_cycles(starts, ends, period_ns, deadline, None, 'response')
    slots, _ = replay(starts, period_ns, GridState())
    rule_miss = ends - slots > deadline
    left = record.end_system_ns if left_ns is None else np.asarray(left_ns, np.int64)
    if record.timer_clock == 'wall':
        seen_miss = left - slots > deadline
    elif tracker is not None:
        seen_end = np.maximum(tracker.sim_between(left), starts)
        seen_miss = seen_end - slots > deadline
    else:
        seen_miss = rule_miss
    ambiguous = np.flatnonzero(rule_miss != seen_miss)
    low = counts.misses - int(rule_miss[ambiguous].sum())
    high = counts.misses + int((~rule_miss[ambiguous]).sum())
    ties = np.flatnonzero(starts - slots == period_ns)
    return CycleTruth(counts.cycles, counts.misses, counts.skipped, low, high,
                      tuple(ambiguous.tolist()), tuple(ties.tolist()), int(seen_miss.sum()))


@pytest.fixture
def cycle_truth() -> Callable[..., CycleTruth]:
    """Return ``cycle_truth(record, tracker, period_ns, deadline_ns=None, left_ns=None)``."""
    return _cycle_truth


@pytest.fixture
def clock_tracker(ros_context: Any, spin: Callable[..., Spinner]) -> Iterator[ClockTracker]:
    """Yield a spinning ``ClockTracker`` of /clock."""
    tracker = ClockTracker(ros_context)
    spin(tracker.node, destroy=True)
    yield tracker
