"""Figures as text, the same way in every output (diagnostics, summary, tables, HTML, tools).

``figure_text`` writes a figure of the table (``analysis/figures.py``) as a status carries it,
``cell`` as a table's column shows it: 'n/a' where the figure does not apply (the one rule,
``figures.applies``), '-' in a column or 'unknown (why)' in a status while it is unknown.
Integers stay integers; floats get a fixed number of decimals so columns line up.
"""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any

from ros2_deadline_monitor.analysis.figures import applies, Figure
from ros2_deadline_monitor.analysis.snapshot import Snapshot
from ros2_deadline_monitor.analysis.units import to_ms, to_s

__all__ = ['NOT_AVAILABLE', 'UNKNOWN', 'cell', 'figure_text', 'flag', 'is_missing', 'ms',
           'number', 'seconds', 'since_s']

NOT_AVAILABLE = 'n/a'
"""What a figure reads where it does not apply (``figures.applies``), or in a status."""
UNKNOWN = '-'
"""What a figure reads in a table's column while it is unknown."""


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


def flag(value: bool) -> str:
    """Format a boolean as ROS users read it in diagnostics ('true'/'false')."""
    return 'true' if value else 'false'


def figure_text(figure: Figure, snapshot: Snapshot, part: Any) -> str | None:
    """Return a figure's value as a status shows it, or None when it is left out.

    With nothing to measure, a figure ``always`` shown reads 'n/a' where it does not apply
    (``figures.applies``) or has no reason, else 'unknown (why)'; any other is left out.
    """
    value = figure.get(snapshot, part)
    kind = type(value)  # plain floats and ints first: a thousand statuses a report
    if kind is float and value == value:
        return f'{value:.{figure.digits}f}'
    if kind is int:
        return f'{value:d}'
    if is_missing(value):
        if not figure.always:
            return None
        if figure.why is None or not applies(figure, part):
            return NOT_AVAILABLE
        return f'unknown ({figure.unknown(snapshot, part)})'
    if isinstance(value, bool):
        return flag(value)
    if isinstance(value, str):
        return value
    return number(value, figure.digits)


def cell(figure: Figure, snapshot: Snapshot, part: Any) -> str:
    """Return a figure as every table's column shows it.

    'n/a' where it does not apply (an event topic's misses), ``UNKNOWN`` while it is unknown
    (never a good-looking 0), counts with their thousands grouped, other numbers with the
    column's decimals (``Figure.digits_in_column``), words as they are.
    """
    value = figure.get(snapshot, part)
    if is_missing(value):
        return UNKNOWN if applies(figure, part) else NOT_AVAILABLE
    if isinstance(value, bool):
        return flag(value)
    if isinstance(value, str):
        return value
    return number(value, figure.digits_in_column, grouping=isinstance(value, Integral))
