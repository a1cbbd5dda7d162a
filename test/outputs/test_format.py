"""Text of figures: one formatting for every output."""

import math

import numpy as np

from ros2_deadline_monitor.analysis.units import to_ms, to_s
from ros2_deadline_monitor.outputs import format as fmt


def test_missing_values_read_n_a_or_the_given_marker():
    assert fmt.number(None) == 'n/a'
    assert fmt.number(math.nan, missing='-') == '-'
    assert fmt.ms(None) == 'n/a'
    assert fmt.since_s(None, 0) == 'n/a'


def test_integers_stay_integers_and_floats_get_fixed_decimals():
    assert fmt.number(20) == '20'
    assert fmt.number(np.int64(20)) == '20' and fmt.number(np.float64(0.5), 1) == '0.5'
    assert fmt.number(0.9995) == '1.000'
    assert fmt.number(1234567.0, 0, grouping=True) == '1,234,567'
    assert fmt.ms(22_500_000) == '22.500'
    assert fmt.ms(22_500_000, 2) == '22.50'
    assert fmt.seconds(1_500_000_000, 1) == '1.5'
    assert fmt.since_s(3_250_000_000, 1_000_000_000) == '+2.25 s'
    assert fmt.flag(True) == 'true'


def test_units_turn_unknown_into_nan():
    assert math.isnan(to_ms(None)) and math.isnan(to_s(None))
    assert to_ms(1_500_000) == 1.5 and to_s(2_000_000_000) == 2.0
