"""The live adapter: the ROS 2 node that feeds the analysis session from subscriptions.

Everything here may import rclpy and message packages; nothing in ``analysis`` or
``configuration`` does. The node hands each report to the outputs (``outputs/``).
"""

__all__: list[str] = []
