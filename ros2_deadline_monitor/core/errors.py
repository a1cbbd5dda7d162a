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
