"""Bounded storage so memory stays flat however long the monitor runs.

Both buffers start small and double up to their capacity: a thousand topics that send little
(or nothing) hold a few kilobytes each, not the capacity a 1 kHz topic needs. Once a buffer
reached its capacity it stays there, and nothing allocates on the per-message path again.
"""

from __future__ import annotations

import numpy as np

NO_VALUE = int(np.iinfo(np.int64).min)
"""Sentinel for "no stamp", "no sequence number" or "unknown on this clock"."""
MALFORMED = NO_VALUE + 1
"""Stamp of an event whose bytes could not be read: a message, counted, but not a cycle."""
INITIAL_ROWS = 16
"""Rows a buffer holds before it first grows."""


def _grown(column: np.ndarray, used: int, size: int) -> np.ndarray:
    """Return a ``size``-row copy of ``column`` holding its first ``used`` values."""
    bigger = np.empty(size, np.int64)
    bigger[:used] = column[:used]
    return bigger


class EventBuffer:
    """Raw per-message events waiting for the stats timer; ``append`` is O(1), allocation-free.

    Columns: arrival (system clock ns), header stamp (ns or NO_VALUE), publication sequence
    number (or NO_VALUE) and serialized size in bytes.
    """

    def __init__(self, capacity: int) -> None:
        """Hold up to ``capacity`` events (room for ``INITIAL_ROWS`` allocated now)."""
        self.capacity = capacity
        self._allocate(min(capacity, INITIAL_ROWS))
        self.count = 0

    def _allocate(self, rows: int, used: int = 0) -> None:
        self.allocated = rows
        self.arrival = _grown(getattr(self, 'arrival', np.empty(0, np.int64)), used, rows)
        self.stamp = _grown(getattr(self, 'stamp', np.empty(0, np.int64)), used, rows)
        self.seq = _grown(getattr(self, 'seq', np.empty(0, np.int64)), used, rows)
        self.size = _grown(getattr(self, 'size', np.empty(0, np.int64)), used, rows)

    def _reserve(self, rows: int) -> None:
        """Make room for ``rows`` events in all (doubling, at most the capacity)."""
        if rows > self.allocated:
            self._allocate(min(self.capacity, max(rows, 2 * self.allocated)), self.count)

    def append(self, arrival_ns: int, stamp_ns: int, seq: int, size: int) -> bool:
        """Store one event; return True when the buffer is full and must be drained."""
        i = self.count
        if i == self.allocated:
            self._reserve(i + 1)
        self.arrival[i] = arrival_ns
        self.stamp[i] = stamp_ns
        self.seq[i] = seq
        self.size[i] = size
        self.count = i + 1
        return self.count == self.capacity

    def extend(self, arrival_ns: np.ndarray, stamp_ns: np.ndarray, seq: int,
               size: np.ndarray) -> None:
        """Store many events (one sequence number for all, e.g. NO_VALUE) at once.

        The batch form of ``append`` for a bag replay; the caller keeps the buffer from
        filling (``room``), since a full buffer must be processed at the event that filled it.
        """
        i, n = self.count, len(arrival_ns)
        if i + n >= self.capacity:
            raise ValueError('extend: the events would fill the buffer')
        self._reserve(i + n)
        self.arrival[i:i + n] = arrival_ns
        self.stamp[i:i + n] = stamp_ns
        self.seq[i:i + n] = seq
        self.size[i:i + n] = size
        self.count = i + n

    @property
    def room(self) -> int:
        """Events ``extend`` takes at most (one less than the free space: full must wait)."""
        return self.capacity - self.count - 1

    def put_back(self, arrival: np.ndarray, stamp: np.ndarray, seq: np.ndarray,
                 size: np.ndarray) -> None:
        """Return drained events that must wait (they go before anything appended since)."""
        n = len(arrival)
        if n == 0:
            return
        later = self.count
        if n + later > self.capacity:
            raise ValueError('put_back: more events than the buffer holds')
        self._reserve(n + later)
        for column, values in ((self.arrival, arrival), (self.stamp, stamp), (self.seq, seq),
                               (self.size, size)):
            column[n:n + later] = column[:later].copy()
            column[:n] = values
        self.count = n + later

    def drain(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Return copies of the stored events in arrival order and empty the buffer."""
        n = self.count
        self.count = 0
        return (self.arrival[:n].copy(), self.stamp[:n].copy(), self.seq[:n].copy(),
                self.size[:n].copy())


class ColumnRing:
    """A ring of named int64 columns holding the most recent ``capacity`` rows.

    ``drop_before`` forgets rows no window holds any more: a topic at 1 Hz keeps the few
    rows of its window, not the ``capacity`` rows of the last hours.
    """

    def __init__(self, capacity: int, names: tuple[str, ...]) -> None:
        """Hold the latest ``capacity`` rows of each named column (allocated as they come)."""
        self.capacity = capacity
        self.names = names
        self._allocated = min(capacity, INITIAL_ROWS)
        self._data = {name: np.empty(self._allocated, np.int64) for name in names}
        self._start = 0
        """Where the oldest held row is (the ring wraps at ``_allocated``)."""
        self._held = 0

    def _order(self) -> np.ndarray:
        """Positions of the held rows, oldest first."""
        return (np.arange(self._held) + self._start) % self._allocated

    def _reserve(self, rows: int) -> None:
        """Grow to hold ``rows`` rows (doubling, at most the capacity), oldest row first."""
        size = min(self.capacity, max(rows, 2 * self._allocated))
        order, held = self._order(), self._held
        self._data = {name: _grown(column[order], held, size)
                      for name, column in self._data.items()}
        self._allocated, self._start = size, 0

    def __len__(self) -> int:
        """Rows currently held (at most ``capacity``)."""
        return self._held

    def extend(self, **columns: np.ndarray) -> None:
        """Append rows given as equally long arrays, one per column name."""
        n = len(columns[self.names[0]])
        if n == 0:
            return
        if n > self.capacity:
            columns = {k: v[-self.capacity:] for k, v in columns.items()}
            n = self.capacity
        if self._held + n > self._allocated and self._allocated < self.capacity:
            self._reserve(self._held + n)
        size = self._allocated
        at = (self._start + self._held) % size
        first = min(n, size - at)
        for name in self.names:
            values = columns[name]
            column = self._data[name]
            column[at:at + first] = values[:first]
            column[:n - first] = values[first:]
        held = self._held + n
        if held > size:  # the oldest rows were written over
            self._start = (self._start + held - size) % size
            held = size
        self._held = held

    def rows(self) -> dict[str, np.ndarray]:
        """All held rows in chronological order (copies)."""
        order = self._order()
        return {name: self._data[name][order] for name in self.names}

    def rows_from(self, name: str, value: int) -> dict[str, np.ndarray]:
        """Return the held rows whose ``name`` is at least ``value``, oldest first.

        A report reads its window this way: with the rows in time order the window is the
        newest part of the ring, read as slices (views while the ring does not wrap inside
        it, valid until the next ``extend``) instead of gathering every row of a 1 kHz
        topic's ten thousand and masking them again.
        """
        start, held, size = self._start, self._held, self._allocated
        first_part = min(held, size - start)
        spans = [(start, start + first_part)]
        if held > first_part:
            spans.append((0, held - first_part))
        column = self._data[name]
        values = (column[spans[0][0]:spans[0][1]] if len(spans) == 1
                  else np.concatenate([column[a:b] for a, b in spans]))
        keep = values >= value
        skip = int(np.argmax(keep)) if keep.any() else held
        if not keep[skip:].all():  # rows out of time order: keep exactly those at or above
            return {key: rows[keep] for key, rows in self.rows().items()}
        if skip >= first_part:  # the window starts in the wrapped part (or holds nothing)
            a, b = spans[1] if len(spans) == 2 else (spans[0][1], spans[0][1])
            spans = [(a + skip - first_part, b)]
        else:
            spans[0] = (spans[0][0] + skip, spans[0][1])
        if len(spans) == 1:
            a, b = spans[0]
            return {key: self._data[key][a:b] for key in self.names}
        return {key: np.concatenate([self._data[key][a:b] for a, b in spans])
                for key in self.names}

    def drop_before(self, name: str, value: int) -> int:
        """Forget the oldest rows whose ``name`` is below ``value``, up to the first that is not.

        Returns how many were forgotten.
        """
        if not self._held:
            return 0
        column, start, size = self._data[name], self._start, self._allocated
        first = min(self._held, size - start)
        parts = (column[start:start + first], column[:self._held - first])
        dropped = 0
        for part in parts:
            below = part < value
            if not len(part):
                continue
            if below.all():
                dropped += len(part)
                continue
            dropped += int(np.argmin(below))
            break
        self._start = (start + dropped) % size
        self._held -= dropped
        return dropped

    def clear(self) -> None:
        """Forget every row."""
        self._start = self._held = 0


class HeldBatches:
    """Column batches held until enough arrived to act on them, then taken as one.

    A topic's first cycles wait until they suffice to decide whether their stamps start
    the cycles, or to learn the period: a few batches of a few columns each, never more
    than a learning window.
    """

    __slots__ = ('_batches', 'count')

    def __init__(self) -> None:
        """Hold nothing."""
        self._batches: list[tuple[np.ndarray, ...]] = []
        self.count = 0
        """Rows held."""

    def __bool__(self) -> bool:
        """Tell whether any batch is held."""
        return bool(self._batches)

    def add(self, batch: tuple[np.ndarray, ...]) -> None:
        """Hold one more batch (its columns in the order of the others)."""
        self._batches.append(batch)
        self.count += len(batch[0])

    def column(self, i: int) -> np.ndarray:
        """Return column ``i`` of everything held, in order."""
        return np.concatenate([batch[i] for batch in self._batches])

    def spans(self, last_ns: int, window_ns: int, min_rows: int) -> bool:
        """Tell whether ``min_rows`` rows or more are held and span ``window_ns``.

        The span runs from the first row's column 0 (its arrival) to ``last_ns``.
        """
        if self.count < max(min_rows, 1):
            return False
        first = next(batch[0][0] for batch in self._batches if len(batch[0]))
        return last_ns - int(first) >= window_ns

    def take(self) -> tuple[np.ndarray, ...]:
        """Return everything held as one batch, and hold nothing."""
        batch = tuple(np.concatenate(columns) for columns in zip(*self._batches, strict=True))
        self.clear()
        return batch

    def clear(self) -> None:
        """Hold nothing."""
        self._batches, self.count = [], 0
