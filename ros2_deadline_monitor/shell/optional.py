"""Optional dependencies, imported in this one place so every fallback is easy to find.

``diagnostic_updater`` is an apt package on a ROS install (not on PyPI). Without it the
monitor publishes the same statuses on ``/diagnostics`` itself (see ``diagnostics.py``).
"""

from __future__ import annotations

from types import ModuleType

diagnostic_updater: ModuleType | None
try:
    import diagnostic_updater
except ImportError:
    diagnostic_updater = None

__all__ = ['diagnostic_updater']
