"""Per-transform figures of a ``/tf``-like topic: each parent->child pair is a stream of its own.

``/tf`` has many writers (robot_state_publisher, localization, the simulator...), each sending
its own frames at its own rate, so the topic's intervals say little: what matters is each
transform's. Like ``tf2_monitor``, but from bags too and in the gate: for every
``(frame_id, child_frame_id)`` pair its messages, rate, longest interval, silence since its
last message while the topic went on, the age of its stamps (arrival - stamp) and its writer
where the graph names it. A broadcaster that stops shows as its frames' gap; where two
writers' transforms interleave on the topic, each pair is still its own stream, so its
intervals are right. A transform's silence ends at the topic's latest message, not at the
report: when the whole topic stops (the run ended, every broadcaster with it), that is the
topic's silence, not a gap of each of its transforms; so a live report some time after the
run's end and a bag that ends at its last message give the same gaps. Likewise a gap the
monitor made (it re-subscribed: ``unmonitored``) is no interval of any transform, as it is
none of the topic's.

``/tf_static`` (latched, ``transient_local``) sends each transform once: its transforms are
``static``, reported with their count and age, never with a rate, an interval or a gap.

The per-message call (``TransformAnalyzer.record``) parses the raw bytes
(``tf_message.read_transforms``) and updates each pair's counters in O(1) per transform (a
dict keyed by the raw frame names). Ages of stamps on the wall clock are taken at once;
stamps on sim time wait (bounded) for ``process`` to place their arrivals on sim time through
/clock. At most ``TRANSFORMS_KEPT`` pairs are tracked; the transforms of further pairs are
counted, never tracked. No ROS import; times are integer nanoseconds.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ros2_deadline_monitor.analysis.cycle_starts import EPOCH_SCALE_NS, FOREIGN_TOLERANCE_NS
from ros2_deadline_monitor.analysis.errors import CdrError
from ros2_deadline_monitor.analysis.ring import NO_VALUE
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer
from ros2_deadline_monitor.analysis.tf_message import read_transforms

__all__ = ['SIM_AGES_KEPT', 'STAMPS_PER_TRANSFORM', 'TRANSFORMS_KEPT', 'TransformAnalyzer',
           'TransformFigures', 'TransformsReport', 'is_static_topic', 'writer_of']

TRANSFORMS_KEPT = 1000
"""Parent->child pairs tracked per topic; the transforms of any further pair are counted."""
STAMPS_PER_TRANSFORM = 'its stamps are inside transforms[], read per transform'
"""Why a /tf-like topic's cycles are timed by arrival: a TFMessage has no stamp of its own,
each transform has one (aged per transform); never "the messages carry no stamp"."""
SIM_AGES_KEPT = 16_384
"""Sim-time stamps waiting for /clock to age them; beyond it their age is unknown (counted)."""


def is_static_topic(topic: str) -> bool:
    """Tell whether a topic is tf's static one by name (``/tf_static``, ``/ns/tf_static``)."""
    return topic.rsplit('/', 1)[-1] == 'tf_static'


@dataclass(frozen=True)
class TransformFigures:
    """One parent->child transform over the run. Times are ns; None: not measured."""

    parent: str
    child: str
    static: bool
    """Sent on a latched topic: no rate, interval or gap is expected of it."""
    messages: int
    first_arrival_ns: int
    last_arrival_ns: int
    intervals: int
    """Intervals between its consecutive arrivals (out-of-order arrivals give none)."""
    interval_sum_ns: int
    max_interval_ns: int | None
    max_interval_at_ns: int | None
    """Arrival that ended the longest interval."""
    silence_ns: int
    """Since its last arrival, up to the topic's latest message: a broadcaster that stopped
    while others went on."""
    age_mean_ns: float | None
    age_max_ns: int | None
    age_last_ns: int | None
    ages: int
    """Messages aged; the rest have an age unknown (``age_unknown``)."""
    age_unknown: int
    writer: str | None
    """The node that sends it, where the graph tells (one publisher); None: unknown."""
    writer_note: str = ''
    """Why the writer is unknown ('' when known)."""

    @property
    def rate_hz(self) -> float | None:
        """Mean rate over its intervals (1 / mean interval); None for a static one or < 2."""
        if self.static or not self.intervals or self.interval_sum_ns <= 0:
            return None
        return self.intervals * 1e9 / self.interval_sum_ns

    @property
    def longest_gap_ns(self) -> int | None:
        """The longest time without it: an interval, or its silence while the topic went on."""
        if self.static:
            return None
        return max(self.max_interval_ns or 0, self.silence_ns)

    @property
    def name(self) -> str:
        """``parent->child`` as users read it."""
        return f'{self.parent}->{self.child}'


@dataclass(frozen=True)
class TransformsReport:
    """Every tracked transform of one topic, sorted by parent then child, and what was not."""

    transforms: tuple[TransformFigures, ...]
    static: bool
    messages: int
    """Messages parsed (each may carry several transforms)."""
    malformed: int
    """Messages whose bytes held no readable TFMessage (the transforms before the fault count)."""
    untracked: int
    """Transforms of pairs beyond ``TRANSFORMS_KEPT``: counted, not tracked."""
    writer_note: str
    """Why the writer of the transforms is unknown ('' when the graph names it)."""
    age_note: str
    """Why some ages are unknown ('' when none is)."""

    def dynamic(self) -> tuple[TransformFigures, ...]:
        """Return the transforms that are expected to repeat (not static)."""
        return tuple(t for t in self.transforms if not t.static)


class _Pair:
    """The running figures of one transform (plain slots: updated per message)."""

    __slots__ = ('age_count', 'age_last_ns', 'age_max_ns', 'age_sum_ns', 'age_unknown',
                 'child', 'first_ns', 'interval_sum_ns', 'intervals', 'last_ns',
                 'max_interval_at_ns', 'max_interval_ns', 'messages', 'parent', 'span')

    def __init__(self, parent: str, child: str, arrival_ns: int) -> None:
        self.parent, self.child = parent, child
        self.messages = 0
        self.first_ns = self.last_ns = arrival_ns
        self.span = 0
        """The monitored span of its last arrival (``TransformAnalyzer.unmonitored``)."""
        self.intervals = 0
        self.interval_sum_ns = 0
        self.max_interval_ns = -1
        self.max_interval_at_ns = 0
        self.age_count = 0
        self.age_sum_ns = 0
        self.age_max_ns = NO_VALUE
        self.age_last_ns = NO_VALUE
        self.age_unknown = 0

    def age(self, age_ns: int) -> None:
        if age_ns < -FOREIGN_TOLERANCE_NS:  # ahead of its arrival: on no plausible clock
            self.age_unknown += 1
            return
        self.age_count += 1
        self.age_sum_ns += age_ns
        self.age_last_ns = age_ns
        if age_ns > self.age_max_ns:
            self.age_max_ns = age_ns


def _decode(name: bytes) -> str:
    return name.decode('utf-8', errors='backslashreplace')


class TransformAnalyzer:
    """The per-transform figures of one topic laid out like ``tf2_msgs/TFMessage``."""

    def __init__(self, static: bool, kept: int = TRANSFORMS_KEPT,
                 sim_ages_kept: int = SIM_AGES_KEPT) -> None:
        """Track up to ``kept`` pairs; ``static``: a latched topic (``is_static_topic``)."""
        self.static = static
        self._kept = kept
        self._pairs: dict[tuple[bytes, bytes], _Pair] = {}
        self._messages = 0
        self._malformed = 0
        self._untracked = 0
        self._zero_stamps = 0
        self._sim_waiting: deque[tuple[_Pair, int, int]] = deque()
        self._sim_kept = sim_ages_kept
        self._sim_unplaced = 0
        self._last_arrival_ns = NO_VALUE
        """The topic's latest message: where its transforms' silences end."""
        self._span = 0
        """Monitored spans so far: an interval across two of them is the monitor's gap."""

    @property
    def messages(self) -> int:
        """Messages parsed so far (a count that only grows)."""
        return self._messages

    def record(self, arrival_ns: int, raw: bytes | memoryview) -> None:
        """Take one message (the per-message call): each of its transforms updates its pair."""
        self._messages += 1
        if arrival_ns > self._last_arrival_ns:
            self._last_arrival_ns = arrival_ns
        pairs = self._pairs
        span = self._span
        try:
            for parent, child, stamp in read_transforms(raw):
                pair = pairs.get((parent, child))
                if pair is None:
                    if len(pairs) >= self._kept:
                        self._untracked += 1
                        continue
                    pair = pairs[(parent, child)] = _Pair(_decode(parent), _decode(child),
                                                          arrival_ns)
                if pair.messages and pair.span == span:
                    interval = arrival_ns - pair.last_ns
                    if interval >= 0:
                        pair.intervals += 1
                        pair.interval_sum_ns += interval
                        if interval > pair.max_interval_ns:
                            pair.max_interval_ns = interval
                            pair.max_interval_at_ns = arrival_ns
                        pair.last_ns = arrival_ns
                else:
                    pair.last_ns = arrival_ns
                    pair.span = span
                pair.messages += 1
                if stamp >= EPOCH_SCALE_NS:
                    if arrival_ns >= EPOCH_SCALE_NS:
                        pair.age(arrival_ns - stamp)
                    else:
                        pair.age_unknown += 1
                elif stamp == 0:  # an unset header, not a transform from 1970
                    self._zero_stamps += 1
                    pair.age_unknown += 1
                elif len(self._sim_waiting) < self._sim_kept:
                    self._sim_waiting.append((pair, arrival_ns, stamp))
                else:
                    self._sim_unplaced += 1
                    pair.age_unknown += 1
        except CdrError:
            self._malformed += 1

    def unmonitored(self) -> None:
        """Open a gap of the monitor's own (it re-subscribes): no interval of any transform.

        The next arrival of each transform starts its intervals afresh, as the topic's own
        intervals skip the monitor's gap (``CycleAnalyzer.unmonitored``).
        """
        self._span += 1

    def process(self, clock: RtfAnalyzer | None, horizon_ns: int | None = None) -> None:
        """Age the sim-time stamps waiting, placing their arrivals on sim time through /clock.

        Only arrivals up to ``horizon_ns`` (the latest /clock sample: each is placed inside
        its /clock step, as a cycle's end is); None: all of them. Without /clock (``clock``
        None, or sim time unknown: several /clock writers) their ages are unknown, counted.
        """
        waiting = self._sim_waiting
        if not waiting:
            return
        if clock is None or not clock.has_samples:
            for pair, _, _ in waiting:
                pair.age_unknown += 1
            self._sim_unplaced += len(waiting)
            waiting.clear()
            return
        taken = []
        while waiting and (horizon_ns is None or waiting[0][1] <= horizon_ns):
            taken.append(waiting.popleft())
        if not taken:
            return
        arrivals = np.fromiter((w[1] for w in taken), np.int64, len(taken))
        sim = clock.sim_in_step(arrivals).tolist()
        for (pair, _, stamp), sim_ns in zip(taken, sim, strict=True):
            if sim_ns == NO_VALUE:
                pair.age_unknown += 1
                self._sim_unplaced += 1
            else:
                pair.age(sim_ns - stamp)

    def report(self, writer: str | None, writer_note: str) -> TransformsReport:
        """Return every tracked transform's figures, silences up to the topic's latest message."""
        static = self.static
        latest = self._last_arrival_ns
        figures = []
        for pair in self._pairs.values():
            aged = pair.age_count
            figures.append(TransformFigures(
                parent=pair.parent, child=pair.child, static=static, messages=pair.messages,
                first_arrival_ns=pair.first_ns, last_arrival_ns=pair.last_ns,
                intervals=pair.intervals, interval_sum_ns=pair.interval_sum_ns,
                max_interval_ns=pair.max_interval_ns if pair.intervals else None,
                max_interval_at_ns=pair.max_interval_at_ns if pair.intervals else None,
                silence_ns=max(0, latest - pair.last_ns),
                age_mean_ns=pair.age_sum_ns / aged if aged else None,
                age_max_ns=pair.age_max_ns if aged else None,
                age_last_ns=pair.age_last_ns if aged else None,
                ages=aged, age_unknown=pair.age_unknown, writer=writer,
                writer_note=writer_note))
        figures.sort(key=lambda f: (f.parent, f.child))
        return TransformsReport(
            transforms=tuple(figures), static=static, messages=self._messages,
            malformed=self._malformed, untracked=self._untracked, writer_note=writer_note,
            age_note=self._age_note())

    def _age_note(self) -> str:
        notes = []
        if self._zero_stamps:
            notes.append(f'{self._zero_stamps} transforms with a zero stamp (unset header)')
        if self._sim_unplaced:
            notes.append(f'{self._sim_unplaced} sim-time stamps without /clock to place their '
                         'arrival on sim time')
        return '; '.join(notes)


def writer_of(publishers: tuple[str, ...], writers: int, from_bag: bool) -> tuple[str | None, str]:
    """Name the writer of a topic's transforms, or say why it is unknown (never a guess).

    A TFMessage carries no writer identity, and neither do Jazzy's message infos nor a bag;
    only a topic with one publisher in the graph (over the run: ``publishers`` are all the
    graph named, one that left included) has a known writer.
    """
    if from_bag:
        return None, 'a bag records no writer of its messages'
    if writers == 1 and len(publishers) == 1:
        return publishers[0], ''
    if writers > 1:
        named = f' ({", ".join(publishers)})' if publishers else ''
        return None, (f'{writers} publishers{named}: a TFMessage carries no writer identity '
                      'and the message info no writer id')
    return None, 'no publisher in the graph'

