"""Nanoseconds to the units people read."""

from ros2_deadline_monitor.analysis.units import short_seconds


def test_short_seconds_keep_three_significant_digits():
    assert short_seconds(1_005_500_000) == '1.01'
    assert short_seconds(1_000_000_000) == '1'
    assert short_seconds(250_000_000) == '0.25'
    assert short_seconds(12_345_000_000) == '12.3'
    assert short_seconds(1_500_000_000_000) == '1500'
