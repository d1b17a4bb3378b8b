"""Where `--model internal:<name>` agents live: `parlai_internal/agents/<name>/<name>.py`.

Searched in this order, first match wins:
1. the project root (`BotContext.project_root`), where this project ships its example agent;
2. beside the task folder, `<task_dir>/../parlai_internal/agents` (the original's layout);
3. every `sys.path` entry (`PYTHONPATH` included), as `import parlai_internal.agents...` would.
"""

from __future__ import annotations

import sys
from pathlib import Path

from collection_and_annotations.bots.base import BotContext

INTERNAL = "internal:"


def agent_path(model: object) -> tuple[str, str] | None:
    """`internal:<name>`, `<name>` or `<name>/<variant>` -> (folder, module); None for a model
    this project does not load itself (`parlai.agents.x:Y`, `projects:...`)."""
    if not isinstance(model, str) or not model:
        return None
    name = model.removeprefix(INTERNAL)
    folder, _, module = name.partition("/")
    if not all(part.isidentifier() for part in (folder, module or folder)):
        return None
    return folder, module or folder


def search_roots(context: BotContext) -> list[Path]:
    roots = [context.project_root, context.task_dir.parent]
    roots += [Path(entry or ".") for entry in sys.path]
    unique: list[Path] = []
    for root in roots:
        resolved = root.resolve()
        if resolved not in unique:
            unique.append(resolved)
    return unique


def find_agent(folder: str, module: str, context: BotContext) -> Path | None:
    for root in search_roots(context):
        candidate = root / "parlai_internal" / "agents" / folder / f"{module}.py"
        if candidate.is_file():
            return candidate
    return None
