"""Figures as text, the same way in every output (diagnostics, summary, tables, HTML, tools).

A figure with nothing to measure (None or NaN) reads ``missing``: 'n/a' by default, '-' in the
tables. Integers stay integers; floats get a fixed number of decimals so columns line up.
"""

from __future__ import annotations

import math
from numbers import Integral

from ros2_deadline_monitor.analysis.units import to_ms, to_s

__all__ = ['NOT_AVAILABLE', 'flag', 'is_missing', 'ms', 'number', 'seconds', 'short_seconds',
           'since_s']

NOT_AVAILABLE = 'n/a'


def is_missing(value: object) -> bool:
    """Tell whether ``value`` stands for "nothing measured" (None or NaN)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value: float | int | None, digits: int = 3, missing: str = NOT_AVAILABLE,
           grouping: bool = False) -> str:
    """Format a figure: ints as they are, floats with ``digits`` decimals."""
    if is_missing(value):
        return missing
    comma = ',' if grouping else ''
    if isinstance(value, Integral) and not isinstance(value, bool):
        return f'{value:{comma}d}'
    return f'{value:{comma}.{digits}f}'


def ms(ns: float | int | None, digits: int = 3, missing: str = NOT_AVAILABLE,
       grouping: bool = False) -> str:
    """Format a duration in ns as milliseconds."""
    return number(to_ms(ns), digits, missing, grouping)


def seconds(ns: float | int | None, digits: int = 3, missing: str = NOT_AVAILABLE) -> str:
    """Format a duration in ns as seconds."""
    return number(to_s(ns), digits, missing)


def since_s(at_ns: float | int | None, start_ns: int, digits: int = 2,
            missing: str = NOT_AVAILABLE) -> str:
    """Format a point in time as seconds since ``start_ns`` (same clock), e.g. '+1.25 s'."""
    if is_missing(at_ns):
        return missing
    return f'+{to_s(at_ns - start_ns):.{digits}f} s'


def short_seconds(ns: float | int) -> str:
    """Seconds with three significant digits and no exponent, for messages: '1.01', '250'.

    A timeout stretched by the RTF (1.0055 s) reads '1.01', a whole one '1'.
    """
    value = ns / 1e9
    if value == 0 or not math.isfinite(value):
        return f'{value:g}'
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    text = f'{value:.{decimals}f}'
    return text.rstrip('0').rstrip('.') if '.' in text else text


def flag(value: bool) -> str:
    """Format a boolean as ROS users read it in diagnostics ('true'/'false')."""
    return 'true' if value else 'false'
