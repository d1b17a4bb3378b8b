"""Shared fixtures: the sibling `../shared` folder (reference vectors, CEP sample files)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

SHARED = Path(__file__).parents[2].parent / "shared"
VECTORS = SHARED / "fixtures" / "metrics" / "vectors.json"


@pytest.fixture
def shared_dir() -> Path:
    """`../shared` next to the repository; tests needing it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the shared fixtures live next to the repository")
    return SHARED


@pytest.fixture
def serve_command() -> list[str]:
    """The project's own mteval server for BLEU, as a command."""
    return [sys.executable, "-m", "collection_and_annotations.metrics.serve", "bleu"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize `vector` with every reference vector of ../shared (one skip if absent)."""
    if "vector" not in metafunc.fixturenames:
        return
    if not VECTORS.is_file():
        absent = pytest.mark.skip(reason=f"{VECTORS} is absent (../shared not checked out)")
        metafunc.parametrize("vector", [pytest.param(None, marks=absent)], ids=["no-vectors"])
        return
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))["vectors"]
    metafunc.parametrize("vector", vectors, ids=[v["id"] for v in vectors])
