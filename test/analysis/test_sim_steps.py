"""Under sim time a cycle's execution inside one /clock step still counts (issue 11, item 3).

The reference measurement's rule: response = start delay on the timer clock (the stamp minus
the scheduled slot) + execution time. Under sim time the stamp sits on the /clock step grid,
and the end (an arrival on the wall clock) lies between two /clock samples. Mapping the end
to the last sample before it loses the execution inside the step: a cycle that starts exactly
one period late (the stall before it lasted exactly two periods of sim time) and runs 20 µs
has a response of 10.02 ms by the rule, a miss at D = 10 ms, but reads 10.000 ms.

The events here are built by hand in integer ns: /clock every 1 ms of wall and sim (RTF 1.0),
a 100 Hz timer on sim time following rcl's rule, a 20 ms stall in every 50th cycle.
"""

from __future__ import annotations

import numpy as np

from ros2_deadline_monitor.analysis.config import TopicConfig
from ros2_deadline_monitor.analysis.cycles import count_cycles, CycleAnalyzer
from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer

MS = 1_000_000
US = 1_000
PERIOD = 10 * MS
STEP = MS
WALL0 = 1_700_000_000_000_000_000
"""System clock ns of sim time 0 (sim = wall - WALL0 at RTF 1.0)."""
SIM0 = 5_000 * MS
"""Sim time of the first cycle."""
WAKE = 50 * US
"""Wall time from a /clock step to the timer callback it makes ready."""
EXEC = 20 * US
STALL = 20 * MS
STALLS = 12


def sim_timer_cycles(stalls: int = STALLS, stall_every: int = 50):
    """Return (start_timer, end_wall, run) of a 100 Hz sim-time timer, in int ns.

    The clock advances 1 ms per 1 ms of wall time. A callback starts at the wall time its slot's
    /clock step arrived (plus ``WAKE``) or when the previous callback ended, whichever is later;
    its start on the timer clock is the last /clock step then (the floor to 1 ms). Cycle ``i``
    (from 0) stalls for exactly two periods when ``(i + 1) % stall_every == stall_every // 2``,
    so the next one starts exactly on the step one period after its slot.
    """
    starts, ends, runs = [], [], []
    expected = SIM0
    free = 0
    i = 0
    while i < stalls * stall_every:
        start_wall = max(WALL0 + expected + WAKE, free)
        start_timer = (start_wall - WALL0) // STEP * STEP
        run = STALL if (i + 1) % stall_every == stall_every // 2 else EXEC
        nxt = expected + PERIOD
        if nxt <= start_timer:
            nxt += (1 + (start_timer - nxt) // PERIOD) * PERIOD
        starts.append(start_timer)
        ends.append(start_wall + run)
        runs.append(run)
        expected = nxt
        free = start_wall + run
        i += 1
    return np.array(starts, np.int64), np.array(ends, np.int64), np.array(runs, np.int64)


def clock_samples(until_wall: int) -> RtfAnalyzer:
    """Return an RtfAnalyzer holding /clock every 1 ms from sim 1 s up to ``until_wall``."""
    clock = RtfAnalyzer()
    sim = SIM0 - 1_000 * MS
    while WALL0 + sim <= until_wall:
        clock.record(WALL0 + sim, sim)
        sim += STEP
    return clock


def test_the_built_sequence_is_the_tie_case():
    starts, ends, runs = sim_timer_cycles()
    after_stall = np.flatnonzero(runs == STALL) + 1
    # The cycle after each stall starts exactly one period late, on a /clock step.
    slots = starts[after_stall - 1] + PERIOD
    assert (starts[after_stall] - slots == PERIOD).all()
    assert (starts % STEP == 0).all()
    truth = count_cycles(starts, starts + runs, PERIOD, PERIOD)
    assert (truth.misses, truth.skipped) == (2 * STALLS, STALLS)
    # Mapping the end to the last /clock step before it loses the 20 µs: half the misses.
    floor = count_cycles(starts, (ends - WALL0) // STEP * STEP, PERIOD, PERIOD)
    assert (floor.misses, floor.skipped) == (STALLS, STALLS)


def test_execution_inside_a_clock_step_is_kept_in_the_response():
    starts, ends, runs = sim_timer_cycles()
    truth = count_cycles(starts, starts + runs, PERIOD, PERIOD)
    clock = clock_samples(int(ends[-1]) + 20 * MS)
    analyzer = CycleAnalyzer(TopicConfig(name='ctrl', topic='/ctrl', period_ns=PERIOD,
                                         stamp='start', clock='sim'))
    for seq, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True), 1):
        analyzer.record(end, start, seq, 64)
    analyzer.process(clock)
    report = analyzer.report(int(ends[-1]) + 10 * MS)
    assert report.rule == 'response' and report.timer_clock == 'sim'
    assert report.messages_total == len(starts)
    assert report.skipped_periods_total == truth.skipped == STALLS
    assert report.deadline_misses_total == truth.misses == 2 * STALLS
    # The longest response is a stall: 20 ms and its execution inside the step, never a
    # figure past the next /clock sample.
    assert 20 * MS < report.response_max_ns < 21 * MS
