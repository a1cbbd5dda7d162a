import numpy as np
import pytest

from ros2_deadline_monitor.core.ring import ColumnRing, EventBuffer, NO_VALUE


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
