"""Compare a run with an earlier one: ``analyze BAG --baseline earlier.json``.

The baseline is the JSON document ``analyze --json`` wrote (its ``format`` and ``version``
are checked). Each figure below is compared with the baseline's for every topic found in
both (by topic name) and for the clock. A figure *regresses* when it got worse by more than
the tolerance, relative to the baseline's value; a figure that was 0 regresses as soon as it
is above 0 (a count going from 0 to 1 is the regression a CI job is for). A topic of the
baseline missing from the run, or a figure the run no longer measures, regresses too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import json
import math
from pathlib import Path
from typing import Any

from ros2_deadline_monitor.analysis.errors import ExpectationError
from ros2_deadline_monitor.outputs.tables import JSON_FORMAT, JSON_VERSION, render

__all__ = ['BASELINE_FIGURES', 'Comparison', 'Delta', 'compare', 'format_comparison',
           'load_baseline']

DEFAULT_TOLERANCE = 0.10


@dataclass(frozen=True)
class BaselineFigure:
    """One compared figure: where it is in the JSON and which direction is worse."""

    path: tuple[str, ...]
    label: str
    worse: str
    """'higher' or 'lower'."""


BASELINE_FIGURES: tuple[BaselineFigure, ...] = (
    BaselineFigure(('deadline_misses',), 'deadline misses', 'higher'),
    BaselineFigure(('miss_ratio',), 'miss ratio', 'higher'),
    BaselineFigure(('skipped_periods',), 'skipped periods', 'higher'),
    BaselineFigure(('max_interval_wall_ms',), 'interval wall max [ms]', 'higher'),
    BaselineFigure(('p99_interval_wall_ms',), 'interval wall p99 [ms]', 'higher'),
    BaselineFigure(('max_interval_sim_ms',), 'interval sim max [ms]', 'higher'),
    BaselineFigure(('p99_interval_sim_ms',), 'interval sim p99 [ms]', 'higher'),
    BaselineFigure(('max_response_ms',), 'response max [ms]', 'higher'),
    BaselineFigure(('p99_response_ms',), 'response p99 [ms]', 'higher'),
    BaselineFigure(('rate_wall_hz',), 'rate wall [Hz]', 'lower'),
)
CLOCK_FIGURES: tuple[BaselineFigure, ...] = (
    BaselineFigure(('rtf_total',), 'RTF overall', 'lower'),
    BaselineFigure(('rtf_bin_min',), 'worst RTF window', 'lower'),
    BaselineFigure(('max_wall_gap_ms',), 'longest /clock gap [ms]', 'higher'),
)


@dataclass(frozen=True)
class Delta:
    """One figure next to its baseline value; None where a side has no value."""

    topic: str
    label: str
    baseline: float | None
    measured: float | None
    regressed: bool
    note: str = ''

    @property
    def change(self) -> float | None:
        """Relative change (0.1 = 10 % higher); None when it cannot be expressed."""
        if self.baseline is None or self.measured is None or self.baseline == 0:
            return None
        return (self.measured - self.baseline) / abs(self.baseline)

    def line(self) -> str:
        """One line naming a regression (for the terminal and JUnit)."""
        return (f'REGRESSION {self.topic}: {self.label} {_text(self.measured)} vs baseline '
                f'{_text(self.baseline)}{f" ({self.note})" if self.note else ""}')


@dataclass(frozen=True)
class Comparison:
    """Every compared figure of one run against a baseline, and the tolerance used."""

    baseline: str
    tolerance: float
    deltas: tuple[Delta, ...]

    @property
    def regressions(self) -> tuple[Delta, ...]:
        """The figures that got worse beyond the tolerance."""
        return tuple(d for d in self.deltas if d.regressed)


def load_baseline(path: str | Path) -> dict[str, Any]:
    """Read an ``analyze --json`` document; ``ExpectationError`` when it is not one we read."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as err:
        raise ExpectationError(f'cannot read baseline {path}: {err.strerror or err}') from None
    except (ValueError, UnicodeDecodeError) as err:
        raise ExpectationError(f'baseline {path} is not JSON: {err}') from None
    if not isinstance(data, dict) or 'format' not in data:
        raise ExpectationError(
            f'baseline {path} has no "format" field: not written by analyze --json '
            f'(format {JSON_FORMAT} version {JSON_VERSION}); re-run analyze --json on the '
            'baseline bag')
    if data.get('format') != JSON_FORMAT or data.get('version') != JSON_VERSION:
        raise ExpectationError(
            f'baseline {path} is format {data.get("format")!r} version '
            f'{data.get("version")!r}; this analyze reads {JSON_FORMAT} version {JSON_VERSION}'
            '; re-run analyze --json on the baseline bag')
    if not isinstance(data.get('topics'), list):
        raise ExpectationError(f'baseline {path}: "topics" must be a list')
    return data


def _get(item: Mapping[str, Any] | None, path: tuple[str, ...]) -> float | None:
    value: Any = item
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


def _delta(topic: str, figure: BaselineFigure, base: float | None, now: float | None,
           tolerance: float) -> Delta:
    if base is None:
        return Delta(topic, figure.label, base, now, False)
    if now is None:
        return Delta(topic, figure.label, base, now, True, 'no longer measured')
    worse = now - base if figure.worse == 'higher' else base - now
    if worse <= 0:
        return Delta(topic, figure.label, base, now, False)
    if base == 0:
        return Delta(topic, figure.label, base, now, True, 'was 0')
    regressed = worse > tolerance * abs(base)
    note = f'{worse / abs(base):+.0%} worse' if regressed else ''
    return Delta(topic, figure.label, base, now, regressed, note)


def compare(current: Mapping[str, Any], baseline: Mapping[str, Any], name: str,
            tolerance: float = DEFAULT_TOLERANCE) -> Comparison:
    """Compare two ``analyze --json`` documents (``current`` from ``tables.to_json``)."""
    deltas: list[Delta] = []
    now_topics = {t.get('topic'): t for t in current.get('topics', [])}
    for base in baseline.get('topics', []):
        if not isinstance(base, Mapping):
            continue
        topic = str(base.get('topic'))
        now = now_topics.get(topic)
        if now is None:
            deltas.append(Delta(topic, 'topic', None, None, True, 'not in this run'))
            continue
        for figure in BASELINE_FIGURES:
            deltas.append(_delta(topic, figure, _get(base, figure.path),
                                 _get(now, figure.path), tolerance))
    base_clock = baseline.get('clock')
    if isinstance(base_clock, Mapping):
        now_clock = current.get('clock')
        name_clock = str(base_clock.get('topic', '/clock'))
        for figure in CLOCK_FIGURES:
            deltas.append(_delta(name_clock, figure, _get(base_clock, figure.path),
                                 _get(now_clock, figure.path), tolerance))
    return Comparison(baseline=name, tolerance=tolerance, deltas=tuple(deltas))


def _text(value: float | None) -> str:
    if value is None:
        return '-'
    return f'{value:,.0f}' if value.is_integer() else f'{value:.4g}'


def format_comparison(comparison: Comparison) -> str:
    """Format a table: each figure next to the baseline's, regressions flagged."""
    header = [('topic', 'l'), ('figure', 'l'), ('baseline', 'r'), ('now', 'r'),
              ('change', 'r'), ('', 'l')]
    rows = []
    for d in comparison.deltas:
        if d.baseline is None and d.measured is None and not d.regressed:
            continue
        change = d.change
        rows.append([d.topic, d.label, _text(d.baseline), _text(d.measured),
                     '-' if change is None else f'{change:+.1%}',
                     f'REGRESSION{f" ({d.note})" if d.note else ""}' if d.regressed else ''])
    count = len(comparison.regressions)
    title = (f'Baseline {comparison.baseline} (tolerance {comparison.tolerance:.0%}): '
             f'{count} regression{"" if count == 1 else "s"}')
    return '\n'.join([title, render(header, rows)])
