"""Optional dependencies, imported in this one place so every fallback is easy to find.

``diagnostic_updater`` is an apt package on a ROS install (not on PyPI). Without it the
monitor publishes the same statuses on ``/diagnostics`` itself (see ``diagnostics.py``).

``prometheus_client`` serves the ``/metrics`` endpoint (``metrics.py``, parameter
``metrics_port``), imported when first asked for. Without it the monitor runs as before and
says once that it has no endpoint.
"""

from __future__ import annotations

from types import ModuleType

diagnostic_updater: ModuleType | None
try:
    import diagnostic_updater
except ImportError:
    diagnostic_updater = None


def __getattr__(name: str) -> ModuleType | None:
    """Import ``prometheus_client`` on first use: 10 MB a monitor without metrics never pays."""
    if name != 'prometheus_client':
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    try:
        import prometheus_client
        import prometheus_client.core
        import prometheus_client.exposition
    except ImportError:
        prometheus_client = None
    globals()['prometheus_client'] = prometheus_client
    return prometheus_client


__all__ = ['diagnostic_updater']  # and prometheus_client, on first use (``__getattr__``)
