"""A line per topic at every report, like ``ros2 topic hz``: what ``monitor`` prints by default.

A sink of the stats timer: ``report_lines`` turns one ``Snapshot`` into lines through the
table of figures (``analysis/figures.py``), so a figure reads the same here as in the diagnostics;
``ReportPrinter`` writes them. Nothing here runs per message, and nothing imports rclpy or rich.

- One line per topic, and one for the clock once /clock is heard::

    /demo/cmd: last 10.0 s 98.0 Hz, max interval 22.51 ms, 2 misses, 1 skipped, 0 lost;
    since start 500 msgs, 20 misses, 10 skipped, 0 lost; period 10 ms (learned); WARN: 2
    misses (response rule), 1 skipped periods in window

  Each count says what it counts: the rolling window's (``last N s``, the span it covers
  so far) and the run's (``since start``); then the period the counts are judged against
  and where it came from (given, learned, the publishers' deadline QoS); the level and its
  reason last.
- A figure with nothing to measure reads ``-``, never 0, and ``n/a`` where it does not apply
  (an event topic's misses); labels, units and decimals are the table's (``outputs/format.py``
  ``cell``), as in ``watch``.
- With more than ``MAX_TOPIC_LINES`` topics (``--all`` on a busy graph) a report is one
  summary line (how many topics at each level) and the lines of the worst topics that are not
  OK, at most ``MAX_TOPIC_LINES``: a hundred healthy topics print one line a report.
- On a terminal the level is coloured; into a pipe or a file the lines are plain text.
- The lines are written by a thread of their own: a terminal or pipe that does not take them
  (a paused ``less``, a reader that stopped) must not hold up the stats timer. Reports that
  find the queue full are dropped and counted, and the next line that gets through says so.
"""

from __future__ import annotations

from collections.abc import Sequence
import os
import queue
import threading
from typing import TextIO

from ros2_deadline_monitor.analysis.figures import applies, CLOCK, Figure, find, known, TOPIC
from ros2_deadline_monitor.analysis.reports import Level
from ros2_deadline_monitor.analysis.snapshot import Snapshot, TopicSnapshot
from ros2_deadline_monitor.outputs.format import cell, UNKNOWN

__all__ = ['MAX_TOPIC_LINES', 'ReportPrinter', 'report_lines', 'topic_line']

MAX_TOPIC_LINES = 10
"""Most topic lines in one report; beyond, a summary line and the worst topics only."""
MAX_REASON_CHARS = 100
"""A level's reason is cut here (with '...'): the line stays a line."""
NONE = UNKNOWN
QUEUE_REPORTS = 4
"""Reports waiting for a slow terminal or pipe before new ones are dropped."""
WORST_FIRST = (Level.ERROR, Level.STALE, Level.WARN, Level.OK)
COLOURS = {Level.OK: '32', Level.WARN: '33', Level.ERROR: '1;31', Level.STALE: '35'}
"""ANSI SGR codes of the levels, as the ``watch`` table colours them."""

RATE, MAX_INTERVAL, WINDOW, PERIOD, PERIOD_SOURCE = (find(TOPIC, name) for name in (
    'rate wall', 'max interval wall', 'window wall', 'period', 'period source'))
COUNTS = tuple((find(TOPIC, f'{name} total'), find(TOPIC, name))
               for name in ('messages', 'deadline misses', 'skipped periods', 'messages lost'))
"""Run total and window figure of each count, labelled by the total's column: the total reads
'-' when the window's figure is unknown too (lost with several writers)."""
RTF, RTF_TOTAL = find(CLOCK, 'RTF'), find(CLOCK, 'RTF total')
SOURCES = {'configured': 'given', 'graph deadline QoS': "the publishers' deadline QoS",
           'learned': 'learned'}
"""Where the period came from (the figure ``period source``), in the line's words."""


def _count(snapshot: Snapshot, topic: TopicSnapshot, total: Figure, window: Figure) -> str:
    """Return the run total, or ``-`` when it or the window's figure is unknown."""
    run = cell(total, snapshot, topic)
    if run != NONE and cell(window, snapshot, topic) == NONE:
        return NONE
    return run


def _level(level: Level, colour: bool) -> str:
    name = Level(level).name
    return f'\x1b[{COLOURS[level]}m{name}\x1b[0m' if colour else name


def _short(reason: str) -> str:
    reason = ' '.join(reason.split())  # one line, whatever the reason holds
    return reason if len(reason) <= MAX_REASON_CHARS else reason[:MAX_REASON_CHARS - 3] + '...'


def _period(snapshot: Snapshot, topic: TopicSnapshot) -> str:
    """Return the period the counts are judged against and its source, or why there is none."""
    if not applies(COUNTS[1][0], topic):  # no period to judge misses by: an event topic
        return 'no period (event topic)'
    period = known(PERIOD.value(snapshot, topic))
    if period is None:
        return f'period {NONE} (not learned yet)'
    source = PERIOD_SOURCE.value(snapshot, topic)
    said = SOURCES.get(source, source) if isinstance(source, str) else None
    return f'period {period:g} ms' + (f' ({said})' if said else '')


def topic_line(snapshot: Snapshot, topic: TopicSnapshot, *, colour: bool = False) -> str:
    """Return a topic's line: window figures, run totals, the period, level and reason."""
    name = topic.topic or topic.topic_id
    level = f'{_level(topic.level, colour)}: {_short(topic.reason)}'
    if topic.report is None:  # invalid settings: the reason says why
        return f'{name}: not monitored, {level}'
    span = (f'last {cell(WINDOW, snapshot, topic)} {WINDOW.unit}'
            if known(WINDOW.value(snapshot, topic)) is not None else 'window')
    in_window = ', '.join(f'{cell(window, snapshot, topic)} {total.column}'
                          for total, window in COUNTS[1:])
    totals = ', '.join(f'{_count(snapshot, topic, total, window)} {total.column}'
                       for total, window in COUNTS)
    return (f'{name}: {span} {cell(RATE, snapshot, topic)} {RATE.unit}, max interval '
            f'{cell(MAX_INTERVAL, snapshot, topic)} {MAX_INTERVAL.unit}, {in_window}; since '
            f'start {totals}; {_period(snapshot, topic)}; {level}')


def clock_line(snapshot: Snapshot, *, colour: bool = False) -> str | None:
    """Return the clock's RTF and level once /clock was heard (None before: nothing to say)."""
    clock = snapshot.clock
    report = clock.report
    if not report.messages_total:
        return None
    rtf, total = cell(RTF, snapshot, clock), cell(RTF_TOTAL, snapshot, clock)
    return (f'{clock.topic}: RTF {rtf} (window), {total} (since start), '
            f'{_level(clock.level, colour)}: {_short(clock.reason)}')


def report_lines(snapshot: Snapshot, *, colour: bool = False,
                 max_topic_lines: int = MAX_TOPIC_LINES) -> list[str]:
    """Return the lines of one report (module docstring); none without topics or clock."""
    topics: Sequence[TopicSnapshot] = snapshot.topics
    lines: list[str] = []
    if len(topics) > max_topic_lines:
        counts = {level: sum(1 for t in topics if t.level == level) for level in WORST_FIRST}
        shown = ', '.join(f'{count} {_level(level, colour)}' for level, count in counts.items()
                          if count)
        worst = sorted((t for t in topics if t.level != Level.OK),
                       key=lambda t: (WORST_FIRST.index(Level(t.level)), t.topic))
        more = len(worst) - max_topic_lines
        lines.append(f'{len(topics)} topics: {shown}'
                     + (f'; the {max_topic_lines} worst below, {more} more not OK'
                        if more > 0 else ''))
        topics = worst[:max_topic_lines]
    lines += [topic_line(snapshot, topic, colour=colour) for topic in topics]
    clock = clock_line(snapshot, colour=colour)
    if clock is not None:
        lines.append(clock)
    return lines


class ReportPrinter:
    """Write each report's lines to a stream from a thread of its own (see the module doc).

    ``show`` is the sink the stats timer calls; it only formats and queues. ``close`` waits
    a moment for what is queued, then leaves; a stream that stays blocked is abandoned (the
    thread is a daemon and writes with ``os.write``, holding no lock the exit needs).
    """

    def __init__(self, stream: TextIO, *, colour: bool | None = None,
                 max_topic_lines: int = MAX_TOPIC_LINES) -> None:
        """Print to ``stream`` (its file descriptor); ``colour`` None: when it is a terminal."""
        stream.flush()
        self._fd = stream.fileno()
        self.colour = (stream.isatty() and 'NO_COLOR' not in os.environ if colour is None
                       else colour)
        self._max_topic_lines = max_topic_lines
        self._queue: queue.Queue[bytes | None] = queue.Queue(QUEUE_REPORTS)
        self.dropped = 0
        """Reports not printed because the stream did not take the earlier ones."""
        self._failed = threading.Event()
        self._thread = threading.Thread(target=self._write, name='report_lines', daemon=True)
        self._thread.start()

    def show(self, snapshot: Snapshot) -> None:
        """Queue the report's lines (called on the stats timer; never blocks)."""
        if self._failed.is_set():
            return
        lines = report_lines(snapshot, colour=self.colour,
                             max_topic_lines=self._max_topic_lines)
        if not lines:
            return
        if self.dropped:
            lines.insert(0, f'({self.dropped} report(s) not printed: the output did not take '
                            'them in time)')
        try:
            self._queue.put_nowait(('\n'.join(lines) + '\n').encode(errors='replace'))
        except queue.Full:
            self.dropped += 1
        else:
            self.dropped = 0

    def _write(self) -> None:
        while True:
            data = self._queue.get()
            if data is None:
                return
            try:
                while data:
                    data = data[os.write(self._fd, data):]
            except OSError:  # a closed pipe (monitor | head): stop printing, keep monitoring
                self._failed.set()
                return

    def close(self, timeout_s: float = 1.0) -> None:
        """Let the queued lines out (for at most ``timeout_s``), then stop the thread."""
        try:
            self._queue.put(None, timeout=timeout_s)
        except queue.Full:
            return
        self._thread.join(timeout_s)
