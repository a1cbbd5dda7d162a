"""The ground truth a stand-in controller keeps about its own cycles, as a JSON file.

The demo controller writes one ``CycleRecord`` when it exits; tests and the demo read it back
and compare the monitor's figures with what the controller itself saw. Pure Python and numpy:
no rclpy, so the offline side can read records too.

File format (one JSON object, all times int nanoseconds)::

    {"format": "ros2_deadline_monitor.cycle_record", "version": 1,
     "timer_clock": "wall" | "sim", "period_ns": 10000000,
     "columns": ["start_timer_ns", ..., "injected"],
     "rows": [[start_timer_ns, start_system_ns, start_mono_ns,
               end_system_ns, end_mono_ns, end_timer_ns, injected], ...]}

``injected`` is 0 or 1 in the file and a bool array in memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
import json
import os
from pathlib import Path
import tempfile
from typing import Any, NamedTuple

import numpy as np

FORMAT = 'ros2_deadline_monitor.cycle_record'
VERSION = 1
TIMER_CLOCKS = ('wall', 'sim')


class CycleRow(NamedTuple):
    """One cycle of the controller: where it started and ended on each clock (int ns).

    ``*_timer_ns`` are on the timer's clock (ROS time: sim time under ``use_sim_time``, else
    the system clock); ``*_system_ns`` on the system clock (``time.time_ns()``, the clock of the
    middleware's received timestamps); ``*_mono_ns`` on the monotonic clock. The end is taken
    just before the cycle's message is published.
    """

    start_timer_ns: int
    start_system_ns: int
    start_mono_ns: int
    end_system_ns: int
    end_mono_ns: int
    end_timer_ns: int
    injected: bool


COLUMNS = CycleRow._fields


@dataclass(frozen=True)
class CycleRecord:
    """All cycles of one controller run, in the order they ran."""

    timer_clock: str
    period_ns: int
    rows: tuple[CycleRow, ...] = ()

    def __post_init__(self) -> None:
        """Reject values that would make every comparison with the monitor meaningless."""
        if self.timer_clock not in TIMER_CLOCKS:
            raise ValueError(f'timer_clock must be one of {TIMER_CLOCKS}, '
                             f'not {self.timer_clock!r}')
        if isinstance(self.period_ns, bool) or not isinstance(self.period_ns, int) \
                or self.period_ns <= 0:
            raise ValueError(f'period_ns must be a positive int, not {self.period_ns!r}')
        rows = tuple(_row(values, i) for i, values in enumerate(self.rows))
        object.__setattr__(self, 'rows', rows)

    def __len__(self) -> int:
        """Return the number of cycles."""
        return len(self.rows)

    def _column(self, index: int, dtype: type = np.int64) -> np.ndarray:
        values = np.array([row[index] for row in self.rows], dtype=dtype)
        values.flags.writeable = False
        return values

    @cached_property
    def start_timer_ns(self) -> np.ndarray:
        """Cycle starts on the timer's clock (the stamp the controller published)."""
        return self._column(0)

    @cached_property
    def start_system_ns(self) -> np.ndarray:
        """Cycle starts on the system clock."""
        return self._column(1)

    @cached_property
    def start_mono_ns(self) -> np.ndarray:
        """Cycle starts on the monotonic clock."""
        return self._column(2)

    @cached_property
    def end_system_ns(self) -> np.ndarray:
        """Cycle ends (just before publishing) on the system clock."""
        return self._column(3)

    @cached_property
    def end_mono_ns(self) -> np.ndarray:
        """Cycle ends (just before publishing) on the monotonic clock."""
        return self._column(4)

    @cached_property
    def end_timer_ns(self) -> np.ndarray:
        """Cycle ends on the timer's clock (stands still under sim time while a cycle stalls)."""
        return self._column(5)

    @cached_property
    def injected(self) -> np.ndarray:
        """True for the cycles that stalled on purpose (a bool mask, not int indices)."""
        return self._column(6, bool)

    def to_json(self) -> dict[str, Any]:
        """Return the record as the JSON object described in the module docstring."""
        return {
            'format': FORMAT,
            'version': VERSION,
            'timer_clock': self.timer_clock,
            'period_ns': self.period_ns,
            'columns': list(COLUMNS),
            'rows': [[*row[:6], int(row.injected)] for row in self.rows],
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the record atomically (a reader never sees half a file)."""
        write_json(path, self.to_json(), indent=None)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> CycleRecord:
        """Read a record written by ``save``; raise ValueError naming the file if it is bad."""
        try:
            with open(path, encoding='utf-8') as stream:
                data = json.load(stream)
            return cls.from_json(data)
        except (OSError, ValueError, TypeError, KeyError) as err:
            raise ValueError(f'Could not read a cycle record from {os.fspath(path)}: {err}') \
                from err

    @classmethod
    def from_json(cls, data: Any) -> CycleRecord:
        """Build a record from its JSON object (see the module docstring)."""
        if not isinstance(data, dict):
            raise ValueError('not a JSON object')
        if data.get('format') != FORMAT:
            raise ValueError(f'format is {data.get("format")!r}, expected {FORMAT!r}')
        if data.get('version') != VERSION:
            raise ValueError(f'unsupported version {data.get("version")!r}')
        if data.get('columns') != list(COLUMNS):
            raise ValueError(f'columns are {data.get("columns")!r}, expected {list(COLUMNS)}')
        rows = data['rows']
        if not isinstance(rows, list):
            raise ValueError('rows is not a list')
        return cls(timer_clock=data['timer_clock'], period_ns=data['period_ns'], rows=rows)


def _row(values: Any, index: int) -> CycleRow:
    """Check one row: six int ns values and an injected flag (bool or 0/1)."""
    if not isinstance(values, (list, tuple)) or len(values) != len(COLUMNS):
        raise ValueError(f'row {index} must have {len(COLUMNS)} values, got {values!r}')
    times = values[:6]
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in times):
        raise ValueError(f'row {index}: times must be int nanoseconds, got {values!r}')
    flag = values[6]
    if flag not in (0, 1) or isinstance(flag, float):
        raise ValueError(f'row {index}: injected must be a bool or 0/1, got {flag!r}')
    return CycleRow(*(int(v) for v in times), bool(flag))


def write_json(path: str | os.PathLike[str], data: Any, indent: int | None = 1) -> None:
    """Write ``data`` as JSON atomically and fsync it.

    A reader polling for the file, or a process killed right after, never sees half of it.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f'.{path.name}.', dir=path.parent)
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as stream:
            json.dump(data, stream, indent=indent,
                      separators=(',', ':') if indent is None else None)
            stream.write('\n')
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
