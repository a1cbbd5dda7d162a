"""The folders' import directions, read from the source: each role imports only those below it.

``analysis`` (the measurement) is at the bottom, ``configuration`` (what the user asks for)
above it, ``outputs`` (what reads a snapshot) above both; the adapters (``live``, ``probe``,
``bag``, ``record``) feed the session and hand its snapshots to the outputs; the ``tools`` sit
on top, and ``command`` (``deadline``, ``ros2 deadline``) above everything. ``analysis``,
``configuration`` and ``bag`` import no ROS package, so the bag analyzer runs without rclpy and
a reader follows the measurement alone.
"""

from __future__ import annotations

import ast
from pathlib import Path
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / 'ros2_deadline_monitor'
PKG = 'ros2_deadline_monitor'
LAYERS = ('analysis', 'configuration', 'outputs', 'live', 'probe', 'record', 'bag', 'tools',
          'command')
MAY_IMPORT = {
    'analysis': {'analysis'},
    'configuration': {'analysis', 'configuration'},
    'outputs': {'analysis', 'configuration', 'outputs', 'msg'},
    'live': {'analysis', 'configuration', 'outputs', 'live', 'msg'},
    'probe': {'analysis', 'configuration', 'outputs', 'probe', 'msg'},
    'record': {'analysis', 'configuration', 'live', 'record'},
    'bag': {'analysis', 'configuration', 'outputs', 'bag'},
    'tools': {'analysis', 'configuration', 'outputs', 'live', 'tools', 'msg'},
    # The programs are imported by name, only the verb asked for.
    'command': {'command', 'configuration'},
}
"""What each layer's modules may import from the package (a layer, or one module of one)."""
ROS = ('rclpy', 'rcl_interfaces', 'rosidl_parser', 'rosidl_runtime_py', 'builtin_interfaces',
       'std_msgs', 'rosgraph_msgs', 'diagnostic_msgs', 'diagnostic_updater', 'rosbag2_py')


def _imports(path: Path) -> list[str]:
    """Every module ``path`` imports, relative imports made absolute."""
    layer = path.parent.name
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ''
            else:
                parts = [PKG, layer][:3 - node.level]
                base = '.'.join(parts + ([node.module] if node.module else []))
            if base == PKG or base.removeprefix(f'{PKG}.') in LAYERS:  # modules by name
                names += [f'{base}.{alias.name}' for alias in node.names]
            else:
                names.append(base)
    return names


def _modules(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).glob('*.py'))


@pytest.mark.parametrize('layer', LAYERS)
def test_no_import_climbs_back_up(layer: str) -> None:
    allowed = MAY_IMPORT[layer]
    climbs = []
    for path in _modules(layer):
        for name in _imports(path):
            if not name.startswith(f'{PKG}.'):
                continue
            inside = name[len(PKG) + 1:]
            if not any(inside == a or inside.startswith(f'{a}.') for a in allowed):
                climbs.append(f'{layer}/{path.name} imports {name}')
    assert _modules(layer)
    assert not climbs, climbs


FILE_ACCESS = ('os', 'io', 'pathlib', 'resource', 'shutil', 'socket', 'subprocess', 'tempfile')
"""Modules that read the host: the adapters' (``live/host_sampler.py`` reads /proc)."""


def test_the_measurement_reads_nothing_from_the_host() -> None:
    """``analysis`` is fed values: no file, no /proc, no process state, no ``open``."""
    found = [f'analysis/{path.name} imports {name}' for path in _modules('analysis')
             for name in _imports(path) if name.split('.')[0] in FILE_ACCESS]
    found += [f'analysis/{path.name} calls open()' for path in _modules('analysis')
              for node in ast.walk(ast.parse(path.read_text(encoding='utf-8')))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == 'open']
    assert not found, found


WITHOUT_ROS = ('analysis', 'configuration', 'bag')
"""The folders that run where ROS is not installed (the measurement and ``analyze``)."""


@pytest.mark.parametrize('layer', WITHOUT_ROS)
def test_no_ros_package_is_named(layer: str) -> None:
    found = [f'{layer}/{path.name} imports {name}' for path in _modules(layer)
             for name in _imports(path) if name.split('.')[0] in ROS]
    assert not found, found


def test_every_module_without_ros_imports_without_ros() -> None:
    """Also what they import from other folders (``bag`` uses the pure outputs)."""
    modules = [f'{PKG}.{layer}.{p.stem}' for layer in WITHOUT_ROS for p in _modules(layer)
               if p.stem != '__init__']
    code = ('import importlib, sys\n'
            f'for name in {ROS!r}:\n'
            '    sys.modules[name] = None\n'
            f'for module in {modules!r}:\n'
            '    importlib.import_module(module)\n')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            cwd=ROOT, timeout=60, check=False)
    assert result.returncode == 0, result.stderr


SIMULATOR_ONLY = ('mujoco',)
"""The optional extra ``sim``: only ``tools/mujoco_sim.py`` may import it."""


@pytest.mark.parametrize('layer', LAYERS)
def test_only_the_simulator_imports_mujoco(layer: str) -> None:
    found = [f'{layer}/{path.name} imports {name}' for path in _modules(layer)
             for name in _imports(path) if name.split('.')[0] in SIMULATOR_ONLY
             and (layer, path.name) != ('tools', 'mujoco_sim.py')]
    assert not found, found


def test_the_monitor_and_analyze_run_without_mujoco() -> None:
    """Importing them (and all they import) with MuJoCo blocked works, and loads no MuJoCo."""
    code = ('import importlib, sys\n'
            "sys.modules['mujoco'] = None\n"
            f"for module in ('{PKG}.bag.analyze', '{PKG}.live.cli', '{PKG}.live.watch',\n"
            f"               '{PKG}.record.command', '{PKG}.tools.demo',\n"
            f"               '{PKG}.tools.demo_controller'):\n"
            '    importlib.import_module(module)\n'
            "assert sys.modules['mujoco'] is None\n")
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            cwd=ROOT, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
