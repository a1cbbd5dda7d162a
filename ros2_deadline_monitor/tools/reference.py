"""The trajectory the closed loop tracks, its controller law and the tracking error it costs.

``mujoco_sim`` measures the error of its joints against the reference, the demo controller
computes its effort command on it: both evaluate the same function of sim time, so neither
has to send it to the other. Pure Python: no rclpy, no MuJoCo.

The reference swings every joint between 0 and ``amplitude_rad`` and back at
``frequency_hz``: ``q(t) = amplitude * (1 - cos(2 pi f t)) / 2``. It starts at rest at sim
time 0 (and at every whole period), so a model held at its initial pose needs no jump.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

from ros2_deadline_monitor.analysis.config import NS_PER_S


@dataclass(frozen=True)
class Reference:
    """Joint position reference over sim time (rad, or m for a slide joint)."""

    amplitude_rad: float = 1.0
    frequency_hz: float = 2.0

    def at(self, sim_ns: int) -> tuple[float, float, float]:
        """Return position, velocity and acceleration at sim time ``sim_ns``."""
        omega = 2.0 * math.pi * self.frequency_hz
        phase = omega * ((sim_ns % self.period_ns) / NS_PER_S) if self.frequency_hz else 0.0
        half = self.amplitude_rad / 2.0
        return (half * (1.0 - math.cos(phase)), half * omega * math.sin(phase),
                half * omega * omega * math.cos(phase))

    @property
    def period_ns(self) -> int:
        """One period of the swing (1 for a standing reference, so the modulo is defined)."""
        return round(NS_PER_S / self.frequency_hz) if self.frequency_hz else 1


@dataclass(frozen=True)
class PdLaw:
    """PD feedback on the reference plus an inverse-dynamics feedforward, per joint.

    ``effort = kp (q_ref(t_state) - q) + kd (v_ref(t_state) - v)
    + inertia * a_ref(t) - gravity_nm * sin(q_ref(t))``: the feedback compares the state with
    the reference at the time the state was measured (its stamp), so a state a few ms old
    costs no error by itself; the feedforward is for the time the command is computed. The
    gravity term is for a pendulum upright at 0 (the model mujoco_sim ships).
    """

    kp: float = 300.0
    kd: float = 15.0
    inertia_kgm2: float = 0.2591
    gravity_nm: float = 5.150

    def effort(self, reference: Reference, position: float, velocity: float,
               state_ns: int, now_ns: int) -> float:
        """Return the effort for one joint measured at ``state_ns``, computed at ``now_ns``."""
        q_ref, v_ref, _ = reference.at(state_ns)
        q_now, _, a_now = reference.at(now_ns)
        return (self.kp * (q_ref - position) + self.kd * (v_ref - velocity)
                + self.inertia_kgm2 * a_now - self.gravity_nm * math.sin(q_now))


class TrackingError:
    """RMS and largest absolute error against the reference over many samples, O(1) each."""

    def __init__(self) -> None:
        """Start with no samples (figures NaN: unknown, never 0)."""
        self.samples = 0
        self._sum_sq = 0.0
        self.max_abs = math.nan
        self.max_at_ns: int | None = None

    def add(self, error: float, sim_ns: int) -> None:
        """Take one sample: joint error ``error`` at sim time ``sim_ns``."""
        self.samples += 1
        self._sum_sq += error * error
        magnitude = abs(error)
        if not magnitude <= self.max_abs:  # also replaces the NaN of no sample
            self.max_abs = magnitude
            self.max_at_ns = sim_ns

    def merge(self, other: TrackingError) -> None:
        """Take ``other``'s samples into this one (``other`` is left as it was)."""
        self.samples += other.samples
        self._sum_sq += other._sum_sq
        if not other.max_abs <= self.max_abs and not math.isnan(other.max_abs):
            self.max_abs = other.max_abs
            self.max_at_ns = other.max_at_ns

    @property
    def rms(self) -> float:
        """Root mean square of the samples (NaN without one)."""
        return math.sqrt(self._sum_sq / self.samples) if self.samples else math.nan
