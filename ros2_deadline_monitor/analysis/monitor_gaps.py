"""The monitor's own gaps on one topic: while it did not receive it, nothing was measured.

The monitor unsubscribes to subscribe again (another QoS, a stamp change) and stops receiving a
topic while it is refused. Such a silence is the monitor's, never the producer's outage or loss
(docs/design.md, Cycles): the cycles after it are analyzed as if the stream began anew, and the gap
is named and counted apart. This module keeps when each gap began and ended and when its end may be
applied; ``cycles.py`` cuts the events there.
"""

from __future__ import annotations

import numpy as np

from ros2_deadline_monitor.analysis.ring import NO_VALUE

GAPS_KEPT = 16
"""Ends of the monitor's own gaps kept to tell a silence across one from an outage."""


class MonitorGaps:
    """The gaps of the monitor's own on one topic: counted, the latest named, ends to apply."""

    __slots__ = ('_applied', '_ends', '_open_from', '_why', 'closed', 'closed_ns', 'latest')

    def __init__(self) -> None:
        """Start with no gap."""
        self._open_from: int | None = None
        """Wall time the monitor stopped receiving the topic (None: it receives it)."""
        self._why = ''
        self.latest: tuple[int, int | None, str] | None = None
        """The latest gap: (from, to or None while open, why)."""
        self.closed = 0
        """Gaps that ended."""
        self.closed_ns = 0
        """Their wall time, summed."""
        self._ends: list[int] = []
        """Wall times the monitor received the topic again, not yet applied (``ready``)."""
        self._applied: list[int] = []
        """The latest ``GAPS_KEPT`` ends applied: cycles still waiting to be analyzed
        (learning, deciding) may lie on both sides of one (``not_across``)."""

    def open(self, from_wall_ns: int, why: str) -> None:
        """Open a gap at ``from_wall_ns``; a gap already open stays the one named."""
        if self._open_from is None:
            self._open_from, self._why = from_wall_ns, why
            self.latest = (from_wall_ns, None, why)

    def close(self, at_wall_ns: int) -> None:
        """Close the open gap at ``at_wall_ns``; without one nothing happens."""
        began = self._open_from
        if began is None:
            return
        self._open_from = None
        self.closed += 1
        self.closed_ns += max(0, at_wall_ns - began)
        self.latest = (began, at_wall_ns, self._why)
        self._ends.append(at_wall_ns)

    @property
    def ending(self) -> bool:
        """Tell whether a gap ended that is not applied yet (``ready``)."""
        return bool(self._ends)

    def ready(self, held_ns: int | None) -> list[int]:
        """Return the gap ends to apply now, oldest first, and count them as applied.

        A gap ends once every event before it is processed: none is still held for /clock
        (``held_ns``, the earliest arrival still pending, None when nothing is).
        """
        ready = [at for at in self._ends if held_ns is None or held_ns >= at]
        self._ends = [at for at in self._ends if at not in ready]
        self._applied = [*self._applied, *ready][-GAPS_KEPT:]
        return ready

    def not_across(self, arrival: np.ndarray, silence: np.ndarray) -> None:
        """Set to NO_VALUE each silence in ``silence`` that spans an applied gap end.

        ``silence[i]`` is the time between the cycle before ``arrival[i]`` and it: a silence
        of the monitor's own is no outage.
        """
        for ended in self._applied:
            at = int(np.searchsorted(arrival, ended, side='left'))
            if 0 < at < len(arrival) and int(arrival[at - 1]) < ended:
                silence[at] = NO_VALUE

    def total(self) -> int:
        """Return the gaps so far, an open one included."""
        return self.closed + (self._open_from is not None)

    def total_ns(self, now_wall_ns: int) -> int:
        """Return the wall time of the gaps so far, an open one up to ``now_wall_ns``."""
        began = self._open_from
        return self.closed_ns + (max(0, now_wall_ns - began) if began is not None else 0)
