"""Tests for the stderr progress bar (bag/progress.py)."""

from __future__ import annotations

import io

from ros2_deadline_monitor.bag.progress import ProgressBar


def test_line_shows_fraction_counts_rate_and_eta() -> None:
    bar = ProgressBar(1_000_000, enabled=True, stream=io.StringIO(), width=10)
    line = bar.line(250_000, 2.0)
    assert line.startswith('analyze  25% |##        | 250,000/1,000,000 msgs')
    assert '125k msg/s' in line
    assert 'ETA    6 s' in line


def test_draws_throttled_and_ends_the_line() -> None:
    stream = io.StringIO()
    bar = ProgressBar(100, enabled=True, stream=stream, min_interval_s=3600)
    bar(10)
    bar(20)  # too soon: not drawn
    bar(100)  # the end is always drawn
    bar.close()
    text = stream.getvalue()
    assert text.count('\r') == 2 and '100/100 msgs' in text and text.endswith('\n')


def test_disabled_bar_writes_nothing() -> None:
    stream = io.StringIO()
    bar = ProgressBar(100, enabled=False, stream=stream)
    bar(50)
    bar.close()
    assert stream.getvalue() == ''


def test_empty_total() -> None:
    assert ' 100% ' in ProgressBar(0, enabled=True, stream=io.StringIO()).line(0, 0.0)
