"""Per-topic command line flags, shared by ``monitor`` and ``analyze``.

Both commands take the same per-topic settings (period or rate, deadline, jitter, stamp and
where it is, rule, clock, timeout) with the same names, units and checks, so a command that
works on a bag works live. No ROS import: ``analyze`` must run without rclpy. The values come
out in two shapes: integer nanoseconds for the offline ``Overrides`` and the per-topic
parameter values (``topic.<id>.period_ms`` ...) for the live node.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import math
import re
from typing import Any

from ros2_deadline_monitor.analysis.config import (
    CLOCKS,
    duration_ns,
    KINDS,
    MAX_PERIOD_NS,
    NS_PER_MS,
    NS_PER_S,
    RULES,
    STAMPS,
)
from ros2_deadline_monitor.analysis.errors import ConfigError
from ros2_deadline_monitor.analysis.stamp_field import parse_stamp_field, StampFieldError

__all__ = ['add_topic_flags', 'TopicFlags', 'topic_flags', 'topic_id']

_MAX_RATE_HZ = 1e6
_MIN_RATE_HZ = NS_PER_S / MAX_PERIOD_NS


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected a number, got {text!r}') from None
    if math.isnan(value) or math.isinf(value):
        raise argparse.ArgumentTypeError(f'expected a finite number, got {text!r}')
    return value


def _duration(text: str, unit_ns: int, unit: str, *, zero_ok: bool) -> float:
    """Check ``text`` is a duration the analysis accepts; return it as typed (a float)."""
    value = _number(text)
    try:
        duration_ns('value', value, unit_ns, zero_ok=zero_ok)
    except ConfigError:
        what = '>= 0' if zero_ok else 'positive'
        raise argparse.ArgumentTypeError(
            f'expected a {what} number of {unit} up to one hour, got {text!r}') from None
    return value


def positive_ms(text: str) -> float:
    """``argparse`` type: a positive number of milliseconds (0, NaN, inf rejected)."""
    return _duration(text, NS_PER_MS, 'milliseconds', zero_ok=False)


def zero_ok_ms(text: str) -> float:
    """``argparse`` type: a number of milliseconds >= 0."""
    return _duration(text, NS_PER_MS, 'milliseconds', zero_ok=True)


def positive_s(text: str) -> float:
    """``argparse`` type: a positive number of seconds."""
    return _duration(text, NS_PER_S, 'seconds', zero_ok=False)


def rate_hz(text: str) -> float:
    """``argparse`` type: a rate in Hz whose period lies between 1 µs and one hour."""
    value = _number(text)
    if not _MIN_RATE_HZ <= value <= _MAX_RATE_HZ:
        raise argparse.ArgumentTypeError(
            f'expected a rate between 1/3600 and {_MAX_RATE_HZ:g} Hz, got {text!r}')
    return value


def stamp_field(text: str) -> str:
    """``argparse`` type: a field path such as ``transforms[0].header.stamp``."""
    try:
        parse_stamp_field(text)
    except StampFieldError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


FLAG_DESTS = ('period_ms', 'rate_hz', 'deadline_ms', 'jitter_ms', 'stamp', 'stamp_field',
              'rule', 'kind', 'clock', 'timeout_s')
"""``argparse`` destinations of the per-topic flags (``--period-ms`` -> ``period_ms``)."""


def add_topic_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                    clock_default: str) -> None:
    """Add the per-topic flags to ``parser`` (a parser or an argument group).

    ``clock_default`` completes the help of ``--clock``: the two commands pick the default
    clock from different evidence (use_sim_time live, /clock in the bag offline).
    """
    period = parser.add_mutually_exclusive_group()
    period.add_argument('--period-ms', metavar='MS', type=positive_ms,
                        help='expected period T (default: learned from the first intervals)')
    period.add_argument('--rate-hz', metavar='HZ', type=rate_hz,
                        help='expected rate, instead of --period-ms')
    parser.add_argument('--deadline-ms', metavar='MS', type=positive_ms,
                        help='deadline D for the response rule (default: the period)')
    parser.add_argument('--jitter-ms', metavar='MS', type=zero_ok_ms,
                        help='jitter tolerance J; 0 allowed (default: 5%% of the period)')
    parser.add_argument('--stamp', choices=STAMPS,
                        help="what header.stamp means: 'start' (cycle start), 'none' (the "
                             "arrival starts the cycle) or 'auto' (default: the stamp when the "
                             'first messages show it is a usable cycle start, else the '
                             'arrival; the output says which and why)')
    parser.add_argument('--stamp-field', metavar='PATH', type=stamp_field,
                        help='where the stamp is in each message, a field path to a '
                             'builtin_interfaces/Time (default: header.stamp; e.g. '
                             'transforms[0].header.stamp for tf2_msgs/TFMessage)')
    parser.add_argument('--rule', choices=RULES,
                        help='deadline miss rule (default: response when the stamp starts '
                             'the cycle, else interval)')
    parser.add_argument('--kind', choices=KINDS,
                        help="'timer' (a periodic producer: misses, skipped periods) or "
                             "'event' (no period: rate, max gap and age only; default: timer)")
    parser.add_argument('--clock', choices=CLOCKS,
                        help=f'clock of the producing timer (default: {clock_default})')
    parser.add_argument('--timeout-s', metavar='S', type=positive_s,
                        help='a topic silent this long (wall s) is an error (default: '
                             'max(10 T, 1 s))')


@dataclass(frozen=True)
class TopicFlags:
    """The per-topic flags given on a command line; None for each one not given."""

    period_ms: float | None = None
    rate_hz: float | None = None
    deadline_ms: float | None = None
    jitter_ms: float | None = None
    stamp: str | None = None
    stamp_field: str | None = None
    rule: str | None = None
    kind: str | None = None
    clock: str | None = None
    timeout_s: float | None = None

    def given(self) -> list[str]:
        """Return the flags given, as typed on the command line (``--period-ms``)."""
        return ['--' + dest.replace('_', '-') for dest in FLAG_DESTS
                if getattr(self, dest) is not None]

    @property
    def period_ns(self) -> int | None:
        """The period from ``--period-ms`` or ``--rate-hz``, in integer ns."""
        if self.period_ms is not None:
            return duration_ns('--period-ms', self.period_ms, NS_PER_MS)
        if self.rate_hz is not None:
            return round(NS_PER_S / self.rate_hz)
        return None

    def ns(self, dest: str) -> int | None:
        """Return a duration flag (``deadline_ms``, ``jitter_ms``, ``timeout_s``) in ns."""
        value = getattr(self, dest)
        if value is None:
            return None
        unit = NS_PER_S if dest.endswith('_s') else NS_PER_MS
        return duration_ns(dest, value, unit, zero_ok=dest == 'jitter_ms')

    def parameters(self) -> dict[str, Any]:
        """Return the per-topic parameter values (field -> value) these flags stand for.

        A period and a rate exclude each other, so giving one sets the other to 0 (unset):
        a rate on the command line must win over a period in the params file, not clash with
        it. A jitter given in ms also zeroes the percentage, so ``--jitter-ms 0`` means no
        tolerance rather than "use the 5 % default".
        """
        values: dict[str, Any] = {}
        if self.period_ms is not None:
            values.update(period_ms=float(self.period_ms), rate_hz=0.0)
        if self.rate_hz is not None:
            values.update(rate_hz=float(self.rate_hz), period_ms=0.0)
        if self.deadline_ms is not None:
            values['deadline_ms'] = float(self.deadline_ms)
        if self.jitter_ms is not None:
            values.update(jitter_tolerance_ms=float(self.jitter_ms),
                          jitter_tolerance_percent=0.0)
        for field in ('stamp', 'stamp_field', 'rule', 'kind', 'clock'):
            if getattr(self, field) is not None:
                values[field] = getattr(self, field)
        if self.timeout_s is not None:
            values['timeout_s'] = float(self.timeout_s)
        return values


def topic_flags(args: argparse.Namespace) -> TopicFlags:
    """Collect the per-topic flags from parsed arguments."""
    return TopicFlags(**{dest: getattr(args, dest, None) for dest in FLAG_DESTS})


def topic_id(topic: str, taken: set[str]) -> str:
    """Make a configuration identifier for a topic name (``/demo/cmd`` -> ``demo_cmd``).

    Identifiers hold letters, digits and underscores and start with a letter (the parameter
    names ``topic.<id>.*`` need that); ``taken`` makes them unique and gets the new one.
    """
    base = re.sub(r'[^A-Za-z0-9_]+', '_', topic).strip('_') or 'topic'
    if not base[0].isalpha():
        base = f't_{base}'
    name, i = base, 2
    while name in taken:
        name, i = f'{base}_{i}', i + 1
    taken.add(name)
    return name
