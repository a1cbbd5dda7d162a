"""The documented key lists, generated from the figure table (``analysis/figures.py``).

docs/diagnostics.md lists every diagnostic key (``python -m
ros2_deadline_monitor.outputs.figure_docs --write docs/diagnostics.md``) and
docs/whole-run-figures.md every whole-run key (``... figure_docs run --write
docs/whole-run-figures.md``); tests compare both documents with the table, so a figure added
to the table without regenerating them fails. ``outputs/metrics.py`` writes its metric list
the same way (``generated_list_main``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
import sys

from ros2_deadline_monitor.analysis.figures import (
    CLOCK,
    Figure,
    HOST,
    RUN_CLOCK,
    RUN_TOPIC,
    TOPIC,
    TRANSFORM,
)

__all__ = ['BEGIN', 'END', 'RUN_BEGIN', 'RUN_END', 'generated_list_main', 'main', 'markdown',
           'replace_block', 'run_keys_main', 'run_markdown', 'tables']


def tables() -> dict[str, tuple[tuple[Figure, ...], str]]:
    """Each status's figures and the stats message their fields belong to."""
    return {'topic <id>': (TOPIC, 'TopicStats'), 'clock': (CLOCK, 'ClockStats'),
            'host': (HOST, 'HostStats')}


BEGIN = ('<!-- diagnostic keys: generated from analysis/figures.py by '
         '`python -m ros2_deadline_monitor.outputs.figure_docs --write docs/diagnostics.md` -->')
END = '<!-- end of diagnostic keys -->'


def markdown() -> str:
    """Return the documented key list: a table per status, in the order rqt_robot_monitor shows."""
    lines = []
    for status, (figures, message) in tables().items():
        lines += ['', f'`{status}`:', '', f'| key | group | meaning | `{message}` field |',
                  '|---|---|---|---|']
        for figure in figures:
            field = f'`{figure.field}`' if figure.field else ''
            lines.append(f'| `{figure.key}` | {figure.group} | {figure.description} | '
                         f'{field} |')
    return '\n'.join([BEGIN, *lines, '', END])


RUN_BEGIN = ('<!-- whole-run keys: generated from analysis/figures.py by `python -m '
             'ros2_deadline_monitor.outputs.figure_docs run --write '
             'docs/whole-run-figures.md` -->')
RUN_END = '<!-- end of whole-run keys -->'


def run_markdown() -> str:
    """Return the whole-run figures: JSON keys, the limits that bound them, columns, fields."""
    lines = []
    for part, figures in (('topic', RUN_TOPIC), ('clock', RUN_CLOCK),
                          ('each transform of a /tf-like topic (`transforms`)', TRANSFORM)):
        lines += ['', f'{part}:', '', '| JSON key | expectation | column | meaning | field |',
                  '|---|---|---|---|---|']
        for figure in figures:
            if not figure.json and not figure.field:
                continue
            cells = [f'`{figure.json}`' if figure.json else '',
                     f'`{figure.limit}`' if figure.limit else '',
                     f'`{figure.column}`' if figure.column else '', figure.description,
                     f'`{figure.field}`' if figure.field else '']
            lines.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join([RUN_BEGIN, *lines, '', RUN_END])


def replace_block(text: str, block: str, begin: str = BEGIN, end: str = END) -> str:
    """Return ``text`` with the generated list (between the markers) replaced."""
    start = text.index(begin)
    stop = text.index(end, start) + len(end)
    return text[:start] + block + text[stop:]


def generated_list_main(argv: list[str] | None, prog: str, what: str,
                        make: Callable[[], str], begin: str, end: str) -> int:
    """Print a list generated from the table, or write it into a file between its markers."""
    parser = argparse.ArgumentParser(
        prog=prog, description=f'Print the {what} generated from the table of figures.')
    parser.add_argument('--write', metavar='FILE', type=Path,
                        help='replace the list between the markers in this file')
    args = parser.parse_args(argv)
    if args.write is None:
        print(make())
        return 0
    try:
        text = args.write.read_text(encoding='utf-8')
        args.write.write_text(replace_block(text, make(), begin, end), encoding='utf-8')
    except (OSError, ValueError) as err:
        print(f'ERROR: {args.write}: {err}', file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Print the key list, or write it into a document between the markers."""
    return generated_list_main(argv, 'python -m ros2_deadline_monitor.outputs.figure_docs',
                               'diagnostic key list', markdown, BEGIN, END)


def run_keys_main(argv: list[str] | None = None) -> int:
    """Print the whole-run key list, or write it into a document between its markers."""
    return generated_list_main(argv, 'python -m ros2_deadline_monitor.outputs.figure_docs run',
                               'whole-run key list', run_markdown, RUN_BEGIN, RUN_END)


if __name__ == '__main__':
    sys.exit(run_keys_main(sys.argv[2:]) if sys.argv[1:2] == ['run'] else main())
