"""Command line errors of the shell's executables: one ``ERROR:`` line and exit code 2.

argparse's own ``error`` prints the usage block and the message and exits; the executables
here must also refuse ROS arguments and settings argparse knows nothing of, and say each in
the same single line, so every refusal goes through ``UsageError``. No module-level ROS
import: rclpy is imported where ROS arguments are parsed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
import contextlib
import os
from pathlib import Path
import re
import sys
import tempfile
from typing import TypeVar

from ros2_deadline_monitor.core.config import check_topic_name
from ros2_deadline_monitor.core.errors import ConfigError, os_error_text

EXIT_USAGE = 2
Parsed = TypeVar('Parsed')
LOG_LEVELS = ('debug', 'info', 'warn', 'error', 'fatal', 'unset')
"""What rcutils accepts after ``--log-level`` (in any case), alone or as ``NAME:=LEVEL``."""


class UsageError(Exception):
    """A command line that cannot be used; ``main`` prints it as one line and returns 2."""


class UsageParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises ``UsageError`` instead of printing and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        """Raise ``UsageError`` with argparse's message."""
        raise UsageError(message)


def check_topic_names(topics: Sequence[str]) -> None:
    """Raise ``UsageError`` for an invalid topic name or one given twice (monitor, record)."""
    seen: set[str] = set()
    for topic in topics:
        try:
            check_topic_name(topic)
        except ConfigError:
            raise UsageError(f'invalid topic name {topic!r} (e.g. /demo/cmd: letters, digits '
                             'and underscores between slashes)') from None
        if topic in seen:
            raise UsageError(f'topic {topic} is given twice')
        seen.add(topic)


def ros_arguments(argv: Sequence[str]) -> Iterator[list[str]]:
    """Yield the argument lists of each ``--ros-args ... [--]`` section of ``argv``."""
    section: list[str] | None = None
    for arg in argv:
        if section is None:
            if arg == '--ros-args':
                section = []
        elif arg == '--':
            yield section
            section = None
        elif arg == '--ros-args':
            continue
        else:
            section.append(arg)
    if section is not None:
        yield section


def check_ros_arguments(argv: Sequence[str]) -> None:
    """Reject a bad ``--log-level`` and a missing ``--params-file`` before rcl sees them.

    rcl would refuse them too, but with a traceback-shaped message and its own log line;
    these are the two mistakes people make, so they get a sentence that says the fix.
    """
    for section in ros_arguments(argv):
        for flag, value in zip(section, [*section[1:], None], strict=True):
            if flag == '--log-level':
                _check_log_level(value)
            elif flag == '--params-file':
                _check_params_file(value)


def _check_params_file(value: str | None) -> None:
    try:
        found = value is not None and Path(value).is_file()
    except OSError as err:  # a file name too long, a directory it may not search
        raise UsageError(f'--params-file: {os_error_text(err)}') from None
    if not found:
        raise UsageError(f'--params-file: no such file: {value!r}')


def _check_log_level(value: str | None) -> None:
    level = value.rpartition(':=')[2] if value else ''
    if level.lower() not in LOG_LEVELS:
        raise UsageError(
            f'--log-level {value or ""}: expected one of {", ".join(LOG_LEVELS)}, alone or '
            'for one logger (--log-level deadline_monitor:=debug: the monitor only, without '
            "rcl's and the middleware's debug output)")


@contextlib.contextmanager
def stderr_held() -> Iterator[Callable[[], str]]:
    """Hold back what C code writes to stderr; pass it on unless the caller drops it.

    rcl prints its own "Failed to parse global arguments" line before rclpy raises: on bad
    arguments the user should see one line, ours. Yields a function returning the text and
    marking it as consumed.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    held = tempfile.TemporaryFile()
    consumed = False

    def take() -> str:
        nonlocal consumed
        consumed = True
        held.seek(0)
        return held.read().decode(errors='replace')

    os.dup2(held.fileno(), 2)
    try:
        yield take
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        if not consumed:
            held.seek(0)
            sys.stderr.write(held.read().decode(errors='replace'))
            sys.stderr.flush()
        held.close()


def rcl_reason(err: BaseException) -> str:
    """Return the sentence of an rcl error, without its source locations (``, at file.c:12``)."""
    text = re.sub(r',? at /?\S+\.c:\d+', '', str(err)).strip()
    for prefix in ('failed to initialize rcl: ', 'Failed to parse ROS arguments: '):
        text = text.removeprefix(prefix)
    return text or type(err).__name__


def init_rclpy(program: str, args: Sequence[str]) -> None:
    """``rclpy.init`` with the ROS arguments; raise ``UsageError`` with rcl's reason.

    rcl prints its own complaint on stderr before raising: it is held back, so a bad
    argument is one line from the caller, not rcl's noise and a traceback.
    """
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    with stderr_held() as take:
        try:
            rclpy.init(args=[program, *args], signal_handler_options=SignalHandlerOptions.NO)
        except Exception as err:  # noqa: BLE001 - rclpy raises RCLError and subclasses
            take()
            raise UsageError(rcl_reason(err)) from None


def without_ros_args(program: str, args: list[str]) -> list[str]:
    """Return ``args`` without the ROS arguments; ``UsageError`` if rcl cannot parse them."""
    from rclpy.utilities import remove_ros_args

    with stderr_held() as take:
        try:
            return remove_ros_args([program, *args])[1:]
        except Exception as err:  # noqa: BLE001 - rclpy raises RCLInvalidROSArgsError & co
            take()
            raise UsageError(f'invalid ROS arguments: {rcl_reason(err)}') from None


def parse_checked(program: str, args: list[str],
                  parse: Callable[[list[str]], Parsed]) -> Parsed | int:
    """Check the ROS arguments and parse the rest: the command line, or the exit code.

    One ``ERROR:`` line (exit 2) for a usage error, 0 after ``--help``: what every command
    (``monitor``, ``record``) answers before it starts rclpy.
    """
    try:
        check_ros_arguments(args)
        return parse(without_ros_args(program, args))
    except UsageError as err:
        print(f'ERROR: {err} (see {program} --help)', file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else EXIT_USAGE
