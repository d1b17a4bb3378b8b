"""ParlAI-style agents (`observe(message)`, `act() -> {"text": ...}`) as bots: shared by the
Python-agent and ParlAI kinds, which differ only in how an agent is made."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Hashable, Mapping
from functools import partial
from typing import Any

from collection_and_annotations.bots.base import (
    NOTHING_SAID,
    BotUnavailable,
    Turn,
)
from collection_and_annotations.bots.blocking import BlockingCalls

log = logging.getLogger(__name__)
WORKER_ID = "Worker"
_END = object()
_UNSET = object()
# State loaded in this process, by what it was loaded from: the launch check loads a model and
# the server's bots (built again, in the server's event loop) find it here instead of loading
# it a second time. The process id is part of the key: a forked server process loads its own.
_LOADED: dict[tuple[Hashable, ...], Any] = {}


class AgentBot:
    """One agent per conversation, made from state loaded once per bot (ParlAI's `share()`:
    the model weights), loaded in a thread by the launch check or else by the first chat."""

    def __init__(self, nickname: str, calls: BlockingCalls):
        self.nickname = nickname
        self._calls = calls
        self._lock = threading.Lock()
        self._shared: Any = _UNSET

    def _load(self) -> Any:
        """Blocking: the state every conversation's agent is made from."""
        raise NotImplementedError

    def _load_key(self) -> tuple[Hashable, ...]:
        """What `_load` depends on: bots with the same key share what it loaded."""
        return (type(self), json.dumps(self.settings(), sort_keys=True, default=str))

    def _new_agent(self, shared: Any) -> Any:
        """Blocking: a fresh agent for one conversation."""
        raise NotImplementedError

    def _polish(self, text: str) -> str:
        return text

    def _shared_state(self) -> Any:
        with self._lock:
            if self._shared is _UNSET:
                key = (os.getpid(), *self._load_key())
                if key not in _LOADED:
                    _LOADED[key] = self._load()
                self._shared = _LOADED[key]
            return self._shared

    def session(self, conversation_id: str) -> AgentSession:
        return AgentSession(lambda: self._new_agent(self._shared_state()), self._calls,
                            self._polish)

    async def check(self) -> str | None:
        try:
            await self._calls.call(self._shared_state)
        except Exception as exc:  # reported at launch; each chat would raise it again
            return f"loading the agent failed: {type(exc).__name__}: {exc}"
        return None

    async def aclose(self) -> None:
        self._calls.shutdown()


class AgentSession:
    """Feeds the agent what it has not seen yet, then acts, all in the bot's threads.

    A fresh agent given a longer history (the conversation began on a process that since
    restarted) observes the whole transcript newline-joined in one message: ParlAI's own
    history convention (`--delimiter` defaults to a newline), so it answers in context."""

    def __init__(self, make_agent: Callable[[], Any], calls: BlockingCalls,
                 polish: Callable[[str], str]):
        self._make_agent = make_agent  # blocking: runs in a thread on the first reply
        self._calls = calls
        self._polish = polish
        self._agent: Any = None
        self._fed = 0  # turns of the history the agent has seen, its own reply included

    async def reply(self, history: list[Turn]) -> AsyncIterator[str]:
        async with self._calls.slot():
            if self._agent is None:
                self._agent = await self._calls.call(self._make_agent)
            text = self._unseen(history)
            self._fed = len(history)
            if callable(getattr(self._agent, "act_stream", None)):
                pieces = self._streamed(text)
            else:
                pieces = self._whole(text)
            replied = False
            try:
                async for piece in pieces:
                    yield piece
                replied = True
            finally:
                if replied:
                    self._fed += 1  # the runner adds the reply to the history
                else:  # failed, or cut while the agent may still be acting in its thread
                    self._agent, self._fed = None, 0  # the next reply: a new agent, all told

    def _unseen(self, history: list[Turn]) -> str:
        if self._fed == 0 or self._fed > len(history):
            return "\n".join(turn.text for turn in history)
        return "\n".join(t.text for t in history[self._fed:] if t.role == "worker")

    async def _whole(self, text: str) -> AsyncIterator[str]:
        reply = await self._calls.call(self._observe_and, "act", text)
        said = reply.get("text") if isinstance(reply, Mapping) else None
        if said is not None and not isinstance(said, str):
            log.warning("agent: act() returned text that is a %s, not a string",
                        type(said).__name__)
        if not isinstance(said, str) or not said.strip():
            raise BotUnavailable(NOTHING_SAID)
        yield self._polish(said)

    async def _streamed(self, text: str) -> AsyncIterator[str]:
        pieces = await self._calls.call(self._observe_and, "act_stream", text)
        said = False
        try:
            while (piece := await self._calls.call(next, pieces, _END)) is not _END:
                if isinstance(piece, str) and piece:
                    said = True
                    yield piece
        finally:  # not waited for: a cut reply's generator may still run in its thread
            if callable(getattr(pieces, "close", None)):
                self._calls.call_later(partial(_close, pieces))
        if not said:
            raise BotUnavailable(NOTHING_SAID)

    def _observe_and(self, method: str, text: str) -> Any:
        """One thread hop for both: a composed agent may act inside its observe."""
        if text:
            self._agent.observe({"id": WORKER_ID, "text": text, "episode_done": False})
        return getattr(self._agent, method)()

    async def close(self) -> None:
        """Not waiting for the agent's `shutdown`: the bot's threads may all be busy (or hung),
        and ending a chat must not wait for them."""
        if self._agent is not None and callable(getattr(self._agent, "shutdown", None)):
            self._calls.call_later(self._agent.shutdown)
        self._agent = None


def _close(generator: Any) -> None:
    """A generator still running in another thread (a cut reply) cannot be closed; it ends
    by itself."""
    with contextlib.suppress(ValueError):
        generator.close()
