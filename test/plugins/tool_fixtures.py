"""Fixtures of the tool and probe tests: the tools run as ``python -m`` subprocesses.

The subprocess imports the same ``ros2_deadline_monitor`` this test process imported (its
parent directory goes first on PYTHONPATH), so a test checks the code it also imported.
"""

from __future__ import annotations

from collections.abc import Callable
import json
import os
from pathlib import Path
import subprocess
import sys
import time
from typing import Any

from own_names import ros_args
import pytest

import ros2_deadline_monitor.tools

PACKAGE_PARENT = Path(ros2_deadline_monitor.tools.__file__).absolute().parents[2]


class ListeningNode:
    """A test node with an executor of its own, spun until what a test waits for arrived."""

    def __init__(self, context: Any, name: str) -> None:
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node

        self.node = Node(name, context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)

    def spin_until(self, condition: Callable[[], bool], timeout_s: float, what: str) -> None:
        """Spin until ``condition()`` holds; fail naming ``what`` after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f'timed out after {timeout_s:g} s waiting for {what}')
            self.executor.spin_once(timeout_sec=0.02)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


class Tools:
    """Builds the command lines of the package's tools and starts them."""

    def __init__(self, processes: list[subprocess.Popen]) -> None:
        self._processes = processes

    @staticmethod
    def command(module: str, **params: Any) -> list[str]:
        """Return the ``python -m`` command line running ``module`` with ROS parameters.

        Its nodes run in the test's namespace (``own_names.ros_args``).
        """
        args = [sys.executable, '-m', f'ros2_deadline_monitor.tools.{module}', '--ros-args']
        for name, value in params.items():
            if isinstance(value, bool):
                value = 'true' if value else 'false'
            args += ['-p', f'{name}:={json.dumps(value) if isinstance(value, list) else value}']
        return [*args, '--', *ros_args()]

    @staticmethod
    def env() -> dict[str, str]:
        """Return this environment with the imported package's parent first on PYTHONPATH."""
        env = dict(os.environ)
        env['PYTHONPATH'] = os.pathsep.join(
            p for p in (str(PACKAGE_PARENT), env.get('PYTHONPATH', '')) if p)
        return env

    def help(self, module: str, timeout_s: float) -> subprocess.CompletedProcess:
        """Run ``module --help`` to its end; return what it wrote."""
        return subprocess.run([*self.command(module)[:3], '--help'], env=self.env(),
                              capture_output=True, text=True, timeout=timeout_s)

    def start(self, module: str, **params: Any) -> subprocess.Popen:
        """Start a tool with piped text output; stopped by ``processes`` after the test."""
        process = subprocess.Popen(self.command(module, **params), env=self.env(),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._processes.append(process)
        return process

    def start_logging(self, module: str, log_path: Path, **params: Any) -> subprocess.Popen:
        """Start a tool with its output (stdout and stderr) going to ``log_path``."""
        command = self.command(module, **params)
        with open(log_path, 'w') as log:
            process = subprocess.Popen(command, env=self.env(),
                                       stdout=log, stderr=subprocess.STDOUT)
        self._processes.append(process)
        return process

    @staticmethod
    def wait_for_log(path: Path, text: str | tuple[str, ...], timeout_s: float) -> str:
        """Return the log's content once it contains ``text`` (or one of several texts).

        Fail after ``timeout_s``.
        """
        texts = (text,) if isinstance(text, str) else text
        deadline = time.monotonic() + timeout_s
        while True:
            content = path.read_text()
            if any(t in content for t in texts):
                return content
            if time.monotonic() > deadline:
                pytest.fail(f'none of {texts!r} within {timeout_s} s in:\n{content}')
            time.sleep(0.05)


@pytest.fixture
def tools(processes: list[subprocess.Popen]) -> Tools:
    """Return ``Tools``: ``start``, ``start_logging``, ``wait_for_log``, ``command``, ``env``."""
    return Tools(processes)
