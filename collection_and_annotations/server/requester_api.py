"""Requester API: progress of runs, submissions as JSON, JSONL or CSV, and the sign-in of the
dashboard. Every route needs the requester token as a bearer header (scripts) or the session
cookie the dashboard got for it (server/requester_session.py, docs/dashboard.md)."""

from __future__ import annotations

import io
import secrets

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from collection_and_annotations.engine.dashboard import runs
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.export.submissions import whole_submissions
from collection_and_annotations.export.writers import csv_option_columns, json_safe, write_export
from collection_and_annotations.quality.stats import task_outcomes, worker_outcomes
from collection_and_annotations.server.auth import bearer, requester_token, same_secret
from collection_and_annotations.server.requester_session import (
    COOKIE,
    CSRF_HEADER,
    SAFE_METHODS,
    SESSION_SECONDS,
    cookie_options,
    csrf_token,
    new_session,
    session_is_open,
    sign_out,
    valid_csrf,
)
from collection_and_annotations.server.web import (
    JSON,
    Endpoint,
    Handler,
    abort,
    blocking,
    error,
    json_body,
)
from collection_and_annotations.storage.models import Unit

PREFIX = "/api/requester"
# ?format= -> (export kind, media type, file suffix)
DOWNLOADS = {
    "jsonl": ("submissions", "application/x-ndjson", "jsonl"),
    "items-jsonl": ("items-jsonl", "application/x-ndjson", "items.jsonl"),
    "csv": ("items-csv", "text/csv", "csv"),
}


def _refusal(request: Request, task: ServedTask) -> Response | None:
    """The token travels only in a header: a query string ends up in logs and browser history.
    A cookie request that changes state needs the session's CSRF token too: another site's
    page can make the browser send the cookie, but cannot read the token."""
    given = bearer(request.headers.get("Authorization"))
    if given is not None:
        return None if same_secret(given, requester_token(task.secret)) else error(
            "requester token wrong: send the token printed at start as "
            "'Authorization: Bearer <token>'", 401)
    cookie = request.cookies.get(COOKIE)
    if session_is_open(task.db, task.secret, cookie):
        if request.method in SAFE_METHODS or valid_csrf(task.secret, cookie or "",
                                                        request.headers.get(CSRF_HEADER)):
            return None
        return error(f"the {CSRF_HEADER} header is missing or wrong: send the csrf_token "
                     "that GET /api/requester/session returns (reload the dashboard)", 403)
    if cookie:
        return error("the dashboard session has expired or is no longer valid: sign in "
                     "again with the requester token printed at start", 401)
    hint = " (not as ?token=)" if "token" in request.query_params else ""
    return error("requester token missing: send the token printed at start as "
                 f"'Authorization: Bearer <token>'{hint}, or sign in on /dashboard", 401)


def requester(handler: Handler) -> Endpoint:
    """A requester route: its handler runs in the thread pool once the token, or the session
    cookie (with its CSRF token for a change), is checked."""

    def checked(request: Request, task: ServedTask) -> Response:
        return _refusal(request, task) or handler(request, task)

    return blocking(checked)


def attachment(content: str, media_type: str, filename: str) -> Response:
    """A download the browser saves as `filename`."""
    return Response(content, media_type=media_type,
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@blocking
def open_session(request: Request, task: ServedTask) -> Response:
    """`{"token": "<requester token>"}` -> the session cookie and its CSRF token. The right
    token is always let in: wrong ones from an address are limited (anyone could otherwise
    lock the requester out, and behind a proxy every client shares one address)."""
    client = request.client.host if request.client else "?"
    failures = request.app.state.login_failures
    token = json_body(request).get("token")
    if not isinstance(token, str) or not token or not same_secret(
            token.strip(), requester_token(task.secret)):
        if failures.blocked(client):
            return error("too many wrong tokens from this address: wait a minute and try "
                         "again", 429)
        failures.failed(client)
        return error("wrong requester token: copy the token the server printed at start "
                     "(the line '  token: ...' under 'requester API')", 401)
    session = new_session(task.secret)
    response = JSON({"task": task.task_name, "csrf_token": csrf_token(task.secret, session)})
    response.set_cookie(COOKIE, session, max_age=SESSION_SECONDS,
                        **cookie_options(task.provider.public_url))
    return response


@blocking
def read_session(request: Request, task: ServedTask) -> Response:
    """The signed-in session (the page asks on load); with a bearer token there is none."""
    cookie = request.cookies.get(COOKIE)
    if not session_is_open(task.db, task.secret, cookie):
        return error("no dashboard session: sign in with the requester token", 401)
    return JSON({"task": task.task_name, "csrf_token": csrf_token(task.secret, cookie or "")})


@requester
def close_session(request: Request, task: ServedTask) -> Response:
    """Sign out: the cookie is cleared here and refused from now on, wherever it is sent."""
    sign_out(task.db, task.secret, request.cookies.get(COOKIE))
    response = JSON({"ok": True})
    response.delete_cookie(COOKIE, **cookie_options(task.provider.public_url))  # as set
    return response


@requester
def progress(request: Request, task: ServedTask) -> Response:
    with task.db.read() as session:
        shown_runs = runs(session, task.task_id, Unit.status)
        overall = task_outcomes(session, task.task_id)
        workers = worker_outcomes(session, task.task_id)
    return JSON({
        "task": task.task_name,
        "current_run": task.run_id,
        "runs": shown_runs,
        "quality": {**overall.as_json(),
                    "workers": {name: o.as_json() for name, o in workers.items()}},
    })


@requester
def submissions(request: Request, task: ServedTask) -> Response:
    fmt = request.query_params.get("format", "json")
    exclude = request.query_params.get("exclude", "")
    if exclude not in ("", "quality"):
        raise abort(400, "exclude must be quality (leave out screening and gold units)")
    include = request.query_params.get("include", "")
    if include not in ("", "judges"):
        raise abort(400, "include must be judges (add the answers of LLM judges)")
    records = whole_submissions(task.db, task.task_name, exclude_quality=bool(exclude),
                                judges="with" if include else "without")
    if fmt == "json":
        return JSON({"task": task.task_name,
                     "submissions": [json_safe(r) for r, _ in records]})
    if fmt not in DOWNLOADS:
        raise abort(400, "format must be json, jsonl, items-jsonl or csv")
    kind, media_type, suffix = DOWNLOADS[fmt]
    out = io.StringIO()
    columns = csv_option_columns(task.db, task.task_name) if kind == "items-csv" else ()
    write_export(records, kind, out, columns)
    return attachment(out.getvalue(), media_type, f"{task.task_name}-submissions.{suffix}")


@requester
def links(request: Request, task: ServedTask) -> Response:
    """Worker links for in-house workers (signed when the server is reachable from outside)."""
    worker = request.query_params.get("worker_id", "")
    count = request.query_params.get("n", "1")
    if not worker or not count.isdigit() or not 1 <= int(count) <= 100:
        raise abort(400, "give worker_id and n (1-100)")
    provider = task.provider
    return JSON({"links": [provider.link(worker, secrets.token_hex(4))
                           for _ in range(int(count))]})


ROUTES = [
    Route(f"{PREFIX}/session", open_session, methods=["POST"]),
    Route(f"{PREFIX}/session", read_session, methods=["GET"]),
    Route(f"{PREFIX}/session", close_session, methods=["DELETE"]),
    Route(f"{PREFIX}/progress", progress, methods=["GET"]),
    Route(f"{PREFIX}/submissions", submissions, methods=["GET"]),
    Route(f"{PREFIX}/links", links, methods=["GET"]),
]
