"""What the user asks for: parameters, per-topic flags, expectations, params files, usage.

Plain Python without ROS; the node's parameter declarations are the live adapter's
(``live/parameter_declarations.py``).
"""

__all__: list[str] = []
