"""Bot tests: an asyncio loop per test (anyio's plugin), a task folder in the original's layout
and model_opts.yaml written to tmp_path."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from collection_and_annotations.bots import BotContext, BotSession, Turn, load_model_opts
from collection_and_annotations.bots.model_opts import BotSpec


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def context(tmp_path: Path) -> BotContext:
    """Project root and task folder side by side: `<task_dir>/../parlai_internal/agents` is
    `tmp_path/tasks/parlai_internal/agents`, as in the original project."""
    (tmp_path / "project").mkdir()
    (tmp_path / "tasks" / "task_config").mkdir(parents=True)
    return BotContext(project_root=tmp_path / "project",
                      task_dir=tmp_path / "tasks" / "task_config", max_concurrent_responses=2)


def write_opts(folder: Path, text: str) -> tuple[Path, dict[str, BotSpec]]:
    path = folder / "model_opts.yaml"
    path.write_text(textwrap.dedent(text))
    return path, load_model_opts(path)


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


async def reply(session: BotSession, *texts: str) -> list[str]:
    """The pieces of the reply to a history of alternating worker/bot texts."""
    history = [Turn("worker" if i % 2 == 0 else "bot", text) for i, text in enumerate(texts)]
    return [piece async for piece in session.reply(history)]
