"""The package's metadata agrees across package.xml, setup.cfg and the installed build."""

import ast
import configparser
import importlib.util
import os
from pathlib import Path
import signal
import subprocess
import sys
import time
from xml.etree import ElementTree

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = 'ros2_deadline_monitor'

# docs/design.md, Public names: users script against these names (`ros2 run
# ros2_deadline_monitor <name>`).
EXECUTABLES = {
    'monitor': 'ros2_deadline_monitor.live.cli:main',
    'watch': 'ros2_deadline_monitor.live.watch:main',
    'sim_clock': 'ros2_deadline_monitor.tools.sim_clock:main',
    'demo_controller': 'ros2_deadline_monitor.tools.demo_controller:main',
    'demo': 'ros2_deadline_monitor.tools.demo:main',
    'analyze': 'ros2_deadline_monitor.bag.analyze:main',
    'record': 'ros2_deadline_monitor.record.command:main',
    'deadline': 'ros2_deadline_monitor.command.deadline:main',
}
MESSAGES = ('IntervalStats', 'TopicStats', 'ClockStats', 'HostStats', 'MonitorStats')


def load_script(name: str):
    """Import a helper from scripts/ (not a package) as a module."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / 'scripts' / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_package_xml_declares_an_interface_package_built_with_ament_cmake():
    root = ElementTree.parse(REPO_ROOT / 'package.xml').getroot()
    assert root.get('format') == '3'
    assert root.findtext('name') == PACKAGE
    assert root.findtext('export/build_type') == 'ament_cmake'
    assert root.findtext('member_of_group') == 'rosidl_interface_packages'
    buildtool = {e.text for e in root.iter('buildtool_depend')}
    assert {'ament_cmake', 'ament_cmake_python', 'rosidl_default_generators'} <= buildtool
    runtime = {e.text for e in root.iter() if e.tag in ('depend', 'exec_depend')}
    assert {'rclpy', 'std_msgs', 'rosgraph_msgs', 'diagnostic_msgs', 'diagnostic_updater',
            'launch', 'launch_ros', 'python3-numpy', 'rosidl_default_runtime'} <= runtime


def test_every_interface_package_the_product_imports_is_a_runtime_dependency():
    # A rosdep install pulls in only what package.xml declares: a message package imported
    # by an installed executable but declared for the tests alone breaks it on a robot.
    root = ElementTree.parse(REPO_ROOT / 'package.xml').getroot()
    runtime = {e.text for e in root.iter() if e.tag in ('depend', 'exec_depend')}
    imported = {}
    for path in (REPO_ROOT / PACKAGE).rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                package, _, kind = name.partition('.')
                if kind in ('msg', 'srv', 'action') and package != PACKAGE:
                    imported.setdefault(package, path.relative_to(REPO_ROOT).as_posix())
    assert 'diagnostic_msgs' in imported  # the walk finds imports at all
    missing = {package: path for package, path in imported.items() if package not in runtime}
    assert not missing, f'imported but not a depend/exec_depend of package.xml: {missing}'


def test_every_message_is_generated_by_cmake():
    cmake = (REPO_ROOT / 'CMakeLists.txt').read_text(encoding='utf-8')
    assert sorted(p.stem for p in (REPO_ROOT / 'msg').glob('*.msg')) == sorted(MESSAGES)
    for name in MESSAGES:
        assert f'msg/{name}.msg' in cmake


def _setup_cfg_entries(section: str, key: str) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(REPO_ROOT / 'setup.cfg', encoding='utf-8')
    declared = [line.split('=') for line in parser.get(section, key).strip().splitlines()
                if not line.strip().startswith('#')]
    return {name.strip(): target.strip() for name, target in declared}


def test_setup_cfg_declares_the_public_executables():
    assert _setup_cfg_entries('ros2_run', 'executables') == EXECUTABLES


def test_pip_puts_one_command_on_path_named_for_the_package():
    # `watch`, `monitor`, `record` ... on PATH would shadow procps' watch and other tools.
    assert _setup_cfg_entries('options.entry_points', 'console_scripts') == {
        'deadline': 'ros2_deadline_monitor.command.deadline:main'}


def test_the_installed_metadata_has_the_command_and_the_ros2cli_extension():
    from importlib.metadata import distribution

    from ros2_deadline_monitor.command.verbs import VERBS

    entry_points = distribution(PACKAGE).entry_points
    groups = {}
    for entry_point in entry_points:
        groups.setdefault(entry_point.group, {})[entry_point.name] = entry_point.value
    assert groups['console_scripts'] == {
        'deadline': 'ros2_deadline_monitor.command.deadline:main'}
    assert groups['ros2cli.command'] == {
        'deadline': 'ros2_deadline_monitor.command.deadline:DeadlineCommand'}
    assert groups['ros2cli.extension_point'] == {
        'ros2deadline.verb': 'ros2_deadline_monitor.command.verbs:VerbExtension'}
    assert groups['ros2deadline.verb'] == {
        name: f'ros2_deadline_monitor.command.verbs:{verb.__name__}'
        for name, verb in VERBS.items()}
    for entry_point in entry_points:  # every target imports and exists
        assert entry_point.load() is not None


def test_the_verbs_are_the_executables():
    from ros2_deadline_monitor.command.verbs import VERBS

    assert {name: f'{verb.MODULE}:main' for name, verb in VERBS.items()} == {
        name: target for name, target in EXECUTABLES.items() if name != 'deadline'}


def test_wrappers_are_generated_from_setup_cfg(tmp_path):
    wrappers = load_script('entry_point_wrappers')
    paths = wrappers.write_wrappers(REPO_ROOT / 'setup.cfg', tmp_path, sys.executable)
    assert sorted(p.name for p in paths) == sorted(EXECUTABLES)
    demo = (tmp_path / 'demo').read_text(encoding='utf-8')
    assert demo.startswith(f'#!{sys.executable}\n')
    assert 'from ros2_deadline_monitor.tools.demo import main as _entry_point' in demo
    assert (tmp_path / 'demo').stat().st_mode & 0o111


def test_the_entry_points_are_written_from_setup_cfg(tmp_path):
    from importlib.metadata import PathDistribution

    wrappers = load_script('entry_point_wrappers')
    path = wrappers.write_entry_points(REPO_ROOT / 'setup.cfg', tmp_path)
    found = {(e.group, e.name): e.value for e in PathDistribution(path.parent).entry_points}
    assert found[('console_scripts', 'deadline')] == (
        'ros2_deadline_monitor.command.deadline:main')
    assert found[('ros2cli.command', 'deadline')] == (
        'ros2_deadline_monitor.command.deadline:DeadlineCommand')
    assert ('ros2deadline.verb', 'monitor') in found


def test_a_ctrl_c_while_the_wrapper_imports_is_a_quiet_stop(tmp_path):
    """SIGINT while the program's modules import (seconds on a loaded machine) is no traceback.

    Seen with ros2 launch: a Ctrl-C 8 s after start found demo_controller still importing,
    and it printed a KeyboardInterrupt traceback from dataclasses.
    """
    wrappers = load_script('entry_point_wrappers')
    marker = tmp_path / 'importing'
    (tmp_path / 'slow_module.py').write_text(
        'import pathlib, time\n'
        f'pathlib.Path({str(marker)!r}).touch()\n'
        'time.sleep(30)\n'
        'def main():\n'
        '    return 3\n', encoding='utf-8')
    cfg = tmp_path / 'setup.cfg'
    cfg.write_text('[ros2_run]\nexecutables =\n    slow = slow_module:main\n',
                   encoding='utf-8')
    [wrapper] = wrappers.write_wrappers(cfg, tmp_path / 'out', sys.executable)
    env = {**os.environ, 'PYTHONPATH': str(tmp_path)}
    # Started as from a terminal: a child inherits an ignored SIGINT (the suite run as a
    # background job of a script, `cmd &`, ignores it) and Python then installs no
    # KeyboardInterrupt at all. A Python handler here is reset to the default by exec.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen([sys.executable, '-S', str(wrapper)], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        deadline = time.monotonic() + 20.0
        while not marker.exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, 'the wrapper never imported its module'
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10.0)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert (process.returncode, out, err) == (0, '', '')


def test_wrapper_generation_rejects_what_it_cannot_express(tmp_path):
    wrappers = load_script('entry_point_wrappers')
    cfg = tmp_path / 'setup.cfg'
    cfg.write_text('[ros2_run]\nexecutables =\n    x = pkg.mod:obj.attr\n')
    with pytest.raises(ValueError, match='unsupported executable entry'):
        wrappers.write_wrappers(cfg, tmp_path / 'out', sys.executable)
    assert wrappers.main([str(cfg), str(tmp_path / 'out'), sys.executable]) == 1


def test_tests_import_the_installed_package_with_its_messages():
    import ros2_deadline_monitor
    from ros2_deadline_monitor import msg

    location = Path(ros2_deadline_monitor.__file__).parent
    assert location != REPO_ROOT / PACKAGE, (
        'imported the source tree, which has no generated messages: run the suite with '
        'scripts/dev test (or source the colcon install first)')
    for name in MESSAGES:
        assert hasattr(msg, name)
    stats = msg.MonitorStats(topics=[msg.TopicStats(topic='/cmd', deadline_misses_total=20)])
    assert stats.topics[0].deadline_misses_total == 20
