"""Command line errors of the shell's executables: one ``ERROR:`` line and exit code 2.

argparse's own ``error`` prints the usage block and the message and exits; the executables
here must also refuse ROS arguments and settings argparse knows nothing of, and say each in
the same single line, so every refusal goes through ``UsageError``.
"""

from __future__ import annotations

import argparse

EXIT_USAGE = 2


class UsageError(Exception):
    """A command line that cannot be used; ``main`` prints it as one line and returns 2."""


class UsageParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises ``UsageError`` instead of printing and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        """Raise ``UsageError`` with argparse's message."""
        raise UsageError(message)
