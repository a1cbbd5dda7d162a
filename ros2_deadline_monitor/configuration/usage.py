"""Command line errors of the executables: one ``ERROR:`` line and exit code 2.

argparse's own ``error`` prints the usage block and the message and exits; the executables
must also refuse ROS arguments and settings argparse knows nothing of, and say each in the
same single line, so every refusal goes through ``UsageError``. What is checked here needs no
ROS (``analyze`` uses it too); what rcl itself parses is ``live/rcl_arguments.py``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
import difflib
from pathlib import Path
from typing import Any

from ros2_deadline_monitor.analysis.config import check_topic_name
from ros2_deadline_monitor.analysis.errors import ConfigError, os_error_text

EXIT_USAGE = 2
LOG_LEVELS = ('debug', 'info', 'warn', 'error', 'fatal', 'unset')
"""What rcutils accepts after ``--log-level`` (in any case), alone or as ``NAME:=LEVEL``."""


class UsageError(Exception):
    """A command line that cannot be used; ``main`` prints it as one line and returns 2."""


class UsageParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises ``UsageError`` instead of printing and exiting.

    No abbreviations (``--period`` for ``--period-ms`` would break when a flag is added), and
    a flag it does not know gets the closest one it does: ``--perod-ms`` would otherwise be
    a bare "unrecognized arguments".
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """As ``ArgumentParser``, with ``allow_abbrev`` off unless asked for."""
        kwargs.setdefault('allow_abbrev', False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        """Raise ``UsageError`` with argparse's message (and the closest known flags)."""
        raise UsageError(message + flag_suggestions(message, list(self._option_string_actions)))


def flag_suggestions(message: str, flags: Sequence[str]) -> str:
    """Return `` (did you mean --x?)`` for the unknown flags argparse's ``message`` names."""
    prefix = 'unrecognized arguments: '
    if not message.startswith(prefix):
        return ''
    # Compared without the dashes they all share: --bogus is not close to --jobs.
    known = {flag[2:]: flag for flag in flags if flag.startswith('--')}
    pairs = []
    for arg in message[len(prefix):].split():
        flag = arg.split('=', 1)[0]
        match = (difflib.get_close_matches(flag[2:], list(known), n=1)
                 if flag.startswith('--') else [])
        pairs += [(flag, known[match[0]])] if match else []
    if len(pairs) == 1:
        return f' (did you mean {pairs[0][1]}?)'
    close = [f'{match} for {flag}' for flag, match in pairs]
    return f' (did you mean {", ".join(close)}?)' if close else ''


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
