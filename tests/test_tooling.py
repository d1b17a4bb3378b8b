"""ruff runs with the tests, the fast lane included: a lint error fails the suite."""

from __future__ import annotations

import subprocess
import sys

from helpers import REPO


def test_ruff_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
