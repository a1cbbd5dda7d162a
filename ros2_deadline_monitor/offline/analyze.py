"""``analyze``: the monitor's analysis over a recorded bag, as tables, JSON, CSV and plots.

Runs without ROS (``python -m ros2_deadline_monitor.analyze``) and never imports rclpy;
bags are read with ``rosbags``. Errors are one ``ERROR: ...`` line on stderr and exit code 1
(2 for usage errors), never a traceback.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
import sys
import textwrap
from typing import TextIO

from ros2_deadline_monitor.core.config import CLOCKS, duration_ns, NS_PER_MS, RULES, STAMPS
from ros2_deadline_monitor.core.errors import ConfigError, MonitorError
from ros2_deadline_monitor.core.stamp_field import parse_stamp_field, StampFieldError

from .accumulate import EXACT_CAP, REL_BIN
from .bag import BagSource
from .config_file import FileConfig, load_config
from .progress import ProgressBar
from .replay import BagAnalysis
from .results import BagResult
from .selection import build_plan, EXCLUDED_TOPICS, Overrides
from .tables import format_table, to_json, write_csv

__all__ = ['build_parser', 'main']

DESCRIPTION = """\
Recompute the deadline monitor's analysis from a recorded rosbag2 bag (MCAP or sqlite3):
per topic the message rate, intervals between cycle starts on the wall and sim clocks
(mean, max, p99), deadline misses, skipped timer periods and lost messages, plus the real
time factor from /clock. Bags holding the monitor's own MonitorStats are summarized too.
"""

_DEFAULTS = textwrap.fill(
    'Without --config or --topic every topic is analyzed except infrastructure topics '
    f'({", ".join(sorted(EXCLUDED_TOPICS))}) and the monitor\'s own stats, each with its '
    'period learned from the median interval. Flags override the config file for every '
    'selected topic.', 88)
EPILOG = f"""\
{_DEFAULTS}

Timestamps: a message's arrival is its log time in the bag (when the recorder received it);
with --stamp start its header stamp marks the cycle start. Whole-bag counts, means and
maxima are exact; percentiles are exact up to {EXACT_CAP:,} values per series and within
{REL_BIN / 2:.2%} beyond.

Exit status: 0 success, 1 error (one line on stderr), 2 usage error.
"""


def _positive_ms(text: str) -> int:
    """``argparse`` type: a positive number of ms, as int ns."""
    try:
        return duration_ns('value', float(text), NS_PER_MS)
    except (ValueError, ConfigError):
        raise argparse.ArgumentTypeError(
            f'expected a positive number of milliseconds, got {text!r}') from None


def _zero_ok_ms(text: str) -> int:
    try:
        return duration_ns('value', float(text), NS_PER_MS, zero_ok=True)
    except (ValueError, ConfigError):
        raise argparse.ArgumentTypeError(
            f'expected a number of milliseconds >= 0, got {text!r}') from None


def _stamp_field(text: str) -> str:
    """``argparse`` type: a field path such as ``transforms[0].header.stamp``."""
    try:
        parse_stamp_field(text)
    except StampFieldError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    """Build the command line of ``analyze``."""
    parser = argparse.ArgumentParser(
        prog='analyze', description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('bag', metavar='BAG',
                        help='bag directory (with metadata.yaml) or a single .mcap / .db3 file')
    parser.add_argument('--config', metavar='YAML',
                        help="the monitor's parameter file (e.g. config/monitor.yaml): topics "
                             'and their settings, as for the live node')
    topics = parser.add_argument_group('per-topic settings (override the config file)')
    topics.add_argument('--topic', metavar='NAME', action='append', default=[],
                        help='analyze this topic (repeat for several); with --config: only '
                             'these of the configured ones')
    topics.add_argument('--period-ms', metavar='X', type=_positive_ms,
                        help='expected period T (default: learned from the median interval)')
    topics.add_argument('--deadline-ms', metavar='X', type=_positive_ms,
                        help='deadline D for the response rule (default: the period)')
    topics.add_argument('--jitter-ms', metavar='X', type=_zero_ok_ms,
                        help='jitter tolerance J (default: 5%% of the period)')
    topics.add_argument('--stamp', choices=STAMPS,
                        help="what header.stamp means: 'start' (cycle start) or 'none' "
                             '(default: none; the arrival starts the cycle)')
    topics.add_argument('--stamp-field', metavar='PATH', type=_stamp_field,
                        help='where the stamp is in each message, a field path to a '
                             'builtin_interfaces/Time (default: header.stamp; e.g. '
                             'transforms[0].header.stamp for tf2_msgs/TFMessage)')
    topics.add_argument('--rule', choices=RULES,
                        help='deadline miss rule (default: response with --stamp start, else '
                             'interval)')
    topics.add_argument('--clock', choices=CLOCKS,
                        help="clock of the producing timer (default: 'sim' when the bag has "
                             "/clock, unless the header stamps are on the wall clock; else "
                             "'wall')")
    out = parser.add_argument_group('outputs (the table goes to stdout unless a FILE is -)')
    out.add_argument('--json', metavar='FILE', help="write every figure as JSON ('-': stdout)")
    out.add_argument('--csv', metavar='FILE', help="write one row per topic as CSV ('-': stdout)")
    out.add_argument('--plot', metavar='DIR', help='write PNG figures into DIR (needs matplotlib)')
    out.add_argument('--html', metavar='FILE',
                     help='write one self-contained HTML report with tables and figures')
    bar = out.add_mutually_exclusive_group()
    bar.add_argument('--progress', dest='progress', action='store_true', default=None,
                     help='show a progress bar on stderr (default: when stderr is a terminal)')
    bar.add_argument('--no-progress', dest='progress', action='store_false',
                     help='never show a progress bar')
    return parser


def _overrides(args: argparse.Namespace) -> Overrides:
    return Overrides(topics=tuple(args.topic), period_ns=args.period_ms,
                     deadline_ns=args.deadline_ms, jitter_ns=args.jitter_ms, stamp=args.stamp,
                     stamp_field=args.stamp_field, rule=args.rule, clock=args.clock)


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


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """Do what ``args`` ask; raise ``MonitorError`` for anything the user must fix."""
    file_config: FileConfig | None = load_config(args.config) if args.config else None
    want_series = bool(args.plot or args.html)
    if want_series:
        from .plots import require_matplotlib

        require_matplotlib()
    with BagSource(args.bag) as bag:
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
    to_stdout = '-' in (args.json, args.csv)
    if not to_stdout:
        stdout.write(format_table(result) + '\n')
    if args.json:
        text = json.dumps(to_json(result), indent=2, allow_nan=False)
        _write_text(args.json, text + '\n', stdout)
    if args.csv:
        _write_text(args.csv, _csv_text(result), stdout)
    images = None
    if args.plot or args.html:
        from .plots import render_figures

        images = render_figures(result)
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
        from .html import html_report

        _write_text(args.html, html_report(result, images or {}), stdout)
        if not to_stdout:
            stdout.write(f'Report: {args.html}\n')
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``analyze``; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 2
    try:
        return run(args, sys.stdout, sys.stderr)
    except MonitorError as err:
        sys.stderr.write(f'ERROR: {err}\n')
        return 1
    except KeyboardInterrupt:
        sys.stderr.write('ERROR: interrupted\n')
        return 130
    except BrokenPipeError:
        return 1


if __name__ == '__main__':
    sys.exit(main())
