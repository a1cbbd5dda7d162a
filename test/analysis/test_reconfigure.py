"""Reconfiguring a sim-time topic keeps the figures of the cycles already received (issue 11).

Hand-built integer-ns events: /clock every 2 ms of wall for 1 ms of sim (RTF 0.5), a 100 Hz
timer on sim time with a 22 ms (sim) stall in every 50th cycle, stamps = cycle starts, each
message leaving at its cycle's end. Settings that cannot change a count (J under the
response rule, the timeout, the window) are changed while events wait to be processed; the
totals must equal those of the same stream without changes.
"""

from __future__ import annotations

from dataclasses import replace

from ros2_deadline_monitor.analysis.config import AnalysisConfig, NS_PER_S, TopicConfig
from ros2_deadline_monitor.analysis.cycles import count_cycles
from ros2_deadline_monitor.analysis.session import Session

MS = 1_000_000
US = 1_000
PERIOD = 10 * MS
WALL0 = 1_700_000_000_000_000_000
SIM0 = 1 * NS_PER_S
RTF_STEP_WALL = 2 * MS
"""Wall time per 1 ms /clock step: RTF 0.5."""
STALL_SIM = 22 * MS
EXEC_SIM = 50 * US
CONFIG = TopicConfig(name='ctrl', topic='/ctrl', period_ns=PERIOD, stamp='start', clock='sim')


def wall_of(sim: int) -> int:
    """Wall time at which /clock carried ``sim`` (exact multiples of 1 ms)."""
    return WALL0 + (sim - SIM0) * (RTF_STEP_WALL // MS)


def stream(cycles: int = 350):
    """Return (starts, ends_sim, arrivals_wall) of the stalling sim-time timer."""
    starts, ends, arrivals = [], [], []
    expected = SIM0 + 100 * MS
    free = 0
    for i in range(cycles):
        start = max(expected, free)
        run = STALL_SIM if (i + 1) % 50 == 25 else EXEC_SIM
        nxt = expected + PERIOD
        if nxt <= start:
            nxt += (1 + (start - nxt) // PERIOD) * PERIOD
        expected = nxt
        # The start lands on a /clock step; the message leaves on the step at its end.
        end = -(-(start + run) // MS) * MS
        starts.append(start)
        ends.append(end)
        arrivals.append(wall_of(end) + 30 * US)
        free = end
    return starts, ends, arrivals


def run(changes: dict[int, dict]) -> tuple[int, int, int]:
    """Feed the stream, applying ``changes[i]`` (TopicConfig fields) before event ``i``."""
    starts, ends, arrivals = stream()
    analysis = AnalysisConfig()
    session = Session(analysis, use_sim_time=True, start_wall_ns=wall_of(SIM0))
    sim = SIM0
    while sim <= ends[-1] + 10 * MS:
        session.clock_sample(wall_of(sim), sim)
        sim += MS
    config = CONFIG
    session.configure({'ctrl': config})
    for i, (start, arrival) in enumerate(zip(starts, arrivals, strict=True)):
        if i in changes:
            change = dict(changes[i])
            window = change.pop('window_ns', None)
            if window is not None:
                analysis = replace(analysis, window_ns=window)
            config = config.with_changes(**change)
            session.configure({'ctrl': config}, analysis=analysis)
        session.message('ctrl', arrival, start, i + 1, 64)
    report = session.snapshot(arrivals[-1] + MS, final=True).topics[0].report
    return report.messages_total, report.deadline_misses_total, report.skipped_periods_total


def test_changes_that_cannot_change_a_count_keep_the_totals():
    starts, ends, _ = stream()
    truth = count_cycles(starts, ends, PERIOD, PERIOD)
    assert (truth.misses, truth.skipped) == (14, 7)
    assert run({}) == (350, 14, 7)
    # Each change comes a few cycles after a stall, while its events wait in the analyzer.
    changes = {
        30: {'jitter_tolerance_ns': 2 * MS},
        80: {'timeout_ns': 30 * NS_PER_S},
        130: {'window_ns': 5 * NS_PER_S},
        180: {'jitter_fraction': 0.1, 'timeout_ns': 40 * NS_PER_S},
    }
    assert run(changes) == (350, truth.misses, truth.skipped)
