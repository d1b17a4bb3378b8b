"""Under CI=true a missing PostgreSQL or Chromium fails the tests that need it; locally it skips."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import missing_service
from helpers import REPO

PG_TEST = "tests/test_json_input.py::test_every_bad_body_on_every_database[postgres]"


def _run_pg_test(ci: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["CEP_TEST_POSTGRES_URL"] = "postgresql+psycopg://postgres@127.0.0.1:1/test"
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", PG_TEST, "-q", "-rfs", "-p",
                           "no:cacheprovider"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)


def test_unreachable_postgres_fails_under_ci():
    result = _run_pg_test("true")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout and "127.0.0.1:1" in result.stdout
    assert "CI=true" in result.stdout and "service postgresql start" in result.stdout


def test_unreachable_postgres_skips_locally():
    result = _run_pg_test(None)
    assert result.returncode == 0 and "1 skipped" in result.stdout, result.stdout


@pytest.mark.parametrize(("ci", "outcome"), [("true", pytest.fail.Exception),
                                             ("", pytest.skip.Exception)])
def test_missing_chromium_follows_the_same_rule(monkeypatch, ci, outcome):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="apt-get install chromium"):
        missing_service("/usr/bin/chromium is missing: install it with `apt-get install "
                        "chromium`")
