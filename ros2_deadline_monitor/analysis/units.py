"""Nanoseconds to the units people read, in one place.

Inside, every time is an ``int`` (or float statistic) of nanoseconds; only the edges convert
(STYLE §2). ``None`` (unknown point in time) becomes NaN, so a converted figure is always a
float a message field or a plot can take.
"""

from __future__ import annotations

import math

__all__ = ['NS_PER_MS', 'NS_PER_S', 'NS_PER_US', 'short_seconds', 'to_ms', 'to_s']

NS_PER_US = 1_000
NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000


def to_ms(ns: float | int | None) -> float:
    """Return ``ns`` in milliseconds; None (nothing measured) becomes NaN."""
    return math.nan if ns is None else ns / NS_PER_MS


def to_s(ns: float | int | None) -> float:
    """Return ``ns`` in seconds; None (nothing measured) becomes NaN."""
    return math.nan if ns is None else ns / NS_PER_S


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
