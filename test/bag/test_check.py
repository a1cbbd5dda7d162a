"""The CI gate of ``analyze``: --check exit codes, JUnit XML, several bags, baselines."""

from __future__ import annotations

import json
from pathlib import Path
import xml.etree.ElementTree as ET  # noqa: N817

import pytest

from ros2_deadline_monitor.analysis.figures import record, RUN_CLOCK, RUN_TOPIC, unknowns
from ros2_deadline_monitor.bag.analyze import main
from ros2_deadline_monitor.bag.check import (
    BagRun,
    check_bags,
    CheckJob,
    exit_status,
    figures_from,
)
from ros2_deadline_monitor.bag.plan import Overrides
from ros2_deadline_monitor.configuration.expectations import Expectations, parse_limit

MS = 1_000_000


def config(tmp_path: Path, expect: str = '', clock: str = '', name: str = 'cfg.yaml') -> Path:
    """Write a config of the reference topic with ``expect`` lines under it."""
    lines = ['deadline_monitor:', '  ros__parameters:', '    topics: [cmd]',
             '    topic.cmd.name: /demo/cmd', '    topic.cmd.period_ms: 10.0',
             '    topic.cmd.stamp: start']
    if expect:
        lines += ['    topic.cmd.expect:'] + [f'      {line}' for line in expect.split(';')]
    if clock:
        lines += [f'    clock.expect.{line}' for line in clock.split(';')]
    path = tmp_path / name
    path.write_text('\n'.join(lines) + '\n')
    return path


def gate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv, '--no-progress'])
    out, err = capsys.readouterr()
    assert 'Traceback' not in err
    return code, out, err


@pytest.fixture
def ref(bags, tmp_path: Path):
    return bags.reference(tmp_path / 'ref', 'mcap')


# -- one bag ----------------------------------------------------------------------------------

def test_check_passes_with_exit_0(ref, tmp_path: Path, capsys) -> None:
    cfg = config(tmp_path, 'max_misses: 20;max_skipped: 10;max_interval_ms: 25.0',
                 'min_rtf: 0.99;min_rtf_bin: 0.9')
    code, out, _ = gate(capsys, str(ref.path), '--config', str(cfg), '--check')
    assert code == 0
    assert 'check: 5 of 5 expectations held' in out
    assert 'FAIL' not in out


def test_check_fails_with_exit_3_one_line_per_failure(ref, tmp_path: Path, capsys) -> None:
    cfg = config(tmp_path, 'max_misses: 0;max_skipped: 0;min_rate_hz: 95.0')
    code, out, _ = gate(capsys, str(ref.path), '--config', str(cfg), '--check')
    assert code == 3
    failed = [line for line in out.splitlines() if line.startswith('FAIL')]
    assert failed == ['FAIL /demo/cmd: deadline misses 20, expected <= 0 (max_misses)',
                      'FAIL /demo/cmd: skipped periods 10, expected <= 0 (max_skipped)']
    assert 'check: 1 of 3 expectations held, 2 failed' in out


def test_flags_apply_to_every_topic_and_win_over_the_file(ref, tmp_path: Path,
                                                           capsys) -> None:
    cfg = config(tmp_path, 'max_misses: 0')
    code, _, _ = gate(capsys, str(ref.path), '--config', str(cfg), '--check',
                      '--expect-max-misses', '20')
    assert code == 0
    code, out, _ = gate(capsys, str(ref.path), '--stamp', 'start', '--period-ms', '10',
                        '--check', '--expect-max-interval-ms', '20')
    assert code == 3
    assert 'FAIL /demo/cmd: max interval 22 ms, expected <= 20 ms (max_interval_ms)' in out


def test_loss_from_a_bag_fails_as_unknown(ref, capsys) -> None:
    code, out, _ = gate(capsys, str(ref.path), '--check', '--expect-max-lost', '1000')
    assert code == 3
    assert 'FAIL /demo/cmd: messages lost unknown, expected <= 1,000 (max_lost): unknown: ' \
           'not measured from a bag' in out


def test_clock_expectation_without_clock_fails(bags, tmp_path: Path, capsys) -> None:
    path = bags.write(tmp_path / 'noclock', 'mcap', {'/a': 'std_msgs/msg/Header'}, [
        ('/a', 1_700_000_000_000_000_000 + k * 10 * MS, bags.header_cdr(0)) for k in range(50)])
    code, out, _ = gate(capsys, str(path), '--check', '--expect-min-rtf', '0.5')
    assert code == 3
    assert 'FAIL /clock: RTF overall unknown, expected >= 0.5 (min_rtf): unknown: no /clock' \
           in out


def test_configured_topic_missing_from_the_bag_fails(ref, tmp_path: Path, capsys) -> None:
    cfg = tmp_path / 'two.yaml'
    cfg.write_text('deadline_monitor:\n  ros__parameters:\n    topics: [cmd, imu]\n'
                   '    topic.cmd.name: /demo/cmd\n    topic.imu.name: /imu\n'
                   '    topic.imu.expect.max_misses: 0\n')
    code, out, err = gate(capsys, str(ref.path), '--config', str(cfg), '--check')
    assert code == 3
    assert 'FAIL imu: deadline misses unknown, expected <= 0 (max_misses): unknown: the ' \
           'topic is not in the run' in out
    assert 'WARNING: /imu: configured but not in the bag' in err


@pytest.mark.parametrize(('setup', 'message'), [
    (lambda p: ['--config', str(config(p, 'max_mises: 0'))],
     "unknown expectation 'max_mises' (did you mean topic.cmd.expect.max_misses?)"),
    (lambda p: ['--config', str(config(p, 'max_misses: -1'))],
     'topic.cmd.expect.max_misses must be ≥ 0'),
    (lambda p: ['--config', str(config(p, clock='min_rft: 0.9'))],
     'did you mean clock.expect.min_rtf?'),
    (lambda p: ['--expect-max-skipped', '-2'], '--expect-max-skipped must be ≥ 0'),
    (lambda p: ['--expect-min-rtf', 'fast'], "--expect-min-rtf must be a number, got 'fast'"),
    (lambda p: [], '--check: nothing to check'),
])
def test_bad_expectations_exit_2_with_one_error_line(ref, tmp_path: Path, capsys, setup,
                                                     message: str) -> None:
    code, out, err = gate(capsys, str(ref.path), '--check', *setup(tmp_path))
    assert code == 2
    assert out == ''
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('ERROR: ') and message in lines[0], err


def test_unreadable_bag_with_check_exits_1(tmp_path: Path, capsys) -> None:
    code, _, err = gate(capsys, str(tmp_path / 'nope'), '--check', '--expect-max-misses', '0')
    assert code == 1
    assert err.startswith('ERROR: ') and err.count('\n') == 1


# -- JUnit ------------------------------------------------------------------------------------

def test_junit_has_a_testcase_per_topic_and_the_clock(ref, tmp_path: Path, capsys) -> None:
    cfg = config(tmp_path, 'max_misses: 0;max_interval_ms: 25.0', 'min_rtf: 0.99')
    report = tmp_path / 'report.xml'
    code, _, _ = gate(capsys, str(ref.path), '--config', str(cfg), '--check', '--junit',
                      str(report))
    assert code == 3
    root = ET.parse(report).getroot()
    assert root.tag == 'testsuites'
    assert (root.get('tests'), root.get('failures'), root.get('errors')) == ('2', '1', '0')
    suite, = root.findall('testsuite')
    assert suite.get('name') == str(ref.path)
    cases = {c.get('name'): c for c in suite.findall('testcase')}
    assert list(cases) == ['/demo/cmd', '/clock']
    failure = cases['/demo/cmd'].find('failure')
    assert failure.get('message') == '/demo/cmd: deadline misses 20, expected <= 0 (max_misses)'
    assert 'max interval 22 ms, expected <= 25 ms' in cases['/demo/cmd'].find('system-out').text
    assert cases['/clock'].find('failure') is None
    assert float(suite.get('time')) > 0


def test_junit_escapes_and_needs_no_check(bags, tmp_path: Path, capsys) -> None:
    messages = [('/a', 1_700_000_000_000_000_000 + k * 10 * MS, bags.header_cdr(0))
                for k in range(50)]
    # XML special characters in the bag's name (the suite name) survive the round trip.
    path = bags.write(tmp_path / 'run "1" <a&b>', 'mcap', {'/a': 'std_msgs/msg/Header'},
                      messages)
    report = tmp_path / 'odd.xml'
    code, _, _ = gate(capsys, str(path), '--junit', str(report), '--expect-max-misses', '0')
    assert code == 0  # without --check the report is written, the exit status unchanged
    assert '&lt;a&amp;b&gt;' in report.read_text()
    suite, = ET.parse(report).getroot().iter('testsuite')
    assert suite.get('name') == str(path)
    case, = suite.iter('testcase')
    assert case.get('name') == '/a' and case.find('failure') is None


# -- several bags -----------------------------------------------------------------------------

def test_jobs_2_over_two_bags_one_table_worst_first(bags, tmp_path: Path, capsys) -> None:
    bad = bags.reference(tmp_path / 'stalls', 'mcap')
    starts, _ = bags.rcl_timer_cycles(stall_every=0)
    good = bags.write(tmp_path / 'clean', 'sqlite3', {'/demo/cmd': 'std_msgs/msg/Header'},
                      [('/demo/cmd', int(s) + 300_000, bags.header_cdr(int(s))) for s in starts])
    cfg = config(tmp_path, 'max_misses: 0;max_skipped: 0')
    report = tmp_path / 'all.xml'
    code, out, _ = gate(capsys, str(good), str(bad.path), '--config', str(cfg), '--check',
                        '--jobs', '2', '--junit', str(report))
    assert code == 3
    lines = out.splitlines()
    assert lines[0] == '2 bags: 1 failed, 0 could not be analyzed, 1 ok'
    rows = [line.split() for line in lines[2:4]]
    assert [(r[0], r[1], r[2]) for r in rows] == [(str(bad.path), 'FAIL', '2/2'),
                                                  (str(good), 'ok', '0/2')]
    assert f'{bad.path}: FAIL /demo/cmd: deadline misses 20, expected <= 0 (max_misses)' in out
    suites = ET.parse(report).getroot().findall('testsuite')
    assert [s.get('name') for s in suites] == [str(good), str(bad.path)]
    assert [s.get('failures') for s in suites] == ['0', '1']


def test_several_bags_one_unreadable_exits_1(ref, tmp_path: Path, capsys) -> None:
    (tmp_path / 'broken').mkdir()
    (tmp_path / 'broken' / 'metadata.yaml').write_text('not: [a bag\n')
    code, out, err = gate(capsys, str(ref.path), str(tmp_path / 'broken'), '--check',
                          '--expect-max-misses', '0', '--jobs', '2')
    assert code == 1
    assert out.splitlines()[2].split()[:2] == [str(tmp_path / 'broken'), 'ERROR']
    assert f'ERROR: {tmp_path / "broken"}: ' in err


def test_several_bags_refuse_single_bag_outputs(ref, tmp_path: Path, capsys) -> None:
    code, _, err = gate(capsys, str(ref.path), str(ref.path), '--json', 'x.json')
    assert code == 2
    assert err.startswith('ERROR: --json take one bag, got 2')


def test_check_bags_returns_picklable_runs_in_order(bags, tmp_path: Path) -> None:
    import pickle

    paths = [str(bags.reference(tmp_path / f'r{i}', 'mcap').path) for i in range(2)]
    job = CheckJob(file_config=None, overrides=Overrides(stamp='start'),
                   expectations=Expectations(every_topic=(parse_limit('max_misses', '0'),)))
    runs = check_bags(paths, job, jobs=2)
    assert [r.bag for r in runs] == paths
    assert all(r.status == 'FAIL' and r.peak_rss_mb > 0 for r in runs)
    # repr: a snapshot holds NaN (nothing measured), and NaN != NaN once unpickled.
    assert repr(pickle.loads(pickle.dumps(runs))) == repr(runs)
    assert exit_status(runs) == 3
    assert exit_status([*runs, BagRun('x', None, None, error='cannot open')]) == 1
    assert exit_status([]) == 0


def test_figures_from_result(ref) -> None:
    from ros2_deadline_monitor.bag.plan import build_plan
    from ros2_deadline_monitor.bag.reader import BagSource
    from ros2_deadline_monitor.bag.replay import BagAnalysis

    with BagSource(ref.path) as bag:
        plan, _ = build_plan(bag, None, Overrides(stamp='start', period_ns=10 * MS))
        result = BagAnalysis(bag, plan).run()
    snapshot = figures_from(result)
    topic, = snapshot.topics
    figures = record(RUN_TOPIC, snapshot, topic)
    assert (figures['deadline_misses'], figures['skipped_periods'], figures['messages']) == (
        20, 10, 490)
    assert figures['max_interval_ms'] == pytest.approx(22)
    assert figures['messages_lost'] is None
    assert 'sequence numbers' in unknowns(RUN_TOPIC, snapshot, topic)['messages_lost']
    assert record(RUN_CLOCK, snapshot, snapshot.clock)['rtf_total'] == pytest.approx(1.0)


# -- baseline ---------------------------------------------------------------------------------

def test_baseline_same_run_has_no_regression(ref, tmp_path: Path, capsys) -> None:
    base = tmp_path / 'base.json'
    assert main([str(ref.path), '--stamp', 'start', '--no-progress', '--json', str(base)]) == 0
    capsys.readouterr()
    assert json.loads(base.read_text())['format'] == 'ros2_deadline_monitor/analyze'
    code, out, _ = gate(capsys, str(ref.path), '--stamp', 'start', '--baseline', str(base),
                        '--check')
    assert code == 0
    assert 'Baseline' in out and '0 regressions' in out


def test_baseline_flags_regressions_beyond_tolerance(bags, tmp_path: Path, capsys) -> None:
    starts, _ = bags.rcl_timer_cycles(stall_every=0)
    clean = bags.write(tmp_path / 'clean', 'mcap', {'/demo/cmd': 'std_msgs/msg/Header'},
                       [('/demo/cmd', int(s) + 300_000, bags.header_cdr(int(s)))
                        for s in starts])
    base = tmp_path / 'clean.json'
    assert main([str(clean), '--stamp', 'start', '--period-ms', '10', '--no-progress',
                 '--json', str(base)]) == 0
    ref = bags.reference(tmp_path / 'ref', 'mcap')
    capsys.readouterr()
    code, out, _ = gate(capsys, str(ref.path), '--stamp', 'start', '--period-ms', '10',
                        '--baseline', str(base), '--check')
    assert code == 3
    assert 'REGRESSION (was 0)' in out  # misses and skipped periods went from 0 to > 0
    rows = {line.split('  ')[1].strip(): line for line in out.splitlines()
            if line.startswith('/demo/cmd ')}
    assert 'REGRESSION (+120% worse)' in rows['max interval wall (ms)']
    assert 'REGRESSION' not in rows['rate wall (Hz)']  # 100 -> 98 Hz is within 10 %
    # without --check the comparison is printed and the exit status stays 0
    code, out, _ = gate(capsys, str(ref.path), '--stamp', 'start', '--period-ms', '10',
                        '--baseline', str(base))
    assert code == 0 and 'REGRESSION' in out
    # a tolerance wide enough for the longer intervals still flags the counts from 0
    code, out, _ = gate(capsys, str(ref.path), '--stamp', 'start', '--period-ms', '10',
                        '--baseline', str(base), '--baseline-tolerance', '1000', '--check')
    assert code == 3
    flagged = {line.split('  ')[1].strip(): line for line in out.splitlines()
               if line.startswith('/demo/cmd ') and 'REGRESSION' in line}
    assert 'REGRESSION (was 0)' in flagged['deadline misses']
    assert 'REGRESSION (was 0)' in flagged['skipped periods']
    assert 'max interval wall (ms)' not in flagged  # 10 -> 22 ms is within 1000 %


@pytest.mark.parametrize(('content', 'message'), [
    ('{"topics": []}', 'has no "format" field'),
    ('{"format": "ros2_deadline_monitor/analyze", "version": 99, "topics": []}',
     "format 'ros2_deadline_monitor/analyze' version 99; this analyze reads "
     'ros2_deadline_monitor/analyze version 2'),
    ('{"format": "other", "version": 1, "topics": []}', "is format 'other'"),
    ('not json', 'is not JSON'),
])
def test_bad_baseline_exits_2(ref, tmp_path: Path, capsys, content: str, message: str) -> None:
    base = tmp_path / 'base.json'
    base.write_text(content)
    code, out, err = gate(capsys, str(ref.path), '--baseline', str(base))
    assert code == 2 and out == ''
    assert err.startswith('ERROR: ') and err.count('\n') == 1 and message in err, err


def test_a_directory_of_bags_is_named_as_such(ref, tmp_path: Path, capsys) -> None:
    code, _, err = gate(capsys, str(tmp_path), '--check', '--expect-max-misses', '0')
    assert code == 1
    assert f'it holds 1 bag: give them all, e.g. {tmp_path}/*/' in err


def test_gate_flags_parse() -> None:
    from ros2_deadline_monitor.bag.analyze import build_parser

    args = build_parser().parse_args(['a', 'b', '--check', '--jobs', '0', '--junit', 'r.xml',
                                      '--expect-max-misses', '3', '--baseline-tolerance', '5'])
    assert args.bag == ['a', 'b'] and args.check and args.junit == 'r.xml'
    assert args.jobs >= 1  # 0: one per usable CPU
    assert (args.expect_max_misses, args.baseline_tolerance) == ('3', 5.0)
    assert build_parser().parse_args(['a']).baseline_tolerance == 10.0
