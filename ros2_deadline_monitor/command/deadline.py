"""``deadline`` and ``ros2 deadline``: one command, a verb per program.

    deadline monitor /demo/cmd --period-ms 10
    ros2 deadline analyze run1 --check --expect-max-misses 0

``DeadlineCommand`` is the ``ros2cli.command`` entry point; ``main`` is the ``deadline``
executable ``pip install`` puts on PATH, the same command without ros2cli.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import sys
from typing import Any

from ros2_deadline_monitor.command.extension import add_verbs, CommandExtension, VERB_DEST
from ros2_deadline_monitor.command.verbs import ARGV_DEST, VERBS

VERB_GROUP = 'ros2deadline.verb'
"""The entry point group of the verbs (an ``ros2cli.extension_point``)."""
DESCRIPTION = """\
Deadline misses, skipped timer periods and intervals of ROS 2 topics next to the
simulator's real time factor, live and from bags. Each command takes the arguments of the
executable of the same name (ros2 run ros2_deadline_monitor <command>).
"""


class DeadlineCommand(CommandExtension):
    """Deadline misses and real time factor of ROS 2 topics, live and from bags."""

    def __init__(self, use_ros2cli: bool = True) -> None:
        """``use_ros2cli``: find the verbs through ros2cli's entry points when it is there."""
        super().__init__()
        self._use_ros2cli = use_ros2cli
        self._parser: argparse.ArgumentParser | None = None

    def add_arguments(self, parser: argparse.ArgumentParser, cli_name: str, *,
                      argv: Sequence[str] | None = None) -> None:
        """Add a sub-parser per verb (only the chosen verb's arguments are loaded)."""
        self._parser = parser
        given = list(sys.argv[1:] if argv is None else argv)
        parser.set_defaults(**{ARGV_DEST: given})
        add_verbs(parser, cli_name, VERB_GROUP, VERBS, given, self._use_ros2cli)

    def main(self, *, parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
        """Run the chosen verb, or print the help when none was given."""
        verb = getattr(args, VERB_DEST, None)
        if verb is None:
            (self._parser or parser).print_help()
            return 0
        return verb.main(args=args)


def build_parser(argv: Sequence[str]) -> tuple[argparse.ArgumentParser, DeadlineCommand]:
    """Build ``deadline``'s parser for ``argv`` (the verb named there gets its arguments)."""
    parser = argparse.ArgumentParser(prog='deadline', description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    command = DeadlineCommand(use_ros2cli=False)
    command.NAME = 'deadline'
    command.add_arguments(parser, 'deadline', argv=argv)
    return parser, command


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``deadline``: run the verb; its exit code (2 for a bad command line)."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    parser, command = build_parser(args_in)
    try:
        from argcomplete import autocomplete
    except ImportError:
        pass
    else:
        autocomplete(parser, exclude=['-h', '--help'])
    try:
        args = parser.parse_args(args_in)
    except SystemExit as exit_:  # --help, or argparse's usage error (exit 2)
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 2
    try:
        return int(command.main(parser=parser, args=args) or 0)
    except KeyboardInterrupt:
        return 0


__all__ = ['build_parser', 'DeadlineCommand', 'DESCRIPTION', 'main', 'VERB_GROUP']
