"""A judge is a bot of `model_opts.yaml` of type `openai` or `command`, built as the chat
builds it (the same checks, the key read from the spec's `api_key_env` and nowhere else). An
OpenAI-compatible endpoint is asked for JSON held to the bucket's schema (`response_format`
`json_schema`); one that refuses that parameter is asked again without it, and from then on
the prompt alone asks for JSON. A command bot gets the prompt as the worker's message."""

from __future__ import annotations

import itertools
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collection_and_annotations import PACKAGE_DIR
from collection_and_annotations.bots import (
    Bot,
    BotContext,
    BotUnavailable,
    Turn,
    build_bots,
    kind_of,
    load_model_opts,
)
from collection_and_annotations.bots.kinds.openai import Completion, CompletionFailed, OpenAIBot
from collection_and_annotations.errors import UserError

log = logging.getLogger(__name__)
JUDGE_KINDS = ("openai", "command")
REFUSED_PARAMETER = (400, 422)  # how endpoints refuse a parameter they do not know


class CallFailed(Exception):
    """No reply from the model (after the endpoint's own retries): why."""


@dataclass(frozen=True)
class Prices:
    """What the endpoint charges per million tokens, for endpoints that report no cost."""

    input: float
    output: float


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    latency_ms: int
    schema_used: bool  # the reply was held to the schema by the endpoint


def _count(usage: dict[str, Any] | None, key: str) -> int | None:
    value = (usage or {}).get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class JudgeModel:
    """One judge's model: `ask` sends one prompt and returns the whole reply."""

    def __init__(self, bot: Bot, prices: Prices | None = None):
        self.bot, self.nickname, self.prices = bot, bot.nickname, prices
        # does the endpoint take response_format? (None: not known yet)
        self._schema: bool | None = None
        self._sessions = itertools.count(1)

    @classmethod
    def build(cls, model_opts: str | Path, nickname: str, prices: Prices | None = None
              ) -> JudgeModel:
        """The judge `nickname` of `model_opts`: UserError for anything to fix (not there, of
        another type, a key variable unset), naming the file and line."""
        specs = load_model_opts(model_opts)
        context = BotContext(project_root=PACKAGE_DIR.parent, task_dir=Path(model_opts).parent)
        spec = specs.get(nickname)
        if spec is None:
            raise UserError(f"judge '{nickname}' is not in {model_opts} (bots there: "
                            f"{', '.join(sorted(specs)) or 'none'})")
        kind = kind_of(spec, context)
        if kind not in JUDGE_KINDS:
            raise spec.error(f"a judge is a bot of type {' or '.join(JUDGE_KINDS)}, not "
                             f"'{kind}'", "type")
        return cls(build_bots(specs, [nickname], context)[nickname], prices)

    def settings(self) -> dict[str, Any]:
        """Stored with every call (never the key)."""
        return self.bot.settings()

    async def ask(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> Reply:
        started = time.monotonic()
        if isinstance(self.bot, OpenAIBot):
            completion, used = await self._complete(self.bot, messages, schema)
            usage = completion.usage
            tokens_in = _count(usage, "prompt_tokens")
            tokens_out = _count(usage, "completion_tokens")
            return Reply(completion.text, tokens_in, tokens_out,
                         self._cost(usage, tokens_in, tokens_out),
                         round((time.monotonic() - started) * 1000), used)
        text = await self._command_reply(messages)
        return Reply(text, None, None, None, round((time.monotonic() - started) * 1000), False)

    async def _complete(self, bot: OpenAIBot, messages: list[dict[str, str]],
                        schema: dict[str, Any]) -> tuple[Completion, bool]:
        if self._schema is not False:
            response_format = {"type": "json_schema",
                               "json_schema": {"name": "answer", "schema": schema, "strict": True}}
            try:
                completion = await bot.complete(messages, response_format)
            except CompletionFailed as exc:
                if self._schema or exc.status not in REFUSED_PARAMETER:
                    raise CallFailed(str(exc)) from None
                log.info("judge %s: a call with response_format was refused (%s); asking "
                         "without it", self.nickname, exc)
            else:
                self._schema = True
                return completion, True
        try:
            completion = await bot.complete(messages)
        except CompletionFailed as exc:
            raise CallFailed(str(exc)) from None
        if self._schema is None:
            log.warning("judge %s: the endpoint refuses response_format; the prompt alone asks "
                        "for JSON (replies are parsed and asked again when they do not fit)",
                        self.nickname)
            self._schema = False
        return completion, False

    def _cost(self, usage: dict[str, Any] | None, tokens_in: int | None,
              tokens_out: int | None) -> float | None:
        """The cost the endpoint reports (`usage.cost`), else from the prices given."""
        reported = (usage or {}).get("cost")
        if isinstance(reported, int | float) and not isinstance(reported, bool):
            return float(reported)
        if self.prices is None or tokens_in is None or tokens_out is None:
            return None
        return (tokens_in * self.prices.input + tokens_out * self.prices.output) / 1e6

    async def _command_reply(self, messages: list[dict[str, str]]) -> str:
        """The messages as a conversation: the system and first user message as the worker's
        first message, the model's earlier replies as the bot's."""
        first = "\n\n".join(m["content"] for m in messages[:2] if m["role"] in ("system",
                                                                                  "user"))
        rest = messages[2:] if messages[0]["role"] == "system" else messages[1:]
        history = [Turn("worker", first)] + [
            Turn("bot" if m["role"] == "assistant" else "worker", m["content"]) for m in rest]
        session = self.bot.session(f"judge-{self.nickname}-{next(self._sessions)}")
        try:
            return "".join([piece async for piece in session.reply(history)])
        except BotUnavailable as exc:
            raise CallFailed(str(exc)) from None
        finally:
            await session.close()

    async def aclose(self) -> None:
        await self.bot.aclose()
