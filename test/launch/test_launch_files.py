"""The launch files name only things that exist: executables, packages, config files, parameters.

Most checks read the launch files with ``ast``, so they run where launch and launch_ros are
not installed (they are not on PyPI). Where they are (a ROS 2 install), further tests build
each launch description, and run monitor.launch.py and demo.launch.py from the installed
package until the monitor publishes ``/diagnostics`` and ``MonitorStats``.
"""

from __future__ import annotations

import ast
import configparser
from dataclasses import dataclass, field
import functools
import importlib.util
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
LAUNCH_DIR = REPO_ROOT / 'launch'
CONFIG_DIR = REPO_ROOT / 'config'
PACKAGE = 'ros2_deadline_monitor'
SHARE_DIRS = ('launch', 'config')
"""Directories CMakeLists.txt installs to share/<package>."""

# The launch arguments are public interface (docs/parameters.md): changing them is deliberate.
ARGUMENTS = {
    'monitor.launch.py': {'config', 'namespace', 'use_sim_time', 'log_level',
                          'start_aggregator'},
    'demo.launch.py': {'target_rtf', 'rate_hz', 'stall_ms', 'stall_every', 'use_sim_time',
                       'duration', 'start_aggregator'},
    'gazebo.launch.py': {'world', 'config', 'start_aggregator', 'use_sim_time'},
    'mujoco.launch.py': {'model_path', 'target_rtf', 'clock_publish_hz', 'rate_hz', 'stall_ms',
                         'stall_every', 'duration', 'start_aggregator'},
    'aggregator.launch.py': {'start_aggregator', 'use_sim_time'},
}
LAUNCH_FILES = tuple(ARGUMENTS)

# Packages from outside this repository that launch files may use, with the executables
# they may run. package.xml must mention each (as a dependency or in a comment saying why
# it is not one).
EXTERNAL_PACKAGES = {
    'ros_gz_sim': set(),
    'ros_gz_bridge': {'parameter_bridge'},
    'diagnostic_aggregator': {'aggregator_node'},
}

ALWAYS_DECLARED = {'use_sim_time'}
"""rclpy declares these on every node."""


# -- reading the launch files ----------------------------------------------------------------


def call_name(call: ast.Call) -> str:
    """Return the called name: ``Node`` for ``Node(...)`` and ``launch_ros.actions.Node(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ''


def module_assignments(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """``(name, value)`` of the module-level ``NAME = value`` and ``NAME: type = value``."""
    assignments = []
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        else:
            continue
        assignments += [(target.id, statement.value) for target in targets
                        if isinstance(target, ast.Name)]
    return assignments


def string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = 'text'`` assignments, to resolve names used as arguments."""
    return {name: value.value for name, value in module_assignments(tree)
            if isinstance(value, ast.Constant) and isinstance(value.value, str)}


@dataclass
class LaunchFile:
    """What one launch file's syntax tree says."""

    path: Path
    tree: ast.Module
    constants: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, name: str) -> LaunchFile:
        path = LAUNCH_DIR / name
        tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
        return cls(path, tree, string_constants(tree))

    def text(self, node: ast.AST | None) -> str | None:
        """Return the string a literal or a module constant stands for, else None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        return None

    def calls(self, *names: str) -> list[ast.Call]:
        return [node for node in ast.walk(self.tree)
                if isinstance(node, ast.Call) and call_name(node) in names]

    def keyword(self, call: ast.Call, name: str) -> ast.AST | None:
        return next((kw.value for kw in call.keywords if kw.arg == name), None)

    def first_text(self, call: ast.Call, keyword: str) -> str | None:
        """Return the call's first positional argument, or the given keyword, as text."""
        if call.args:
            return self.text(call.args[0])
        return self.text(self.keyword(call, keyword))

    def nodes(self) -> list[tuple[str | None, str | None, ast.Call]]:
        """``(package, executable, call)`` of every launch_ros ``Node``."""
        return [(self.text(self.keyword(call, 'package')),
                 self.text(self.keyword(call, 'executable')), call)
                for call in self.calls('Node')]

    def share_paths(self) -> list[tuple[str | None, list[str | None]]]:
        """``(package, [parts...])`` of ``PathJoinSubstitution([FindPackageShare(p), ...])``."""
        paths = []
        for call in self.calls('PathJoinSubstitution'):
            parts = call.args[0] if call.args else None
            if not isinstance(parts, ast.List) or not parts.elts:
                continue
            head = parts.elts[0]
            if isinstance(head, ast.Call) and call_name(head) == 'FindPackageShare':
                paths.append((self.first_text(head, 'package'),
                              [self.text(part) for part in parts.elts[1:]]))
        return paths

    def declared_arguments(self) -> dict[str, ast.Call]:
        return {self.first_text(call, 'name'): call
                for call in self.calls('DeclareLaunchArgument')}


@functools.cache
def launch_file(name: str) -> LaunchFile:
    return LaunchFile.read(name)


@functools.cache
def console_scripts() -> dict[str, str]:
    """Return executable name -> module, from setup.cfg (the one place they are declared)."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(REPO_ROOT / 'setup.cfg', encoding='utf-8')
    scripts = {}
    for line in parser.get('ros2_run', 'executables').strip().splitlines():
        name, target = (part.strip() for part in line.split('=', 1))
        scripts[name] = target.split(':', 1)[0]
    return scripts


def module_path(module: str) -> Path:
    return REPO_ROOT.joinpath(*module.split('.')).with_suffix('.py')


def first_party_imports(tree: ast.Module) -> set[str]:
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or '').startswith(PACKAGE + '.'):
            modules.add(node.module)
            # `from ros2_deadline_monitor.shell import parameters` imports a module too.
            modules.update(f'{node.module}.{alias.name}' for alias in node.names)
        elif isinstance(node, ast.Import):
            modules.update(a.name for a in node.names if a.name.startswith(PACKAGE + '.'))
    return modules


@functools.cache
def declared_parameters(executable: str) -> frozenset[str]:
    """Parameter names an executable's node declares, read from its source.

    Pragmatic: the string (or module constant) first argument of ``declare_parameter`` and
    ``ParamSpec`` calls, the names in ``declare_parameters`` lists, and the first string of
    each tuple in a module-level ``*PARAM*``/``*SPEC*`` table, in the entry point's module and
    the modules of this package it imports directly. Parameter names built at run time
    (``topic.<id>.<field>``) are matched by their last part.
    """
    names: set[str] = set()
    main_module = console_scripts()[executable]
    main_tree = ast.parse(module_path(main_module).read_text(encoding='utf-8'))
    for module in {main_module, *first_party_imports(main_tree)}:
        path = module_path(module)
        if not path.is_file():
            continue
        tree = main_tree if module == main_module else ast.parse(path.read_text('utf-8'))
        source = LaunchFile(path, tree, string_constants(tree))
        for call in source.calls('declare_parameter', 'ParamSpec'):
            names.add(source.first_text(call, 'name'))
        tables: list[ast.AST] = list(source.calls('declare_parameters'))
        tables += [value for target, value in module_assignments(tree)
                   if re.search('PARAM|SPEC', target)]
        for table in tables:
            for element in ast.walk(table):
                if isinstance(element, ast.Tuple) and element.elts:
                    names.add(source.text(element.elts[0]))
    names.discard(None)
    return frozenset(names)


def yaml_parameter_names() -> set[str]:
    """Every parameter name the shipped YAML files set, dotted as ROS flattens them."""
    names = set()

    def flatten(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                flatten(f'{prefix}.{key}' if prefix else str(key), item)
        else:
            names.add(prefix)

    for path in CONFIG_DIR.glob('*.yaml'):
        for node_params in (yaml.safe_load(path.read_text(encoding='utf-8')) or {}).values():
            if isinstance(node_params, dict):
                flatten('', node_params.get('ros__parameters', {}))
    return names


# -- static checks ---------------------------------------------------------------------------


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_launch_file_parses_and_defines_generate_launch_description(name):
    functions = {node.name for node in launch_file(name).tree.body
                 if isinstance(node, ast.FunctionDef)}
    assert 'generate_launch_description' in functions


def test_no_other_launch_files():
    assert sorted(p.name for p in LAUNCH_DIR.glob('*.py')) == sorted(LAUNCH_FILES)


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_arguments_are_declared_with_descriptions(name):
    declared = launch_file(name).declared_arguments()
    assert set(declared) == ARGUMENTS[name]
    for argument, call in declared.items():
        description = launch_file(name).keyword(call, 'description')
        text = launch_file(name).text(description)
        assert text and len(text) > 15, f'{name}: argument {argument!r} needs a description'


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_every_launch_configuration_is_a_declared_argument(name):
    lf = launch_file(name)
    used = {lf.first_text(call, 'variable_name') for call in lf.calls('LaunchConfiguration')}
    assert used <= set(lf.declared_arguments()), f'{name}: undeclared {used}'


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_nodes_run_known_executables(name):
    for package, executable, _ in launch_file(name).nodes():
        assert executable is not None, f'{name}: executable must be a literal or a constant'
        if package == PACKAGE:
            assert executable in console_scripts(), (
                f'{name}: {executable!r} is not a [ros2_run] executable in setup.cfg')
        else:
            assert package in EXTERNAL_PACKAGES, f'{name}: unknown package {package!r}'
            assert executable in EXTERNAL_PACKAGES[package], f'{name}: {package}/{executable}'


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_external_packages_are_known_and_mentioned_in_package_xml(name):
    lf = launch_file(name)
    packages = {package for package, _, _ in lf.nodes()}
    packages |= {package for package, _ in lf.share_paths()}
    package_xml = (REPO_ROOT / 'package.xml').read_text(encoding='utf-8')
    for package in packages - {PACKAGE}:
        assert package in EXTERNAL_PACKAGES, f'{name}: unknown package {package!r}'
        assert re.search(rf'\b{package}\b', package_xml), f'package.xml does not name {package}'


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_paths_into_our_share_directory_exist(name):
    for package, parts in launch_file(name).share_paths():
        if package != PACKAGE:
            continue
        assert None not in parts, f'{name}: share path parts must be literals: {parts}'
        assert parts[0] in SHARE_DIRS, f'{name}: share/{PACKAGE}/{parts[0]} is not installed'
        assert REPO_ROOT.joinpath(*parts).is_file(), f'{name}: no {"/".join(parts)}'


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_config_files_named_exist(name):
    lf = launch_file(name)
    named = {node.value for node in ast.walk(lf.tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and re.fullmatch(r'[\w.-]+\.yaml', node.value)}
    for file_name in named:
        assert (CONFIG_DIR / file_name).is_file(), f'{name}: no config/{file_name}'


def test_monitor_launch_uses_both_shipped_config_files():
    parts = [parts for _, parts in launch_file('monitor.launch.py').share_paths()]
    assert ['config', 'monitor.yaml'] in parts
    assert ['launch', 'aggregator.launch.py'] in parts
    parts = [parts for _, parts in launch_file('aggregator.launch.py').share_paths()]
    assert ['config', 'diagnostic_aggregator.yaml'] in parts


def test_one_launch_file_starts_the_aggregator():
    """The monitor and demo files declared one aggregator and its check twice: now one file."""
    starting = [name for name in LAUNCH_FILES if any(
        package == 'diagnostic_aggregator' for package, _, _ in launch_file(name).nodes())]
    assert starting == ['aggregator.launch.py']
    for name in ('monitor.launch.py', 'demo.launch.py'):
        assert ['launch', 'aggregator.launch.py'] in [
            parts for _, parts in launch_file(name).share_paths()]


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_parameters_set_for_our_nodes_are_declared(name):
    lf = launch_file(name)
    in_yaml = yaml_parameter_names()
    for package, executable, call in lf.nodes():
        if package != PACKAGE:
            continue
        declared = declared_parameters(executable) | ALWAYS_DECLARED
        parameters = lf.keyword(call, 'parameters')
        for mapping in ast.walk(parameters) if parameters is not None else ():
            if not isinstance(mapping, ast.Dict):
                continue
            for key in mapping.keys:
                param = lf.text(key)
                assert param is not None, f'{name}: parameter names must be literals'
                known = (param in declared or param in in_yaml
                         or param.rsplit('.', 1)[-1] in declared)
                assert known, f'{name}: {executable} declares no parameter {param!r}'


def test_package_code_never_imports_launch():
    """Launch is only on ROS installs: nothing that runs without it may import it."""
    for path in (REPO_ROOT / PACKAGE).rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module or '']
            else:
                continue
            for module in modules:
                assert module.split('.')[0] not in ('launch', 'launch_ros'), (
                    f'{path.relative_to(REPO_ROOT)} imports {module}')


# -- argument validation and the monitor's log level ---------------------------------------

RCUTILS_LEVELS = {'debug', 'info', 'warn', 'error', 'fatal'}


def monitor_node_call(name: str) -> ast.Call:
    lf = launch_file(name)
    return next(call for package, executable, call in lf.nodes()
                if package == PACKAGE and executable == 'monitor')


def test_log_level_is_checked_by_launch_before_any_node_starts():
    """``log_level:=bogus`` must be refused by launch with a sentence, not by rcl in the node."""
    lf = launch_file('monitor.launch.py')
    choices = lf.keyword(lf.declared_arguments()['log_level'], 'choices')
    assert choices is not None, 'log_level needs choices='
    values = ast.literal_eval(choices) if not isinstance(choices, ast.Name) else next(
        ast.literal_eval(value) for name_, value in module_assignments(lf.tree)
        if name_ == choices.id)
    assert set(values) == RCUTILS_LEVELS


def test_every_launch_argument_with_few_values_lists_them():
    for name in LAUNCH_FILES:
        lf = launch_file(name)
        for argument in ('use_sim_time', 'start_aggregator', 'log_level'):
            call = lf.declared_arguments().get(argument)
            if call is not None:
                assert lf.keyword(call, 'choices') is not None, f'{name}: {argument}'


def _logger_expression(lf: LaunchFile, call: ast.Call) -> ast.Call:
    """Return the ``PythonExpression`` that names the logger ``--log-level`` applies to."""
    ros_arguments = lf.keyword(call, 'ros_arguments')
    assert isinstance(ros_arguments, ast.List)
    assert lf.text(ros_arguments.elts[0]) == '--log-level'
    value = ros_arguments.elts[1]
    assert isinstance(value, ast.List), 'the level must name a logger: <logger>:=<level>'
    assert lf.text(value.elts[1]) == ':='
    logger = value.elts[0]
    assert isinstance(logger, ast.Name)
    expression = next(node.value for node in ast.walk(lf.tree)
                      if isinstance(node, ast.Assign)
                      and any(isinstance(t, ast.Name) and t.id == logger.id
                              for t in node.targets))
    assert isinstance(expression, ast.Call) and call_name(expression) == 'PythonExpression'
    return expression


@pytest.mark.parametrize(('namespace', 'logger'), [
    ('', 'deadline_monitor'), ('robot1', 'robot1.deadline_monitor'),
    ('/fleet/robot1/', 'fleet.robot1.deadline_monitor'),
])
def test_log_level_applies_to_the_monitor_logger_only(namespace, logger):
    """Only the monitor logs at debug: rcl and the middleware printed 1,902 lines in 10 s."""
    lf = launch_file('monitor.launch.py')
    expression = _logger_expression(lf, monitor_node_call('monitor.launch.py'))
    pieces = expression.args[0]
    assert isinstance(pieces, ast.List)
    text = ''
    for piece in pieces.elts:
        if isinstance(piece, ast.Call) and call_name(piece) == 'LaunchConfiguration':
            assert lf.first_text(piece, 'variable_name') == 'namespace'
            text += namespace
        elif isinstance(piece, ast.JoinedStr):
            text += ''.join(lf.text(v) or lf.constants[v.value.id]
                            if isinstance(v, ast.FormattedValue) else v.value
                            for v in piece.values)
        else:
            text += lf.text(piece)
    assert eval(text, {}) == logger  # noqa: S307 - our own launch file's expression


def _uses_argument(lf: LaunchFile, node: ast.AST | None, argument: str) -> bool:
    """Tell whether ``node`` contains ``LaunchConfiguration(argument)``."""
    return node is not None and any(
        isinstance(call, ast.Call) and call_name(call) == 'LaunchConfiguration'
        and lf.first_text(call, 'variable_name') == argument for call in ast.walk(node))


@pytest.mark.parametrize('name', [name for name in LAUNCH_FILES
                                  if 'start_aggregator' in ARGUMENTS[name]])
def test_start_aggregator_starts_an_aggregator(name):
    """``start_aggregator:=true`` was silently ignored by demo.launch.py (not declared).

    The argument must start ``diagnostic_aggregator`` (conditioned on it) or be handed to
    the launch file that does.
    """
    lf = launch_file(name)
    assert 'start_aggregator' in lf.declared_arguments()
    started = [call for package, executable, call in lf.nodes()
               if (package, executable) == ('diagnostic_aggregator', 'aggregator_node')]
    handed = [call for call in lf.calls('IncludeLaunchDescription')
              if _uses_argument(lf, lf.keyword(call, 'launch_arguments'), 'start_aggregator')]
    assert started or handed, f'{name}: start_aggregator starts nothing'
    for call in started:
        assert _uses_argument(lf, lf.keyword(call, 'condition'), 'start_aggregator')
        assert ['config', 'diagnostic_aggregator.yaml'] in [
            parts for package, parts in lf.share_paths() if package == PACKAGE]


def test_a_missing_aggregator_is_refused_before_the_aggregator_starts():
    """Without diagnostic_aggregator, launch failed only when it reached the aggregator."""
    source = (LAUNCH_DIR / 'aggregator.launch.py').read_text()
    assert "get_package_prefix('diagnostic_aggregator')" in source
    returned = source[source.rindex('return LaunchDescription('):]
    assert returned.index('OpaqueFunction(function=check_aggregator)') < returned.index(
        'aggregator]')


@pytest.mark.parametrize('name, first, nodes', [
    ('monitor.launch.py', 'aggregator', ('monitor',)),
    ('demo.launch.py', 'aggregator', ('sim_clock', 'controller', 'monitor')),
    ('gazebo.launch.py', 'monitor', ('gazebo', 'clock_bridge')),
    ('gazebo.launch.py', 'OpaqueFunction(function=check_simulator)',
     ('monitor', 'gazebo', 'clock_bridge')),
    ('mujoco.launch.py', 'aggregator', ('simulator', 'controller', 'monitor')),
])
def test_a_missing_aggregator_is_refused_before_any_node_starts(name, first, nodes):
    """The nodes before the aggregator were left running: the file that checks comes first."""
    source = (LAUNCH_DIR / name).read_text()
    returned = source[source.rindex('return LaunchDescription('):].split('[', 1)[1]
    entities = [entity.strip() for entity in returned.split(']')[0].split(',')]
    assert all(entities.index(first) < entities.index(node) for node in nodes), entities


@pytest.mark.parametrize('name', ['monitor.launch.py', 'demo.launch.py', 'mujoco.launch.py'])
def test_monitor_colours_only_a_terminal(name):
    """emulate_tty makes rcutils colour redirected output unless the launch says otherwise."""
    call = monitor_node_call(name)
    env = launch_file(name).keyword(call, 'additional_env')
    assert env is not None, f'{name}: the monitor needs additional_env'
    source = launch_file(name).path.read_text(encoding='utf-8')
    assert "'RCUTILS_COLORIZED_OUTPUT'" in source and 'sys.stdout.isatty()' in source


# -- with launch and launch_ros installed ----------------------------------------------------


def launch_installed() -> bool:
    """Tell whether the real launch and launch_ros are importable.

    A bare ``import launch`` is not proof: with the repository root on sys.path, its
    launch/ directory imports as an empty namespace package.
    """
    for module in ('launch', 'launch_ros'):
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            return False
        if spec is None or spec.origin in (None, 'namespace'):
            return False
    return True


requires_launch = pytest.mark.skipif(
    not launch_installed(),
    reason='launch and launch_ros are not installed (ROS 2 apt packages; not on PyPI)')


def load_launch_module(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(
        name.replace('.', '_'), LAUNCH_DIR / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@requires_launch
@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_generate_launch_description(name):
    from launch.actions import DeclareLaunchArgument
    from launch.launch_description import LaunchDescription

    description = load_launch_module(name).generate_launch_description()
    assert isinstance(description, LaunchDescription)
    declared = {entity.name for entity in description.entities
                if isinstance(entity, DeclareLaunchArgument)}
    assert declared == ARGUMENTS[name]


RUN_LAUNCH_FILE = textwrap.dedent("""
    import signal
    import sys
    from launch import LaunchService
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource

    # A suite started in the background (`cmd &` in a script) hands SIGINT down ignored:
    # the launch would never hear the test's SIGINT (nor its nodes).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # noninteractive: pass SIGINT on to the nodes (no terminal sends it to them).
    service = LaunchService(noninteractive=True)
    service.include_launch_description(IncludeLaunchDescription(
        PythonLaunchDescriptionSource(sys.argv[1]),
        launch_arguments=[arg.split(':=', 1) for arg in sys.argv[2:]]))
    sys.exit(service.run())
""")
"""What ``ros2 launch --noninteractive FILE ARGS`` does, for installs without ros2cli."""


def installed_launch_file(name: str) -> Path | None:
    """Return the launch file in the installed package's share directory, if any."""
    from ament_index_python.packages import get_package_share_directory, PackageNotFoundError

    try:
        path = Path(get_package_share_directory(PACKAGE)) / 'launch' / name
    except PackageNotFoundError:
        return None
    return path if path.is_file() else None


class LaunchRun:
    """Run an installed launch file in a subprocess while a node listens to its outputs."""

    def __init__(self, context: Any, name: str, *arguments: str) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node

        from ros2_deadline_monitor.msg import MonitorStats

        path = installed_launch_file(name)
        if path is None:
            pytest.skip(f'{PACKAGE} is not installed (colcon build and source it)')
        self.statuses: set[str] = set()
        self.stats: list[Any] = []
        # The launched nodes live in the root namespace (launch takes no global remapping
        # here): the listener too, without the test context's own_names arguments.
        self.node = Node('launch_test_listener', context=context, use_global_arguments=False)
        self.node.create_subscription(
            DiagnosticArray, '/diagnostics',
            lambda msg: self.statuses.update(s.name for s in msg.status), 10)
        self.node.create_subscription(MonitorStats, '/deadline_monitor/stats',
                                      self.stats.append, 10)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        # A session of its own: a launch that does not stop is killed with its nodes (an
        # orphaned monitor would answer the next tests' parameter requests as its namesake).
        self.process = subprocess.Popen(
            [sys.executable, '-c', RUN_LAUNCH_FILE, str(path), *arguments],
            env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)

    def wait_for(self, condition: Any, what: str, timeout: float = 20.0) -> None:
        """Spin until ``condition()``; fail if the launch ends first or on timeout."""
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None:
                pytest.fail(f'launch ended before {what}:\n{self.process.stdout.read()}')
            if time.monotonic() > deadline:
                pytest.fail(f'no {what} in {timeout:g} s')
            self.executor.spin_once(timeout_sec=0.1)

    def stop(self, timeout: float = 15.0) -> tuple[int, str]:
        """Stop the launch (SIGINT, as Ctrl-C) if still running; return its code and output."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            output, _ = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            output, _ = self.process.communicate()
        self.executor.shutdown()
        self.node.destroy_node()
        return self.process.returncode, output


@requires_launch
def test_monitor_launch_publishes_diagnostics(ros_context):
    run = LaunchRun(ros_context, 'monitor.launch.py', 'log_level:=warn')
    try:
        # One status per topic identifier of the shipped config/monitor.yaml (the default).
        config = yaml.safe_load((CONFIG_DIR / 'monitor.yaml').read_text(encoding='utf-8'))
        topic_ids = next(iter(config.values()))['ros__parameters'].get('topics') or []
        expected = {'deadline_monitor: clock', 'deadline_monitor: host',
                    *(f'deadline_monitor: topic {topic_id}' for topic_id in topic_ids)}
        run.wait_for(lambda: expected <= run.statuses, f'{sorted(expected)} on /diagnostics')
        run.wait_for(lambda: run.stats, 'MonitorStats on /deadline_monitor/stats')
    finally:
        returncode, output = run.stop()
    assert returncode == 0, output


@requires_launch
def test_demo_launch_measures_the_controller(ros_context):
    def controller_seen() -> bool:
        return any(t.topic == '/demo/cmd' and t.messages_total > 0
                   for msg in run.stats for t in msg.topics)

    # The duration counts from the launch's start: on a loaded machine (load 15 on 2 cores)
    # the nodes took over 6 s to start, and the launch ended before the first cycle.
    run = LaunchRun(ros_context, 'demo.launch.py', 'duration:=12', 'stall_every:=20')
    try:
        run.wait_for(controller_seen, 'MonitorStats counting /demo/cmd')
        run.wait_for(lambda: 'deadline_monitor: topic cmd' in run.statuses,
                     'the /demo/cmd status on /diagnostics')
        # duration:=12 ends the launch by itself.
        returncode = run.process.wait(timeout=20.0)
    finally:
        code, output = run.stop()
    assert returncode == 0 and code == 0, output
    # A node ending during the shutdown is no reason to shut down again (and say so).
    assert 'was required' not in output, output


@requires_launch
def test_mujoco_launch_closes_the_loop_and_ctrl_c_leaves_no_process(ros_context):
    pytest.importorskip('mujoco')

    def controller_seen() -> bool:
        return any(t.topic == '/demo/cmd' and t.messages_total > 0
                   for msg in run.stats for t in msg.topics)

    run = LaunchRun(ros_context, 'mujoco.launch.py')
    try:
        run.wait_for(controller_seen, 'MonitorStats counting /demo/cmd')
    finally:
        code, output = run.stop()  # SIGINT, as Ctrl-C
    assert code == 0, output
    assert 'was required' not in output, output
    with pytest.raises(ProcessLookupError):  # no node of the launch is left in its group
        os.killpg(run.process.pid, 0)


@requires_launch
def test_a_bad_log_level_is_refused_without_a_traceback(ros_context):
    run = LaunchRun(ros_context, 'monitor.launch.py', 'log_level:=bogus')
    returncode = run.process.wait(timeout=30.0)
    _, output = run.stop()
    assert returncode != 0, output
    assert 'log_level' in output and 'bogus' in output
    assert 'Traceback' not in output and 'RCLInvalidROSArgsError' not in output
    assert not run.stats


def _refused(context: Any, name: str, *arguments: str) -> str:
    """Run a launch that must stop by itself with an error; return its output."""
    run = LaunchRun(context, name, *arguments)
    returncode = run.process.wait(timeout=30.0)
    _, output = run.stop()
    assert returncode != 0, output
    assert 'Traceback' not in output, output
    assert 'process started' not in output, f'a node started (and may be left running):\n{output}'
    assert not run.stats
    return output


@requires_launch
def test_a_missing_config_file_is_refused_before_the_monitor_starts(ros_context, tmp_path):
    """launch_ros only warns, and the monitor would start watching no topic."""
    missing = tmp_path / 'missing.yaml'
    output = _refused(ros_context, 'monitor.launch.py', f'config:={missing}')
    assert f'launch argument config:={missing}: no such file' in output


@requires_launch
def test_gazebo_without_its_packages_is_refused_in_one_line_before_any_node(ros_context):
    """One line naming the packages and how to install them; no node started.

    Was rclpy's raw "package 'ros_gz_sim' not found, searching: [...]" after the monitor had
    started, and the monitor orphaned for about 2 s.
    """
    from ament_index_python.packages import get_package_prefix, PackageNotFoundError

    try:
        get_package_prefix('ros_gz_sim')
        pytest.skip('ros_gz_sim is installed here')
    except PackageNotFoundError:
        pass
    output = _refused(ros_context, 'gazebo.launch.py')
    assert 'gazebo.launch.py needs ros_gz_sim' in output and 'apt install' in output, output
    assert 'searching:' not in output, output


@requires_launch
@pytest.mark.parametrize('name', ['demo.launch.py', 'mujoco.launch.py'])
def test_a_negative_duration_is_refused(ros_context, name):
    """duration:=-5 never fired its timer: the launch ran forever."""
    output = _refused(ros_context, name, 'duration:=-5')
    assert "launch argument duration:='-5' must be >= 0" in output, output


@requires_launch
@pytest.mark.parametrize(('argument', 'kind'), [
    ('target_rtf:=abc', 'a number'), ('stall_every:=x', 'an integer'),
    ('duration:=nan', 'a number'),
])
def test_a_non_numeric_demo_argument_is_refused_before_any_node_starts(
        ros_context, argument, kind):
    """The message names the argument, and no node is left running.

    Was "could not convert string to float: 'abc'", with sim_clock already started and left
    running after the launch ended.
    """
    name, value = argument.split(':=')
    output = _refused(ros_context, 'demo.launch.py', argument)
    assert f"launch argument {name}:='{value}' is not {kind}" in output


@requires_launch
def test_the_demo_ends_when_the_controller_refuses_its_parameters(ros_context):
    """Without the controller the demo measures nothing: it must not run on until Ctrl-C."""
    run = LaunchRun(ros_context, 'demo.launch.py', 'rate_hz:=0.0')
    returncode = run.process.wait(timeout=30.0)
    _, output = run.stop()
    assert returncode == 0, output
    assert 'invalid parameter' in output and 'rate_hz' in output, output
    assert 'Traceback' not in output, output
    assert output.count('process has finished cleanly') == 2, output  # sim_clock, monitor
    assert output.count('was required: shutting down') == 1, output  # the controller only
