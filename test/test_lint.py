"""All Python in the repository passes ruff with the project's ruff.toml."""

from pathlib import Path
import subprocess
import sys

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_ruff():
    pytest.importorskip('ruff', reason='ruff is not installed (scripts/dev setup installs it)')
    result = subprocess.run(
        [sys.executable, '-m', 'ruff', 'check', '--no-cache', '--output-format=concise',
         str(REPO_ROOT)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, f'ruff found problems:\n{result.stdout}{result.stderr}'
