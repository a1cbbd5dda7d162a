"""What rcl parses of a command line: ROS arguments, ``rclpy.init``, and their errors.

rcl prints its own complaint on stderr before rclpy raises; it is held back here so a bad
argument is one ``ERROR:`` line (``configuration/usage.py``), not rcl's noise and a
traceback. rclpy is imported where ROS arguments are parsed, not at module level.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
import contextlib
import os
import re
import sys
import tempfile
from typing import TypeVar

from ros2_deadline_monitor.configuration.usage import check_ros_arguments, EXIT_USAGE, UsageError

Parsed = TypeVar('Parsed')


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
