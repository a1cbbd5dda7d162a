"""Compare a run with an earlier one: ``analyze BAG --baseline earlier.json``.

The baseline is the JSON document ``analyze --json`` wrote (its ``format`` and ``version``
are checked). Each figure below is compared with the baseline's for every topic found in
both (by topic name) and for the clock, named by its key in the table of figures
(``analysis/figures.py``) and found in the documents under its ``json`` key. A figure
*regresses* when it got worse by more than
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
from ros2_deadline_monitor.analysis.figures import Figure, find, RUN_CLOCK, RUN_TOPIC
from ros2_deadline_monitor.outputs.tables import JSON_FORMAT, JSON_VERSION, render

__all__ = ['BASELINE_FIGURES', 'Comparison', 'Delta', 'compare', 'format_comparison',
           'load_baseline']

DEFAULT_TOLERANCE = 0.10


HIGHER = 'higher'
LOWER = 'lower'


@dataclass(frozen=True)
class BaselineFigure:
    """One compared figure: its key in the documents, its label and which direction is worse."""

    key: str
    """The figure's ``json`` key (a bag fact's key for the one clock fact compared)."""
    label: str
    worse: str
    """``HIGHER`` or ``LOWER``."""

    @classmethod
    def of(cls, figure: Figure, worse: str) -> BaselineFigure:
        """Compare a figure of the table: its JSON key, labelled by its diagnostic key."""
        return cls(figure.json, figure.key, worse)


BASELINE_FIGURES: tuple[BaselineFigure, ...] = tuple(
    BaselineFigure.of(find(RUN_TOPIC, name), worse) for name, worse in (
        ('deadline misses', HIGHER), ('miss ratio', HIGHER), ('skipped periods', HIGHER),
        ('max interval wall', HIGHER), ('p99 interval wall', HIGHER),
        ('max interval sim', HIGHER), ('p99 interval sim', HIGHER),
        ('max response', HIGHER), ('p99 response', HIGHER), ('rate wall', LOWER)))
CLOCK_FIGURES: tuple[BaselineFigure, ...] = (
    BaselineFigure.of(find(RUN_CLOCK, 'RTF overall'), LOWER),
    BaselineFigure.of(find(RUN_CLOCK, 'worst RTF window'), LOWER),
    # The bag's own fact (``ClockFacts``), no figure of the table: the longest gap of the bag.
    BaselineFigure('max_wall_gap_ms', 'longest /clock gap (ms)', HIGHER),
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


def _get(item: Mapping[str, Any] | None, key: str) -> float | None:
    if not isinstance(item, Mapping):
        return None
    value = item.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


def _delta(topic: str, figure: BaselineFigure, base: float | None, now: float | None,
           tolerance: float) -> Delta:
    if base is None:
        return Delta(topic, figure.label, base, now, False)
    if now is None:
        return Delta(topic, figure.label, base, now, True, 'no longer measured')
    worse = now - base if figure.worse == HIGHER else base - now
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
            deltas.append(_delta(topic, figure, _get(base, figure.key),
                                 _get(now, figure.key), tolerance))
    base_clock = baseline.get('clock')
    if isinstance(base_clock, Mapping):
        now_clock = current.get('clock')
        name_clock = str(base_clock.get('topic', '/clock'))
        for figure in CLOCK_FIGURES:
            deltas.append(_delta(name_clock, figure, _get(base_clock, figure.key),
                                 _get(now_clock, figure.key), tolerance))
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
