"""``analyze``: the monitor's analysis over a recorded bag, as tables, JSON, CSV and plots.

Runs without ROS (``python -m ros2_deadline_monitor.analyze``) and never imports rclpy;
bags are read with ``rosbags``. Errors are one ``ERROR: ...`` line on stderr, never a
traceback, with ``monitor``'s exit codes for the same mistakes: 2 for a bad command line
(``configuration/usage.py``'s one-line refusal), a bad config file (missing, unknown parameter with
"did you mean", invalid value), invalid expectations or baselines and output paths that
cannot be written (checked before the analysis starts); 1 for a bag that cannot be read.
``--check`` turns it into a CI gate (exit 3 when an expectation fails); several bags are
analyzed in parallel worker processes (``--jobs``) and summarized in one table.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import sys
import textwrap
import time
from typing import TextIO

from ros2_deadline_monitor.analysis.errors import (
    ConfigError,
    ExpectationError,
    MonitorError,
    os_error_text,
)
from ros2_deadline_monitor.analysis.whole_run import EXACT_CAP, REL_BIN
from ros2_deadline_monitor.bag.check import (
    BagRun,
    check_bags,
    CheckJob,
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_OK,
    exit_status,
    EXIT_USAGE,
    format_runs,
    judge,
    junit_suite,
)
from ros2_deadline_monitor.bag.plan import build_plan, EXCLUDED_TOPICS, Overrides
from ros2_deadline_monitor.bag.progress import ProgressBar
from ros2_deadline_monitor.bag.reader import BagSource
from ros2_deadline_monitor.bag.replay import BagAnalysis
from ros2_deadline_monitor.configuration import usage
from ros2_deadline_monitor.configuration.expectations import (
    CLOCK_LIMITS,
    Expectations,
    Limit,
    LimitSpec,
    parse_limit,
    TOPIC_LIMITS,
)
from ros2_deadline_monitor.configuration.params_file import FileConfig, load_config
from ros2_deadline_monitor.configuration.topic_flags import add_topic_flags, topic_flags
from ros2_deadline_monitor.configuration.usage import UsageError
from ros2_deadline_monitor.outputs.bag_result import BagResult
from ros2_deadline_monitor.outputs.baseline import (
    DEFAULT_TOLERANCE,
    format_comparison,
    load_baseline,
)
from ros2_deadline_monitor.outputs.junit import junit_xml
from ros2_deadline_monitor.outputs.tables import format_table, to_json, write_csv

__all__ = ['add_arguments', 'build_parser', 'main']

DESCRIPTION = """\
Recompute the deadline monitor's analysis from a recorded rosbag2 bag (MCAP or sqlite3):
per topic the message rate, intervals between cycle starts on the wall and sim clocks
(mean, max, p99), deadline misses, skipped timer periods and lost messages, plus the real
time factor from /clock. Bags holding the monitor's own MonitorStats are summarized too.
"""

_DEFAULTS = textwrap.fill(
    'Without --config or --topic every topic is analyzed except infrastructure topics '
    f'({", ".join(sorted(EXCLUDED_TOPICS))}), hidden topics (a name part starting with _) '
    "and the monitor's own stats, each with its "
    'period learned from its first intervals. Flags override the config file for every '
    'selected topic.', 88)
EPILOG = f"""\
{_DEFAULTS}

Timestamps: a message's arrival is its log time in the bag (when the recorder received it);
its header stamp marks the cycle start when the first messages show it is usable (one
clock, increasing, spaced like the arrivals; --stamp start forces it, --stamp none uses
arrivals). The longest interval includes every gap, outages too. Whole-bag counts, means and
maxima are exact; percentiles are exact up to {EXACT_CAP:,} values per series and within
{REL_BIN / 2:.2%} beyond.

CI gate: limits come from the config file (topic.<id>.expect.max_misses: 0,
clock.expect.min_rtf: 0.95, ...) and from --expect-* flags (for every topic; they win).
With --check a figure that cannot be measured fails its limit as unknown (messages lost:
always, since bags carry no publication sequence numbers).

    analyze run.mcap --config cfg.yaml --check --junit report.xml
    analyze runs/*/ --check --jobs 2 --baseline golden.json

Exit status: 0 success (with --check: every expectation held, nothing regressed), 1 a bag
could not be analyzed (one line on stderr; with several bags: any of them, even if another
failed, as the verdict is incomplete), 2 usage error, bad config file (missing, unknown or
invalid parameter), invalid expectation / baseline or an output that cannot be written,
3 an expectation failed or (with --baseline) a figure regressed, with --check.
"""


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f'expected a number of jobs >= 0, got {text!r}')
    return value or (len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity')
                     else os.cpu_count() or 1)


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float('inf'):
        raise argparse.ArgumentTypeError(f'expected a percentage >= 0, got {text!r}')
    return value


def _limit_help(spec: LimitSpec) -> str:
    scope = 'the clock' if spec in CLOCK_LIMITS else 'every topic'
    text = spec.description[0].lower() + spec.description[1:-1]
    return f'{text} ({scope})'.replace('%', '%%')


def build_parser() -> argparse.ArgumentParser:
    """Build the command line of ``analyze``."""
    parser = usage.UsageParser(
        prog='analyze', description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``analyze`` to ``parser`` (also ``ros2 deadline analyze``'s)."""
    parser.add_argument('bag', metavar='BAG', nargs='+',
                        help='bag directory (with metadata.yaml) or a single .mcap / .db3 file; '
                             'several: each is checked and one summary table printed')
    parser.add_argument('--config', metavar='YAML',
                        help="the monitor's parameter file (e.g. config/monitor.yaml): topics "
                             'and their settings, as for the live node')
    topics = parser.add_argument_group('per-topic settings (override the config file)')
    topics.add_argument('--topic', metavar='NAME', action='append', default=[],
                        help='analyze this topic (repeat for several); with --config: only '
                             'these of the configured ones')
    add_topic_flags(topics, clock_default="'sim' when the bag has /clock, unless the "
                    "header stamps are on the wall clock; else 'wall'")
    out = parser.add_argument_group('outputs (the table goes to stdout unless a FILE is -)')
    out.add_argument('--json', metavar='FILE', help="write every figure as JSON ('-': stdout)")
    out.add_argument('--csv', metavar='FILE', help="write one row per topic as CSV ('-': stdout)")
    out.add_argument('--plot', metavar='DIR', help='write PNG plots into DIR (needs matplotlib)')
    out.add_argument('--html', metavar='FILE',
                     help='write one self-contained HTML report with tables and plots')
    gate = parser.add_argument_group(
        'CI gate (limits: topic.<id>.expect.* and clock.expect.* in --config, or these flags)')
    gate.add_argument('--check', action='store_true',
                      help='exit 3 when an expectation fails (or a figure regressed against '
                           '--baseline), printing one line per failure')
    gate.add_argument('--junit', metavar='FILE',
                      help='write the outcomes as JUnit XML (a testcase per topic and the '
                           'clock), for GitHub Actions, GitLab and Jenkins')
    gate.add_argument('--jobs', metavar='N', type=_jobs, default=1,
                      help='analyze several bags in N worker processes (0: one per CPU; '
                           'default 1)')
    gate.add_argument('--baseline', metavar='JSON',
                      help='compare with a file written earlier by analyze --json and flag '
                           'figures that got worse')
    gate.add_argument('--baseline-tolerance', metavar='PCT', type=_percent,
                      default=100 * DEFAULT_TOLERANCE,
                      help='relative worsening that counts as a regression (default: '
                           f'{100 * DEFAULT_TOLERANCE:g} %%; from 0 any increase does)')
    for spec in TOPIC_LIMITS + CLOCK_LIMITS:
        gate.add_argument(f'--expect-{spec.key.replace("_", "-")}',
                          metavar='N' if spec.integer else 'X',
                          dest=f'expect_{spec.key}', help=_limit_help(spec))
    bar = out.add_mutually_exclusive_group()
    bar.add_argument('--progress', dest='progress', action='store_true', default=None,
                     help='show a progress bar on stderr (default: when stderr is a terminal)')
    bar.add_argument('--no-progress', dest='progress', action='store_false',
                     help='never show a progress bar')


def _overrides(args: argparse.Namespace) -> Overrides:
    flags = topic_flags(args)
    return Overrides(topics=tuple(args.topic), period_ns=flags.period_ns,
                     deadline_ns=flags.ns('deadline_ms'), jitter_ns=flags.ns('jitter_ms'),
                     stamp=flags.stamp, stamp_field=flags.stamp_field, rule=flags.rule,
                     clock=flags.clock, timeout_ns=flags.ns('timeout_s'),
                     kind=flags.kind)


def _write_text(target: str, text: str, stdout: TextIO) -> None:
    if target == '-':
        stdout.write(text)
        return
    path = Path(target)
    try:
        path.write_text(text)
    except OSError as err:
        raise MonitorError(f'cannot write {path}: {err.strerror or err}') from None


def _csv_text(result: BagResult) -> str:
    import io

    buffer = io.StringIO()
    write_csv(result, buffer)
    return buffer.getvalue()


def _expectations(args: argparse.Namespace, file_config: FileConfig | None) -> Expectations:
    """Return the file's expectations overridden by the ``--expect-*`` flags."""
    base = file_config.expectations if file_config is not None else Expectations()
    topic: list[Limit] = []
    clock: list[Limit] = []
    for spec in TOPIC_LIMITS + CLOCK_LIMITS:
        text = getattr(args, f'expect_{spec.key}')
        if text is not None:
            is_clock = spec in CLOCK_LIMITS
            (clock if is_clock else topic).append(parse_limit(spec.key, text, clock=is_clock))
    return base.with_overrides(every_topic=topic, clock=clock)


def _writable_file(flag: str, target: str | None) -> None:
    """Refuse an output file that cannot be written, before any bag is read."""
    if not target or target == '-':
        return
    path = Path(target)
    folder = path.parent
    if path.is_dir():
        raise UsageError(f'{flag} {target}: is a folder, expected a file name')
    if not folder.is_dir():
        raise UsageError(f'{flag} {target}: folder {str(folder)!r} does not exist')
    if not os.access(path if path.exists() else folder, os.W_OK):
        raise UsageError(f'{flag} {target}: not writable')


def _writable_folder(flag: str, target: str | None) -> None:
    """Refuse an output folder that cannot be made or written (its missing parts are made)."""
    if not target:
        return
    path = Path(target)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f'{flag} {target}: {str(existing)!r} is a file, not a folder')
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f'{flag} {target}: {str(existing)!r} is not writable')


def _check_outputs(args: argparse.Namespace) -> None:
    """Check every output path first: a typo must not cost a whole analysis."""
    for flag in ('json', 'csv', 'html', 'junit'):
        _writable_file(f'--{flag}', getattr(args, flag))
    _writable_folder('--plot', args.plot)


def _job(args: argparse.Namespace) -> CheckJob:
    """Read and validate everything the gate needs before any bag is opened."""
    _check_outputs(args)
    try:
        file_config: FileConfig | None = load_config(args.config) if args.config else None
    except ExpectationError:
        raise
    except ConfigError as err:  # monitor exits 2 for a bad params file: so does analyze
        raise UsageError(str(err)) from None
    expectations = _expectations(args, file_config)
    baseline = load_baseline(args.baseline) if args.baseline else None
    if args.check and expectations.empty and baseline is None:
        raise UsageError('--check: nothing to check; set limits in --config '
                         '(topic.<id>.expect.*, clock.expect.*), give --expect-* flags or '
                         '--baseline')
    if len(args.bag) > 1:
        given = [f'--{k}' for k in ('json', 'csv', 'plot', 'html') if getattr(args, k)]
        if given:
            raise UsageError(f'{", ".join(given)} take one bag, got {len(args.bag)}; '
                             'run analyze once per bag for those outputs')
    return CheckJob(file_config=file_config, overrides=_overrides(args),
                    expectations=expectations, baseline=baseline,
                    baseline_name=args.baseline or '',
                    tolerance=args.baseline_tolerance / 100)


def _gated(args: argparse.Namespace) -> bool:
    return bool(args.check or args.junit or args.baseline)


def _write_junit(target: str, runs: list[BagRun], stdout: TextIO) -> None:
    data = junit_xml([junit_suite(r) for r in runs])
    if target == '-':
        stdout.write(data.decode())
        return
    try:
        Path(target).write_bytes(data)
    except OSError as err:
        raise MonitorError(f'cannot write {target}: {err.strerror or err}') from None


def _report_gate(args: argparse.Namespace, run_: BagRun, out: TextIO) -> int:
    """Print the failures and the baseline table; return the gate's exit status."""
    if run_.comparison is not None:
        out.write(format_comparison(run_.comparison) + '\n')
    verdict = run_.verdict
    if verdict is not None and (args.check or args.junit) and verdict.outcomes:
        for outcome in verdict.failed:
            out.write(outcome.line() + '\n')
        held = len(verdict.passed)
        out.write(f'check: {held} of {len(verdict.outcomes)} expectations held'
                  f'{"" if verdict.ok else f", {len(verdict.failed)} failed"}\n')
    if args.junit:
        _write_junit(args.junit, [run_], out)
    return EXIT_FAILED if args.check and run_.failed else EXIT_OK


def run_many(args: argparse.Namespace, job: CheckJob, stdout: TextIO, stderr: TextIO) -> int:
    """Check several bags in parallel and print one table, worst first."""
    enabled = args.progress if args.progress is not None else stderr.isatty()
    total = len(args.bag)
    finished = 0

    def done(run_: BagRun) -> None:
        nonlocal finished
        finished += 1
        if enabled:
            stderr.write(f'[{finished}/{total}] {run_.status} {run_.bag} '
                         f'({run_.seconds:.1f} s)\n')

    runs = check_bags(list(args.bag), job, jobs=args.jobs, done=done)
    stdout.write(format_runs(runs) + '\n')
    for run_ in runs:
        for warning in run_.warnings:
            stderr.write(f'WARNING: {run_.bag}: {warning}\n')
    if args.check:
        for run_ in runs:
            failures = [o.line() for o in run_.verdict.failed] if run_.verdict else []
            failures += [d.line() for d in run_.comparison.regressions] if run_.comparison \
                else []
            for line in failures:
                stdout.write(f'{run_.bag}: {line}\n')
    if args.junit:
        _write_junit(args.junit, runs, stdout)
    for run_ in runs:
        if run_.error:
            stderr.write(f'ERROR: {run_.bag}: {run_.error}\n')
    status = exit_status(runs)
    return status if args.check or status == EXIT_ERROR else EXIT_OK


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Do what ``args`` ask; raise ``MonitorError`` for anything the user must fix."""
    job = _job(args)
    if len(args.bag) > 1:
        return run_many(args, job, stdout, stderr)
    path = args.bag[0]
    file_config = job.file_config
    want_series = bool(args.plot or args.html)
    if want_series:
        from ros2_deadline_monitor.outputs.plots import require_matplotlib

        require_matplotlib()
    began = time.perf_counter()
    with BagSource(path) as bag:
        plan, warnings = build_plan(bag, file_config, _overrides(args))
        for warning in warnings:
            stderr.write(f'WARNING: {warning}\n')
        analysis = BagAnalysis(bag, plan, keep_series=want_series)
        enabled = args.progress if args.progress is not None else stderr.isatty()
        bar = ProgressBar(analysis.message_total, enabled=enabled, stream=stderr)
        analysis.progress = bar
        try:
            result = analysis.run()
        finally:
            bar.close()
    to_stdout = '-' in (args.json, args.csv, args.junit)
    if not to_stdout:
        stdout.write(format_table(result) + '\n')
    if args.json:
        text = json.dumps(to_json(result), indent=2, allow_nan=False)
        _write_text(args.json, text + '\n', stdout)
    if args.csv:
        _write_text(args.csv, _csv_text(result), stdout)
    images = None
    if args.plot or args.html:
        from ros2_deadline_monitor.outputs.plots import render_plots

        images = render_plots(result)
    if args.plot:
        directory = Path(args.plot)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            for name, png in images.items():
                (directory / name).write_bytes(png)
        except OSError as err:
            raise MonitorError(f'cannot write plots to {directory}: '
                               f'{err.strerror or err}') from None
        if not to_stdout:
            stdout.write(f'Plots: {", ".join(sorted(images))} in {directory}\n')
    if args.html:
        from ros2_deadline_monitor.outputs.html import html_report

        _write_text(args.html, html_report(result, images or {}), stdout)
        if not to_stdout:
            stdout.write(f'Report: {args.html}\n')
    if _gated(args):
        gate_out = stderr if to_stdout else stdout
        return _report_gate(args, judge(path, result, job, seconds=time.perf_counter() - began),
                            gate_out)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``analyze``; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as err:
        sys.stderr.write(f'ERROR: {err} (see analyze --help)\n')
        return EXIT_USAGE
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 2
    try:
        return run(args, sys.stdout, sys.stderr)
    except (ExpectationError, UsageError) as err:  # options, config file, outputs: exit 2
        sys.stderr.write(f'ERROR: {err}\n')
        return EXIT_USAGE
    except MonitorError as err:
        sys.stderr.write(f'ERROR: {err}\n')
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write('ERROR: interrupted\n')
        return 130
    except BrokenPipeError:
        return 1
    except OSError as err:  # a path no check foresaw: unreadable, a file name too long
        sys.stderr.write(f'ERROR: {os_error_text(err)}\n')
        return EXIT_ERROR


if __name__ == '__main__':
    sys.exit(main())
