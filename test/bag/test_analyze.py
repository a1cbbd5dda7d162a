"""End-to-end tests of the ``analyze`` command on bags with known answers."""

from __future__ import annotations

import json
import os
from pathlib import Path
import sqlite3

import numpy as np
import pytest

from ros2_deadline_monitor.analysis.cycles import count_cycles
from ros2_deadline_monitor.bag.analyze import build_parser, main
from ros2_deadline_monitor.configuration.topic_flags import topic_flags

MS = 1_000_000
T0 = 1_700_000_000_000_000_000


def analyze_json(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / 'result.json'
    assert main([*args, '--no-progress', '--json', str(out)]) == 0
    return json.loads(out.read_text())


def one_error(capsys: pytest.CaptureFixture[str], code: int, argv: list[str]) -> str:
    """Run ``argv``; expect ``code`` and exactly one ``ERROR:`` line on stderr."""
    assert main(argv) == code
    err = capsys.readouterr().err
    assert 'Traceback' not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith('ERROR: ')
    return lines[0]


# -- the command line ------------------------------------------------------------------------

def test_parser_defaults() -> None:
    args = build_parser().parse_args(['bag'])
    assert args.bag == ['bag']
    assert args.topic == []
    assert (args.config, args.period_ms, args.stamp, args.rule, args.clock) == (None,) * 5
    assert (args.json, args.csv, args.plot, args.html) == (None,) * 4
    assert args.progress is None


def test_parser_converts_ms_and_collects_topics() -> None:
    args = build_parser().parse_args([
        'bag', '--topic', '/a', '--topic', 'b', '--period-ms', '10', '--deadline-ms', '2.5',
        '--jitter-ms', '0', '--stamp', 'start', '--rule', 'interval', '--clock', 'sim',
        '--no-progress'])
    assert args.topic == ['/a', 'b']
    flags = topic_flags(args)
    assert (flags.period_ns, flags.ns('deadline_ms'), flags.ns('jitter_ms')) == (
        10 * MS, 2_500_000, 0)
    assert (args.stamp, args.rule, args.clock, args.progress) == ('start', 'interval', 'sim',
                                                                    False)
    assert build_parser().parse_args(['bag', '--progress']).progress is True


@pytest.mark.parametrize('argv', [
    [], ['bag', '--stamp', 'header'], ['bag', '--period-ms', '-3'], ['bag', '--period-ms', 'x'],
    ['bag', '--clock', 'steady'], ['bag', '--progress', '--no-progress'], ['bag', '--jobs', '-1'],
    ['bag', '--baseline-tolerance', 'x'],
    ['bag', '--period-ms', '0'], ['bag', '--period-ms', 'nan'],
    ['bag', '--period-ms', '10', '--rate-hz', '100'], ['bag', '--rate-hz', '0'],
    ['bag', '--bogus'], ['bag', '--jsn', 'x.json'],
])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """One line, as monitor says it (configuration/usage.py), not argparse's usage block."""
    line = one_error(capsys, 2, argv)
    assert line.endswith('(see analyze --help)')
    assert 'usage:' not in line


def test_an_unknown_flag_reads_as_in_monitor(capsys: pytest.CaptureFixture[str]) -> None:
    line = one_error(capsys, 2, ['bag', '--bogus'])
    assert line == 'ERROR: unrecognized arguments: --bogus (see analyze --help)'


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['--help']) == 0
    assert '--plot DIR' in capsys.readouterr().out


# -- known answers ---------------------------------------------------------------------------

def test_reference_scenario_exact_counts(bags, storage: str, tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', storage)
    truth = count_cycles(ref.starts, ref.arrivals, 10 * MS)
    assert (truth.misses, truth.skipped) == (20, 10)
    data = analyze_json(tmp_path, str(ref.path), '--stamp', 'start')
    assert [t['topic'] for t in data['topics']] == ['/demo/cmd']
    topic = data['topics'][0]
    assert topic['deadline_misses'] == truth.misses == 20
    assert topic['skipped_periods'] == truth.skipped == 10
    assert topic['messages'] == topic['cycles'] == len(ref.starts)
    assert (topic['rule'], topic['start_source'], topic['timer_clock']) == (
        'response', 'header', 'wall')
    assert topic['period_ms'] == 10.0 and topic['period_learned']
    intervals = np.diff(ref.starts)
    assert topic['intervals_wall'] == len(intervals)
    assert topic['mean_interval_wall_ms'] == pytest.approx(intervals.mean() / 1e6, rel=1e-12)
    assert topic['max_interval_wall_ms'] == pytest.approx(intervals.max() / 1e6)
    assert topic['min_interval_wall_ms'] == pytest.approx(intervals.min() / 1e6)
    assert topic['p99_interval_wall_ms'] == pytest.approx(np.percentile(intervals, 99) / 1e6)
    assert topic['over_period_plus_jitter_wall'] == 10
    assert 10.1 < topic['mean_interval_wall_ms'] < 10.3
    clock = data['clock']
    assert clock['messages'] == 5101
    assert clock['rtf_total'] == pytest.approx(1.0, abs=1e-9)
    assert clock['rtf_bin_min'] == pytest.approx(1.0, abs=1e-6)
    assert clock['resets'] == 0
    assert topic['percentiles_exact'] is True


def test_reference_with_twist_stamped_and_sim_stamps(bags, storage: str,
                                                     tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', storage, twist=True, sim_stamps=True)
    # The producer's timer runs on sim time: its stamps are sim time, its end is the sim
    # time in force when the message was logged (/clock every 1 ms from sim 0 at T0).
    ends_sim = (ref.arrivals - T0) // MS * MS
    truth = count_cycles(ref.stamps, ends_sim, 10 * MS)
    assert (truth.misses, truth.skipped) == (20, 10)
    data = analyze_json(tmp_path, str(ref.path), '--stamp', 'start')
    topic = data['topics'][0]
    assert topic['msgtype'] == 'geometry_msgs/msg/TwistStamped'
    assert topic['timer_clock'] == 'sim'
    assert topic['clock_choice'] == 'auto: stamps on sim clock'
    assert topic['deadline_misses'] == 20
    assert topic['skipped_periods'] == 10
    assert topic['max_interval_sim_ms'] == pytest.approx(np.diff(ref.stamps).max() / 1e6)


def test_without_a_flag_usable_stamps_start_the_cycle(bags, tmp_path: Path) -> None:
    # The stalling stamped publisher (issue 44): the default finds its stamps usable.
    ref = bags.reference(tmp_path / 'bag', 'mcap', twist=True)
    truth = count_cycles(ref.starts, ref.arrivals, 10 * MS)
    data = analyze_json(tmp_path, str(ref.path), '--clock', 'wall')
    topic = data['topics'][0]
    assert (topic['rule'], topic['start_source'], topic['stamp']) == (
        'response', 'header', 'auto')
    assert 'span the arrivals' in topic['timing_reason']
    assert (topic['deadline_misses'], topic['skipped_periods']) == (
        truth.misses, truth.skipped) == (20, 10)


def test_without_stamps_the_arrival_starts_the_cycle(bags, tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    truth = count_cycles(ref.arrivals, ref.arrivals, 10 * MS, rule='interval')
    data = analyze_json(tmp_path, str(ref.path), '--clock', 'wall', '--stamp', 'none')
    topic = data['topics'][0]
    assert (topic['rule'], topic['start_source'], topic['clock_choice']) == (
        'interval', 'arrival', 'flag')
    assert topic['deadline_misses'] == truth.misses
    assert topic['skipped_periods'] == truth.skipped
    assert topic['max_age_ms'] == pytest.approx((ref.arrivals - ref.starts).max() / 1e6)


def test_rtf_half(bags, storage: str, tmp_path: Path) -> None:
    path = bags.slow_sim(tmp_path / 'bag', storage, rtf=0.5)
    data = analyze_json(tmp_path, str(path), '--stamp', 'start')
    clock = data['clock']
    assert clock['rtf_total'] == pytest.approx(0.5, abs=1e-3)
    assert clock['rtf_bin_min'] == pytest.approx(0.5, abs=1e-3)
    assert clock['rtf_bin_max'] == pytest.approx(0.5, abs=1e-3)
    assert clock['step_ms'] == pytest.approx(1.0)
    assert clock['max_wall_gap_ms'] == pytest.approx(2.0)
    topic = data['topics'][0]
    assert topic['timer_clock'] == 'sim'
    assert topic['mean_interval_sim_ms'] == pytest.approx(10.0, abs=1e-9)
    assert topic['mean_interval_wall_ms'] == pytest.approx(20.0, abs=1e-6)
    assert topic['rate_sim_hz'] == pytest.approx(100.0)
    assert topic['rate_wall_hz'] == pytest.approx(50.0)
    assert topic['deadline_misses'] == 0
    assert topic['skipped_periods'] == 0


def test_flags_override_everything(bags, tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', 'sqlite3')
    data = analyze_json(tmp_path, str(ref.path), '--topic', '/demo/cmd', '--period-ms', '10',
                        '--jitter-ms', '2', '--rule', 'interval', '--stamp', 'start',
                        '--clock', 'wall')
    topic = data['topics'][0]
    assert (topic['period_learned'], topic['jitter_ms'], topic['rule']) == (False, 2.0,
                                                                           'interval')
    truth = count_cycles(ref.starts, ref.arrivals, 10 * MS, jitter_ns=2 * MS, rule='interval')
    assert topic['deadline_misses'] == truth.misses == 10


def test_config_file_drives_the_analysis(bags, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    config = tmp_path / 'monitor.yaml'
    config.write_text(
        'deadline_monitor:\n'
        '  ros__parameters:\n'
        '    topics: [cmd, odom]\n'
        '    topic.cmd.name: /demo/cmd\n'
        '    topic.cmd.period_ms: 10.0\n'
        '    topic.cmd.stamp: start\n'
        '    topic.cmd.clock: wall\n'
        '    topic.odom.name: /odom\n')
    data = analyze_json(tmp_path, str(ref.path), '--config', str(config))
    assert 'WARNING: /odom: configured but not in the bag' in capsys.readouterr().err
    topic = data['topics'][0]
    assert (topic['name'], topic['period_learned'], topic['clock_choice']) == (
        'cmd', False, 'config')
    assert (topic['deadline_misses'], topic['skipped_periods']) == (20, 10)


def test_default_topics_skip_infrastructure(bags, tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    data = analyze_json(tmp_path, str(ref.path))
    assert [t['topic'] for t in data['topics']] == ['/demo/cmd']


def test_table_csv_and_json_to_stdout(bags, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    assert main([str(ref.path), '--stamp', 'start', '--no-progress']) == 0
    out = capsys.readouterr().out
    assert '/demo/cmd' in out and 'response' in out
    assert 'RTF 1.000 overall' in out
    row = next(line for line in out.splitlines() if line.startswith('/demo/cmd'))
    assert row.split()[1] == '490'
    assert ' 20 ' in row and ' 10 ' in row

    csv_path = tmp_path / 'out.csv'
    assert main([str(ref.path), '--stamp', 'start', '--no-progress', '--csv',
                 str(csv_path)]) == 0
    lines = csv_path.read_text().splitlines()
    header = lines[0].split(',')
    assert len(lines) == 3  # topic row and clock row
    values = dict(zip(header, lines[1].split(','), strict=True))
    assert values['source'] == 'bag'
    assert values['deadline_misses'] == '20'
    assert values['max_interval_wall_ms'] == '22.0'
    capsys.readouterr()

    assert main([str(ref.path), '--stamp', 'start', '--no-progress', '--json', '-']) == 0
    data = json.loads(capsys.readouterr().out)
    assert data['topics'][0]['skipped_periods'] == 10


def test_plots_and_html(bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    plots = tmp_path / 'plots'
    html = tmp_path / 'report.html'
    assert main([str(ref.path), '--stamp', 'start', '--no-progress', '--plot', str(plots),
                 '--html', str(html)]) == 0
    names = sorted(p.name for p in plots.iterdir())
    assert names == ['ecdf.png', 'lateness_demo_cmd.png', 'timeline_demo_cmd.png']
    for name in names:
        data = (plots / name).read_bytes()
        assert data.startswith(b'\x89PNG') and len(data) > 10_000
    text = html.read_text()
    assert text.startswith('<!DOCTYPE html>')
    assert '<table>' in text and '/demo/cmd' in text and 'geometry' not in text
    assert text.count('data:image/png;base64,') == 3
    assert 'src="http' not in text and '<script' not in text


def test_progress_bar_on_request(bags, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    assert main([str(ref.path), '--progress', '--json', str(tmp_path / 'x.json')]) == 0
    err = capsys.readouterr().err
    assert '100%' in err and '5,591/5,591 msgs' in err  # all but /rosout
    assert main([str(ref.path), '--json', str(tmp_path / 'x.json')]) == 0
    assert capsys.readouterr().err == ''  # stderr is no terminal under pytest


# -- bad input: one line, exit 1 -------------------------------------------------------------

def test_missing_bag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = one_error(capsys, 1, [str(tmp_path / 'nope')])
    assert 'no such file or directory' in line


def test_directory_without_metadata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = one_error(capsys, 1, [str(tmp_path)])
    assert 'not a rosbag2 bag' in line


@pytest.mark.parametrize('name', ['notes.txt', 'bag.mcap', 'bag.db3'])
def test_file_that_is_not_a_bag(name: str, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_bytes(b'this is not a bag\n' * 100)
    line = one_error(capsys, 1, [str(path)])
    assert str(path) in line


def test_single_storage_file_is_accepted(bags, tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    data = analyze_json(tmp_path, str(next(ref.path.glob('*.mcap'))), '--stamp', 'start')
    assert data['topics'][0]['deadline_misses'] == 20


def test_named_topic_not_in_bag(bags, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    line = one_error(capsys, 1, [str(ref.path), '--topic', '/nope'])
    assert 'topic /nope not in the bag' in line and '/demo/cmd' in line


def test_unknown_message_type(bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / 'bag'
    messages = [('/thing', T0 + k * 10 * MS, bags.header_cdr(T0 + k * 10 * MS))
                for k in range(50)]
    bags.write(path, 'sqlite3', {'/thing': 'std_msgs/msg/Header'}, messages)
    db = next(path.glob('*.db3'))
    with sqlite3.connect(db) as conn:  # a type this tool cannot know about
        conn.execute("UPDATE topics SET type = 'my_pkg/msg/Thing'")
        conn.execute('DELETE FROM message_definitions')
    (path / 'metadata.yaml').write_text(
        (path / 'metadata.yaml').read_text().replace('std_msgs/msg/Header', 'my_pkg/msg/Thing'))
    line = one_error(capsys, 1, [str(path), '--stamp', 'start'])
    assert 'unknown message type my_pkg/msg/Thing' in line
    # Without stamps the type does not matter: arrivals are enough. The reason names the
    # missing definition: the messages may well carry a stamp (before: "no stamp").
    data = analyze_json(tmp_path, str(path))
    assert data['topics'][0]['messages'] == 50
    assert data['topics'][0]['start_source'] == 'arrival'
    assert data['topics'][0]['timing_reason'] == (
        'the bag has no definition of my_pkg/msg/Thing: its stamp (if any) cannot be read')
    # A stamp field asked for (even the default one) is refused, never left for arrivals.
    line = one_error(capsys, 1, [str(path), '--stamp-field', 'header.stamp'])
    assert line.startswith('ERROR: /thing: stamp_field header.stamp cannot be read: unknown '
                           'message type my_pkg/msg/Thing'), line


def test_stamp_start_needs_a_header(bags, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / 'bag'
    store = bags.typestore()
    raw = bytes(store.serialize_cdr(store.types['std_msgs/msg/String'](data='x'),
                                    'std_msgs/msg/String'))
    bags.write(path, 'mcap', {'/chatter': 'std_msgs/msg/String'},
               [('/chatter', T0 + k * MS, raw) for k in range(30)])
    line = one_error(capsys, 1, [str(path), '--stamp', 'start'])
    assert 'has no header stamp' in line


@pytest.mark.parametrize('fraction', [0.5, 0.95])
def test_truncated_bag(bags, storage: str, fraction: float, tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', storage)
    data_file = next(p for p in ref.path.iterdir() if p.suffix in ('.mcap', '.db3'))
    size = data_file.stat().st_size
    with data_file.open('r+b') as stream:
        stream.truncate(int(size * fraction))
    line = one_error(capsys, 1, [str(ref.path), '--no-progress'])
    assert str(ref.path) in line


def test_damaged_chunk_is_not_silently_skipped(bags, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    data_file = next(ref.path.glob('*.mcap'))
    data = bytearray(data_file.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 5000] = bytes(range(256)) * 19 + bytes(136)
    data_file.write_bytes(bytes(data))
    line = one_error(capsys, 1, [str(ref.path), '--no-progress'])
    assert 'could be read' in line or 'cannot' in line


def test_empty_bag(bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = bags.write(tmp_path / 'bag', 'mcap', {}, [])
    line = one_error(capsys, 1, [str(path)])
    assert 'nothing to analyze' in line


def test_clock_of_the_wrong_type(bags, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = bags.write(tmp_path / 'bag', 'mcap', {'/clock': 'std_msgs/msg/Header'},
                      [('/clock', T0, bags.header_cdr(0))])
    line = one_error(capsys, 1, [str(path)])
    assert 'expected rosgraph_msgs/msg/Clock' in line


@pytest.mark.parametrize('text, expected', [
    (None, 'cannot read config'),
    ('deadline_monitor: [unclosed\n', 'not valid YAML'),
    ('just text\n', 'expected a mapping'),
    ('deadline_monitor:\n  ros__parameters:\n    topics: [cmd]\n    topic.cmd.period_ms: -1.0\n',
     'topic.cmd.period_ms must be a finite number'),
])
def test_config_errors(bags, text: str | None, expected: str, tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    config = tmp_path / 'monitor.yaml'
    if text is not None:
        config.write_text(text)
    line = one_error(capsys, 2, [str(ref.path), '--config', str(config)])  # as monitor
    assert expected in line


@pytest.mark.parametrize('params, expected', [
    ('    topic.cmd.perod_ms: 10.0\n',
     'unknown parameter topic.cmd.perod_ms (did you mean topic.cmd.period_ms?)'),
    ('    stats_perod_s: 2.0\n', 'unknown parameter stats_perod_s (did you mean stats_period_s?)'),
    ('    topic.cmd.perod_ms: 10.0\n    use_sim_tme: true\n',
     'topic.cmd.period_ms?); unknown parameter use_sim_tme (did you mean use_sim_time?)'),
])
def test_an_unknown_config_key_is_an_error_with_did_you_mean(
        bags, tmp_path: Path, capsys: pytest.CaptureFixture[str], params: str,
        expected: str) -> None:
    """A typo must not leave the period to be learned in silence: exit 2, nothing analyzed."""
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    config = tmp_path / 'monitor.yaml'
    config.write_text('deadline_monitor:\n  ros__parameters:\n    topics: [cmd]\n'
                      '    topic.cmd.name: /demo/cmd\n' + params)
    line = one_error(capsys, 2, [str(ref.path), '--config', str(config)])
    assert line.startswith(f'ERROR: {config}: unknown parameter ')
    assert line.endswith(expected)


def test_library_parameters_and_unlisted_topics_are_not_errors(
        bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the live node takes without an error: rclpy's and diagnostic_updater's own."""
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    config = tmp_path / 'monitor.yaml'
    config.write_text('deadline_monitor:\n  ros__parameters:\n    topics: [cmd]\n'
                      '    topic.cmd.name: /demo/cmd\n    topic.cmd.period_ms: 10.0\n'
                      '    topic.other.period_ms: 5.0\n    all_topics.stamp: start\n'
                      '    diagnostic_updater.period: 1.0\n'
                      '    qos_overrides./parameter_events.publisher.depth: 10\n')
    data = analyze_json(tmp_path, str(ref.path), '--config', str(config))
    assert [t['name'] for t in data['topics']] == ['cmd']
    err = capsys.readouterr().err
    assert "WARNING: topic.other.period_ms: 'other' is not listed in topics, ignored" in err


@pytest.mark.parametrize('flag', ['--json', '--csv', '--html', '--junit'])
def test_an_output_into_a_missing_folder_is_refused_before_the_analysis(
        flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The bag does not even exist: the output path is what is refused, at once."""
    target = tmp_path / 'missing_dir' / 'out'
    line = one_error(capsys, 2, [str(tmp_path / 'no_bag'), flag, str(target)])
    assert line == (f"ERROR: {flag} {target}: folder '{target.parent}' does not exist")


def test_outputs_that_cannot_be_written_are_refused_first(
        bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    a_file = tmp_path / 'a_file'
    a_file.write_text('')
    line = one_error(capsys, 2, [str(ref.path), '--plot', str(a_file / 'plots')])
    assert line == f"ERROR: --plot {a_file / 'plots'}: '{a_file}' is a file, not a folder"
    line = one_error(capsys, 2, [str(ref.path), '--html', str(tmp_path)])
    assert line == f'ERROR: --html {tmp_path}: is a folder, expected a file name'
    assert capsys.readouterr().out == ''  # nothing was analyzed
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / 'locked'
        locked.mkdir(mode=0o500)
        line = one_error(capsys, 2, [str(ref.path), '--csv', str(locked / 'out.csv')])
        assert line == f"ERROR: --csv {locked / 'out.csv'}: not writable"
        line = one_error(capsys, 2, [str(ref.path), '--plot', str(locked / 'a' / 'b')])
        assert line == f"ERROR: --plot {locked / 'a' / 'b'}: '{locked}' is not writable"


def test_a_plot_folder_is_made_with_its_missing_parents(bags, tmp_path: Path) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    pytest.importorskip('matplotlib')
    target = tmp_path / 'a' / 'b'
    assert main([str(ref.path), '--no-progress', '--plot', str(target)]) == 0
    assert any(target.glob('*.png'))


def test_the_learned_period_footnote_only_when_learned(
        bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = bags.reference(tmp_path / 'bag', 'mcap')
    assert main([str(ref.path), '--no-progress', '--period-ms', '10']) == 0
    given = capsys.readouterr().out
    assert 'period learned' not in given and '*' not in given
    assert 'Misses per rule: response = ' in given
    assert main([str(ref.path), '--no-progress']) == 0
    learned = capsys.readouterr().out
    assert '10.000*' in learned and '* period learned from the first intervals.' in learned


def test_clock_message_layout_matches_the_reader(bags) -> None:
    store = bags.typestore()
    clock = store.types['rosgraph_msgs/msg/Clock'](
        clock=store.types['builtin_interfaces/msg/Time'](sec=12, nanosec=345))
    assert bytes(store.serialize_cdr(clock, 'rosgraph_msgs/msg/Clock')) == bags.clock_cdr(
        12_000_000_345)
    header = store.types['std_msgs/msg/Header'](
        stamp=store.types['builtin_interfaces/msg/Time'](sec=1, nanosec=2), frame_id='base')
    assert bytes(store.serialize_cdr(header, 'std_msgs/msg/Header')) == bags.header_cdr(
        1_000_000_002, b'base')


def test_runs_as_a_module_without_ros_or_matplotlib(bags, tmp_path: Path) -> None:
    """``python -m ros2_deadline_monitor.analyze``: no rclpy, no matplotlib for tables."""
    import subprocess
    import sys

    ref = bags.reference(tmp_path / 'bag', 'sqlite3')
    script = (
        'import runpy, sys\n'
        f'sys.argv = ["analyze", {str(ref.path)!r}, "--stamp", "start", "--no-progress"]\n'
        'try:\n'
        '    runpy.run_module("ros2_deadline_monitor.analyze", run_name="__main__")\n'
        'except SystemExit as exit_:\n'
        '    code = exit_.code\n'
        'bad = sorted(m for m in sys.modules if m.split(".")[0] in ("rclpy", "matplotlib"))\n'
        'print("CODE", code, "IMPORTED", bad)\n')
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                          cwd=root, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == 'CODE 0 IMPORTED []'
    assert '/demo/cmd' in proc.stdout


def test_missing_matplotlib_is_one_error(bags, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    ref = bags.reference(tmp_path / 'bag', 'mcap')
    monkeypatch.setitem(sys.modules, 'matplotlib', None)  # makes `import matplotlib` fail
    line = one_error(capsys, 1, [str(ref.path), '--plot', str(tmp_path / 'plots')])
    assert 'need matplotlib' in line
    assert not (tmp_path / 'plots').exists()


def test_html_of_recorded_stats_only(bags, tmp_path: Path) -> None:
    path = bags.stats(tmp_path / 'bag', 'mcap', [
        (T0, [{'name': 'cmd', 'topic': '/demo/cmd', 'messages_total': 7,
               'deadline_misses_total': 2}], None)])
    html = tmp_path / 'report.html'
    assert main([str(path), '--no-progress', '--html', str(html)]) == 0
    text = html.read_text()
    assert 'Recorded monitor statistics' in text and '/demo/cmd' in text
    assert '<img' not in text
