"""The ``deadline`` command and the ``ros2 deadline`` extension of ros2cli.

One command with a verb per program (``monitor``, ``watch``, ``analyze``, ``record``,
``demo`` and the tools ``sim_clock``, ``demo_controller``), each taking the same arguments as
its ``ros2 run ros2_deadline_monitor <name>`` executable. ``pip install`` puts only
``deadline`` on PATH: bare names such as ``watch`` would shadow other programs.
"""

__all__: list[str] = []
