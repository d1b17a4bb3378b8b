"""What every route shares: JSON answers and errors, the strict JSON body, and blocking work
run in the app's database threads."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.engine.work import RETRY_AFTER_S, WorkRefused
from collection_and_annotations.providers.base import IdentityRefused
from collection_and_annotations.server.json_input import parse_json_object
from collection_and_annotations.storage.sql import waited_too_long

Endpoint = Callable[[Request], Awaitable[Response]]
Handler = Callable[[Request, ServedTask], Response]  # a blocking route's work
T = TypeVar("T")
# Requests of one server process whose blocking (database) work runs at once; more wait their
# turn in the event loop (conf: mephisto.architect.database_threads). A few: dozens of threads
# each in a transaction made PostgreSQL several times dearer per request (row locks skipped
# and waited on, WAL flushes queued) and kept rows locked while their threads waited for the
# interpreter (bench/RESULTS.md, "Worker API load").
DATABASE_THREADS = 4


class DatabaseThreads:
    """An app's threads for its blocking handlers, `count` of them; requests beyond wait their
    turn in the pool's queue with no thread nor connection. A plain executor: anyio's hop
    into its thread pool, with a capacity limiter in front, cost half as much CPU again
    (bench/RESULTS.md, "Worker API load"). Made in the process that uses it: a process forked
    from one that had used it (a preloaded app's server processes) makes its own, since a
    fork keeps no thread."""

    def __init__(self, count: int = DATABASE_THREADS):
        self.count = count
        self._pool: ThreadPoolExecutor | None = None
        self._pid = 0  # the process the pool's threads run in
        self._made = threading.Lock()

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` on one of the threads, once one is free."""
        if self._pool is None or self._pid != os.getpid():
            with self._made:
                if self._pool is None or self._pid != os.getpid():
                    self._pool, self._pid = ThreadPoolExecutor(self.count, "database"), os.getpid()
        return await asyncio.get_running_loop().run_in_executor(self._pool, function, *args)

    def close(self) -> None:
        """Let the threads end once their work is done (the app's end)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)


class JSON(JSONResponse):
    """A JSON answer in ASCII: text from data files and bots may hold characters (lone
    surrogates) that UTF-8 cannot carry."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":")).encode()


def error(message: str, status: int, problems: list[dict[str, Any]] | None = None,
          headers: dict[str, str] | None = None) -> JSON:
    """The error format of every route: `{"error": ..., "problems": [...]}`."""
    body: dict[str, Any] = {"error": message}
    if problems is not None:
        body["problems"] = problems
    return JSON(body, status, headers)


def blocking(handler: Handler) -> Endpoint:
    """A route whose work blocks (the database): the body is read in the event loop, then the
    handler runs with the served task in the app's database threads
    (`app.state.database_threads`; `json_body` reads the body there)."""

    async def endpoint(request: Request) -> Response:
        request.state.body = await request.body()
        state = request.app.state
        return await state.database_threads.run(handler, request, state.served)

    return endpoint


def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, checked strictly (server/json_input.py), or the 400/422 that
    says why not."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() \
            != "application/json":
        raise WorkRefused("send the request body as JSON (Content-Type: application/json)", 400)
    return parse_json_object(request.state.body)


async def refused(_request: Request, exc: Exception) -> Response:
    """Errors the engine (and the input checks, a kind of WorkRefused) and the providers
    raise, with their status; a step that waited too long on a lock says when to come back
    (Retry-After)."""
    if isinstance(exc, IdentityRefused):
        return error(str(exc), exc.status)
    assert isinstance(exc, WorkRefused)
    return error(str(exc), exc.status, exc.problems,
                 None if exc.retry_after is None else {"Retry-After": str(exc.retry_after)})


async def database_error(_request: Request, exc: Exception) -> Response:
    """A request of any route (the requester's too) that waited past the lock timeout for a
    lock another transaction holds is told to come back; any other database error is a 500,
    logged."""
    if isinstance(exc, DBAPIError) and waited_too_long(exc):
        return error("the task is busy with another request; try again in a moment", 503,
                     headers={"Retry-After": str(RETRY_AFTER_S)})
    raise exc


async def http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error(exc.detail, exc.status_code, headers=exc.headers)


async def server_error(_request: Request, _exc: Exception) -> Response:
    return error("the server met an internal error; it is logged, try again", 500)


EXCEPTION_HANDLERS: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    HTTPException: http_error,
    DBAPIError: database_error,
    WorkRefused: refused,
    IdentityRefused: refused,
    Exception: server_error,
}


def abort(status: int, message: str) -> HTTPException:
    """`raise abort(400, "...")`: an error answer from anywhere in a handler."""
    return HTTPException(status, message)
