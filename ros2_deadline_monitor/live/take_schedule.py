"""When the take timer takes each topic's reader queue: the due ones only, soonest first.

A thousand slow topics need their queues taken every few hundred ms (``qos.take_stride``),
a fast one every take period: visiting every topic at every tick to skip most of them costs
more than the takes. The schedule keeps the topics in a heap by the time of their next take,
so a tick costs a look at the first entry plus the takes that are due. A report takes the
queues of the topics it refreshes, and those of unknown rate, besides (``MonitorNode``);
``take_all`` takes every queue (a settings change, the final report) and starts each one's
interval again.
"""

from __future__ import annotations

from collections.abc import Sequence
import heapq
from typing import Protocol


class Taker(Protocol):
    """What the schedule needs of a ``TopicMonitor``."""

    @property
    def take_interval_ns(self) -> int:
        """How often its queue needs taking."""

    def take(self) -> int:
        """Take its queue; return how many messages."""


class TakeSchedule:
    """The topics to take, by the monotonic time of their next take."""

    def __init__(self, slack_ns: int) -> None:
        """Take a topic up to ``slack_ns`` early (a timer that fires a little early)."""
        self._slack_ns = slack_ns
        self._heap: list[tuple[int, int, Taker]] = []
        self._takers: list[Taker] = []

    @property
    def takers(self) -> list[Taker]:
        """The topics in the schedule."""
        return self._takers

    def set_takers(self, takers: Sequence[Taker], now_ns: int) -> None:
        """Schedule exactly ``takers``: new ones are due at once, kept ones keep their time."""
        if list(takers) == self._takers:
            return
        when = {id(taker): at for at, _, taker in self._heap}
        self._takers = list(takers)
        self._heap = [(when.get(id(taker), now_ns), i, taker)
                      for i, taker in enumerate(self._takers)]
        heapq.heapify(self._heap)

    def take_due(self, now_ns: int) -> int:
        """Take every topic whose time came; return how many messages were taken."""
        heap, taken = self._heap, 0
        limit = now_ns + self._slack_ns
        while heap and heap[0][0] <= limit:
            _, order, taker = heap[0]
            taken += taker.take()
            heapq.heapreplace(heap, (now_ns + taker.take_interval_ns, order, taker))
        return taken

    def take_all(self, now_ns: int) -> int:
        """Take every topic now (a report); each is next due one interval from now."""
        taken = 0
        for taker in self._takers:
            taken += taker.take()
        self._heap = [(now_ns + taker.take_interval_ns, i, taker)
                      for i, taker in enumerate(self._takers)]
        heapq.heapify(self._heap)
        return taken
