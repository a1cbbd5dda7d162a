"""The live terminal view of a monitor's ``MonitorStats``: a clock line above one row per topic.

Pure apart from ``rich``, which only ``rich_table`` imports (the monitor runs without it): a
stats message is folded back into a snapshot (``analysis/stats_fold.py``) and becomes a
``View`` of formatted strings (``view_of``), which prints either as plain lines
(``plain_lines``, for pipes and logs) or as a coloured ``rich`` table. Every column is a figure
of the table (``analysis/figures.py``): its header, its decimals and what it reads when unknown
('-') or not applicable to an event topic ('n/a') come from there, as in every other output.
Messages are read by attribute, so the functions take any object shaped like ``MonitorStats``;
nothing here imports rclpy.

Counts read ``total (window)``: ``20 (2)`` is 20 since the monitor started, 2 of them in its
rolling window (the last 10 s), not "2 new since the last refresh": a line under the table
says so, with the window's span. Each row ends with the reason of its level. ``Silence``
tells when reports stopped coming (the monitor gone or starved): the view then says so above
the last table it had.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
import math
import time
from typing import Any

from ros2_deadline_monitor.analysis.figures import applies, CLOCK, Figure, find, known, TOPIC
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.snapshot import ClockSnapshot, Snapshot, TopicSnapshot
from ros2_deadline_monitor.analysis.stats_fold import StatsFold
from ros2_deadline_monitor.analysis.units import short_seconds
from ros2_deadline_monitor.outputs.format import cell, NOT_AVAILABLE, number, UNKNOWN

LEVEL_NAMES = {int(level): level.name for level in Level}
"""``diagnostic_msgs/DiagnosticStatus`` levels by value (named once, by ``Level``)."""
LEVEL_STYLES = {'OK': 'green', 'WARN': 'yellow', 'ERROR': 'bold red', 'STALE': 'magenta'}
SEVERITY = {'ERROR': 0, 'STALE': 1, 'WARN': 2, 'OK': 3}
"""Sort order, worst first: an error, then a topic never heard (STALE), then a warning."""
FIGURES: tuple[Figure, ...] = (find(TOPIC, 'rate wall'), find(TOPIC, 'max interval wall'),
                               find(TOPIC, 'max interval sim'))
"""The figure columns after the topic, as the table of figures heads and writes them."""
COUNTS: tuple[tuple[Figure, Figure], ...] = tuple(
    (find(TOPIC, f'{name} total'), find(TOPIC, name))
    for name in ('deadline misses', 'skipped periods', 'messages lost'))
"""The count columns: the run total, then the window's share in brackets (``20 (2)``)."""
OUTAGE = find(TOPIC, 'longest outage')
"""Named beside the max interval: gaps are never hidden."""
WINDOW = find(TOPIC, 'window wall')
RTF, RTF_TOTAL, RTF_BIN, RTF_MIN_BIN, SIM_TIME, PAUSED, SIMULATOR_RTF = (
    find(CLOCK, name) for name in ('RTF', 'RTF total', 'RTF bin', 'RTF min bin', 'sim time',
                                   'paused', 'simulator RTF'))
"""The clock line's figures."""


def columns() -> tuple[str, ...]:
    """Return the headers: the topic, each figure's column, the level and its reason."""
    return ('topic', *(figure.column for figure in FIGURES),
            *(total.column for total, _ in COUNTS), 'level', 'reason')


COLUMNS = columns()
COUNTS_LEGEND = '{counts}: total since start (in the window{span})'
"""Says how to read ``20 (2)``, under the table (``span``: ``, the last 10 s`` or '')."""
NONE = UNKNOWN
RICH_MISSING = ('the live table needs the Python package rich (apt: python3-rich, pip: rich); '
                'printing plain lines instead')


@dataclass(frozen=True)
class Row:
    """One topic, every cell already formatted (column order: ``COLUMNS``)."""

    cells: tuple[str, ...]
    level: str
    status: str


@dataclass(frozen=True)
class View:
    """What one report shows: a title, the clock line and the topic rows, worst first."""

    title: str
    clock: str
    clock_level: str
    rows: tuple[Row, ...]
    legend: str = ''
    """How to read the counts (``COUNTS_LEGEND``)."""
    columns: tuple[str, ...] = COLUMNS
    """The headers of the rows' cells; all but the first and the last two are numbers."""


def _number(value: float, digits: int) -> str:
    return NONE if value is None or not math.isfinite(value) else f'{value:.{digits}f}'


def window_text(window_s: float) -> str:
    """Name the rolling window by its wall span, ``10 s``, or ``window`` when it has none."""
    if window_s is None or not math.isfinite(window_s) or window_s <= 0:
        return 'window'
    return f'{short_seconds(round(window_s * 1e9))} s'


def count_cell(snapshot: Snapshot, topic: TopicSnapshot, total: Figure, window: Figure) -> str:
    """Total since start, then the window's share: ``20 (2)`` (``COUNTS_LEGEND``).

    '-' when either is unknown (no period yet, a /clock too coarse, loss with several
    writers): a total beside an unknown window's share would pass for a figure.
    """
    if not applies(total, topic):
        return NOT_AVAILABLE
    run, share = cell(total, snapshot, topic), cell(window, snapshot, topic)
    return UNKNOWN if UNKNOWN in (run, share) else f'{run} ({share})'


def level_name(level: int) -> str:
    """Name a diagnostic level; unknown values are shown as numbers rather than hidden."""
    return LEVEL_NAMES.get(int(level), str(int(level)))


def _outage(snapshot: Snapshot, topic: TopicSnapshot) -> str:
    """Name the longest outage beside the max interval: gaps are never hidden."""
    if OUTAGE.get(snapshot, topic) is None:
        return ''
    return f' (outage {cell(OUTAGE, snapshot, topic)} {OUTAGE.unit})'


def _row(snapshot: Snapshot, topic: TopicSnapshot) -> Row:
    level = level_name(topic.level)
    figures = [cell(figure, snapshot, topic) for figure in FIGURES]
    figures[1] += _outage(snapshot, topic)  # beside the max wall interval
    cells = (topic.topic or topic.topic_id, *figures,
             *(count_cell(snapshot, topic, total, window) for total, window in COUNTS),
             level, ' '.join(topic.reason.split()))
    return Row(cells, level, topic.reason)


def clock_line(snapshot: Snapshot, status: str = '', receiving: bool = True) -> str:
    """Summarize the clock: RTF over the window and since start, worst bin, sim time.

    ``status`` is said when no /clock was heard; ``receiving`` false adds that none came in
    this window.
    """
    clock: ClockSnapshot = snapshot.clock
    if not clock.report.messages_total:
        return f'clock: {status or "no /clock received"}'
    bin_s = RTF_BIN.get(snapshot, clock)
    parts = [f'RTF {cell(RTF, snapshot, clock)} (window)',
             f'{cell(RTF_TOTAL, snapshot, clock)} (since start)',
             f'worst {number(bin_s * 1000, 0, UNKNOWN)} ms bin '
             f'{cell(RTF_MIN_BIN, snapshot, clock)}',
             f'sim time {cell(SIM_TIME, snapshot, clock)} {SIM_TIME.unit}']
    if PAUSED.get(snapshot, clock):
        parts.append('paused')
    if not receiving:
        parts.append('no /clock in this window')
    if known(SIMULATOR_RTF.get(snapshot, clock)) is not None:
        parts.append(f'simulator says {cell(SIMULATOR_RTF, snapshot, clock)}')
    return 'clock: ' + ', '.join(parts)


def view_of(stats: Any, source: str) -> View:
    """Turn one ``MonitorStats`` message into a ``View``; ``source`` names its topic."""
    fold = StatsFold()
    fold.add(stats)
    snapshot = fold.snapshot()
    stamp = stats.header.stamp.sec + stats.header.stamp.nanosec * 1e-9
    when = time.strftime('%H:%M:%S', time.localtime(stamp)) if stamp else '--:--:--'
    title = (f'{source} at {when}, window {_number(stats.window_wall_s, 1)} s wall, '
             f'{_number(stats.window_sim_s, 1)} s sim')
    rows = sorted((_row(snapshot, topic) for topic in snapshot.topics),
                  key=lambda row: (SEVERITY.get(row.level, -1), row.cells[0]))
    spans = (WINDOW.get(snapshot, topic) for topic in snapshot.topics)
    span = max((s for s in spans if math.isfinite(s)), default=0.0)
    span = span if span > 0 else stats.window_wall_s
    legend = COUNTS_LEGEND.format(counts=', '.join(total.column for total, _ in COUNTS),
                                  span=f', the last {window_text(span)}'
                                  if window_text(span) != 'window' else '')
    clock = clock_line(snapshot, stats.clock.status, bool(stats.clock.receiving))
    return View(title, clock, level_name(stats.clock.level), tuple(rows), legend, columns())


def plain_lines(view: View) -> list[str]:
    """Render a view as aligned plain text lines (no escape codes): for pipes and files."""
    table = [view.columns, *(row.cells for row in view.rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(view.columns))]
    last = len(view.columns) - 2

    def line(cells: tuple[str, ...]) -> str:
        padded = (cell.rjust(width) if 0 < i < last else cell.ljust(width)
                  for i, (cell, width) in enumerate(zip(cells, widths, strict=True)))
        return '  '.join(padded).rstrip()

    lines = [view.title, f'{view.clock} [{view.clock_level}]']
    if view.rows:
        lines += [line(cells) for cells in table]
        lines.append(view.legend)
    else:
        lines.append('(no topics monitored)')
    return lines


def rich_table(view: View) -> Any:
    """Render a view as a ``rich`` renderable, levels in colour; ImportError without rich."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title=None, expand=False, header_style='bold')
    last = len(view.columns) - 2
    for i, name in enumerate(view.columns):
        # Only the reason gives way on a narrow terminal: cut with '...', one line a row.
        table.add_column(name, justify='right' if 0 < i < last else 'left',
                         no_wrap=name != 'reason')
    for row in view.rows:
        style = LEVEL_STYLES.get(row.level, '')
        table.add_row(*row.cells[:-2], Text(row.level, style=style),
                      Text(row.cells[-1], no_wrap=True, overflow='ellipsis'))
    clock = Text(view.clock + ' ')
    clock.append(f'[{view.clock_level}]', style=LEVEL_STYLES.get(view.clock_level, ''))
    parts: list[Any] = [Text(view.title, style='bold'), clock]
    parts.append(Group(table, Text(view.legend, style='dim')) if view.rows
                 else Text('(no topics monitored)'))
    return Group(*parts)


def silence_line(silent_ns: int, last_wall_s: float | None = None) -> str:
    """Say that reports stopped: ``no report for 12 s: monitor gone? (last at 12:00:01)``."""
    when = (f' (last at {time.strftime("%H:%M:%S", time.localtime(last_wall_s))})'
            if last_wall_s else '')
    return f'no report for {silent_ns // 1_000_000_000} s: monitor gone?{when}'


class Silence:
    """Tell when reports stopped coming, from when they came (pure: callers pass ``now_ns``).

    Reports are silent after ``FACTOR`` times their usual interval (the longest of the last
    few, so a monitor reporting every 5 s is not called gone after 3), and never before
    ``MIN_NS``; before the first report nothing is silent (the view says it is waiting).
    """

    FACTOR = 3
    MIN_NS = 2_000_000_000
    KEPT = 5

    def __init__(self) -> None:
        """Start with no report seen."""
        self._last_ns: int | None = None
        self._intervals: deque[int] = deque(maxlen=self.KEPT)

    def report(self, now_ns: int) -> None:
        """Note a report at ``now_ns`` (a monotonic clock)."""
        if self._last_ns is not None:
            self._intervals.append(now_ns - self._last_ns)
        self._last_ns = now_ns

    def threshold_ns(self) -> int:
        """Return how long a silence lasts before it counts."""
        usual = max(self._intervals, default=0)
        return max(self.MIN_NS, self.FACTOR * usual)

    def silent_ns(self, now_ns: int) -> int | None:
        """Return how long reports have been silent, once past the threshold, else None."""
        if self._last_ns is None:
            return None
        silent = now_ns - self._last_ns
        return silent if silent > self.threshold_ns() else None


def rich_available() -> bool:
    """Tell whether ``rich`` can be imported (the view falls back to plain lines if not)."""
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True
