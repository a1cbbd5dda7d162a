"""Synthetic cycle streams that follow rcl's timer rule exactly."""

from collections.abc import Callable

import numpy as np
import pytest

MS = 1_000_000


def rcl_timer_cycles(period_ns: int = 10 * MS, duration_ns: int = 5_000 * MS,
                     stall_ns: int = 22 * MS, stall_every: int = 50, exec_ns: int = 100_000,
                     t0_ns: int = 1_700_000_000_000_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Return (starts, ends) of a single-threaded timer whose every Nth callback stalls.

    A callback starts at max(now, scheduled slot) and the next slot follows rcl: one period
    after the previous slot, jumping over slots that have already passed.
    """
    starts, ends = [], []
    expected = now = t0_ns
    i = 0
    while now < t0_ns + duration_ns:
        start = max(now, expected)
        i += 1
        run = stall_ns if stall_every and i % stall_every == stall_every // 2 else exec_ns
        starts.append(start)
        ends.append(start + run)
        nxt = expected + period_ns
        if nxt <= start:
            nxt += (1 + (start - nxt) // period_ns) * period_ns
        expected = nxt
        now = start + run
    return np.array(starts, np.int64), np.array(ends, np.int64)


@pytest.fixture
def timer_cycles() -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    return rcl_timer_cycles
