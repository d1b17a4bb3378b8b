"""A bot behind a command: one process per bot, shared by all its chats, speaking JSON lines
on stdin/stdout (the protocol is in docs/bots.md).

The process starts with the first reply and again after it died. Every request carries the
whole history, so a stateless script is enough and a restart loses nothing. A request with no
line for `timeout` seconds fails, and if the process said nothing at all meanwhile it is
killed as hung; its stderr goes to the log. With `concurrent_requests: N` the process is given
at most N requests at once and the others wait here, so a request given up while it waits is
never sent; a process that said it takes cancels is told of each request given up after it
was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import shlex
import shutil
from collections import OrderedDict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, NoReturn

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

LINE_LIMIT = 1 << 20  # longest line read from the process
ABANDONED_KEPT = 1000  # given-up requests whose late lines are still recognised


class _Failed:
    """Put in a waiting request's queue when its process died or spoke nonsense to it."""

    def __init__(self, reason: str):
        self.reason = reason


_Queue = asyncio.Queue[dict[str, Any] | _Failed]


@BOT_KINDS.register("command")
class CommandBot:
    keys = frozenset({"command", "timeout", "cwd", "concurrent_requests"})
    required = frozenset({"command"})

    def __init__(self, nickname: str, argv: list[str], cwd: Path, timeout: float,
                 concurrent_requests: int | None = None):
        self.nickname, self._argv, self._cwd, self._timeout = nickname, argv, cwd, timeout
        # requests the process is given at once (None: all); the others wait, in order
        self._sent_at_once = asyncio.Semaphore(concurrent_requests) \
            if concurrent_requests else None
        self._process: asyncio.subprocess.Process | None = None
        self._takes_cancels: asyncio.subprocess.Process | None = None  # said so in its hello
        self._tasks: list[asyncio.Task[None]] = []
        self._starting: asyncio.Lock | None = None
        # request id -> (the process it was sent to, where its lines go)
        self._pending: dict[str, tuple[asyncio.subprocess.Process, _Queue]] = {}
        # requests given up before their last line (cut, timed out, an early turn cancelled):
        # the lines still coming for them are dropped quietly
        self._abandoned: OrderedDict[str, None] = OrderedDict()
        self._ids = itertools.count(1)
        self._last_line = 0.0

    @classmethod
    def from_spec(cls, spec: BotSpec, context: BotContext) -> CommandBot:
        command = spec.options["command"]
        argv = shlex.split(command) if isinstance(command, str) else command
        if not argv or not all(isinstance(word, str) for word in argv):
            raise spec.error("'command' must be a list of strings (or one string), e.g. "
                             "[python, bot.py]", "command")
        cwd = Path(spec.source.path).resolve().parent / str(spec.options.get("cwd", "."))
        if not cwd.is_dir():
            raise spec.error(f"'cwd' {cwd} is not a folder", "cwd")
        program = argv[0]
        if "/" in program and not (cwd / program).is_file() or \
                "/" not in program and shutil.which(program) is None:
            raise spec.error(f"command '{program}' not found (relative paths start from "
                             f"{cwd})", "command")
        timeout = spec.options.get("timeout", 30)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise spec.error("'timeout' must be a positive number of seconds", "timeout")
        concurrent = spec.options.get("concurrent_requests")
        if concurrent is not None and (isinstance(concurrent, bool) or
                                       not isinstance(concurrent, int) or concurrent < 1):
            raise spec.error("'concurrent_requests' is how many requests the process is given "
                             "at once: a whole number of at least 1 (1 for a script that "
                             "answers one request at a time)", "concurrent_requests")
        return cls(spec.nickname, list(argv), cwd, float(timeout), concurrent)

    def settings(self) -> dict[str, Any]:
        return {"type": "command", "command": list(self._argv)}

    def session(self, conversation_id: str) -> CommandSession:
        return CommandSession(self, conversation_id)

    async def check(self) -> str | None:
        return None

    async def request(self, session: str, history: list[Turn]) -> AsyncIterator[str]:
        async with self._sent_at_once or contextlib.nullcontext():
            process = await self._running()
            request_id = str(next(self._ids))
            queue: _Queue = asyncio.Queue()
            self._pending[request_id] = process, queue
            over = False  # the process sent the request's last line, or can send no more
            try:
                await self._send(process, {"id": request_id, "session": session, "history": [
                    {"role": turn.role, "text": turn.text} for turn in history]})
                said = False
                while True:
                    message = await self._next(process, queue)
                    if isinstance(message, _Failed) or "error" in message:
                        over = True
                        self._report(message)
                    if "piece" in message:
                        piece = _text(message, "piece")
                        said = said or bool(piece)
                        if piece:
                            yield piece
                    elif "text" in message:
                        over = True
                        text = _text(message, "text")
                        if text:
                            yield text
                        elif not said:
                            raise BotUnavailable(NOTHING_SAID)
                        return
                    elif message.get("done") is True:
                        over = True
                        if not said:
                            raise BotUnavailable(NOTHING_SAID)
                        return
                    else:
                        log.warning("bot %s: %s", self.nickname, _describe(message))
                        raise BotUnavailable(NO_REPLY)
            finally:
                if self._pending.pop(request_id, None) is not None and not over:
                    self._give_up(process, request_id)

    def _give_up(self, process: asyncio.subprocess.Process, request_id: str) -> None:
        """A request the platform gave up before its last line (cut, timed out, a cancelled
        early turn): its late lines are dropped quietly, and a process that takes cancels is
        told to stop working on it."""
        self._abandoned[request_id] = None
        while len(self._abandoned) > ABANDONED_KEPT:
            self._abandoned.popitem(last=False)
        if self._takes_cancels is process:
            self._write(process, {"id": request_id, "type": "cancel"})

    async def _next(self, process: asyncio.subprocess.Process,
                    queue: _Queue) -> dict[str, Any] | _Failed:
        try:
            return await asyncio.wait_for(queue.get(), self._timeout)
        except TimeoutError:
            loop = asyncio.get_running_loop()
            if process.returncode is None and loop.time() - self._last_line >= self._timeout:
                log.warning("bot %s: no output for %ss; killing it as hung", self.nickname,
                            self._timeout)
                self._forget(process)
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            raise BotUnavailable(TOO_SLOW) from None

    def _report(self, message: dict[str, Any] | _Failed) -> NoReturn:
        """A request's failure (its process died or spoke nonsense, or it reported an error):
        logged, and the turn is unavailable."""
        if isinstance(message, _Failed):
            log.warning("bot %s: %s", self.nickname, message.reason)
        else:
            log.warning("bot %s: reported error: %s", self.nickname,
                        str(message["error"])[:500])
        raise BotUnavailable(NO_REPLY)

    async def _running(self) -> asyncio.subprocess.Process:
        """The process, started (again) if it is not running."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._process is not None and self._process.returncode is None:
                return self._process
            try:
                process = await asyncio.create_subprocess_exec(
                    *self._argv, cwd=self._cwd, limit=LINE_LIMIT, stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            except OSError as exc:
                log.error("bot %s: cannot start %s: %s", self.nickname, self._argv, exc)
                raise BotUnavailable(NO_REPLY) from None
            log.info("bot %s: started %s (pid %s)", self.nickname, self._argv, process.pid)
            self._process = process
            self._last_line = asyncio.get_running_loop().time()
            self._tasks = [asyncio.create_task(self._read(process)),
                           asyncio.create_task(self._forward_stderr(process))]
            return process

    async def _send(self, process: asyncio.subprocess.Process, message: dict[str, Any]) -> None:
        assert process.stdin is not None
        try:
            process.stdin.write((json.dumps(message) + "\n").encode())
            await process.stdin.drain()
        except (ConnectionError, RuntimeError) as exc:
            log.warning("bot %s: cannot write to its process: %s", self.nickname, exc)
            raise BotUnavailable(NO_REPLY) from None

    def _write(self, process: asyncio.subprocess.Process, message: dict[str, Any]) -> None:
        """A line that needs no answer (end, cancel), not waiting for the process to read it:
        a process that stopped reading must not hold the chat that sends it."""
        assert process.stdin is not None
        with contextlib.suppress(ConnectionError, RuntimeError):
            process.stdin.write((json.dumps(message) + "\n").encode())

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        try:
            while True:
                try:
                    line = await process.stdout.readline()
                except ValueError:  # longer than LINE_LIMIT: skipped
                    log.warning("bot %s: an output line over %s bytes was dropped",
                                self.nickname, LINE_LIMIT)
                    continue
                if not line:
                    break
                self._last_line = asyncio.get_running_loop().time()
                self._dispatch(process, line)
        finally:
            self._forget(process)
            for sent_to, queue in list(self._pending.values()):
                if sent_to is process:
                    queue.put_nowait(_Failed("its process ended"))
        try:
            code = await asyncio.wait_for(process.wait(), 1)
        except TimeoutError:  # closed its output but lives on: useless, so ended
            process.kill()
            code = await process.wait()
        log.log(logging.INFO if code == 0 else logging.WARNING,
                "bot %s: its process exited with code %s", self.nickname, code)

    def _dispatch(self, process: asyncio.subprocess.Process, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("type") == "hello":
            accepts = message.get("accepts")
            if isinstance(accepts, list) and "cancel" in accepts:
                self._takes_cancels = process
            return
        request = message.get("id") if isinstance(message, dict) else None
        pending = self._pending.get(request) if isinstance(request, str) else None
        if pending is not None:
            pending[1].put_nowait(message)  # type: ignore[arg-type]
            return
        if request in self._abandoned:
            if "text" in message or "error" in message or message.get("done") is True:
                del self._abandoned[request]
            return
        shown = line[:200].decode(errors="replace").rstrip()
        if message is None and len(self._pending) == 1:  # it can only be that request's
            next(iter(self._pending.values()))[1].put_nowait(_Failed(f"not JSON: {shown!r}"))
        else:
            log.warning("bot %s: a line for no waiting request: %r", self.nickname, shown)

    def _forget(self, process: asyncio.subprocess.Process) -> None:
        """The next request starts a new process."""
        if self._process is process:
            self._process = None

    async def _forward_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        while line := await process.stderr.readline():
            log.warning("bot %s stderr: %s", self.nickname,
                        line.decode(errors="replace").rstrip())

    async def end(self, session: str) -> None:
        """Tell a running process a conversation is over (never starts one for that)."""
        process = self._process
        if process is not None and process.returncode is None:
            self._write(process, {"session": session, "type": "end"})

    async def aclose(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 2)
            except TimeoutError:
                process.kill()
                await process.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def __repr__(self) -> str:
        return f"CommandBot({self.nickname!r}, {self._argv!r})"


class CommandSession:
    def __init__(self, bot: CommandBot, conversation_id: str):
        self._bot, self._conversation_id = bot, conversation_id

    def reply(self, history: list[Turn]) -> AsyncIterator[str]:
        return self._bot.request(self._conversation_id, history)

    async def close(self) -> None:
        await self._bot.end(self._conversation_id)


def _text(message: dict[str, Any], key: str) -> str:
    value = message[key]
    if not isinstance(value, str):
        log.warning("'%s' is not a string in %s", key, _describe(message))
        raise BotUnavailable(NO_REPLY)
    return value


def _describe(message: dict[str, Any]) -> str:
    return f"unexpected message {json.dumps(message)[:200]}"
