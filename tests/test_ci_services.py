"""Under CI=true a missing PostgreSQL or Chromium fails the tests that need it; locally it skips."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import missing_service
from helpers import REPO

PG_TEST = "tests/test_json_input.py::test_every_bad_body_on_every_database[postgres]"


def test_unreachable_postgres_fails_under_ci():
    """The whole way, in a pytest of its own: the URL from the environment, the fixture, the
    outcome; the local skip is the same rule (below)."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(CI="true", CEP_TEST_POSTGRES_URL="postgresql+psycopg://postgres@127.0.0.1:1/test")
    result = subprocess.run([sys.executable, "-m", "pytest", PG_TEST, "-q", "-rfs", "-p",
                             "no:cacheprovider"], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout and "127.0.0.1:1" in result.stdout
    assert "CI=true" in result.stdout and "service postgresql start" in result.stdout


@pytest.mark.parametrize(("ci", "outcome"), [("true", pytest.fail.Exception),
                                             ("", pytest.skip.Exception),
                                             (None, pytest.skip.Exception)])
def test_a_missing_service_fails_under_ci_and_skips_locally(monkeypatch, ci, outcome):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="apt-get install chromium"):
        missing_service("/usr/bin/chromium is missing: install it with `apt-get install "
                        "chromium`")
