"""The whole suite is one command: ruff and the frontend's component tests run from here."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from helpers import REPO


def test_ruff_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_frontend_component_tests():
    if shutil.which("npm") is None or not (REPO / "frontend" / "node_modules").is_dir():
        pytest.skip("frontend dependencies not installed (run ./setup.sh)")
    result = subprocess.run(["npm", "test", "--silent"], cwd=REPO / "frontend",
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
