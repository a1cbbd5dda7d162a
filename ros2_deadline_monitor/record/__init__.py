"""The ``record`` command: live subscriptions written to an MCAP bag for ``analyze``."""

__all__: list[str] = []
