"""TakeSchedule: each topic taken as often as its interval asks, the due ones only."""

from __future__ import annotations

from ros2_deadline_monitor.live.take_schedule import TakeSchedule

MS = 1_000_000


class Queue:
    def __init__(self, interval_ns: int) -> None:
        self.take_interval_ns = interval_ns
        self.takes: list[int] = []
        self.now = 0

    def take(self) -> int:
        self.takes.append(self.now)
        return 1


def run(schedule: TakeSchedule, queues: list[Queue], until_ns: int, tick_ns: int) -> int:
    taken = 0
    for now in range(0, until_ns, tick_ns):
        for queue in queues:
            queue.now = now
        taken += schedule.take_due(now)
    return taken


def test_each_queue_is_taken_at_its_own_interval() -> None:
    fast, slow = Queue(100 * MS), Queue(500 * MS)
    schedule = TakeSchedule(slack_ns=25 * MS)
    schedule.set_takers([fast, slow], 0)
    taken = run(schedule, [fast, slow], 2000 * MS, 50 * MS)
    assert fast.takes == list(range(0, 2000 * MS, 100 * MS))
    assert slow.takes == [0, 500 * MS, 1000 * MS, 1500 * MS]
    assert taken == len(fast.takes) + len(slow.takes)


def test_a_timer_firing_a_little_early_still_takes() -> None:
    queue = Queue(100 * MS)
    schedule = TakeSchedule(slack_ns=25 * MS)
    schedule.set_takers([queue], 0)
    for now in (0, 99 * MS, 198 * MS):
        queue.now = now
        schedule.take_due(now)
    assert queue.takes == [0, 99 * MS, 198 * MS]


def test_kept_queues_keep_their_time_and_new_ones_are_due_at_once() -> None:
    a, b = Queue(500 * MS), Queue(500 * MS)
    schedule = TakeSchedule(slack_ns=0)
    schedule.set_takers([a], 0)
    schedule.take_due(0)
    schedule.set_takers([a, b], 100 * MS)
    a.now = b.now = 100 * MS
    schedule.take_due(100 * MS)
    assert a.takes == [0] and b.takes == [100 * MS]
    schedule.set_takers([b], 200 * MS)
    assert schedule.takers == [b]
    a.now = b.now = 600 * MS
    schedule.take_due(600 * MS)
    assert a.takes == [0] and b.takes == [100 * MS, 600 * MS]


def test_a_report_takes_every_queue_and_starts_each_interval_again() -> None:
    fast, slow = Queue(100 * MS), Queue(2000 * MS)
    schedule = TakeSchedule(slack_ns=0)
    schedule.set_takers([fast, slow], 0)
    taken = 0
    for now in range(0, 5000 * MS, 50 * MS):
        fast.now = slow.now = now
        if now % (1000 * MS) == 0:
            taken += schedule.take_all(now)  # a report every second
        taken += schedule.take_due(now)
    # The reports take the slow queue every second: the timer never needs to.
    assert slow.takes == [0, 1000 * MS, 2000 * MS, 3000 * MS, 4000 * MS]
    assert fast.takes == list(range(0, 5000 * MS, 100 * MS))  # once at a report, not twice
    assert taken == len(fast.takes) + len(slow.takes)
