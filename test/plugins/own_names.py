"""The names a test owns: a ROS namespace of its own, so a neighbour on its domain changes nothing.

Two runs of the suite on one machine with the same ``ROS_DOMAIN_ID`` (two CI jobs on one host),
or any other ROS 2 process there (a user's ``/deadline_monitor``), share the DDS graph with
the test. Each test therefore gets a namespace of its own, ``/t<pid>_<random>_<n>`` (the
random part keeps apart two containers whose processes share a pid and the host's network):
every rclpy Context the fixtures make and every process they start runs with ``ros_args()``,
which puts all its nodes in that namespace (node names, ``~/stats``, parameter services) and
remaps the two global names a test uses, ``/clock`` and ``/diagnostics``, into it. Topic
names are written ``ns('/cmd')``: the test's own ``/cmd``. Only a test's own processes see
its topics, and its monitor hears only its own /clock.
"""

from __future__ import annotations

import itertools
import os
import secrets

__all__ = ['begin_test', 'namespace', 'ns', 'ros_args']

_numbers = itertools.count()
_process = f'{os.getpid()}_{secrets.token_hex(3)}'
_current = ''


def begin_test() -> str:
    """Give the next test a namespace of its own; return it (``/t<pid>_<random>_<n>``)."""
    global _current
    _current = f'/t{_process}_{next(_numbers)}'
    return _current


def namespace() -> str:
    """Return the running test's namespace (``/t<pid>_<random>_<n>``)."""
    if not _current:
        raise RuntimeError('no test is running: the own_namespace fixture sets the namespace')
    return _current


def ns(name: str) -> str:
    """Return the running test's own name for the absolute name ``name`` (``/cmd``)."""
    if not name.startswith('/'):
        raise ValueError(f'ns() takes an absolute name, got {name!r}')
    return namespace() + name


def ros_args() -> list[str]:
    """Return the ``--ros-args`` that put a Context's or a process's nodes in the namespace."""
    own = namespace()
    return ['--ros-args', '-r', f'__ns:={own}', '-r', f'/clock:={own}/clock',
            '-r', f'/diagnostics:={own}/diagnostics', '--']
