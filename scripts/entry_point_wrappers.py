#!/usr/bin/env python3
"""Write one executable wrapper per console_scripts entry point declared in setup.cfg.

CMakeLists.txt runs this at configure time so that the entry points are declared once, in
setup.cfg, and still end up under lib/ros2_deadline_monitor/ for `ros2 run` in an ament_cmake
build (setuptools is not involved there). Prints the paths of the written files, one a line.

Usage: entry_point_wrappers.py SETUP_CFG OUTPUT_DIR PYTHON_EXECUTABLE
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


def read_console_scripts(setup_cfg: Path) -> list[tuple[str, str, str]]:
    """Return (name, module, attribute) for each console_scripts entry point."""
    parser = configparser.ConfigParser(interpolation=None)
    if not parser.read(setup_cfg, encoding='utf-8'):
        raise ValueError(f'cannot read {setup_cfg}')
    raw = parser.get('options.entry_points', 'console_scripts', fallback='')
    entries = []
    for line in raw.splitlines():
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        match = ENTRY_POINT.match(line)
        if match is None:
            raise ValueError(f'unsupported console_scripts entry in {setup_cfg}: {line!r}')
        entries.append((match['name'], match['module'], match['attr']))
    if not entries:
        raise ValueError(f'no console_scripts entry points in {setup_cfg}')
    return entries


def write_wrappers(setup_cfg: Path, out_dir: Path, python: str) -> list[Path]:
    """Write the wrappers into out_dir and return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, module, attr in read_console_scripts(setup_cfg):
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
    if len(args) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    setup_cfg, out_dir, python = args
    try:
        paths = write_wrappers(Path(setup_cfg), Path(out_dir), python)
    except (OSError, ValueError) as err:
        print(f'ERROR: {err}', file=sys.stderr)
        return 1
    print('\n'.join(os.fspath(path) for path in paths))
    return 0


if __name__ == '__main__':
    sys.exit(main())
