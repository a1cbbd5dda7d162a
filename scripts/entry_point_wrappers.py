#!/usr/bin/env python3
"""Write the `ros2 run` executables and the package metadata declared in setup.cfg.

CMakeLists.txt runs this at configure time so that the executables ([ros2_run] executables)
and the entry points ([options.entry_points]: the `deadline` command and the ros2cli
extension) are declared once, in setup.cfg, and still end up in an ament_cmake build
(setuptools is not involved there): one wrapper per executable for
lib/ros2_deadline_monitor/, and an entry_points.txt for the package's installed egg-info,
through which importlib.metadata, and so `ros2 deadline`, find the entry points. Prints the
paths of the written wrappers, one a line.

Usage: entry_point_wrappers.py SETUP_CFG OUTPUT_DIR PYTHON_EXECUTABLE [ENTRY_POINTS_DIR]
"""

import configparser
import os
from pathlib import Path
import re
import sys

ENTRY_POINT = re.compile(
    r'^(?P<name>[A-Za-z0-9_.-]+)\s*=\s*(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_]\w*)$')

TEMPLATE = """#!{python}
# Generated from setup.cfg ({name} = {module}:{attr}) by scripts/entry_point_wrappers.py.
import sys

if __name__ == '__main__':
    try:
        from {module} import {attr} as _entry_point
        sys.exit(_entry_point())
    except KeyboardInterrupt:
        # Ctrl-C before the program's own signal handlers are in place (importing rclpy
        # takes seconds on a loaded machine): a stop, like a later Ctrl-C, not a traceback.
        sys.exit(0)
"""


def _read(setup_cfg: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    if not parser.read(setup_cfg, encoding='utf-8'):
        raise ValueError(f'cannot read {setup_cfg}')
    return parser


def read_executables(setup_cfg: Path) -> list[tuple[str, str, str]]:
    """Return (name, module, attribute) for each `ros2 run` executable ([ros2_run])."""
    raw = _read(setup_cfg).get('ros2_run', 'executables', fallback='')
    entries = []
    for line in raw.splitlines():
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        match = ENTRY_POINT.match(line)
        if match is None:
            raise ValueError(f'unsupported executable entry in {setup_cfg}: {line!r}')
        entries.append((match['name'], match['module'], match['attr']))
    if not entries:
        raise ValueError(f'no [ros2_run] executables in {setup_cfg}')
    return entries


def write_entry_points(setup_cfg: Path, out_dir: Path) -> Path:
    """Write ``entry_points.txt`` ([options.entry_points]) into out_dir; return its path."""
    parser = _read(setup_cfg)
    groups = parser['options.entry_points'] if parser.has_section('options.entry_points') \
        else {}
    lines = []
    for group, raw in groups.items():
        lines.append(f'[{group}]')
        lines += [line.strip() for line in raw.splitlines()
                  if line.strip() and not line.strip().startswith('#')]
        lines.append('')
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / 'entry_points.txt'
    path.write_text('\n'.join(lines), encoding='utf-8')
    return path


def write_wrappers(setup_cfg: Path, out_dir: Path, python: str) -> list[Path]:
    """Write the wrappers into out_dir and return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, module, attr in read_executables(setup_cfg):
        path = out_dir / name
        path.write_text(
            TEMPLATE.format(python=python, name=name, module=module, attr=attr),
            encoding='utf-8')
        path.chmod(0o755)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    """Command line entry: see the module docstring."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (3, 4):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    setup_cfg, out_dir, python = args[:3]
    try:
        paths = write_wrappers(Path(setup_cfg), Path(out_dir), python)
        if len(args) == 4:
            write_entry_points(Path(setup_cfg), Path(args[3]))
    except (OSError, ValueError, configparser.Error) as err:
        print(f'ERROR: {err}', file=sys.stderr)
        return 1
    print('\n'.join(os.fspath(path) for path in paths))
    return 0


if __name__ == '__main__':
    sys.exit(main())
