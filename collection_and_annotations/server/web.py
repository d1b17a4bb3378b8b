"""What every route shares: JSON answers and errors, the strict JSON body, and blocking work
run in the framework's thread pool."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from anyio import CapacityLimiter, to_thread
from anyio.lowlevel import RunVar
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from collection_and_annotations.engine.allocation import ClaimRefused
from collection_and_annotations.engine.review import ReviewRefused
from collection_and_annotations.engine.review_queue import QueueRefused
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.engine.work import RETRY_AFTER_S, WorkRefused
from collection_and_annotations.providers.base import IdentityRefused
from collection_and_annotations.server.json_input import InvalidJson, parse_json_object
from collection_and_annotations.storage.sql import waited_too_long

Endpoint = Callable[[Request], Awaitable[Response]]
# Requests of one server process whose blocking (database) work runs at once; more wait their
# turn in the event loop (conf: mephisto.architect.database_threads). A few: dozens of threads
# each in a transaction made PostgreSQL several times dearer per request (row locks skipped
# and waited on, WAL flushes queued) and kept rows locked while their threads waited for the
# interpreter (bench/RESULTS.md, issue 26).
DATABASE_THREADS = 4


class DatabaseThreads:
    """An app's bound on its blocking handlers running at once: `count` per event loop (a
    server process runs one; a test client may run one per request, and a limiter is bound to
    the loop it first waited in)."""

    def __init__(self, count: int = DATABASE_THREADS):
        self.count = count
        self._limiter = RunVar[CapacityLimiter]("database_threads")

    def limiter(self) -> CapacityLimiter:
        limiter = self._limiter.get(None)
        if limiter is None:
            limiter = CapacityLimiter(self.count)
            self._limiter.set(limiter)
        return limiter


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


def served(request: Request) -> ServedTask:
    return request.app.state.served


def blocking(handler: Callable[[Request], Response]) -> Endpoint:
    """A route whose work blocks (the database): the body is read in the event loop, then the
    handler runs in the framework's thread pool, at most `app.state.database_threads` at once
    (`json_body` reads the body there)."""

    async def endpoint(request: Request) -> Response:
        request.state.body = await request.body()
        return await to_thread.run_sync(handler, request,
                                        limiter=request.app.state.database_threads.limiter())

    return endpoint


def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, checked strictly (server/json_input.py), or the 400/422 that
    says why not."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() \
            != "application/json":
        raise WorkRefused("send the request body as JSON (Content-Type: application/json)", 400)
    return parse_json_object(request.state.body)


async def refused(_request: Request, exc: Exception) -> Response:
    """Errors the engine, the providers and the input checks raise, with their status; a
    step that waited too long on a lock says when to come back (Retry-After)."""
    if isinstance(exc, InvalidJson | IdentityRefused | ClaimRefused | ReviewRefused):
        return error(str(exc), exc.status)
    if isinstance(exc, QueueRefused):
        return error(str(exc), 400)
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
    **{kind: refused for kind in (WorkRefused, InvalidJson, IdentityRefused, ClaimRefused,
                                  ReviewRefused, QueueRefused)},
    Exception: server_error,
}


def abort(status: int, message: str) -> HTTPException:
    """`raise abort(400, "...")`: an error answer from anywhere in a handler."""
    return HTTPException(status, message)
