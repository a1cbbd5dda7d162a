"""The probe adapter: a callback's own cycles, fed to the analysis session from inside its node.

``from ros2_deadline_monitor.probe import DeadlineProbe``; the wrapper is in
``deadline_probe.py``. Like the live node it may import rclpy; it feeds the same ``Session``.
"""

from ros2_deadline_monitor.probe.deadline_probe import DeadlineProbe

__all__ = ['DeadlineProbe']
