from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np

from ros2_deadline_monitor.analysis.grid import GridState, replay

MS = 1_000_000


def test_late_callback_skips_the_period_it_overran():
    # 0: on time, 10: runs 22 ms late start at 22 -> slot 20 passed -> next slot 30.
    starts = np.array([0, 22 * MS, 30 * MS, 40 * MS], np.int64)
    slots, skipped = replay(starts, 10 * MS, GridState())
    assert slots.tolist() == [0, 10 * MS, 30 * MS, 40 * MS]
    assert skipped.tolist() == [0, 1, 0, 0]


def test_replay_continues_across_batches():
    starts = np.arange(0, 100 * MS, 10 * MS, dtype=np.int64) + 3
    state = GridState()
    whole = replay(starts, 10 * MS, GridState())
    first = replay(starts[:4], 10 * MS, state)
    second = replay(starts[4:], 10 * MS, state)
    assert np.concatenate([first[0], second[0]]).tolist() == whole[0].tolist()


def test_start_before_the_grid_moves_the_grid_back():
    # First observed cycle was 4 ms late; the phase shows itself on the next one.
    starts = np.array([4 * MS, 10 * MS, 20 * MS, 42 * MS, 50 * MS], np.int64)
    slots, skipped = replay(starts, 10 * MS, GridState())
    assert slots.tolist() == [4 * MS, 10 * MS, 20 * MS, 30 * MS, 50 * MS]
    assert (starts - slots).tolist() == [0, 0, 0, 12 * MS, 0]
    assert skipped.tolist() == [0, 0, 0, 1, 0]


def test_producer_restart_reanchors():
    starts = np.array([100 * MS, 110 * MS, 50 * MS, 60 * MS], np.int64)
    slots, skipped = replay(starts, 10 * MS, GridState())
    assert slots.tolist() == [100 * MS, 110 * MS, 50 * MS, 60 * MS]
    assert skipped.sum() == 0


def _timer_starts(period: int, runs: list[tuple[int, int]]) -> list[int]:
    """Return the callback starts of a timer that never fires early.

    Each ``(run_ns, delay_ns)`` is a callback that runs ``run_ns`` after the executor delayed
    it ``delay_ns`` past the later of its slot and the previous callback's end; a slot the
    callback overran is skipped, as a real single-threaded executor would.
    """
    starts = []
    expected = now = 1_700_000_000_000_000_000
    for run_ns, delay_ns in runs:
        start = max(now, expected) + delay_ns
        starts.append(start)
        nxt = expected + period
        if nxt <= start:
            nxt += (1 + (start - nxt) // period) * period
        expected = nxt
        now = start + run_ns
    return starts


@settings(max_examples=300, deadline=None)
@given(period=st.integers(1, 50 * MS),
       runs=st.lists(st.tuples(st.integers(0, 200 * MS), st.integers(0, 30 * MS)),
                     min_size=1, max_size=200))
def test_cycles_plus_skipped_equal_grid_slots(period, runs):
    """Cycles run + skipped periods = slots from the first cycle's slot to the last one's.

    Starts come from a timer that never fires early: each callback runs for some time and may
    be delayed further by the executor, as a real single-threaded executor would.
    """
    # The first cycle fires on its slot: the phase is known.
    starts = _timer_starts(period, [(runs[0][0], 0), *runs[1:]])
    slots, skipped = replay(np.array(starts, np.int64), period, GridState())
    assert ((slots - slots[0]) % period == 0).all()
    assert (slots <= np.array(starts)).all()
    assert len(starts) + int(skipped[:-1].sum()) == (slots[-1] - slots[0]) // period + 1


@settings(max_examples=300, deadline=None)
@given(period=st.integers(1, 50 * MS), first_delay=st.integers(0, 50 * MS),
       runs=st.lists(st.tuples(st.integers(0, 200 * MS), st.integers(0, 30 * MS)),
                     min_size=1, max_size=200))
def test_late_first_cycle_never_yields_negative_lateness(period, first_delay, runs):
    starts = _timer_starts(period, [(runs[0][0], first_delay), *runs[1:]])
    slots, _ = replay(np.array(starts, np.int64), period, GridState())
    assert (slots <= np.array(starts)).all()


def test_no_drift_over_24_hours_at_1_khz():
    """Integer arithmetic keeps every slot exact across a day of 1 kHz slots."""
    period = MS
    slots_per_day = 24 * 3600 * 1000
    rng = np.random.default_rng(1)
    index = np.unique(np.concatenate(
        [[0, slots_per_day - 1], rng.choice(slots_per_day, 200_000, replace=False)]))
    t0 = 1_700_000_000_000_000_000
    lateness = rng.integers(0, period // 2, len(index))
    lateness[0] = 0
    starts = t0 + index * period + lateness
    slots, skipped = replay(starts, period, GridState())
    # A callback that runs after a long gap is the late callback of the slot after the last
    # one that ran; the periods in between are skipped when it starts.
    assert slots[0] == t0
    assert (slots[1:] == t0 + (index[:-1] + 1) * period).all()
    assert len(index) + int(skipped.sum()) == slots_per_day


def test_lost_cycles_take_their_slots_and_are_not_skipped():
    # Cycles at 20, 30, 40 were lost (a gap of 3 in the sequence numbers): the producer ran
    # them, so the span 10 -> 50 holds 4 slots, 3 lost cycles and the one seen at 50.
    starts = np.array([0, 10 * MS, 50 * MS + 2 * MS, 60 * MS], np.int64)
    lost = np.array([0, 0, 3, 0], np.int64)
    slots, skipped = replay(starts, 10 * MS, GridState(), lost)
    assert slots.tolist() == [0, 10 * MS, 50 * MS, 60 * MS]
    assert skipped.tolist() == [0, 0, 0, 0]


def test_slots_left_over_after_the_lost_cycles_are_skipped():
    # 2 lost between 10 and 52: slots 20, 30, 40 and 50 for 3 cycles -> one skipped period.
    starts = np.array([0, 10 * MS, 52 * MS, 60 * MS], np.int64)
    slots, skipped = replay(starts, 10 * MS, GridState(), np.array([0, 0, 2, 0], np.int64))
    assert slots.tolist() == [0, 10 * MS, 50 * MS, 60 * MS]
    assert skipped.tolist() == [0, 0, 1, 0]
    # Without the loss known, the same starts read as 3 skipped periods.
    assert replay(starts, 10 * MS, GridState())[1].sum() == 3


def test_more_lost_cycles_than_slots_move_the_grid_onto_the_start():
    # 5 lost in a span with room for 3: the phase is earlier than the grid, never a skip.
    starts = np.array([0, 10 * MS, 50 * MS, 60 * MS], np.int64)
    slots, skipped = replay(starts, 10 * MS, GridState(), np.array([0, 0, 5, 0], np.int64))
    assert slots.tolist() == [0, 10 * MS, 50 * MS, 60 * MS]
    assert skipped.sum() == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=2, max_size=60))
def test_slots_spanned_equal_cycles_seen_lost_and_skipped(runs):
    # A producer on a 10 ms grid that skips some periods and loses some cycles in transit.
    period = 10 * MS
    slot, starts, lost, unseen = 0, [], [], 0
    for skip, delivered in runs:
        if delivered or not starts:
            starts.append(slot + 1)
            lost.append(unseen)
            unseen = 0
        else:
            unseen += 1
        slot += period * (1 + skip)
    starts_ns = np.array(starts, np.int64)
    state = GridState()
    slots, skipped = replay(starts_ns, period, state, np.array(lost, np.int64))
    # Slots from the first to the one expected next (the periods passed when the last
    # cycle started are skipped ones too).
    spanned = (state.expected_ns - slots[0]) // period
    assert spanned == len(starts) + sum(lost) + skipped.sum()
    last = max([0] + [i for i, (_, delivered) in enumerate(runs) if delivered])
    assert skipped.sum() == sum(skip for skip, _ in runs[:last])


def test_a_lost_cycle_that_showed_an_earlier_phase_costs_one_skipped_period_at_most():
    # Slots every 10 ms from 0. The first cycle started 0.3 ms late, the lost one on time (it
    # would have moved the grid 0.3 ms back); the next after it, 0.1 ms late after a skipped
    # slot, reads as 9.8 ms late for the slot before: the skip is not seen.
    period = 10 * MS
    every = np.array([300_000, 10 * MS, 30 * MS + 100_000], np.int64)
    assert replay(every, period, GridState())[1].sum() == 1
    seen = every[[0, 2]]
    assert replay(seen, period, GridState(), np.array([0, 1], np.int64))[1].sum() == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3 * MS), st.integers(0, 2), st.booleans()),
                min_size=2, max_size=80))
def test_loss_reads_at_most_one_skipped_period_fewer_per_gap_never_more(runs):
    # A timer's cycles start late by any latency under 3 ms and skip some periods; some are
    # lost. Against the replay of every start, the replay of the seen ones with the losses
    # known counts no more skipped periods and at most one fewer per gap.
    period = 10 * MS
    slot, starts = 0, []
    for latency, skip, _ in runs:
        starts.append(slot + latency)
        slot += period * (1 + skip)
    every = np.array(starts, np.int64)
    truth = int(replay(every, period, GridState())[1].sum())
    seen = [0] + [i for i, (_, _, delivered) in enumerate(runs) if delivered and i > 0]
    if seen[-1] != len(runs) - 1:
        seen.append(len(runs) - 1)
    lost = np.diff(np.array([-1] + seen)) - 1
    counted = int(replay(every[seen], period, GridState(), lost)[1].sum())
    gaps = int((lost > 0).sum())
    assert truth - gaps <= counted <= truth
