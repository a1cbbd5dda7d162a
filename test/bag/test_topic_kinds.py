"""``analyze --kind event``: a bag of a planner's output analysed without a period."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ros2_deadline_monitor.bag.analyze import build_parser, main
from ros2_deadline_monitor.configuration.usage import UsageError

MS = 1_000_000
T0 = 1_700_000_000_000_000_000
GAPS_MS = (0, 50, 700, 20, 20, 2710, 5000, 5)
"""A planner's output: a burst, pauses, a burst (the core test's stream)."""


def test_kind_flag_is_checked() -> None:
    assert build_parser().parse_args(['bag', '--kind', 'event']).kind == 'event'
    assert build_parser().parse_args(['bag']).kind is None
    with pytest.raises(UsageError, match="invalid choice: 'periodic'"):  # one line, exit 2
        build_parser().parse_args(['bag', '--kind', 'periodic'])


def test_an_event_bag_has_gaps_and_a_rate_but_no_misses(
        bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    times, t = [], T0
    for gap in GAPS_MS:
        t += gap * MS
        times.append(t)
    bag = bags.write(tmp_path / 'bag', 'mcap', {'/plan': 'std_msgs/msg/Header'},
                     [('/plan', t, bags.header_cdr(t)) for t in times])
    out = tmp_path / 'event.json'
    argv = [str(bag), '--kind', 'event', '--no-progress']
    assert main([*argv, '--json', str(out)]) == 0
    event = json.loads(out.read_text())['topics'][0]
    assert (event['kind'], event['messages'], event['deadline_misses'],
            event['skipped_periods']) == ('event', 8, None, None)
    assert event['max_interval_wall_ms'] == pytest.approx(5000.0)
    assert event['max_response_ms'] is None and event['max_lateness_ms'] is None
    assert event['note'] == 'event topic: no period, so no misses or skipped periods'
    assert main(argv) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith('/plan'))
    # misses, rule, skipped, lost (a bag has no sequence numbers: loss unknown, never 0)
    assert row.split()[-4:] == ['n/a', 'n/a', 'n/a', '-']
    # The same bag as a 100 ms timer: what the event kind keeps from being alarms.
    assert main([str(bag), '--period-ms', '100', '--no-progress', '--json', str(out)]) == 0
    timer = json.loads(out.read_text())['topics'][0]
    assert timer['skipped_periods'] > 0 and timer['deadline_misses'] > 0


def test_an_event_kind_with_a_period_is_refused(
        bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = bags.write(tmp_path / 'bag', 'mcap', {'/plan': 'std_msgs/msg/Header'},
                     [('/plan', T0, bags.header_cdr(T0))])
    assert main([str(bag), '--kind', 'event', '--period-ms', '100', '--no-progress']) == 1
    err = capsys.readouterr().err
    assert err.startswith('ERROR: ') and 'kind is event, which has no period' in err


def test_an_expectation_on_misses_of_an_event_topic_fails_as_unknown(
        bags, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = bags.write(tmp_path / 'bag', 'mcap', {'/plan': 'std_msgs/msg/Header'},
                     [('/plan', T0 + i * 300 * MS, bags.header_cdr(T0)) for i in range(5)])
    assert main([str(bag), '--kind', 'event', '--check', '--expect-max-misses', '0',
                 '--no-progress']) == 3
    out = capsys.readouterr().out
    assert 'unknown' in out and 'event topic: no period' in out, out
