"""The one interface every kind of bot implements (design.md §4 "Bots").

A `Bot` is built once per nickname of `model_opts.yaml` when the server starts; a chat asks it
for a `BotSession` per conversation (each chat has its own state). The chat runner calls
`BotSession.reply(history)` once per bot turn and streams the pieces it yields to the worker's
page; the joined pieces are the bot's message. Kinds (one module each under `bots/`): Python
agents in the original's `parlai_internal/agents` layout, ParlAI models (optional extra),
OpenAI-compatible endpoints, a command speaking a line protocol, and the built-in demo bots.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from collection_and_annotations.bots.limits import ReplyLimits

Role = Literal["worker", "bot"]


@dataclass(frozen=True)
class Turn:
    """One message of a conversation as a bot sees it: the worker's or its own."""

    role: Role
    text: str


@dataclass(frozen=True)
class SpecSource:
    """Where a bot's spec was declared, for error messages (`model_opts.yaml` and its line)."""

    path: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path


@dataclass(frozen=True)
class BotContext:
    """What building a bot may need besides its spec."""

    project_root: Path  # where `parlai_internal/agents` is searched first
    task_dir: Path  # `<task_dir>/../parlai_internal/agents` is searched second
    max_concurrent_responses: int = 1  # bot turns generating at once, per bot and process
    extra: dict[str, Any] = field(default_factory=dict)


class BotUnavailable(Exception):
    """The bot cannot answer this turn (down, timed out, crashed, malformed output). The
    message is shown in the chat as it is: it must name no endpoint, model or nickname, and
    calls the bot "your partner", as the page does."""


# What a worker reads when a bot cannot answer (BotUnavailable's usual messages).
NO_REPLY = "Your partner could not answer right now."
TOO_SLOW = "Your partner took too long to answer."
NOTHING_SAID = "Your partner had nothing to say."


class BotSession(Protocol):
    """A bot in one conversation."""

    def reply(self, history: list[Turn]) -> AsyncIterator[str]:
        """Pieces of the bot's reply to `history` (the whole conversation so far, ending
        with the worker's latest message; the bot's own earlier replies included). Raises
        BotUnavailable when no reply can be had."""

    async def close(self) -> None:
        """The conversation ended: release what the session holds."""


class Bot(Protocol):
    nickname: str
    limits: ReplyLimits  # how long and how large a reply may be (set by `build_bots`)

    def settings(self) -> dict[str, Any]:
        """The generation settings stored with each of its messages (never a secret)."""

    def session(self, conversation_id: str) -> BotSession:
        """A new conversation with this bot."""

    async def check(self) -> str | None:
        """At launch: a warning when the bot looks unusable right now (e.g. its endpoint is
        down); None when it looks fine. Never raises for a transient problem."""

    async def aclose(self) -> None:
        """The server stops: release processes, connections."""
