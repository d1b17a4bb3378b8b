"""From `model_opts.yaml` specs to running bots: only the bots the conf uses are built, and
everything a user must fix fails here, at launch, naming the nickname and `file:line`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping

from collection_and_annotations.bots.agent_search import INTERNAL, agent_path, find_agent
from collection_and_annotations.bots.base import Bot, BotContext
from collection_and_annotations.bots.kinds import BOT_KINDS
from collection_and_annotations.bots.limits import LIMIT_KEYS
from collection_and_annotations.bots.model_opts import BotSpec, check_spec_problems
from collection_and_annotations.errors import UserError
from collection_and_annotations.plugins import PluginError


def kind_of(spec: BotSpec, context: BotContext) -> str:
    """A mapping's `type`; an opt string whose `--model` is `internal:<name>`, or a `<name>`
    found in `parlai_internal/agents`, is a Python agent; any other opt string is ParlAI's."""
    if spec.parsed is None:
        return str(spec.type)
    model = spec.parsed.opt.get("model")
    path = agent_path(model)
    if path and (str(model).startswith(INTERNAL) or find_agent(*path, context)):
        return "python"
    return "parlai"


def build_bots(specs: Mapping[str, BotSpec], nicknames: Iterable[str],
               context: BotContext) -> dict[str, Bot]:
    """The bots named by `nicknames` (e.g. `nicknames_in(parse_conversations_needed(...))`)."""
    nicknames = list(dict.fromkeys(nicknames))
    check_spec_problems(specs, nicknames)
    bots: dict[str, Bot] = {}
    for nickname in nicknames:
        spec = specs.get(nickname)
        if spec is None:
            raise UserError(f"bot '{nickname}' is not in model_opts (known: "
                            f"{', '.join(sorted(specs)) or 'none'})")
        bots[nickname] = _build(spec, context)
    return bots


def _build(spec: BotSpec, context: BotContext) -> Bot:
    kind = kind_of(spec, context)
    try:
        bot_class = BOT_KINDS.get(kind)
    except PluginError:
        raise spec.error(f"unknown type '{kind}' (known: {', '.join(sorted(BOT_KINDS.names()))})",
                         "type") from None
    if spec.parsed is None:
        _check_keys(spec, kind, bot_class)
    bot: Bot = bot_class.from_spec(spec, context)
    bot.limits = spec.limits
    return bot


def _check_keys(spec: BotSpec, kind: str, bot_class: type) -> None:
    keys: frozenset[str] | None = bot_class.keys  # type: ignore[attr-defined]
    if keys is None:
        raise spec.error(f"type '{kind}' is declared with its opt string (e.g. `nickname: "
                         "--model internal:<name>`, or `nickname: {opt: '--model "
                         "internal:<name>', reply_timeout: 60}`)", "type")
    for key in spec.options:
        if key != "type" and key not in keys | LIMIT_KEYS:
            raise spec.error(f"unknown key '{key}' for type '{kind}' (known: "
                             f"{', '.join(sorted(keys | LIMIT_KEYS))})", key)
    for key in sorted(bot_class.required - spec.options.keys()):  # type: ignore[attr-defined]
        raise spec.error(f"type '{kind}' needs '{key}'")


async def check_bots(bots: Mapping[str, Bot]) -> list[str]:
    """Launch-time warnings (an endpoint down, a model that failed to load): never a refusal,
    since the problem may be gone by the time a worker chats."""

    async def _check(nickname: str, bot: Bot) -> str | None:
        try:
            warning = await bot.check()
        except Exception as exc:  # a check must not stop the launch
            warning = f"its check failed: {type(exc).__name__}: {exc}"
        return f"bot '{nickname}': {warning}" if warning else None

    results = await asyncio.gather(*(_check(name, bot) for name, bot in bots.items()))
    return [warning for warning in results if warning]


def check_built_bots(bots: Mapping[str, Bot]) -> list[str]:
    """At launch, from outside an event loop: `check_bots` on bots just built, closed after."""

    async def check() -> list[str]:
        try:
            return await check_bots(bots)
        finally:
            for bot in bots.values():
                await bot.aclose()

    return asyncio.run(check())
