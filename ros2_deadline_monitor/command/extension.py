"""ros2cli's extension API, or a tiny stand-in where ros2cli is not installed.

ros2cli (the ``ros2`` command) is an apt package of a ROS 2 installation, not on PyPI: the
package installs and runs without it, and ``deadline`` (what ``pip install`` puts on PATH)
dispatches its verbs with the stand-in below. With ros2cli, ``ros2 deadline`` loads only the
verb asked for (``add_subparsers_on_demand``), and argcomplete completes flags and topics.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

try:
    from ros2cli.command import add_subparsers_on_demand, CommandExtension
    from ros2cli.plugin_system import PLUGIN_SYSTEM_VERSION, satisfies_version
except ImportError:
    add_subparsers_on_demand = None
    PLUGIN_SYSTEM_VERSION = '0.1'

    class CommandExtension:  # type: ignore[no-redef]
        """ros2cli's ``CommandExtension`` without ros2cli: a name and two methods."""

        NAME: str | None = None
        EXTENSION_POINT_VERSION = '0.1'

        def add_arguments(self, parser: argparse.ArgumentParser, cli_name: str, *,
                          argv: Sequence[str] | None = None) -> None:
            """Add the command's arguments to ``parser``."""

        def main(self, *, parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
            """Run the command."""
            raise NotImplementedError

    def satisfies_version(version: str, caret_range: str) -> None:
        """ros2cli checks the plugin system's version; without ros2cli there is none."""

VERB_DEST = '_verb'
"""Where the chosen verb is kept in the parsed arguments (ros2cli's convention)."""


def first_doc_line(any_type: Any) -> str:
    """Return the first line of a docstring without its full stop, as ros2cli shows it."""
    lines = [line.strip() for line in (any_type.__doc__ or '').splitlines() if line.strip()]
    return lines[0].rstrip('.') if lines else ''


def add_verbs(parser: argparse.ArgumentParser, cli_name: str, group: str,
              verbs: Mapping[str, Callable[[], Any]], argv: Sequence[str],
              use_ros2cli: bool) -> None:
    """Add a sub-parser per verb; only the verb named in ``argv`` gets its arguments.

    With ros2cli (``use_ros2cli``) this is its ``add_subparsers_on_demand`` over the entry
    point ``group``; else the same on ``verbs`` (name -> class), so ``deadline --help``
    imports none of the programs (``sim_clock`` imports rclpy, which a bag analysis lacks).
    """
    if use_ros2cli and add_subparsers_on_demand is not None:
        add_subparsers_on_demand(parser, cli_name, VERB_DEST, group, required=False,
                                 argv=list(argv))
        return
    width = max(len(name) for name in verbs)
    subparsers = parser.add_subparsers(
        title='Commands',
        description=''.join(f'{name.ljust(width)}  {first_doc_line(verb)}\n'
                            for name, verb in verbs.items()),
        metavar=f'Call `{cli_name} <command> -h` for more detailed usage.')
    subparsers.dest = ' ' + VERB_DEST.lstrip('_')
    chosen = next((arg for arg in argv if arg in verbs), None)
    for name, verb_type in verbs.items():
        verb_parser = subparsers.add_parser(
            name, description=first_doc_line(verb_type),
            formatter_class=argparse.RawDescriptionHelpFormatter)
        if name == chosen:
            verb = verb_type()
            verb.NAME = name
            verb_parser.set_defaults(**{VERB_DEST: verb})
            verb.add_arguments(verb_parser, f'{cli_name} {name}')


def topic_completer() -> Callable[..., list[str]] | None:
    """Complete topic names as ``ros2 topic`` does, where ros2cli and ros2topic are installed."""
    try:
        from ros2cli.node.strategy import NodeStrategy
        from ros2topic.api import get_topic_names
    except ImportError:
        return None

    def complete(prefix: str, parsed_args: argparse.Namespace, **kwargs: Any) -> list[str]:
        with NodeStrategy(parsed_args) as node:
            return get_topic_names(node=node, include_hidden_topics=False)

    return complete


__all__ = ['add_verbs', 'CommandExtension', 'first_doc_line', 'PLUGIN_SYSTEM_VERSION',
           'satisfies_version', 'topic_completer', 'VERB_DEST']
