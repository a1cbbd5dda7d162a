"""A one-line progress bar on stderr for long bags, without extra dependencies."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ['ProgressBar']


class ProgressBar:
    """Redraws ``label  42% |#####     | 420,000/1,000,000 msgs  150k msg/s  ETA 4 s``.

    Redraws at most every ``min_interval_s``; ``close()`` ends the line. A disabled bar
    does nothing, so callers need no conditionals.
    """

    def __init__(self, total: int, *, enabled: bool, stream: TextIO | None = None,
                 label: str = 'analyze', width: int = 30, min_interval_s: float = 0.2) -> None:
        """Track ``total`` messages; draw on ``stream`` (stderr) only when ``enabled``."""
        self.total = max(total, 0)
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.label = label
        self.width = width
        self.min_interval_s = min_interval_s
        self._start = time.monotonic()
        self._last_draw = float('-inf')
        self._drawn = False

    def __call__(self, done: int) -> None:
        """Report ``done`` messages processed so far."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last_draw < self.min_interval_s and done < self.total:
            return
        self._last_draw = now
        self.stream.write('\r' + self.line(done, now - self._start))
        self.stream.flush()
        self._drawn = True

    def line(self, done: int, elapsed_s: float) -> str:
        """Return the bar for ``done`` messages after ``elapsed_s`` seconds."""
        fraction = min(done / self.total, 1.0) if self.total else 1.0
        filled = round(fraction * self.width)
        bar = '#' * filled + ' ' * (self.width - filled)
        rate = done / elapsed_s if elapsed_s > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 and done < self.total else 0.0
        return (f'{self.label} {fraction:4.0%} |{bar}| {done:,}/{self.total:,} msgs '
                f'{rate / 1e3:6.0f}k msg/s  ETA {eta:4.0f} s')

    def close(self) -> None:
        """End the bar's line so later output starts on a fresh one."""
        if self.enabled and self._drawn:
            self.stream.write('\n')
            self.stream.flush()
            self._drawn = False
