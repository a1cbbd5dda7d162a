"""A plain `colcon build` in a standard workspace builds the messages and installs everything.

This is the acceptance for users with ROS 2 installed: `ws/src/<this repository>`, then
`colcon build` from ws/ with no flags. The build runs in a copy of the working tree with the
current environment (the venv's ROS under scripts/dev), minus this package's own install,
so nothing can come from the build the rest of the suite uses.
"""

import json
import os
from pathlib import Path
import shutil
import subprocess
import sys

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = 'ros2_deadline_monitor'
EXECUTABLES = ('monitor', 'sim_clock', 'demo_controller', 'demo', 'analyze', 'record')
PATH_VARIABLES = ('AMENT_PREFIX_PATH', 'CMAKE_PREFIX_PATH', 'COLCON_PREFIX_PATH', 'PYTHONPATH',
                  'LD_LIBRARY_PATH', 'PATH')
NOT_SOURCE = shutil.ignore_patterns(
    '.git', '.venv', '.build', 'build', 'install', 'log', '__pycache__', '.pytest_cache',
    '.ruff_cache', '.hypothesis')

CHECK = """
import json, sys
from rclpy.serialization import deserialize_message, serialize_message
import ros2_deadline_monitor
from ros2_deadline_monitor.msg import MonitorStats, TopicStats

stats = MonitorStats(topics=[TopicStats(topic='/cmd', deadline_misses_total=20)])
again = deserialize_message(serialize_message(stats), MonitorStats)
json.dump({'package': ros2_deadline_monitor.__file__,
           'misses': again.topics[0].deadline_misses_total}, sys.stdout)
"""


def own_prefixes(environ: dict[str, str]) -> list[Path]:
    """Return the install prefixes in the environment that hold only this package."""
    prefixes = []
    for entry in environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        prefix = Path(entry) if entry else None
        if prefix is None or not (prefix / 'share' / PACKAGE / 'package.xml').is_file():
            continue
        index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
        if {p.name for p in index.iterdir()} == {PACKAGE}:  # an isolated colcon install
            prefixes.append(prefix)
            if (prefix.parent / 'setup.bash').is_file():  # ...and its install base
                prefixes.append(prefix.parent)
    return prefixes


def environment_without_own_install() -> dict[str, str]:
    """Return os.environ with every path into an install of this package removed."""
    environ = dict(os.environ)
    prefixes = own_prefixes(environ)
    for name in PATH_VARIABLES:
        if name in environ:
            entries = [e for e in environ[name].split(os.pathsep)
                       if e and not any(Path(e).is_relative_to(p) for p in prefixes)]
            environ[name] = os.pathsep.join(entries)
    return environ


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> str:
    """Run a command; on failure fail the test with the end of its output."""
    result = subprocess.run(command, cwd=cwd, env=env, timeout=timeout, check=False,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        tail = '\n'.join(result.stdout.splitlines()[-60:])
        pytest.fail(f'{" ".join(command)} exited with {result.returncode}:\n{tail}')
    return result.stdout


@pytest.mark.slow
def test_plain_colcon_build_in_a_standard_workspace(tmp_path):
    colcon = shutil.which('colcon')
    if colcon is None:
        pytest.skip('colcon is not installed (scripts/dev setup installs it)')
    ws = tmp_path / 'ws'
    shutil.copytree(REPO_ROOT, ws / 'src' / PACKAGE, ignore=NOT_SOURCE, symlinks=True)
    env = environment_without_own_install()

    run([colcon, 'build'], cwd=ws, env=env, timeout=1200)

    install = ws / 'install' / PACKAGE
    out = run(['bash', '-c', 'source install/setup.bash && exec "$0" -c "$1"',
               sys.executable, CHECK], cwd=ws, env=env, timeout=60)
    result = json.loads(out.strip().splitlines()[-1])
    assert Path(result['package']).is_relative_to(install)
    # Our __init__.py, not the empty one rosidl generates for the same directory.
    init = (REPO_ROOT / PACKAGE / '__init__.py').read_bytes()
    assert Path(result['package']).read_bytes() == init
    assert result['misses'] == 20

    for name in EXECUTABLES:
        path = install / 'lib' / PACKAGE / name
        assert path.is_file() and os.access(path, os.X_OK), f'{path} is not executable'
        interpreter = path.read_text(encoding='utf-8').splitlines()[0].removeprefix('#!')
        assert os.access(interpreter, os.X_OK), f'{path}: no interpreter {interpreter}'
    for name in ('launch', 'config'):
        assert (install / 'share' / PACKAGE / name).is_dir()
    assert (install / 'share' / PACKAGE / 'package.xml').is_file()
    assert (install / 'share' / PACKAGE / 'msg' / 'MonitorStats.msg').is_file()


def test_rosidl_cmake_fix_rewrites_build_machine_include_paths(tmp_path):
    import numpy

    script = REPO_ROOT / 'scripts' / 'fix_rosidl_cmake.py'
    export = tmp_path / 'share' / 'some_msgs' / 'cmake'
    export.mkdir(parents=True)
    export_file = export / 'export_some_msgs__rosidl_generator_pyExport.cmake'
    export_file.write_text(
        'set_target_properties(some_msgs::some_msgs__rosidl_generator_py PROPERTIES\n'
        '  INTERFACE_INCLUDE_DIRECTORIES "/opt/python/cp311-cp311/include/python3.11;'
        '/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include"\n)\n')

    def fix() -> str:
        return run([sys.executable, str(script), str(tmp_path)], cwd=tmp_path,
                   env=dict(os.environ), timeout=60).strip()

    assert fix() == '1'
    text = export_file.read_text(encoding='utf-8')
    assert '/opt/python' not in text
    assert numpy.get_include() in text
    assert fix() == '0'  # idempotent
