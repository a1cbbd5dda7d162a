"""The CI gate over bags: whole-run figures of a ``BagResult``, and many bags in parallel.

``figures_from`` gives the bag's final ``Snapshot``, what ``configuration.expectations.evaluate``
checks (its whole-run figures, through ``analysis.figures.RUN_TOPIC`` / ``RUN_CLOCK``).
``check_bag`` analyzes one bag and evaluates it; it runs in a worker process for ``analyze
runs/*/ --check --jobs N`` and returns a picklable ``BagRun`` (snapshot, verdict, baseline
comparison or the error), never raises for a bag that cannot be read. ``format_runs``
prints them as one table, worst first; ``exit_status`` turns them into one exit code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import as_completed, ProcessPoolExecutor
from dataclasses import dataclass
import multiprocessing
import resource
import time
from typing import Any

from ros2_deadline_monitor.analysis.errors import MonitorError, os_error_text
from ros2_deadline_monitor.analysis.figures import Figure, find, known, RUN_CLOCK, RUN_TOPIC
from ros2_deadline_monitor.analysis.snapshot import (
    Snapshot,
    TopicSnapshot,
)
from ros2_deadline_monitor.configuration.expectations import evaluate, Expectations, Verdict
from ros2_deadline_monitor.configuration.params_file import FileConfig
from ros2_deadline_monitor.outputs.bag_result import BagResult
from ros2_deadline_monitor.outputs.baseline import compare, Comparison
from ros2_deadline_monitor.outputs.junit import cases_from, JunitCase, JunitSuite
from ros2_deadline_monitor.outputs.tables import render, to_json

__all__ = ['BagRun', 'CheckJob', 'EXIT_ERROR', 'EXIT_FAILED', 'EXIT_OK', 'EXIT_USAGE',
           'check_bag', 'check_bags', 'exit_status', 'figures_from', 'format_runs', 'junit_suite']

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_FAILED = 3


MISSES, SKIPPED, MAX_INTERVAL = (find(RUN_TOPIC, name) for name in (
    'deadline misses', 'skipped periods', 'max interval'))
RTF, WORST_BIN = find(RUN_CLOCK, 'RTF overall'), find(RUN_CLOCK, 'worst RTF window')
"""The figures of the one-row-per-bag table, headed and written as the table says."""
NAN = float('nan')


def figures_from(result: BagResult) -> Snapshot:
    """Whole-run figures of an analyzed bag: its final snapshot, which the gate reads."""
    return result.snapshot


# -- one bag, in a worker ---------------------------------------------------------------------

@dataclass(frozen=True)
class CheckJob:
    """What every bag of a ``--check`` run is analyzed and judged with (picklable)."""

    file_config: FileConfig | None
    overrides: Any
    """``bag_plan.Overrides``."""
    expectations: Expectations
    baseline: dict[str, Any] | None = None
    baseline_name: str = ''
    tolerance: float = 0.1


@dataclass(frozen=True)
class BagRun:
    """The outcome of one bag: figures and verdict, or why it could not be analyzed."""

    bag: str
    figures: Snapshot | None
    """The bag's final snapshot (its whole-run figures)."""
    verdict: Verdict | None
    comparison: Comparison | None = None
    error: str = ''
    warnings: tuple[str, ...] = ()
    messages: int = 0
    seconds: float = 0.0
    peak_rss_mb: float = 0.0
    """Peak resident memory while the bag was analyzed (of the whole process where the peak
    cannot be reset)."""

    @property
    def failed(self) -> bool:
        """An expectation did not hold or a figure regressed against the baseline."""
        return bool((self.verdict is not None and not self.verdict.ok)
                    or (self.comparison is not None and self.comparison.regressions))

    @property
    def status(self) -> str:
        """'ERROR', 'FAIL' or 'ok'."""
        return 'ERROR' if self.error else 'FAIL' if self.failed else 'ok'


def peak_rss_mb() -> float:
    """Peak resident memory of this process image in MB (``VmHWM``, else ``ru_maxrss``).

    ``VmHWM`` first: the venv's ROS wheel bootstrapper re-executes Python at start-up, and
    ``ru_maxrss`` survives ``exec`` (it would report the larger of the two images).
    """
    try:
        with open('/proc/self/status') as status:
            for line in status:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def analyze_result(path: str, job: CheckJob) -> tuple[BagResult, list[str]]:
    """Analyze one bag with the job's configuration; raise ``MonitorError`` if it cannot."""
    from ros2_deadline_monitor.bag.plan import build_plan
    from ros2_deadline_monitor.bag.reader import BagSource
    from ros2_deadline_monitor.bag.replay import BagAnalysis

    with BagSource(path) as bag:
        plan, warnings = build_plan(bag, job.file_config, job.overrides)
        return BagAnalysis(bag, plan).run(), warnings


def judge(path: str, result: BagResult, job: CheckJob, warnings: Sequence[str] = (),
          seconds: float = 0.0) -> BagRun:
    """Evaluate an analyzed bag against the job's expectations and baseline."""
    figures = figures_from(result)
    comparison = None
    if job.baseline is not None:
        comparison = compare(to_json(result), job.baseline, job.baseline_name, job.tolerance)
    messages = sum(t.report.messages_total for t, _ in result.topics if t.report)
    return BagRun(bag=path, figures=figures, verdict=evaluate(job.expectations, figures),
                  comparison=comparison, warnings=tuple(warnings), messages=messages,
                  seconds=seconds, peak_rss_mb=peak_rss_mb())


def check_bag(path: str, job: CheckJob) -> BagRun:
    """Analyze and judge one bag; a bag that cannot be analyzed gives a ``BagRun`` with error."""
    reset_peak_rss()
    began = time.perf_counter()
    try:
        result, warnings = analyze_result(path, job)
    except (MonitorError, OSError) as err:  # OSError: unreadable, a file name too long
        error = os_error_text(err) if isinstance(err, OSError) else str(err)
        return BagRun(bag=path, figures=None, verdict=None, error=error,
                      seconds=time.perf_counter() - began, peak_rss_mb=peak_rss_mb())
    return judge(path, result, job, warnings, time.perf_counter() - began)


def check_bags(paths: Sequence[str], job: CheckJob, jobs: int = 1,
               done: Callable[[BagRun], None] | None = None) -> list[BagRun]:
    """Check every bag, ``jobs`` at a time in worker processes; results in ``paths`` order.

    Each bag's ``peak_rss_mb`` is its own (the peak is reset when a bag starts, where Linux
    allows); ``done`` is called as each finishes.
    """
    if jobs <= 1 or len(paths) <= 1:
        runs = []
        for path in paths:
            runs.append(check_bag(path, job))
            if done is not None:
                done(runs[-1])
        return runs
    by_path: dict[int, BagRun] = {}
    _import_analyzer()
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=_context()) as pool:
        futures = {pool.submit(check_bag, path, job): i for i, path in enumerate(paths)}
        for future in as_completed(futures):
            i = futures[future]
            try:
                run = future.result()
            except Exception as err:  # a crashed worker or a bug: report it for this bag
                run = BagRun(bag=paths[i], figures=None, verdict=None,
                             error=f'analysis failed: {type(err).__name__}: {err}')
            by_path[i] = run
            if done is not None:
                done(run)
    return [by_path[i] for i in range(len(paths))]


def _import_analyzer() -> None:
    """Import here what every bag's analysis imports, so forked workers start with it.

    Each would otherwise pay ~40 ms on its first bag (rosbags' readers and type parser,
    numpy.ma for quantiles): a quarter of a 250,000-message bag's analysis.
    """
    import numpy.ma  # noqa: F401
    from rosbags.rosbag2 import Reader  # noqa: F401
    from rosbags.rosbag2.storage_mcap import McapReader  # noqa: F401
    from rosbags.typesys import get_types_from_msg, get_typestore  # noqa: F401

    from ros2_deadline_monitor.bag import reader as bag  # noqa: F401


def _context() -> multiprocessing.context.BaseContext:
    """Return ``fork`` where it exists: workers start with the analyzer already imported.

    (``forkserver`` or ``spawn`` import numpy and rosbags again in every worker, which costs
    more than a small bag's analysis.) The parent holds no threads when it forks.
    """
    if 'fork' in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context('fork')
    return multiprocessing.get_context()


def reset_peak_rss() -> None:
    """Start a new peak-RSS measurement for this process (Linux: ``clear_refs`` 5)."""
    try:
        with open('/proc/self/clear_refs', 'w') as refs:
            refs.write('5')
    except OSError:
        pass


def exit_status(runs: Iterable[BagRun]) -> int:
    """One exit code for all bags: 1 if any could not be analyzed, else 3 if any failed, else 0.

    An unreadable bag wins over a failed one: the verdict over the set is incomplete.
    """
    runs = list(runs)
    if any(r.error for r in runs):
        return EXIT_ERROR
    if any(r.failed for r in runs):
        return EXIT_FAILED
    return EXIT_OK


# -- presentation -----------------------------------------------------------------------------

def _severity(run: BagRun) -> tuple:
    failed = len(run.verdict.failed) if run.verdict else 0
    regressions = len(run.comparison.regressions) if run.comparison else 0
    misses = sum(_topic(run.figures, t, MISSES) or 0
                 for t in run.figures.topics) if run.figures else 0
    return (run.status != 'ERROR', run.status != 'FAIL', -failed - regressions, -misses,
            run.bag)


def _topic(snapshot: Snapshot, topic: TopicSnapshot, figure: Figure) -> Any:
    return known(figure.get(snapshot, topic))


def _clock(snapshot: Snapshot, figure: Figure) -> Any:
    return known(figure.get(snapshot, snapshot.clock))


def _worst(values: Iterable[float | None], pick: Callable[..., float]) -> float | None:
    present = [v for v in values if v is not None]
    return pick(present) if present else None


def _cell(value: float | None, digits: int = 0) -> str:
    return '-' if value is None else f'{value:,.{digits}f}'


def format_runs(runs: Sequence[BagRun]) -> str:
    """One row per bag, worst first: status, failed expectations, the key figures."""
    header = [('bag', 'l'), ('status', 'l'), ('failed', 'r'), ('msgs', 'r'),
              *((figure.column, 'r') for figure in (MISSES, SKIPPED, MAX_INTERVAL, RTF,
                                                    WORST_BIN)),
              ('s', 'r'), ('first failure / error', 'l')]
    rows = []
    for run in sorted(runs, key=_severity):
        if run.error:
            rows.append([run.bag, run.status, '-', '-', '-', '-', '-', '-', '-',
                         f'{run.seconds:.1f}', run.error])
            continue
        figures, verdict = run.figures, run.verdict
        assert figures is not None and verdict is not None
        topics = figures.topics
        failed = [o.describe() for o in verdict.failed]
        if run.comparison is not None:
            failed += [d.line() for d in run.comparison.regressions]
        checked = len(verdict.outcomes) + (len(run.comparison.deltas) if run.comparison else 0)
        rows.append([
            run.bag, run.status, f'{len(failed)}/{checked}', f'{run.messages:,}',
            _cell(_worst((_topic(figures, t, MISSES) for t in topics), sum)
                  if topics else None),
            _cell(_worst((_topic(figures, t, SKIPPED) for t in topics), sum)
                  if topics else None),
            _cell(_worst((_topic(figures, t, MAX_INTERVAL) for t in topics), max),
                  MAX_INTERVAL.digits_in_column),
            _cell(_clock(figures, RTF), RTF.digits_in_column),
            _cell(_clock(figures, WORST_BIN), WORST_BIN.digits_in_column),
            f'{run.seconds:.1f}', failed[0] if failed else ''])
    counts = {s: sum(1 for r in runs if r.status == s) for s in ('FAIL', 'ERROR', 'ok')}
    title = (f'{len(runs)} bags: {counts["FAIL"]} failed, {counts["ERROR"]} could not be '
             f'analyzed, {counts["ok"]} ok')
    return '\n'.join([title, render(header, rows)])


def junit_suite(run: BagRun) -> JunitSuite:
    """Build the JUnit testsuite of one bag: a testcase per topic, the clock, the baseline."""
    if run.error:
        return JunitSuite(run.bag, (JunitCase('analyze', error=run.error),), run.seconds)
    assert run.verdict is not None and run.figures is not None
    snapshot = run.figures
    clock = snapshot.clock.topic if snapshot.clock.report.messages_total else None
    cases = cases_from(run.verdict.outcomes, [t.topic for t in snapshot.topics], clock)
    if run.comparison is not None:
        cases.append(JunitCase(
            f'baseline {run.comparison.baseline}',
            failures=tuple(d.line() for d in run.comparison.regressions),
            passed=(f'{len(run.comparison.deltas) - len(run.comparison.regressions)} figures '
                    f'within {run.comparison.tolerance:.0%} of the baseline',)))
    return JunitSuite(run.bag, tuple(cases), run.seconds)
