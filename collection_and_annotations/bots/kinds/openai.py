"""OpenAI-compatible chat endpoints (vLLM, llama.cpp server, Ollama, hosted APIs): streamed
`POST {base_url}/chat/completions`, the key read from an environment variable at launch.

Retries (exponential backoff) cover connection errors and 429/5xx until the first piece; a
stream broken after that is BotUnavailable, since the worker already saw part of the reply.
An answer is read in bounded pieces: a line (or a whole JSON answer) far longer than the
bot's `max_reply_chars` could hold is a malformed answer, so an endpoint that never ends a
line cannot fill the server's memory.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from collection_and_annotations.bots.base import (
    NO_REPLY,
    NOTHING_SAID,
    TOO_SLOW,
    BotContext,
    BotUnavailable,
    Turn,
)
from collection_and_annotations.bots.kinds import BOT_KINDS
from collection_and_annotations.bots.model_opts import BotSpec

log = logging.getLogger(__name__)

RESERVED_PARAMS = {"model", "messages", "stream"}
MAX_CONNECTIONS = 1000  # chats streaming at once, per bot and process
MAX_BACKOFF = 8.0
CHECK_TIMEOUT = 5.0
CHECK_BODY_CHARS = 300  # of a refused check's answer, quoted in the launch warning
MIN_ANSWER_LIMIT = 1 << 20  # characters of one line of events (or a JSON answer) at least
_LINE_END = re.compile(r"\r\n|\r(?!$)|\n")  # a lone \r at the end may be half of \r\n


@dataclass(frozen=True)
class Completion:
    """A whole reply of `OpenAIBot.complete`: its text and the `usage` the endpoint reported
    (token counts, and `cost` where the endpoint tells it), None when it reported none."""

    text: str
    usage: dict[str, Any] | None


class CompletionFailed(Exception):
    """`complete` got no reply: why (the key redacted), and the HTTP status of a refusal
    (a 4xx other than 429; None when the endpoint stayed unreachable or busy)."""

    def __init__(self, reason: str, status: int | None = None):
        super().__init__(reason)
        self.status = status


class _Retry(Exception):
    """A failure before any piece: worth another try."""

    def __init__(self, reason: str, wait: float | None = None):
        super().__init__(reason)
        self.wait = wait


@BOT_KINDS.register("openai")
class OpenAIBot:
    keys = frozenset({"base_url", "model", "api_key_env", "system_prompt", "params", "timeout",
                      "retries", "backoff"})
    required = frozenset({"base_url", "model"})

    def __init__(self, nickname: str, options: dict[str, Any], api_key: str | None,
                 answer_limit: int = MIN_ANSWER_LIMIT):
        self.nickname = nickname
        self._answer_limit = answer_limit  # longest line of events or JSON answer read
        self._base_url = options["base_url"].rstrip("/")
        self._model: str = options["model"]
        self._system_prompt: str | None = options.get("system_prompt")
        self._params: dict[str, Any] = dict(options.get("params") or {})
        self._timeout = float(options.get("timeout", 30))
        self._retries = int(options.get("retries", 3))
        self._backoff = float(options.get("backoff", 0.5))
        self._api_key = api_key
        self._key_env: str | None = options.get("api_key_env")
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client: httpx.AsyncClient | None = None

    @classmethod
    def from_spec(cls, spec: BotSpec, context: BotContext) -> OpenAIBot:
        options = spec.options
        for key in ("base_url", "model"):
            if not isinstance(options[key], str) or not options[key]:
                raise spec.error(f"'{key}' must be a non-empty string", key)
        if not options["base_url"].startswith(("http://", "https://")):
            raise spec.error("'base_url' must start with http:// or https:// (e.g. "
                             "http://127.0.0.1:8000/v1)", "base_url")
        params = options.get("params") or {}
        if not isinstance(params, dict):
            raise spec.error("'params' must be a mapping (e.g. {temperature: 0.7})", "params")
        if reserved := RESERVED_PARAMS & params.keys():
            raise spec.error(f"'params' may not set {', '.join(sorted(reserved))}: the "
                             "platform sets them", "params")
        for key, low in (("timeout", 0.1), ("retries", 0), ("backoff", 0)):
            value = options.get(key, low)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
                raise spec.error(f"'{key}' must be a number of at least {low}", key)
        if not isinstance(options.get("system_prompt", ""), str):
            raise spec.error("'system_prompt' must be a string", "system_prompt")
        api_key = None
        if "api_key_env" in options:
            variable = options["api_key_env"]
            api_key = os.environ.get(variable) if isinstance(variable, str) else None
            if not api_key:
                raise spec.error(f"the environment variable {variable!r} named by 'api_key_env' "
                                 "is not set: export it before launching", "api_key_env")
        # JSON escapes a character in at most 6: a line holding a whole reply fits in this
        return cls(spec.nickname, options, api_key,
                   max(MIN_ANSWER_LIMIT, 8 * spec.limits.max_reply_chars))

    def settings(self) -> dict[str, Any]:
        prompt = self._system_prompt
        return {"type": "openai", "model": self._model, "params": dict(self._params),
                "system_prompt_sha256":
                    hashlib.sha256(prompt.encode()).hexdigest() if prompt else None}

    def session(self, conversation_id: str) -> OpenAISession:
        return OpenAISession(self)

    def client(self) -> httpx.AsyncClient:
        """Made on first use, inside the server's event loop; shared by all chats."""
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self._timeout, pool=None),
                limits=httpx.Limits(max_connections=MAX_CONNECTIONS,
                                    max_keepalive_connections=100))
        return self._client

    def messages(self, history: list[Turn]) -> list[dict[str, str]]:
        system = [{"role": "system", "content": self._system_prompt}] \
            if self._system_prompt else []
        return system + [{"role": "user" if turn.role == "worker" else "assistant",
                          "content": turn.text} for turn in history]

    async def stream(self, history: list[Turn]) -> AsyncIterator[str]:
        body = {**self._params, "model": self._model, "messages": self.messages(history),
                "stream": True}
        for attempt in range(self._retries + 1):
            try:
                async for piece in self._attempt(body):
                    yield piece
                return
            except _Retry as failure:  # raised only before the first piece
                if attempt == self._retries:
                    log.warning("bot %s: %s; giving up", self.nickname, failure)
                    raise BotUnavailable(NO_REPLY) from None
                wait = _backoff(failure, self._backoff, attempt)
                log.info("bot %s: %s; retrying in %.2fs", self.nickname, failure, wait)
                await asyncio.sleep(wait)

    async def _attempt(self, body: dict[str, Any]) -> AsyncIterator[str]:
        url = f"{self._base_url}/chat/completions"
        said = False
        try:
            async with self.client().stream("POST", url, json=body,
                                            headers=self._headers) as response:
                if response.status_code == 429 or response.status_code >= 500:
                    raise _Retry(f"HTTP {response.status_code}", _retry_after(response))
                if response.status_code >= 400:
                    detail = (await response.aread())[:500].decode(errors="replace")
                    log.warning("bot %s: HTTP %s: %s", self.nickname, response.status_code,
                                self._redact(detail))
                    raise BotUnavailable(NO_REPLY)
                if response.headers.get("content-type", "").startswith("application/json"):
                    pieces = _whole_reply(await _read_json(response, self._answer_limit))
                else:
                    pieces = _sse_pieces(_lines(response.aiter_text(), self._answer_limit))
                async for piece in pieces:
                    said = True
                    yield piece
        except httpx.TimeoutException as exc:
            log.warning("bot %s: %s", self.nickname, type(exc).__name__)
            if isinstance(exc, httpx.ConnectTimeout) and not said:
                raise _Retry("connect timeout") from None
            raise BotUnavailable(TOO_SLOW) from None
        except httpx.TransportError as exc:
            if not said:
                raise _Retry(f"{type(exc).__name__}: {exc}") from None
            log.warning("bot %s: stream broken: %s", self.nickname, type(exc).__name__)
            raise BotUnavailable(NO_REPLY) from None
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            log.warning("bot %s: malformed answer: %s", self.nickname, exc)
            raise BotUnavailable(NO_REPLY) from None
        if not said:
            raise BotUnavailable(NOTHING_SAID)

    def _redact(self, text: str) -> str:
        """A server's error may quote the key it refused."""
        return text.replace(self._api_key, "***") if self._api_key else text

    async def check(self) -> str | None:
        try:
            response = await self.client().get(f"{self._base_url}/models",
                                               headers=self._headers,
                                               timeout=min(self._timeout, CHECK_TIMEOUT))
        except httpx.HTTPError as exc:
            return f"{self._base_url} is unreachable ({type(exc).__name__}); chats will " \
                   "retry it"
        if 400 <= response.status_code < 500:  # a wrong key is 401, 403, or 400 (LiteLLM)
            said = " ".join(self._redact(response.text).split())[:CHECK_BODY_CHARS]
            hint = (f"is the key in {self._key_env} right?" if self._key_env else
                    "the spec sends no key (api_key_env): does the endpoint need one?")
            return f"{self._base_url}/models answered HTTP {response.status_code}: {said} ({hint})"
        if response.status_code >= 500:
            return f"{self._base_url} answers HTTP {response.status_code}"
        return None

    async def complete(self, messages: list[dict[str, str]],
                       response_format: dict[str, Any] | None = None) -> Completion:
        """One whole reply, not streamed, to `messages` as given (the spec's system prompt is
        not added), with `response_format` when given: for callers that want JSON (LLM
        judges). Connection errors, 429 and 5xx are retried as `stream` retries them."""
        body = {**self._params, "model": self._model, "messages": messages, "stream": False}
        if response_format is not None:
            body["response_format"] = response_format
        for attempt in range(self._retries + 1):
            try:
                response = await self.client().post(f"{self._base_url}/chat/completions",
                                                    json=body, headers=self._headers)
            except httpx.TransportError as exc:
                failure = _Retry(type(exc).__name__)
            else:
                if response.status_code == 429 or response.status_code >= 500:
                    failure = _Retry(f"HTTP {response.status_code}", _retry_after(response))
                elif response.status_code >= 400:
                    raise CompletionFailed(f"HTTP {response.status_code}: "
                                           f"{self._redact(response.text[:500])}",
                                           response.status_code)
                else:
                    return _completion(response)
            if attempt == self._retries:
                raise CompletionFailed(f"{failure} after {attempt + 1} tries")
            await asyncio.sleep(_backoff(failure, self._backoff, attempt))
        raise AssertionError("the loop returns or raises")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def __repr__(self) -> str:
        return f"OpenAIBot({self.nickname!r}, model={self._model!r})"


class OpenAISession:
    """Stateless: the whole history goes with every request."""

    def __init__(self, bot: OpenAIBot):
        self._bot = bot

    def reply(self, history: list[Turn]) -> AsyncIterator[str]:
        return self._bot.stream(history)

    async def close(self) -> None:
        return None


async def _lines(chunks: AsyncIterator[str], limit: int) -> AsyncIterator[str]:
    """The lines of a text stream (ended by CRLF, LF or CR, as server-sent events are); a line
    longer than `limit` characters is a malformed answer (ValueError)."""
    pending = ""
    async for chunk in chunks:
        *lines, pending = _LINE_END.split(pending + chunk)
        if len(pending) > limit:
            raise ValueError(f"a line of the answer is over {limit} characters")
        for line in lines:
            yield line
    if pending:
        yield pending.rstrip("\r")


async def _read_json(response: httpx.Response, limit: int) -> Any:
    """A whole JSON answer, at most `limit` bytes."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            raise ValueError(f"the answer is over {limit} bytes")
    return json.loads(body)


async def _sse_pieces(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """Server-sent events: `data: {...}` lines until `data: [DONE]` (or the end)."""
    async for line in lines:
        if not line.startswith("data:"):
            continue  # blank separators, `: keep-alive` comments, `event:` lines
        data = line[5:].strip()
        if data == "[DONE]":
            return
        if content := _content(json.loads(data), "delta"):
            yield content


async def _whole_reply(answer: Any) -> AsyncIterator[str]:
    """A server that ignores `stream: true` answers with one JSON object."""
    if content := _content(answer, "message"):
        yield content


def _content(event: Any, part: str) -> str:
    """`choices[0][part].content` of an event or answer: text, or "" when it has none.
    Anything else (an error event, content that is an object or a number) is a malformed
    answer (ValueError)."""
    if not isinstance(event, dict):
        raise ValueError(f"an event that is a {type(event).__name__}, not an object")
    if "error" in event:
        raise ValueError(f"error event: {str(event['error'])[:200]}")
    choices = event.get("choices") or [{}]
    choice = choices[0] if isinstance(choices, list) else None
    said = (choice.get(part) or {}) if isinstance(choice, dict) else None
    if not isinstance(said, dict):
        raise ValueError(f"'choices' holds no {part} object")
    content = said.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError(f"content that is a {type(content).__name__}, not text")
    return content or ""


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers.get("retry-after", "")))
    except ValueError:
        return None


def _completion(response: httpx.Response) -> Completion:
    """The text and usage of a whole chat-completions answer."""
    try:
        answer = response.json()
        message = answer["choices"][0]["message"]
        text = message.get("content") or ""
        if not isinstance(text, str):
            raise TypeError(f"content that is a {type(text).__name__}, not text")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise CompletionFailed(f"malformed answer: {type(exc).__name__}: {exc}"[:300]) from None
    usage = answer.get("usage")
    return Completion(text, usage if isinstance(usage, dict) else None)


def _backoff(failure: _Retry, base: float, attempt: int) -> float:
    """Seconds before the next try: what the endpoint asked for, else exponential."""
    return min(failure.wait if failure.wait is not None else base * 2 ** attempt, MAX_BACKOFF)
