#!/usr/bin/env python3
"""Point the ros-jazzy wheels' exported CMake include paths at this Python and numpy.

The message wheels ship `*__rosidl_generator_pyExport.cmake` files that hard-code the include
directories of the machine that built them (`/opt/python/cp311-cp311/...`). CMake refuses an
imported target whose include directory does not exist, so `rosidl_generate_interfaces` fails
in any package that depends on those messages. This rewrites every missing Python include
directory to `sysconfig`'s and every missing numpy one to `numpy.get_include()`. Idempotent;
run it with the venv's Python. Prints how many files it changed.

Usage: fix_rosidl_cmake.py [PREFIX]   (default: sys.prefix, the active venv)
"""

from pathlib import Path
import re
import sys
import sysconfig

INCLUDE_DIRECTORIES = re.compile(r'(INTERFACE_INCLUDE_DIRECTORIES\s+")([^"]*)(")')


def replacement_for(path: str, python_include: str, numpy_include: str) -> str:
    """Return the local directory for a missing build-machine include path."""
    if Path(path).exists():
        return path
    if 'numpy' in path:
        return numpy_include
    if re.search(r'include/python3\.\d+', path):
        return python_include
    return path


def fix_file(path: Path, python_include: str, numpy_include: str) -> bool:
    """Rewrite the include directories of one export file; return whether it changed."""
    text = path.read_text(encoding='utf-8')

    def rewrite(match: re.Match[str]) -> str:
        dirs = [replacement_for(d, python_include, numpy_include)
                for d in match[2].split(';') if d]
        return match[1] + ';'.join(dirs) + match[3]

    fixed = INCLUDE_DIRECTORIES.sub(rewrite, text)
    if fixed == text:
        return False
    path.write_text(fixed, encoding='utf-8')
    return True


def main(argv: list[str] | None = None) -> int:
    """Command line entry: see the module docstring."""
    args = sys.argv[1:] if argv is None else argv
    prefix = Path(args[0] if args else sys.prefix)
    python_include = sysconfig.get_paths()['include']
    if not (Path(python_include) / 'Python.h').is_file():
        print(f'ERROR: {python_include}/Python.h is missing: install the Python development '
              'headers (Debian/Ubuntu: python3-dev)', file=sys.stderr)
        return 1
    try:
        import numpy
    except ImportError:
        print('ERROR: numpy is not installed in this Python', file=sys.stderr)
        return 1
    numpy_include = numpy.get_include()
    changed = 0
    for path in sorted(prefix.glob('share/*/cmake/*__rosidl_generator_pyExport.cmake')):
        changed += fix_file(path, python_include, numpy_include)
    print(changed)
    return 0


if __name__ == '__main__':
    sys.exit(main())
