"""Things that run around the monitor: a /clock stand-in, a demo controller, the demo.

The modules here are imported one by one (``ros2_deadline_monitor.tools.sim_clock``); this
package imports nothing itself, so reading a ``cycle_record`` never needs rclpy.
"""

__all__: list[str] = []
