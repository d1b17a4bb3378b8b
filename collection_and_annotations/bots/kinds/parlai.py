"""ParlAI models (`--model-file zoo:...`, `--model transformer/generator`), with the optional
extra `pip install '.[parlai]'`: made as the original's model chat did (ParlAI's parser on the
opt string, `create_agent` once, `create_agent_from_shared` per conversation)."""

from __future__ import annotations

import importlib.util
from typing import Any

from collection_and_annotations.bots.agent_bot import AgentBot
from collection_and_annotations.bots.base import BotContext
from collection_and_annotations.bots.blocking import BlockingCalls
from collection_and_annotations.bots.kinds import BOT_KINDS
from collection_and_annotations.bots.model_opts import BotSpec

PARLAI_EXTRA = "pip install '.[parlai]'"


def require_parlai(spec: BotSpec, why: str) -> None:
    if importlib.util.find_spec("parlai") is None:
        raise spec.error(f"{why} needs ParlAI, which is not installed: {PARLAI_EXTRA}")


def parlai_opt(spec: BotSpec) -> Any:
    """ParlAI's own parse of the opt string (its defaults and types), at launch."""
    assert spec.parsed is not None
    require_parlai(spec, "this ParlAI agent")
    from parlai.core.params import ParlaiParser

    try:
        return ParlaiParser(True, True).parse_args(spec.parsed.args)
    except SystemExit:  # argparse reports on stderr, then exits
        raise spec.error("ParlAI refused these options (its message is printed above)") \
            from None


@BOT_KINDS.register("parlai")
class ParlaiBot(AgentBot):
    keys = None

    def __init__(self, spec: BotSpec, opt: Any, calls: BlockingCalls):
        super().__init__(spec.nickname, calls)
        assert spec.parsed is not None
        self._declared = spec.parsed.opt
        self._opt = opt

    @classmethod
    def from_spec(cls, spec: BotSpec, context: BotContext) -> ParlaiBot:
        require_parlai(spec, "a ParlAI model (--model-file, or --model of a ParlAI agent)")
        return cls(spec, parlai_opt(spec),
                   BlockingCalls(context.max_concurrent_responses, spec.nickname))

    def settings(self) -> dict[str, Any]:
        return {"type": "parlai", "opt": dict(self._declared)}

    def _load(self) -> Any:
        from parlai.core.agents import create_agent

        return create_agent(self._opt, requireModelExists=True).share()

    def _new_agent(self, shared: Any) -> Any:
        from parlai.core.agents import create_agent_from_shared

        return create_agent_from_shared(shared)

    def _polish(self, text: str) -> str:
        """The original's model chat normalised uncased models' replies (`i 'm` -> `I'm`)."""
        if "dict_lower" in self._opt and not self._opt["dict_lower"]:
            return text
        from parlai.utils.strings import normalize_reply

        return normalize_reply(text)

    def __repr__(self) -> str:
        return f"ParlaiBot({self.nickname!r})"
