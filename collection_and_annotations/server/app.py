"""The application factory: one ASGI app (Starlette) for the worker page, the worker API, the
chat, and the requester API and dashboard."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.errors import UserError
from collection_and_annotations.server import (
    requester_api,
    requester_dashboard,
    requester_quals,
    requester_review,
    worker_api,
)
from collection_and_annotations.server.guard import Guard
from collection_and_annotations.server.requester_session import FailureLimit
from collection_and_annotations.server.security import HostCheck
from collection_and_annotations.server.web import (
    DATABASE_THREADS,
    EXCEPTION_HANDLERS,
    JSON,
    DatabaseThreads,
    error,
)

STATIC_DIR = Path(__file__).resolve().parent / "static"
# Hashed assets never change under their name; the pages name the current hashes.
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
GZIP_MIN_BYTES = 1024  # below this a response fits in a packet or two anyway


def check_frontend_built(static_dir: Path = STATIC_DIR) -> None:
    if not (static_dir / "index.html").is_file():
        raise UserError("the worker page is not built (no server/static/index.html); run "
                        "./setup.sh, or: cd frontend && npm ci && npm run build", static_dir)


def create_app(
    served_task: ServedTask, static_dir: Path = STATIC_DIR,
    allowed_hosts: Iterable[str] | None = None, relay_chat: bool = False,
    threads: int = DATABASE_THREADS,
) -> Starlette:
    """The app for one run; `allowed_hosts` (conf: mephisto.architect.allowed_hosts) adds host
    names to loopback and the public URL's host, e.g. a proxy's; `*` turns the check off.
    `relay_chat`: other processes or launchers serve the run too, so chat events go through
    PostgreSQL to their streams (server/chat/bus.py). `threads`: requests whose database work
    runs at once (conf: mephisto.architect.database_threads)."""
    routes: list[BaseRoute] = [
        Route("/api/health", health, methods=["GET"]),
        *worker_api.ROUTES, *requester_api.ROUTES, *requester_dashboard.ROUTES,
        *requester_review.ROUTES, *requester_quals.ROUTES,
    ]
    database_threads = DatabaseThreads(threads)
    chat = None
    if served_task.blueprint.chats:
        from collection_and_annotations.server.chat.app import Chat

        chat = Chat(served_task.db, served_task.secret, served_task.blueprint.rules,
                      served_task.blueprint.make_bots, relay=relay_chat,
                      threads=database_threads)
        routes += chat.routes()
    files = StaticFiles(directory=static_dir, check_dir=False)
    routes += [
        Route("/", page("index.html", files), methods=["GET"]),
        Route("/dashboard", page("dashboard.html", files), methods=["GET"]),
        Mount("/assets", HashedAssets(directory=static_dir / "assets", check_dir=False)),
    ]

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        if chat is not None:
            await chat.aclose()
        database_threads.close()  # after the chat's last steps

    hosts = HostCheck(served_task.provider.public_url, allowed_hosts)
    app = Starlette(routes=routes, exception_handlers=EXCEPTION_HANDLERS, lifespan=lifespan,
                    middleware=[Middleware(Guard, hosts=hosts), Middleware(CompressWhereItPays)])
    app.state.served = served_task
    app.state.database_threads = database_threads
    app.state.login_failures = FailureLimit()
    app.state.chat = chat
    return app


class CompressWhereItPays:
    """Starlette's GZipMiddleware for the pages, their assets and the requester's API (lists
    of submissions, reports), where answers are large and few; not for the worker API's and
    the chat's answers, small and many, where its responder per request cost CPU under load
    (bench/RESULTS.md, "Worker API load")."""

    def __init__(self, app: ASGIApp):
        self.plain = app
        self.compressed = GZipMiddleware(app, minimum_size=GZIP_MIN_BYTES, compresslevel=6)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if path.startswith("/api/") and not path.startswith(requester_api.PREFIX):
            return await self.plain(scope, receive, send)
        await self.compressed(scope, receive, send)


async def health(request: Request) -> Response:
    task = request.app.state.served
    return JSON({"ok": True, "task": task.task_name, "run_id": task.run_id})


def page(name: str, files: StaticFiles):  # type: ignore[no-untyped-def]
    """A page of the built frontend, revalidated on each visit (its ETag makes that a 304);
    a build older than the page has none."""

    async def endpoint(request: Request) -> Response:
        if not (Path(str(files.directory)) / name).is_file():
            return error(f"the page {name} is not built (no server/static/{name}); rebuild the "
                         "frontend: cd frontend && npm run build", 404)
        response = await files.get_response(name, request.scope)
        response.headers["Cache-Control"] = REVALIDATE
        return response

    return endpoint


class HashedAssets(StaticFiles):
    """The built assets, each named by its content's hash: a browser keeps them for good."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = IMMUTABLE
        return response
