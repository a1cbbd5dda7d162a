"""The ROS 2 node around the analysis core: parameters in; stats and diagnostics out.

Everything here may import rclpy and message packages; nothing in ``core`` does.
"""

__all__: list[str] = []
