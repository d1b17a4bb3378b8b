"""A fresh browser context per worker (one Chromium per module: tests/conftest.py), servers
per test."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from collection_and_annotations.server.app import STATIC_DIR

from .worker_page import Server, Worker


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start `welcome.py` with a conf (name or path) and overrides; stopped after the test."""
    assert (STATIC_DIR / "index.html").is_file(), "build the frontend first (./setup.sh)"
    servers: list[Server] = []

    def _serve(conf: str | Path, *overrides: str) -> Server:
        servers.append(Server(tmp_path / f"server{len(servers)}", conf, *overrides))
        return servers[-1]

    yield _serve
    for server in servers:
        server.stop()


@pytest.fixture
def new_worker(browser, request) -> Iterator[Callable[..., Worker]]:
    """A worker in a fresh browser context; `viewport=(width, height)`, `mobile=True`."""
    contexts = []
    prefix = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name.removeprefix("test_")).strip("-")

    def _new(viewport: tuple[int, int] = (1280, 900), mobile: bool = False) -> Worker:
        context = browser.new_context(
            viewport={"width": viewport[0], "height": viewport[1]},
            is_mobile=mobile, has_touch=mobile,
        )
        context.set_default_timeout(10_000)
        contexts.append(context)
        return Worker(context.new_page(), prefix if len(contexts) == 1 else
                      f"{prefix}-{len(contexts)}")

    yield _new
    for context in contexts:
        context.close()


@pytest.fixture
def worker(new_worker) -> Worker:
    return new_worker()
