"""Requester API: progress of runs, submissions as JSON, JSONL or CSV, and the sign-in of the
dashboard. Every route needs the requester token as a bearer header (scripts) or the session
cookie the dashboard got for it (server/requester_session.py, docs/dashboard.md)."""

from __future__ import annotations

import io
import secrets
from typing import Any

from flask import Blueprint, Response, abort, current_app, jsonify, request
from flask.typing import ResponseReturnValue
from sqlalchemy import func, select

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.export.submissions import (
    whole_submissions,
)
from collection_and_annotations.export.writers import json_safe, write_export
from collection_and_annotations.quality.stats import task_outcomes, worker_outcomes
from collection_and_annotations.server.auth import bearer, requester_token, same_secret
from collection_and_annotations.server.json_input import InvalidJson, parse_json_object
from collection_and_annotations.server.requester_session import (
    COOKIE,
    CSRF_HEADER,
    SAFE_METHODS,
    SESSION_SECONDS,
    FailureLimit,
    cookie_options,
    csrf_token,
    new_session,
    session_is_open,
    sign_out,
    valid_csrf,
)
from collection_and_annotations.storage.models import TaskRun, Unit, iso_utc

requester_api = Blueprint("requester_api", __name__, url_prefix="/api/requester")
# ?format= -> (export kind, media type, file suffix)
DOWNLOADS = {
    "jsonl": ("submissions", "application/x-ndjson", "jsonl"),
    "items-jsonl": ("items-jsonl", "application/x-ndjson", "items.jsonl"),
    "csv": ("items-csv", "text/csv", "csv"),
}


def _served() -> ServedTask:
    return current_app.config["SERVED_TASK"]


def json_body() -> dict[str, Any]:
    """A requester request's JSON object body, checked strictly (server/json_input.py), or
    the 400/422 that says why not."""
    if not request.is_json:
        abort(400, "send the request body as JSON (Content-Type: application/json)")
    try:
        return parse_json_object(request.get_data(cache=False))
    except InvalidJson as exc:
        abort(exc.status, str(exc))


def _error(message: str, status: int) -> ResponseReturnValue:
    return jsonify({"error": message}), status


def _token_matches(given: str) -> bool:
    return same_secret(given, requester_token(_served().secret))


@requester_api.before_request
def _require_token() -> ResponseReturnValue | None:
    """The token travels only in a header: a query string ends up in logs and browser history.
    A cookie request that changes state needs the session's CSRF token too: another site's
    page can make the browser send the cookie, but cannot read the token."""
    if request.endpoint == "requester_api.open_session":
        return None  # it carries the token itself
    given = bearer(request.headers.get("Authorization"))
    if given is not None:
        return None if _token_matches(given) else _error(
            "requester token wrong: send the token printed at start as "
            "'Authorization: Bearer <token>'", 401)
    served, cookie = _served(), request.cookies.get(COOKIE)
    secret = served.secret
    if session_is_open(served.db, secret, cookie):
        if request.method in SAFE_METHODS or valid_csrf(secret, cookie,
                                                        request.headers.get(CSRF_HEADER)):
            return None
        return _error(f"the {CSRF_HEADER} header is missing or wrong: send the csrf_token "
                      "that GET /api/requester/session returns (reload the dashboard)", 403)
    if cookie:
        return _error("the dashboard session has expired or is no longer valid: sign in "
                      "again with the requester token printed at start", 401)
    hint = " (not as ?token=)" if "token" in request.args else ""
    return _error("requester token missing: send the token printed at start as "
                  f"'Authorization: Bearer <token>'{hint}, or sign in on /dashboard", 401)


def _login_failures() -> FailureLimit:
    return current_app.extensions.setdefault("cep_requester_login_failures", FailureLimit())


@requester_api.post("/session")
def open_session() -> ResponseReturnValue:
    """`{"token": "<requester token>"}` -> the session cookie and its CSRF token. The right
    token is always let in: wrong ones from an address are limited (anyone could otherwise
    lock the requester out, and behind a proxy every client shares one address)."""
    served, client = _served(), request.remote_addr or "?"
    failures = _login_failures()
    token = json_body().get("token")
    if not isinstance(token, str) or not token or not _token_matches(token.strip()):
        if failures.blocked(client):
            return _error("too many wrong tokens from this address: wait a minute and try "
                          "again", 429)
        failures.failed(client)
        return _error("wrong requester token: copy the token the server printed at start "
                      "(the line '  token: ...' under 'requester API')", 401)
    session = new_session(served.secret)
    response = jsonify({"task": served.task_name,
                        "csrf_token": csrf_token(served.secret, session)})
    response.set_cookie(COOKIE, session, max_age=SESSION_SECONDS,
                        **cookie_options(served.provider.public_url))
    return response


@requester_api.get("/session")
def read_session() -> ResponseReturnValue:
    """The signed-in session (the page asks on load); with a bearer token there is none."""
    served, cookie = _served(), request.cookies.get(COOKIE)
    if not session_is_open(served.db, served.secret, cookie):
        return _error("no dashboard session: sign in with the requester token", 401)
    return jsonify({"task": served.task_name, "csrf_token": csrf_token(served.secret, cookie)})


@requester_api.delete("/session")
def close_session() -> ResponseReturnValue:
    """Sign out: the cookie is cleared here and refused from now on, wherever it is sent."""
    served = _served()
    sign_out(served.db, served.secret, request.cookies.get(COOKIE))
    response = jsonify({"ok": True})
    options = cookie_options(served.provider.public_url)
    response.delete_cookie(COOKIE, path="/", secure=bool(options["secure"]), httponly=True,
                           samesite="Strict")
    return response


@requester_api.get("/progress")
def progress() -> Response:
    served = _served()
    with served.db.read() as session:
        runs = session.scalars(
            select(TaskRun).where(TaskRun.task_id == served.task_id).order_by(TaskRun.id)
        ).all()
        counts = session.execute(
            select(Unit.task_run_id, Unit.status, func.count())
            .where(Unit.task_run_id.in_([r.id for r in runs]))
            .group_by(Unit.task_run_id, Unit.status)
        ).all()
        overall = task_outcomes(session, served.task_id)
        workers = worker_outcomes(session, served.task_id)
    by_run: dict[int, dict[str, int]] = {r.id: {} for r in runs}
    for run_id, status, count in counts:
        by_run[run_id][status] = count
    return jsonify({
        "task": served.task_name,
        "current_run": served.run_id,
        "runs": [
            {"run_id": r.id, "status": r.status, "started_at": iso_utc(r.created_at),
             "units": by_run[r.id]}
            for r in runs
        ],
        "quality": {**overall.as_json(),
                    "workers": {name: o.as_json() for name, o in workers.items()}},
    })


@requester_api.get("/submissions")
def submissions() -> Response:
    served = _served()
    fmt = request.args.get("format", "json")
    exclude = request.args.get("exclude", "")
    if exclude not in ("", "quality"):
        abort(400, "exclude must be quality (leave out screening and gold units)")
    include = request.args.get("include", "")
    if include not in ("", "judges"):
        abort(400, "include must be judges (add the answers of LLM judges)")
    records = whole_submissions(served.db, served.task_name, exclude_quality=bool(exclude),
                                judges="with" if include else "without")
    if fmt == "json":
        return jsonify({"task": served.task_name,
                        "submissions": [json_safe(r) for r, _ in records]})
    if fmt not in DOWNLOADS:
        abort(400, "format must be json, jsonl, items-jsonl or csv")
    kind, mimetype, suffix = DOWNLOADS[fmt]
    out = io.StringIO()
    write_export(records, kind, out)
    filename = f"{served.task_name}-submissions.{suffix}"
    return Response(out.getvalue(), mimetype=mimetype,
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@requester_api.get("/links")
def links() -> Response:
    """Worker links for in-house workers (signed when the server is reachable from outside)."""
    worker = request.args.get("worker_id", "")
    count = request.args.get("n", "1")
    if not worker or not count.isdigit() or not 1 <= int(count) <= 100:
        abort(400, "give worker_id and n (1-100)")
    provider = _served().provider
    return jsonify({"links": [provider.link(worker, secrets.token_hex(4))
                              for _ in range(int(count))]})
