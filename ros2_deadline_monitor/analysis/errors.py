"""One error class per layer; callers catch ``MonitorError`` to catch them all."""


class MonitorError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(MonitorError):
    """A configuration value is invalid; the message names the parameter and the reason."""


class CdrError(MonitorError):
    """Raw message bytes cannot be read (too short, unknown encapsulation)."""


class BagError(MonitorError):
    """A bag cannot be read or lacks what the analysis needs."""


class ExpectationError(ConfigError):
    """An expectation, or a baseline to compare with, is invalid (CLIs exit with status 2)."""


def os_error_text(err: OSError) -> str:
    """Say what an ``OSError`` from a path the checks could not foresee means, in one line.

    ``PermissionError`` from a directory the user may not read, ``File name too long``: the
    path and the system's reason (``/bags/run1: Permission denied``), never a traceback.
    """
    reason = err.strerror or str(err) or type(err).__name__
    if err.filename is None:
        return reason
    name = str(err.filename)
    if err.filename2 is not None:
        name += f' -> {err.filename2}'
    return f'{name}: {reason}'
