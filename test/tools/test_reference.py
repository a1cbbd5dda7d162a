"""The closed loop's reference, its PD law and the tracking error: pure arithmetic."""

import math

import pytest

from ros2_deadline_monitor.tools.reference import PdLaw, Reference, TrackingError

S = 1_000_000_000
MS = 1_000_000


def test_the_reference_swings_from_rest_to_its_amplitude_and_back():
    reference = Reference(amplitude_rad=1.0, frequency_hz=2.0)
    assert reference.at(0) == pytest.approx((0.0, 0.0, 0.5 * (4 * math.pi) ** 2))
    position, velocity, _ = reference.at(250 * MS)  # half a period
    assert position == pytest.approx(1.0)
    assert velocity == pytest.approx(0.0, abs=1e-9)
    # Periodic, so an hour of sim time keeps the float arithmetic exact.
    assert reference.at(3600 * S + 100 * MS) == pytest.approx(reference.at(100 * MS))


def test_the_velocity_and_acceleration_are_the_derivatives():
    reference = Reference(amplitude_rad=0.7, frequency_hz=1.3)
    t, h = 123 * MS, 1000
    (p0, v0, a0), (p1, v1, _) = reference.at(t), reference.at(t + h)
    assert (p1 - p0) / (h / S) == pytest.approx(v0, rel=1e-3)
    assert (v1 - v0) / (h / S) == pytest.approx(a0, rel=1e-3)


def test_a_standing_reference_stays_at_zero():
    assert Reference(amplitude_rad=1.0, frequency_hz=0.0).at(5 * S) == (0.0, 0.0, 0.0)


def test_the_pd_law_compares_the_state_with_the_reference_at_its_stamp():
    reference = Reference(amplitude_rad=1.0, frequency_hz=2.0)
    law = PdLaw(kp=100.0, kd=10.0, inertia_kgm2=0.0, gravity_nm=0.0)
    state_ns, now_ns = 100 * MS, 109 * MS
    q, v, _ = reference.at(state_ns)
    # A state exactly on the reference when measured needs no feedback, however old it is.
    assert law.effort(reference, q, v, state_ns, now_ns) == pytest.approx(0.0)
    assert law.effort(reference, q - 0.01, v, state_ns, now_ns) == pytest.approx(1.0)
    assert law.effort(reference, q, v - 0.1, state_ns, now_ns) == pytest.approx(1.0)


def test_the_feedforward_is_the_inverse_dynamics_of_an_upright_pendulum_now():
    reference = Reference(amplitude_rad=1.0, frequency_hz=2.0)
    law = PdLaw(kp=0.0, kd=0.0, inertia_kgm2=0.25, gravity_nm=5.0)
    q, _, a = reference.at(200 * MS)
    assert law.effort(reference, 0.0, 0.0, 0, 200 * MS) == \
        pytest.approx(0.25 * a - 5.0 * math.sin(q))


def test_tracking_error_rms_and_max():
    error = TrackingError()
    assert math.isnan(error.rms) and math.isnan(error.max_abs), 'unknown, never 0'
    for k, value in enumerate([0.1, -0.3, 0.2, 0.0]):
        error.add(value, k * MS)
    assert error.samples == 4
    assert error.rms == pytest.approx(math.sqrt((0.01 + 0.09 + 0.04) / 4))
    assert error.max_abs == pytest.approx(0.3)
    assert error.max_at_ns == 1 * MS


def test_merging_tracking_errors_equals_taking_all_samples_in_one():
    values = [0.1, -0.3, 0.2, 0.05, -0.02]
    whole, first, second = TrackingError(), TrackingError(), TrackingError()
    for k, value in enumerate(values):
        whole.add(value, k)
        (first if k < 2 else second).add(value, k)
    first.merge(second)
    first.merge(TrackingError())  # nothing to take
    assert (first.samples, first.max_abs, first.max_at_ns) == \
        (whole.samples, whole.max_abs, whole.max_at_ns)
    assert first.rms == pytest.approx(whole.rms)
