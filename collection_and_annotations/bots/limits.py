"""How long and how large a bot's reply may be, per bot (`reply_timeout`, `max_reply_chars`
in model_opts.yaml): a bot that hangs, or streams forever, cannot hold a chat. The chat runner
cuts a reply over either and offers the worker Try again (docs/bots.md)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from collection_and_annotations.bots.base import BotUnavailable
from collection_and_annotations.errors import UserError

DEFAULT_REPLY_TIMEOUT = 120.0  # seconds from the worker's message to the reply's last piece
DEFAULT_MAX_REPLY_CHARS = 10_000
LIMIT_KEYS = frozenset({"reply_timeout", "max_reply_chars"})
TOO_SLOW = "Your partner took too long to answer. Press Try again to ask again."
TOO_LONG = ("Your partner's reply was too long and was cut off. Press Try again to ask "
            "again.")
NOT_TEXT = "Your partner's reply could not be read. Press Try again to ask again."


class ReplyCut(BotUnavailable):
    """A reply over its bot's limits: the worker is told `message`, the log `reason`."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class ReplyLimits:
    reply_timeout: float = DEFAULT_REPLY_TIMEOUT
    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS

    @classmethod
    def of(cls, options: Mapping[str, Any],
           error: Callable[[str, str], UserError]) -> ReplyLimits:
        """The limits a spec mapping sets; `error(reason, key)` names the spec's line."""
        timeout = options.get("reply_timeout", DEFAULT_REPLY_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or \
                not 0 < timeout <= 86_400:
            raise error("'reply_timeout' is the seconds a reply may take in all, more than 0 "
                        "and at most 86400 (default 120)", "reply_timeout")
        chars = options.get("max_reply_chars", DEFAULT_MAX_REPLY_CHARS)
        if isinstance(chars, bool) or not isinstance(chars, int) or chars < 1:
            raise error("'max_reply_chars' is the longest reply in characters, a whole number "
                        "of at least 1 (default 10000)", "max_reply_chars")
        return cls(float(timeout), chars)

    @asynccontextmanager
    async def deadline(self) -> AsyncIterator[None]:
        """The block is cut (cancelled) after `reply_timeout` seconds: ReplyCut."""
        try:
            async with asyncio.timeout(self.reply_timeout):
                yield
        except TimeoutError:
            raise ReplyCut(TOO_SLOW, f"its reply took over reply_timeout ({self.reply_timeout:g}"
                                     " s) and was cut") from None

    def check(self, piece: object, length: int) -> int:
        """The reply's length with `piece` added (`length` so far); ReplyCut when the piece is
        not text or the reply grows past `max_reply_chars`."""
        if not isinstance(piece, str):
            raise ReplyCut(NOT_TEXT, f"a piece of its reply is a {type(piece).__name__}, not "
                                     "text")
        length += len(piece)
        if length > self.max_reply_chars:
            raise ReplyCut(TOO_LONG, f"its reply grew over max_reply_chars "
                                     f"({self.max_reply_chars}) and was cut")
        return length
