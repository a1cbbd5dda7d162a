import numpy as np
import pytest

from ros2_deadline_monitor.analysis.ring import (
    ColumnRing,
    EventBuffer,
    HeldBatches,
    INITIAL_ROWS,
    NO_VALUE,
)


def test_column_ring_keeps_the_latest_rows_in_order():
    ring = ColumnRing(5, ('a', 'b'))
    ring.extend(a=np.arange(3), b=-np.arange(3))
    ring.extend(a=np.arange(3, 9), b=-np.arange(3, 9))
    rows = ring.rows()
    assert len(ring) == 5
    assert rows['a'].tolist() == [4, 5, 6, 7, 8]
    assert rows['b'].tolist() == [-4, -5, -6, -7, -8]
    ring.extend(a=np.arange(9, 20), b=np.arange(9, 20))
    assert ring.rows()['a'].tolist() == [15, 16, 17, 18, 19]
    ring.clear()
    assert len(ring) == 0


def test_event_buffer_reports_full_and_drains():
    buf = EventBuffer(3)
    assert not buf.append(1, 2, 3, 4)
    assert not buf.append(5, 6, 7, 8)
    assert buf.append(9, 10, 11, 12)
    arrival, stamp, seq, size = buf.drain()
    assert arrival.tolist() == [1, 5, 9] and size.tolist() == [4, 8, 12]
    assert buf.count == 0


def test_event_buffer_extend_is_append_in_order() -> None:
    one, many = EventBuffer(8), EventBuffer(8)
    for k in range(5):
        one.append(10 + k, 20 + k, NO_VALUE, 30 + k)
    many.append(10, 20, NO_VALUE, 30)
    assert many.room == 6
    many.extend(np.arange(11, 15), np.arange(21, 25), NO_VALUE, np.arange(31, 35))
    assert [c.tolist() for c in many.drain()] == [c.tolist() for c in one.drain()]
    with pytest.raises(ValueError, match='fill'):
        many.extend(np.arange(8), np.arange(8), NO_VALUE, np.arange(8))


def test_buffers_start_small_and_grow_to_their_capacity() -> None:
    buf = EventBuffer(1 << 16)
    assert buf.allocated == INITIAL_ROWS
    for k in range(1000):
        assert not buf.append(k, -k, k + 1, 7)
    assert 1000 <= buf.allocated < 1 << 16
    arrival, stamp, seq, size = buf.drain()
    assert arrival.tolist() == list(range(1000)) and seq[-1] == 1000
    ring = ColumnRing(10_000, ('a',))
    ring.extend(a=np.arange(3))
    assert ring._allocated == INITIAL_ROWS


def test_a_growing_ring_holds_what_a_full_size_one_holds() -> None:
    rng = np.random.default_rng(7)
    ring, reference = ColumnRing(300, ('a', 'b')), []
    value = 0
    for _ in range(200):
        n = int(rng.integers(0, 40)) if rng.random() > 0.02 else 700
        values = np.arange(value, value + n)
        value += n
        ring.extend(a=values, b=2 * values)
        reference = (reference + values.tolist())[-300:]
        rows = ring.rows()
        assert rows['a'].tolist() == reference
        assert rows['b'].tolist() == [2 * v for v in reference]
        if rng.random() < 0.2:  # forget what is older than a random point, as a window does
            before = value - int(rng.integers(0, 120))
            kept = [v for v in reference if v >= before]
            assert ring.drop_before('a', before) == len(reference) - len(kept)
            reference = kept
            assert ring.rows()['b'].tolist() == [2 * v for v in reference]
        if rng.random() < 0.05:
            ring.clear()
            reference = []


def test_put_back_goes_first_while_the_buffer_grows() -> None:
    buf = EventBuffer(1000)
    for k in range(50):
        buf.append(k, 0, 0, 0)
    drained = buf.drain()
    for k in range(100, 130):
        buf.append(k, 0, 0, 0)
    buf.put_back(*drained)
    assert buf.drain()[0].tolist() == list(range(50)) + list(range(100, 130))


def test_drop_before_stops_at_the_first_row_it_keeps() -> None:
    ring = ColumnRing(8, ('a',))
    ring.extend(a=np.array([1, 2, 9, 3, 10]))
    assert ring.drop_before('a', 5) == 2  # 3 stays: it comes after 9
    assert ring.rows()['a'].tolist() == [9, 3, 10]
    assert ring.drop_before('a', 100) == 3 and len(ring) == 0
    assert ring.drop_before('a', 100) == 0


def test_a_ring_that_forgets_old_rows_stays_small() -> None:
    ring = ColumnRing(10_000, ('a',))
    for k in range(5000):
        ring.drop_before('a', k - 10)
        ring.extend(a=np.array([k]))
    assert len(ring) == 11 and ring._allocated == INITIAL_ROWS
    assert ring.rows()['a'].tolist() == list(range(4989, 5000))


def test_rows_from_is_the_mask_of_every_row_at_or_above() -> None:
    rng = np.random.default_rng(11)
    ring, reference = ColumnRing(64, ('a', 'b')), []
    value = 0
    for step in range(400):
        n = int(rng.integers(0, 20))
        values = np.arange(value, value + n)
        value += n
        if step % 50 == 49 and n > 2:  # now and then a row out of time order
            values[-1], values[0] = values[0], values[-1]
        ring.extend(a=values, b=-values)
        reference = (reference + values.tolist())[-64:]
        for at in (value - int(rng.integers(0, 80)), value + 1, -1):
            rows = ring.rows_from('a', at)
            assert rows['a'].tolist() == [v for v in reference if v >= at]
            assert rows['b'].tolist() == [-v for v in reference if v >= at]
        if rng.random() < 0.3:
            reference = reference[ring.drop_before('a', value - int(rng.integers(0, 40))):]
    assert ColumnRing(4, ('a',)).rows_from('a', 0)['a'].tolist() == []


def test_held_batches_are_taken_as_one_in_order() -> None:
    held = HeldBatches()
    assert not held and held.count == 0
    held.add((np.array([1, 2]), np.array([10, 20])))
    held.add((np.array([], np.int64), np.array([], np.int64)))
    held.add((np.array([3]), np.array([30])))
    assert held and held.count == 3
    assert held.column(1).tolist() == [10, 20, 30]
    first, second = held.take()
    assert (first.tolist(), second.tolist()) == ([1, 2, 3], [10, 20, 30])
    assert not held and held.count == 0


def test_held_batches_span_a_window_from_their_first_row() -> None:
    held = HeldBatches()
    held.add((np.array([], np.int64),))
    held.add((np.array([100, 150]),))
    assert not held.spans(200, 100, min_rows=3)  # too few rows, whatever the span
    assert held.spans(200, 100, min_rows=2)
    assert not held.spans(199, 100, min_rows=2)
    held.clear()
    assert not held.spans(10_000, 100, min_rows=0)  # nothing held spans nothing
