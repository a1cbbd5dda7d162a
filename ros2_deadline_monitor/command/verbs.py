"""The verbs of ``deadline`` and ``ros2 deadline``: each one of the package's programs.

A verb adds its program's own arguments (the ``add_arguments`` next to its ``build_parser``)
to the sub-parser, so ``--help`` and argcomplete know them, and then hands the arguments that
follow the verb to the program's ``main``, unchanged: ``ros2 deadline monitor /cmd`` does
what ``ros2 run ros2_deadline_monitor monitor /cmd`` does, with the same checks, errors and
exit codes.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType
from typing import Any

from ros2_deadline_monitor.command.extension import (
    PLUGIN_SYSTEM_VERSION,
    satisfies_version,
    topic_completer,
)
from ros2_deadline_monitor.configuration.usage import flag_suggestions

ARGV_DEST = '_deadline_argv'
"""Where ``DeadlineCommand`` keeps the command line the verb's arguments are taken from."""


def verb_arguments(argv: Sequence[str], verb: str) -> list[str]:
    """Return what follows the verb in ``argv`` (the program's own arguments).

    ``argv`` is the ``ros2`` (or ``deadline``) command line without the program name; nothing
    before the verb can be spelled like it (``ros2 [--use-python-default-buffering] deadline``).
    """
    args = list(argv)
    return args[args.index(verb) + 1:] if verb in args else []


class VerbExtension:
    """The extension point for 'deadline' verb extensions.

    A verb names the module of its program (``MODULE``), which has ``build_parser()``,
    ``add_arguments(parser)`` and ``main(argv) -> int``.
    """

    NAME: str | None = None
    EXTENSION_POINT_VERSION = '0.1'
    MODULE = ''
    ROS_ARGS = True
    """The program takes ``--ros-args ...`` (all but ``analyze``; ``demo`` passes them on)."""

    def __init__(self) -> None:
        """Check the plugin system's version, as ros2cli's own verbs do."""
        super().__init__()
        satisfies_version(PLUGIN_SYSTEM_VERSION, '^0.1')

    def program(self) -> ModuleType:
        """Import the program's module (only the verb asked for is imported)."""
        return import_module(self.MODULE)

    def add_arguments(self, parser: argparse.ArgumentParser, cli_name: str) -> None:
        """Give ``parser`` the program's arguments, description and epilog."""
        program = self.program()
        own = program.build_parser()
        parser.description = own.description
        parser.epilog = own.epilog
        program.add_arguments(parser)
        if self.ROS_ARGS:
            parser.add_argument(
                '--ros-args', nargs=argparse.REMAINDER, metavar='ARG',
                help='ROS arguments to the end or a lone --, e.g. --ros-args -p '
                     'use_sim_time:=true --params-file config/monitor.yaml')
        completer = topic_completer()
        for action in parser._actions:  # argparse has no public list of them
            if action.dest == 'topics' and completer is not None:
                action.completer = completer  # type: ignore[attr-defined]
        _suggest_flags(getattr(parser, '_root_parser', None), parser)

    def main(self, *, args: argparse.Namespace) -> Any:
        """Run the program with the arguments that followed the verb; its exit code."""
        return self.program().main(verb_arguments(getattr(args, ARGV_DEST, ()), self.NAME))


def _suggest_flags(root: argparse.ArgumentParser | None,
                   verb_parser: argparse.ArgumentParser) -> None:
    """Make ros2cli's root parser name the verb's closest flag for an unknown one.

    ros2cli parses the whole line with its root parser (which ``add_subparsers_on_demand``
    hands a verb as ``_root_parser``), so a typo (``--perod-ms``) is the root's bare
    "unrecognized arguments"; the programs themselves answer with the closest flag.
    """
    if root is None:
        return
    refuse = root.error

    def error(message: str) -> None:
        flags = list(verb_parser._option_string_actions)  # no public list either
        refuse(message + flag_suggestions(message, flags))

    root.error = error  # type: ignore[method-assign]


class MonitorVerb(VerbExtension):
    """Monitor deadline misses, skipped periods and the real time factor live."""

    MODULE = 'ros2_deadline_monitor.live.cli'


class WatchVerb(VerbExtension):
    """Show a running monitor's figures as a live table."""

    MODULE = 'ros2_deadline_monitor.live.watch'


class AnalyzeVerb(VerbExtension):
    """Analyze recorded bags offline, as the live monitor would (a CI gate with --check)."""

    MODULE = 'ros2_deadline_monitor.bag.analyze'
    ROS_ARGS = False


class RecordVerb(VerbExtension):
    """Record topics into an MCAP bag with the times analyze needs."""

    MODULE = 'ros2_deadline_monitor.record.command'


class DemoVerb(VerbExtension):
    """Reproduce the reference measurement live: RTF next to deadline misses."""

    MODULE = 'ros2_deadline_monitor.tools.demo'


class SimClockVerb(VerbExtension):
    """Publish /clock paced to a target real time factor (a simulator stand-in)."""

    MODULE = 'ros2_deadline_monitor.tools.sim_clock'


class DemoControllerVerb(VerbExtension):
    """A 100 Hz control loop stand-in that stalls on purpose and records its cycles."""

    MODULE = 'ros2_deadline_monitor.tools.demo_controller'


class MujocoSimVerb(VerbExtension):
    """Step a MuJoCo model paced to a target real time factor (a simulator in the loop)."""

    MODULE = 'ros2_deadline_monitor.tools.mujoco_sim'


VERBS: dict[str, type[VerbExtension]] = {
    'monitor': MonitorVerb,
    'watch': WatchVerb,
    'analyze': AnalyzeVerb,
    'record': RecordVerb,
    'demo': DemoVerb,
    'sim_clock': SimClockVerb,
    'demo_controller': DemoControllerVerb,
    'mujoco_sim': MujocoSimVerb,
}
"""Verb -> class; the entry point group ``ros2deadline.verb`` in setup.cfg lists the same."""


__all__ = ['ARGV_DEST', 'verb_arguments', 'VERBS', 'VerbExtension', *(
    verb.__name__ for verb in VERBS.values())]
