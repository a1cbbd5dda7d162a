"""Where a cycle starts and ends, on which clock: header stamps or arrivals.

See docs/design.md, Cycles.

A cycle's start is its header stamp when the stamps are usable cycle starts (configured, or
decided from the first messages for ``stamp: auto``), else its arrival; its end is the
arrival, placed inside its /clock step on sim time. These are pure functions over a batch of
events; ``cycles.CycleAnalyzer`` keeps the state (the decision, the counts) around them.
"""

from __future__ import annotations

import numpy as np

from ros2_deadline_monitor.analysis.config import NS_PER_S, TopicConfig
from ros2_deadline_monitor.analysis.ring import HeldBatches, NO_VALUE
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer

EPOCH_SCALE_NS = 10**18
"""A stamp at or above this (September 2001 as Unix time) is on the wall (Unix) clock; below
it, a sim-time or unset one. No simulation runs for 31 years of sim time, no wall clock of a
running robot reads 2001."""
FOREIGN_TOLERANCE_NS = NS_PER_S
"""How far a start stamp may lie in the future of its arrival on the timer clock before it
cannot be on that clock (clock skew between hosts, the /clock step)."""
STAMP_SPAN_TOLERANCE = 0.25
"""``stamp: auto`` takes the stamps as cycle starts only when they span the time the
arrivals span (on the timer clock) within this share: a stamp keeping another pace (a
recorded time, a copied header) is no cycle start."""


def _has_clock(clock: RtfAnalyzer | None) -> bool:
    return clock is not None and clock.has_samples


def stamps_refused(stamp: np.ndarray, streams: np.ndarray, timer_clock: str) -> bool:
    """Tell whether the stamps seen so far already cannot be cycle starts (no wait).

    A missing, all-zero (over two messages or more), mixed-clock, wrong-clock or
    non-increasing stamp stays so however many messages follow; only the spacing needs
    more of them. ``streams``: each stamp's producer stream.
    """
    if not len(stamp):
        return False
    if (stamp == NO_VALUE).any() or (len(stamp) > 1 and not stamp.any()):
        return True
    unix = stamp >= EPOCH_SCALE_NS
    if unix.any() != unix.all() or (unix.any() and timer_clock == 'sim'):
        return True
    if timer_clock == 'wall' and not unix.any() and stamp.any():
        return True
    order = np.argsort(streams, kind='stable')
    same = streams[order][1:] == streams[order][:-1]
    return bool((np.diff(stamp[order])[same] <= 0).any())


def stamps_usable(arrival: np.ndarray, stamp: np.ndarray, streams: np.ndarray,
                  timer_clock: str, clock: RtfAnalyzer | None) -> tuple[bool, str]:
    """Tell from the data whether the stamps are usable cycle starts, and why (auto).

    Usable: every message stamped, on the scale of the timer clock (Unix time for a wall
    timer, sim time for a sim one), increasing per producer, not ahead of the arrivals
    beyond ``FOREIGN_TOLERANCE_NS``, and spanning the time the arrivals span on the timer
    clock within ``STAMP_SPAN_TOLERANCE`` (a constant offset is fine). Else arrivals.
    """
    n = len(arrival)
    known = stamp != NO_VALUE
    if not known.any():
        return False, 'the messages carry no stamp'
    if not known.all():
        return False, f'{n - int(known.sum())} of {n} messages without a stamp'
    if not stamp.any():
        return False, 'every stamp is zero (an unset header)'
    if n < 2:
        return False, 'one message: too few to tell whether its stamp is a cycle start'
    unix = stamp >= EPOCH_SCALE_NS
    if unix.any() and not unix.all():
        return False, 'stamps on two clocks (Unix and sim time)'
    if timer_clock == 'wall' and not unix.all():
        return False, 'stamps in sim time, the timer clock is wall'
    if timer_clock == 'sim' and unix.all():
        return False, 'stamps in Unix time, the timer clock is sim'
    order = np.argsort(streams, kind='stable')
    same = streams[order][1:] == streams[order][:-1]
    steps = np.diff(stamp[order])[same]
    backwards = int(np.count_nonzero(steps <= 0))
    if backwards:
        return False, (f'stamps do not increase ({backwards} of {len(steps)} intervals '
                       '<= 0)')
    if timer_clock == 'wall':
        now = arrival
    elif _has_clock(clock):
        now = clock.sim_in_step(arrival)
    else:
        return True, 'sim-time stamps, increasing (no /clock to check them against)'
    placed = now != NO_VALUE
    ahead = stamp[placed] - now[placed]
    if len(ahead) and int(ahead.max()) > FOREIGN_TOLERANCE_NS:
        return False, (f'stamps up to {ahead.max() / 1e9:.1f} s ahead of the '
                       f'{timer_clock} clock')
    stamp_span = arrival_span = 0
    for serial in np.unique(streams[placed]).tolist():
        mine = placed & (streams == serial)
        if np.count_nonzero(mine) > 1:
            stamp_span += int(stamp[mine][-1] - stamp[mine][0])
            arrival_span += int(now[mine][-1] - now[mine][0])
    if arrival_span <= 0:
        return True, 'stamps increase; the arrivals give no span to compare'
    ratio = stamp_span / arrival_span
    if abs(ratio - 1) > STAMP_SPAN_TOLERANCE:
        return False, (f'stamps span {ratio:.2f} x the arrivals on the {timer_clock} '
                       'clock: not the cycle start')
    return True, (f'stamps increase on the {timer_clock} clock and span the arrivals '
                  f'({ratio:.2f} x)')


OWN_CLOCK_MESSAGES = 64
"""The first messages of a topic that tell whether its sim-time stamps, without /clock, are
clean enough to be timed on their own clock (``stamps_on_their_own_clock``)."""
OWN_CLOCK_MIN_MESSAGES = 6
"""... at least this many of them."""
OWN_CLOCK_JITTER_SHARE = 0.25
"""... their intervals vary by at most this share of what the arrivals' intervals vary."""


def _spread(steps: np.ndarray) -> int:
    """How far most intervals lie from their median (90th percentile of the deviation)."""
    return int(np.percentile(np.abs(steps - np.median(steps)), 90))


def stamps_on_their_own_clock(arrival: np.ndarray, stamp: np.ndarray) -> tuple[bool, str]:
    """Tell whether sim-time stamps without /clock are clean cycle starts on their own clock.

    Without /clock a sim-time stamp cannot be placed on the wall clock, yet a simulator's
    stamps (physics steps) are often exact where the arrivals carry a recorder's jitter
    (odometry stamped exactly 36 ms apart, logged with 0.2-30 ms of jitter). Clean: every
    stamp set, at the sim scale while the arrivals are Unix time (far from any wall time),
    increasing, and spaced regularly well under the arrivals' jitter
    (``OWN_CLOCK_JITTER_SHARE`` of their spread, or exactly). Returns (clean, why).
    """
    n = len(stamp)
    if n < OWN_CLOCK_MIN_MESSAGES:
        return False, f'{n} messages: too few to tell'
    if (stamp == NO_VALUE).any() or not (stamp > 0).all():
        return False, 'not every message carries a stamp'
    if (stamp >= EPOCH_SCALE_NS).any() or (arrival < EPOCH_SCALE_NS).any():
        return False, 'stamps not in sim time, or arrivals not on the wall clock'
    steps = np.diff(stamp)
    if (steps <= 0).any():
        return False, 'stamps do not increase'
    stamp_spread, arrival_spread = _spread(steps), _spread(np.diff(arrival))
    if stamp_spread > OWN_CLOCK_JITTER_SHARE * arrival_spread:
        return False, (f'stamp intervals vary by {stamp_spread / 1e6:.3g} ms, the arrivals '
                       f'by {arrival_spread / 1e6:.3g} ms: no steadier than the arrivals')
    regular = ('exactly regular' if not stamp_spread
               else f'regular within {stamp_spread / 1e6:.3g} ms')
    return True, (f'sim-time stamps without /clock, {regular} (the arrivals within '
                  f'{arrival_spread / 1e6:.3g} ms)')


def foreign_starts(arrival: np.ndarray, stamp: np.ndarray, timer_clock: str,
                   clock: RtfAnalyzer | None) -> tuple[np.ndarray, np.ndarray]:
    """Start stamps that cannot be on the timer clock, and those of them ahead of it.

    A stamp on another clock lies at another scale than the timer clock's time at its
    arrival (Unix time read as sim time, or the reverse), or in its future beyond
    ``FOREIGN_TOLERANCE_NS``. Sim time not known yet counts as sim scale. Returns the masks
    (foreign, ahead); a foreign stamp is never placed on a grid.
    """
    if timer_clock == 'wall':
        now = arrival
    elif _has_clock(clock):
        # At most the sim time of the next /clock sample: while /clock is silent, sim
        # time may go on unseen, and a stamp ahead of the last sample is no sign of
        # another clock (the same stamps read the same way live and from a bag).
        now = clock.sim_bound(arrival)
    else:
        now = np.full(len(arrival), NO_VALUE, np.int64)
    stamped = stamp != NO_VALUE
    now_known = now != NO_VALUE
    now_epoch = np.where(now_known, now >= EPOCH_SCALE_NS, False)
    other_scale = stamped & ((stamp >= EPOCH_SCALE_NS) != now_epoch)
    ahead = stamped & ~other_scale & now_known & (stamp > now + FOREIGN_TOLERANCE_NS)
    return other_scale | ahead, ahead


def ages(arrival: np.ndarray, stamp: np.ndarray, end_timer: np.ndarray, timer_clock: str,
         clock: RtfAnalyzer | None) -> tuple[np.ndarray, int]:
    """Arrival - stamp on the clock the stamp is on (told by its scale), and how many unknown.

    A stamp at the scale of the timer clock's end is aged on that clock; a wall-scale
    stamp on a sim-clock topic (a header stamped with the wall clock) on the wall
    clock; a sim-scale stamp on a wall-clock topic on sim time when /clock is known. A
    zero stamp is an unset header, not a message from 1970. A stamp more than
    ``FOREIGN_TOLERANCE_NS`` ahead of its arrival is on no plausible clock (a stamp in
    2038, an hour ahead): its age is unknown (counted), never a negative figure.
    """
    age = np.full(len(arrival), NO_VALUE, np.int64)
    stamped = (stamp != NO_VALUE) & (stamp != 0)
    if not stamped.any():
        return age, 0
    epoch = stamp >= EPOCH_SCALE_NS
    end_known = end_timer != NO_VALUE
    same = stamped & end_known & (epoch == (end_timer >= EPOCH_SCALE_NS))
    age[same] = end_timer[same] - stamp[same]
    other = stamped & ~same
    if other.any():
        if timer_clock == 'sim':
            wall = other & epoch & (arrival >= EPOCH_SCALE_NS)
            age[wall] = arrival[wall] - stamp[wall]
        elif _has_clock(clock):
            sim = clock.sim_in_step(arrival)
            on_sim = other & ~epoch & (sim != NO_VALUE)
            age[on_sim] = sim[on_sim] - stamp[on_sim]
    ahead = (age != NO_VALUE) & (age < -FOREIGN_TOLERANCE_NS)
    if not ahead.any():
        return age, 0
    age[ahead] = NO_VALUE
    return age, int(ahead.sum())


def place(arrival: np.ndarray, stamp: np.ndarray, use_stamp: bool, timer_clock: str,
          clock: RtfAnalyzer | None, clock_timeout_ns: int, silent_after: int | None
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Start and end on the timer clock, start on the wall and sim clocks.

    The wall start is the header stamp on a wall-clock topic timed by its stamps, else the
    arrival (the log time in a bag): never a sim time mapped through /clock.

    ``use_stamp``: the stamps start the cycles (a NO_VALUE stamp starts at the end).
    ``clock_timeout_ns``, ``silent_after``: a sim-clock topic timed by arrivals has no known
    sim start inside a /clock silence longer than the timeout, nor after the wall time
    ``silent_after`` (/clock silent now).
    """
    use_stamp = use_stamp and bool((stamp != NO_VALUE).any())
    have_clock = _has_clock(clock)
    unknown = np.full(len(arrival), NO_VALUE, np.int64)
    if timer_clock == 'wall':
        start = np.where(stamp != NO_VALUE, stamp, arrival) if use_stamp else arrival
        end = arrival
        start_sim = clock.sim_at(start) if have_clock else unknown
        return start, end, start, start_sim
    # The end keeps the execution time inside its /clock step (docs/design.md, Cycles).
    end = clock.sim_in_step(arrival) if have_clock else unknown
    # On the wall clock a cycle starts at its arrival: a sim stamp's wall time through the
    # /clock mapping is only known to the /clock step (a 200 Hz IMU under a 10 Hz /clock
    # would read a 0/100 ms sawtooth of "wall intervals"); wall figures come from arrivals.
    start_wall = arrival
    if use_stamp:
        start = np.where(stamp != NO_VALUE, stamp, end)
    else:
        start = clock.sim_at(arrival) if have_clock else unknown
        if have_clock:
            # Inside a /clock silence beyond its timeout, sim time went on unseen (or
            # stood): an arrival has no known sim time there; such a cycle is counted,
            # not placed, and takes its slot unseen (``CycleAnalyzer._unseen_before``).
            silent = clock.in_silence(arrival, clock_timeout_ns)
            if silent_after is not None:
                silent |= arrival > silent_after
            start = np.where(silent, NO_VALUE, start)
    end = np.where(end != NO_VALUE, np.maximum(end, start), start)
    return start, end, start_wall, start


DECIDE_MIN_INTERVALS = 3
"""With a known period, ``stamp: auto`` decides once it holds more than twice this many
messages (the cycles of a known period are counted without waiting for a learning window)."""


class StampDecision:
    """Whether header stamps start a topic's cycles: configured, or decided from the data.

    ``stamp: auto`` holds the first messages (``held``, batches whose columns 1, 4 and 7 are
    the stamps, producer streams and malformed marks) until they show whether their stamps
    are usable cycle starts (``stamps_usable``); ``start`` and ``none`` are taken as given.
    """

    def __init__(self, stamp: str) -> None:
        """Take the configured stamp meaning (``auto``: decide from the first messages)."""
        self.held = HeldBatches()
        """Messages waiting for enough of them to decide whether their stamps start cycles."""
        self._choice: bool | None = None
        self.reason = ''
        """Why the cycles are timed as they are: configured, or what ``auto`` saw."""
        self.choose(stamp)

    def choose(self, stamp: str) -> None:
        """Take a configured stamp meaning; ``auto`` decides from the next messages."""
        if stamp == 'auto':
            self._choice = None
            self.reason = 'deciding from the first messages'
        else:
            self._choice = stamp == 'start'
            self.reason = f'stamp: {stamp} (configured)'

    @property
    def deciding(self) -> bool:
        """True while ``auto`` has not decided yet."""
        return self._choice is None

    @property
    def use_stamp(self) -> bool:
        """True when the stamp starts the cycles (configured, or decided for ``auto``)."""
        return self._choice is True

    def effective(self, config: TopicConfig) -> TopicConfig:
        """``config`` with ``stamp: auto`` replaced by what was decided (for the rule)."""
        if config.stamp != 'auto':
            return config
        return config.with_changes(stamp='start' if self.use_stamp else 'none')

    def enough(self, period_known: bool, learn_intervals: int) -> bool:
        """Tell whether the held messages suffice to judge their stamps' spacing.

        As many as a period is learned from; with a known period (configured, or offered)
        a few are enough, so its cycles are counted without waiting for 21 of them.
        """
        if period_known:
            return self.held.count > 2 * DECIDE_MIN_INTERVALS
        return self.held.count > learn_intervals

    def refused(self, timer_clock: str) -> bool:
        """Tell whether the held messages' stamps already cannot be cycle starts."""
        cycle = ~self.held.column(7)
        return stamps_refused(self.held.column(1)[cycle], self.held.column(4)[cycle],
                              timer_clock)

    def decide(self, timer_clock: str, clock: RtfAnalyzer | None) -> tuple[np.ndarray, ...]:
        """Decide from the held messages and hand them back, oldest first."""
        batch = self.held.take()
        cycle = ~batch[7]  # a malformed message is no cycle: its stamp says nothing
        self._choice, self.reason = stamps_usable(
            batch[0][cycle], batch[1][cycle], batch[4][cycle], timer_clock, clock)
        return batch
