"""The simulators' pacing and RTF bookkeeping, on synthetic times (tools/pacing.py)."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

from ros2_deadline_monitor.analysis.rtf import RtfAnalyzer
from ros2_deadline_monitor.tools.pacing import (
    Pacer,
    rtf_between,
    RtfMeter,
    RtfSince,
    sleep_until,
)

MS = 1_000_000
S = 1_000_000_000


def test_pacer_spaces_steps_by_step_over_rtf():
    pacer = Pacer(step_wall_ns=2 * MS, start_ns=5 * S)
    assert [pacer.due_ns(k) for k in range(4)] == [5 * S + k * 2 * MS for k in range(4)]


def test_pacer_reanchors_when_over_a_step_late_and_never_bursts():
    pacer = Pacer(step_wall_ns=1 * MS, start_ns=0)
    pacer.publishing(3, 3 * MS + 900_000)  # late, but by less than a step: schedule kept
    assert pacer.reanchors == 0
    assert pacer.due_ns(4) == 4 * MS
    late = 5 * MS + 40 * MS  # step 5 goes out 40 ms late
    pacer.publishing(5, late)
    assert pacer.reanchors == 1
    # The following steps are one step apart from the late one: no burst to catch up.
    assert [pacer.due_ns(k) - late for k in (6, 7)] == [1 * MS, 2 * MS]


def test_pacer_catches_up_within_max_lag():
    pacer = Pacer(step_wall_ns=1 * MS, start_ns=0, max_lag_ns=50 * MS)
    pacer.publishing(5, 45 * MS)
    assert pacer.reanchors == 0
    assert pacer.due_ns(6) == 6 * MS


def test_rtf_meter_on_a_steady_stream():
    meter = RtfMeter()
    for k in range(2001):  # 1 ms of sim per 2 ms of wall: RTF 0.5
        meter.add(7 * S + 3 * MS + 2 * k * MS, S + k * MS)
        if k % 700 == 0:
            meter.fold()  # folding in pieces gives the same answer as folding once
    meter.fold()
    assert meter.rtf == pytest.approx(0.5)
    assert meter.bin_min == pytest.approx(0.5)
    assert meter.bin_max == pytest.approx(0.5)
    assert meter.max_gap_ns == 2 * MS


def test_rtf_meter_folded_in_pieces_equals_one_core_report():
    rng = np.random.default_rng(7)
    wall = np.cumsum(rng.integers(200_000, 3 * MS, 3000)) + 123_456_789
    wall[1500] += 300 * MS  # a stall
    wall[1501:] += 300 * MS
    sim = S + np.arange(3000, dtype=np.int64) * MS
    meter = RtfMeter()
    core = RtfAnalyzer(bin_ns=100 * MS)
    for i, (w, s) in enumerate(zip(wall.tolist(), sim.tolist(), strict=True)):
        meter.add(w, s)
        core.record(w, s)
        if i % 500 == 499:
            meter.fold()
    meter.fold()
    report = core.report(int(wall[-1]))
    assert meter.bin_min == pytest.approx(report.rtf_bin_min)
    assert meter.bin_max == pytest.approx(report.rtf_bin_max)
    assert meter.bin_min_at_ns == report.rtf_bin_min_at_ns
    assert meter.rtf == pytest.approx(report.rtf_total)
    assert meter.max_gap_ns == report.max_wall_gap_ns


def test_sleep_until_returns_at_or_after_the_due_time():
    for ahead_ns in (0, 2 * MS, 80 * MS):  # past, spun and slept, slept on the event
        due = time.monotonic_ns() + ahead_ns
        assert sleep_until(due, 1 * MS, threading.Event())
        assert time.monotonic_ns() >= due


def test_sleep_until_ends_early_when_asked_to_stop():
    stop = threading.Event()
    stop.set()
    due = time.monotonic_ns() + 3600 * S
    assert not sleep_until(due, 1 * MS, stop)
    assert time.monotonic_ns() < due


def test_rtf_between_two_points_and_unknown_without_them():
    assert rtf_between((1 * S, 0), (3 * S, 1 * S)) == pytest.approx(0.5)
    assert math.isnan(rtf_between(None, (3 * S, 1 * S)))
    assert math.isnan(rtf_between((3 * S, 0), (3 * S, 1 * S)))  # no wall time between


def test_rtf_since_measures_from_the_previous_report():
    since = RtfSince()
    assert since.take(None, None) is None
    assert since.take((0, 0), (2 * S, 2 * S)) == (pytest.approx(1.0), pytest.approx(2.0))
    assert since.take((0, 0), (2 * S, 2 * S)) is None  # nothing new since
    assert since.take((0, 0), (3 * S, 2 * S + S // 2)) == (pytest.approx(0.5),
                                                           pytest.approx(1.0))
