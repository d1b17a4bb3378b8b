"""Python agents in the original's layout: `--model internal:<name>` loads class `<Name>Agent`
from `parlai_internal/agents/<name>/<name>.py` (search order: `bots/agent_search.py`).

The class needs ParlAI's agent methods only (`observe`, `act`), not ParlAI itself. It is made
with `Cls(opt)` (`opt`: the parsed options; ParlAI's own parsed opt for a subclass of ParlAI's
`Agent`) or `Cls()`; a class with `share()` is made once and each conversation gets
`Cls(opt, shared)`, ParlAI's way of loading weights once.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Hashable
from pathlib import Path
from types import ModuleType
from typing import Any

from collection_and_annotations.bots.agent_bot import AgentBot
from collection_and_annotations.bots.agent_search import agent_path, find_agent, search_roots
from collection_and_annotations.bots.base import BotContext
from collection_and_annotations.bots.blocking import BlockingCalls
from collection_and_annotations.bots.kinds import BOT_KINDS
from collection_and_annotations.bots.kinds.parlai import PARLAI_EXTRA, parlai_opt
from collection_and_annotations.bots.model_opts import BotSpec
from collection_and_annotations.errors import UserError


def agent_class_name(module: str) -> str:
    """ParlAI's `_name_to_agent_class`: `reranked_blender` -> `RerankedBlenderAgent` (each
    word's first letter upper-cased, the rest kept as written)."""
    return "".join(word[:1].upper() + word[1:] for word in module.split("_")) + "Agent"


@BOT_KINDS.register("python")
class PythonAgentBot(AgentBot):
    keys = None

    def __init__(self, spec: BotSpec, agent_class: type, opt: dict[str, Any],
                 calls: BlockingCalls, agent: str):
        super().__init__(spec.nickname, calls)
        assert spec.parsed is not None
        self._declared = spec.parsed.opt
        self._agent_class, self._opt, self._agent = agent_class, opt, agent
        positional = _positional_parameters(agent_class)
        self._takes_opt = positional >= 1
        self._shares = positional >= 2 and callable(getattr(agent_class, "share", None))

    @classmethod
    def from_spec(cls, spec: BotSpec, context: BotContext) -> PythonAgentBot:
        assert spec.parsed is not None
        opt = dict(spec.parsed.opt)
        folder, module = agent_path(opt.get("model")) or ("", "")
        file = find_agent(folder, module, context) if folder else None
        if file is None:
            searched = ", ".join(str(root / "parlai_internal" / "agents")
                                 for root in search_roots(context)[:2])
            raise spec.error(f"agent module parlai_internal/agents/{folder}/{module}.py not "
                             f"found (searched {searched}, then sys.path); put the agent there")
        agent_class = _agent_class(_load_module(file, folder, module, spec), module, file, spec)
        if _is_parlai_agent(agent_class):
            opt = parlai_opt(spec)
        return cls(spec, agent_class, opt,
                   BlockingCalls(context.max_concurrent_responses, spec.nickname),
                   f"{folder}/{module}" if folder != module else module)

    def settings(self) -> dict[str, Any]:
        return {"type": "python", "agent": self._agent, "opt": dict(self._declared)}

    def _make(self, *shared: Any) -> Any:
        if not self._takes_opt:
            return self._agent_class()
        return self._agent_class(_copy(self._opt), *shared)

    def _load(self) -> Any:
        return self._make().share() if self._shares else None

    def _load_key(self) -> tuple[Hashable, ...]:
        """The class itself: two files may define agents of the same name."""
        return (*super()._load_key(), self._agent_class)

    def _new_agent(self, shared: Any) -> Any:
        return self._make(shared) if shared is not None else self._make()

    def __repr__(self) -> str:
        return f"PythonAgentBot({self.nickname!r}, {self._agent})"


def _load_module(file: Path, folder: str, module: str, spec: BotSpec) -> ModuleType:
    """Import the agent's file as `parlai_internal.agents.<folder>.<module>`, its root on
    sys.path so the agent's own `parlai_internal...` imports work."""
    name = f"parlai_internal.agents.{folder}.{module}"
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() == file:
        return loaded
    root = str(file.parents[3])
    if root not in sys.path:
        sys.path.append(root)
    module_spec = importlib.util.spec_from_file_location(name, file)
    assert module_spec is not None and module_spec.loader is not None
    loaded = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = loaded
    try:
        module_spec.loader.exec_module(loaded)
    except ModuleNotFoundError as exc:
        del sys.modules[name]
        if (exc.name or "").split(".")[0] == "parlai":
            raise spec.error(f"its agent {file} imports ParlAI, which is not installed: "
                             f"{PARLAI_EXTRA}") from exc
        raise spec.error(f"its agent {file} imports '{exc.name}', which is not installed") \
            from exc
    except SyntaxError as exc:
        del sys.modules[name]
        raise UserError(f"bot '{spec.nickname}': syntax error in its agent: {exc.msg}",
                        exc.filename or file, exc.lineno) from exc
    except Exception as exc:
        del sys.modules[name]
        raise spec.error(f"importing its agent {file} failed: {type(exc).__name__}: {exc}") \
            from exc
    return loaded


def _agent_class(loaded: ModuleType, module: str, file: Path, spec: BotSpec) -> type:
    """ParlAI's class name, else the same name in another case (`DukeNetAgent`)."""
    wanted = agent_class_name(module)
    classes = {name: value for name, value in vars(loaded).items() if inspect.isclass(value)}
    if wanted in classes:
        return classes[wanted]
    folded = wanted.replace("_", "").lower()
    for name, value in classes.items():
        if name.lower() == folded:
            return value
    found = ", ".join(sorted(n for n in classes if n.endswith("Agent"))) or "none"
    raise spec.error(f"{file} has no class {wanted} (agent classes there: {found})")


def _positional_parameters(agent_class: type) -> int:
    try:
        parameters = inspect.signature(agent_class).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.VAR_POSITIONAL)
    return sum(p.kind in kinds for p in parameters)


def _is_parlai_agent(agent_class: type) -> bool:
    return any(base.__module__.split(".")[0] == "parlai" for base in agent_class.__mro__)


def _copy(opt: Any) -> Any:
    """Each agent its own opt (ParlAI agents write to theirs)."""
    return opt.copy() if hasattr(opt, "copy") else opt
