"""How the simulators pace their steps to a target RTF and measure the RTF they achieved.

``sim_clock`` and ``mujoco_sim`` both run step ``k`` at ``w0 + k * step / target_rtf`` on the
monotonic clock (``Pacer``), wait for it by sleeping and then spinning the last stretch
(``sleep_until``), and publish and log the RTF they achieved since their previous report
(``RtfSince``, from the points ``RtfMeter`` or the simulator itself keeps).
"""

from __future__ import annotations

import math
import threading
import time

from ros2_deadline_monitor.analysis.config import NS_PER_S
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer

RTF_BIN_NS = 100_000_000
COARSE_WAIT_NS = 50_000_000
"""Waits longer than this sleep on the stop event (so a stop ends them), shorter ones in
``time.sleep``."""

Point = tuple[int, int]
"""(wall ns, sim ns) of one published step."""


def sleep_until(due_ns: int, spin_ns: int, stop: threading.Event) -> bool:
    """Sleep until ``spin_ns`` before ``due_ns`` (monotonic), then busy-wait the rest.

    Returns False if ``stop`` was set meanwhile.
    """
    remaining = due_ns - time.monotonic_ns()
    if remaining > COARSE_WAIT_NS:
        if stop.wait((remaining - spin_ns) / NS_PER_S):
            return False
    elif remaining > spin_ns:
        time.sleep((remaining - spin_ns) / NS_PER_S)
    while time.monotonic_ns() < due_ns:
        pass
    return not stop.is_set()


def rtf_between(first: Point | None, last: Point | None) -> float:
    """Sim time over wall time from ``first`` to ``last`` (NaN without two distinct points)."""
    if first is None or last is None or last[0] <= first[0]:
        return math.nan
    return (last[1] - first[1]) / (last[0] - first[0])


class RtfSince:
    """The RTF achieved since the previous report: what the simulators publish on ``~/rtf``."""

    def __init__(self) -> None:
        """Start with no report: the first one measures from the run's first point."""
        self._reported: Point | None = None

    def take(self, first: Point | None, last: Point | None) -> tuple[float, float] | None:
        """Return (RTF, wall seconds) since the previous report, or None with nothing new."""
        previous = self._reported or first
        if last is None or previous is None or last[0] <= previous[0]:
            return None
        self._reported = last
        return rtf_between(previous, last), (last[0] - previous[0]) / NS_PER_S


class Pacer:
    """When each step is due on the monotonic clock; re-anchors instead of bursting."""

    def __init__(self, step_wall_ns: float, start_ns: int, max_lag_ns: float = 0.0) -> None:
        """Step 0 is due at ``start_ns``, step ``k`` ``k * step_wall_ns`` later.

        A step later than ``max(max_lag_ns, step_wall_ns)`` re-anchors the schedule.
        """
        self.step_wall_ns = step_wall_ns
        self.max_lag_ns = max(max_lag_ns, step_wall_ns)
        self._anchor_ns = start_ns
        self._anchor_step = 0
        self.reanchors = 0

    def due_ns(self, step: int) -> int:
        """Return the wall time step ``step`` is due at under the current anchor."""
        return self._anchor_ns + round((step - self._anchor_step) * self.step_wall_ns)

    def publishing(self, step: int, now_ns: int) -> None:
        """Note that ``step`` goes out at ``now_ns``; re-anchor there if too late."""
        if now_ns - self.due_ns(step) > self.max_lag_ns:
            self.restart(step, now_ns)
            self.reanchors += 1

    def restart(self, step: int, now_ns: int) -> None:
        """Make ``step`` due at ``now_ns`` and the following ones a step apart from there."""
        self._anchor_ns = now_ns
        self._anchor_step = step


class RtfMeter:
    """Achieved RTF of the published (wall, sim) points, measured with the analysis' own analyzer.

    ``add`` runs in the pacing thread and is O(1); ``fold`` (on the report timer, and once at
    the end) closes an analyzer window and keeps the whole run's worst and best fixed bins
    and the longest gap. The analyzer holds the last 2^17 points (131 s at 1 kHz): folding at
    least that often keeps every bin evaluated.
    """

    def __init__(self, bin_ns: int = RTF_BIN_NS) -> None:
        """Start empty; ``bin_ns`` is the width of the fixed wall windows."""
        self._analyzer = RtfAnalyzer(bin_ns=bin_ns)
        self._lock = threading.Lock()
        self.points = 0
        self.first: tuple[int, int] | None = None
        self.last: tuple[int, int] | None = None
        self.max_gap_ns = 0
        self.bin_min = math.nan
        self.bin_max = math.nan
        self.bin_min_at_ns: int | None = None

    def add(self, wall_ns: int, sim_ns: int) -> None:
        """Record one publication: sim time ``sim_ns`` went out at ``wall_ns``."""
        with self._lock:
            self._analyzer.record(wall_ns, sim_ns)
        if self.first is None:
            self.first = (wall_ns, sim_ns)
        self.last = (wall_ns, sim_ns)
        self.points += 1

    def fold(self) -> None:
        """Fold the points added since the previous call into the whole-run figures."""
        last = self.last
        if last is None:
            return
        with self._lock:
            report = self._analyzer.report(last[0])
        if not math.isnan(report.rtf_bin_min) and not report.rtf_bin_min >= self.bin_min:
            self.bin_min = report.rtf_bin_min
            self.bin_min_at_ns = report.rtf_bin_min_at_ns
        if not math.isnan(report.rtf_bin_max) and not report.rtf_bin_max <= self.bin_max:
            self.bin_max = report.rtf_bin_max
        if not math.isnan(report.max_wall_gap_ns):
            self.max_gap_ns = max(self.max_gap_ns, int(report.max_wall_gap_ns))

    @property
    def rtf(self) -> float:
        """Sim time over wall time from the first point to the last (NaN before two)."""
        return rtf_between(self.first, self.last)
