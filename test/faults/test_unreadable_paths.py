"""Paths the system refuses: one ``ERROR:`` line naming the path and the reason, never a traceback.

``pathlib`` raises ``OSError`` for what its ``exists()``/``is_file()`` cannot answer: a
directory the user may not search (``PermissionError``), a file name longer than the file
system allows. Tests run as root, for whom ``chmod 000`` denies nothing, so the live cases
use a name too long (refused for root too); the permission case runs where it can (not as
root), and the translation itself is tested on the errors the system raises.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
import subprocess

import pytest

from ros2_deadline_monitor.analysis.errors import os_error_text

TOO_LONG = 'a' * 300
"""A path component longer than NAME_MAX (255): ENAMETOOLONG, for root too."""


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    assert 'Traceback' not in done.stdout + done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith('ERROR: '), done.stderr
    return lines[0]


def _run(installed_executable, program: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(installed_executable(program)), *args], capture_output=True,
                          text=True, timeout=60, check=False)


def test_the_translation_names_the_path_and_the_reason(tmp_path):
    with pytest.raises(OSError) as raised:
        (tmp_path / TOO_LONG).exists()
    assert os_error_text(raised.value) == f'{tmp_path / TOO_LONG}: File name too long'
    denied = PermissionError(errno.EACCES, os.strerror(errno.EACCES), '/bags/run1')
    assert os_error_text(denied) == '/bags/run1: Permission denied'
    moved = IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), '/a.tmp', None, '/a')
    assert os_error_text(moved) == '/a.tmp -> /a: Is a directory'
    assert os_error_text(OSError('no errno')) == 'no errno'


def test_analyze_on_a_path_the_system_refuses(installed_executable, tmp_path):
    bag = tmp_path / TOO_LONG
    done = _run(installed_executable, 'analyze', str(bag))
    assert done.returncode == 1
    assert _one_error_line(done) == f'ERROR: {bag}: File name too long'


def test_analyze_check_names_the_refused_bag_among_others(installed_executable, tmp_path):
    refused, empty = tmp_path / TOO_LONG, tmp_path / 'empty'
    empty.mkdir()
    done = _run(installed_executable, 'analyze', str(refused), str(empty), '--check',
                '--expect-max-misses', '0')
    assert done.returncode == 1, done.stderr
    assert 'Traceback' not in done.stdout + done.stderr, done.stderr
    assert f'ERROR: {refused}: {refused}: File name too long' in done.stderr
    assert f'ERROR: {empty}: ' in done.stderr  # each bag judged on its own


@pytest.mark.skipif(os.geteuid() == 0, reason='chmod 000 denies nothing to root')
def test_analyze_on_a_bag_directory_it_may_not_read(installed_executable, tmp_path):
    bag = tmp_path / 'bag'
    bag.mkdir()
    (bag / 'metadata.yaml').write_text('')
    bag.chmod(0)
    try:
        done = _run(installed_executable, 'analyze', str(bag))
    finally:
        bag.chmod(0o755)
    assert done.returncode == 1
    assert 'Permission denied' in _one_error_line(done)


@pytest.mark.parametrize(('args', 'named'), [
    (('--ros-args', '--params-file', f'/tmp/{TOO_LONG}'), '--params-file: /tmp/'),
    (('--ros-args', '-p', f'summary_file:=/tmp/{TOO_LONG}/summary.json'),
     'summary_file: /tmp/'),
], ids=['params_file', 'summary_file'])
def test_monitor_on_a_path_the_system_refuses(installed_executable, args, named):
    done = _run(installed_executable, 'monitor', *args)
    assert done.returncode == 2
    line = _one_error_line(done)
    assert line.startswith(f'ERROR: {named}') and 'File name too long' in line, line


def test_summary_file_that_is_a_directory_is_refused_at_start(installed_executable, tmp_path):
    done = _run(installed_executable, 'monitor', '--ros-args', '-p',
                f'summary_file:={tmp_path}')
    assert done.returncode == 2
    assert 'is a directory' in _one_error_line(done)


def test_error_lines_name_paths_as_given(tmp_path):
    # The path stays as the user gave it (relative stays relative), so it can be found.
    relative = Path(TOO_LONG)
    with pytest.raises(OSError) as raised:
        relative.is_file()
    assert os_error_text(raised.value).startswith(f'{TOO_LONG}: ')
