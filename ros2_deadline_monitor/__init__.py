"""Measure deadline misses next to the real time factor in ROS 2 systems."""

__all__: list[str] = []
