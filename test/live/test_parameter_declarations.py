"""Parameter descriptors as ``ros2 param describe`` shows them (the conversions: test/core)."""

from ros2_deadline_monitor.configuration.parameters import GLOBAL_SPECS, TOPIC_SPECS
from ros2_deadline_monitor.live.parameter_declarations import descriptor


def test_descriptors_carry_ranges_and_descriptions():
    for spec in (*GLOBAL_SPECS, *TOPIC_SPECS):
        described = descriptor(spec, spec.name)
        assert described.description
        if isinstance(spec.default, float):
            assert described.floating_point_range, spec.name
            low = described.floating_point_range[0]
            assert low.from_value <= spec.default <= low.to_value
        elif isinstance(spec.default, int) and not isinstance(spec.default, bool):
            assert described.integer_range, spec.name
        if spec.choices:
            assert spec.default in spec.choices
            assert all(c in described.additional_constraints for c in spec.choices)
