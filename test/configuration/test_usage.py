"""The command lines' usage errors: one line, and the closest flag for a typo."""

import pytest

from ros2_deadline_monitor.configuration.usage import flag_suggestions, UsageError, UsageParser


def _parser() -> UsageParser:
    parser = UsageParser(prog='x')
    parser.add_argument('topics', nargs='*')
    parser.add_argument('--period-ms', type=float)
    parser.add_argument('--rate-hz', type=float)
    return parser


def test_a_flag_typo_gets_the_closest_flag():
    with pytest.raises(UsageError, match=r'^unrecognized arguments: --perod-ms 10 '
                                         r'\(did you mean --period-ms\?\)$'):
        _parser().parse_args(['/a', '--perod-ms', '10'])
    with pytest.raises(UsageError, match=r'did you mean --period-ms for --perod-ms, '
                                         r'--rate-hz for --rat-hz\?'):
        _parser().parse_args(['/a', '--perod-ms=10', '--rat-hz', '3'])


def test_no_abbreviation_is_taken_for_a_flag():
    # `--period` would silently become --period-ms, and break once a --period-s is added.
    with pytest.raises(UsageError, match=r'--period 10 \(did you mean --period-ms\?\)'):
        _parser().parse_args(['/a', '--period', '10'])


def test_nothing_close_gets_no_suggestion():
    assert flag_suggestions('unrecognized arguments: --zzz', ['--period-ms']) == ''
    assert flag_suggestions('unrecognized arguments: --bogus', ['--jobs', '--json']) == ''
    assert flag_suggestions('argument --period-ms: expected one argument', ['--period-ms']) == ''
