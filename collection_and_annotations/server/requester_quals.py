"""Requester API for qualifications and blocks: the `quals` CLI over HTTP (same operations,
quality/qualifications.py), so a requester manages workers while the task runs; the
dashboard grants and revokes by pseudonym through the same routes under `/workers/<pseudonym>`.

Routes are `requester` routes and so pass its checks: a bearer token (never sent by a
browser on its own, so no CSRF token), or the dashboard's session cookie, which a browser does
send on its own, so with it these POSTs need the session's `X-CSRF-Token` header too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.quality import qualifications
from collection_and_annotations.server.requester_api import PREFIX, requester
from collection_and_annotations.server.requester_review import (
    block_name,
    change_qualification,
    worker_by_pseudonym,
)
from collection_and_annotations.server.web import JSON, Endpoint, abort, json_body
from collection_and_annotations.storage.models import iso_utc

# The longest worker id, provider and qualification name stored (storage/models.py).
MAX_NAME, MAX_PROVIDER = 200, 32
MAX_VALUE = 2**31 - 1  # a qualification's value is a 32-bit integer


def _fields(request: Request, task: ServedTask) -> tuple[str, str, str, dict[str, Any]]:
    """(provider, worker, the worker as the answer names them, body) of a change request: the
    worker the address names by pseudonym (the dashboard's), else the body's `worker` and
    `provider`; or 400/404/422."""
    body = json_body(request)
    pseudonym = request.path_params.get("pseudonym")
    if pseudonym is not None:
        return (*worker_by_pseudonym(task, pseudonym), pseudonym, body)
    worker, provider = body.get("worker"), body.get("provider", "local")
    if not isinstance(worker, str) or not worker or not isinstance(provider, str):
        raise abort(400, "give worker (the provider's worker id) and optionally provider (local)")
    if len(worker) > MAX_NAME or len(provider) > MAX_PROVIDER:
        raise abort(422, f"worker must be at most {MAX_NAME} characters, provider at most "
                   f"{MAX_PROVIDER}")
    return provider, worker, worker, body


def qualification_name(body: dict[str, Any]) -> str:
    """The body's `name` of a qualification, or 400/422."""
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise abort(400, "give name (the qualification)")
    if len(name) > MAX_NAME:
        raise abort(422, f"a qualification's name is at most {MAX_NAME} characters")
    return name


def qualification_value(body: dict[str, Any]) -> int:
    """The body's `value` of a grant (1 if left out), or 400/422."""
    value = body.get("value", 1)
    if not isinstance(value, int) or isinstance(value, bool):
        raise abort(400, "value must be an integer")
    if not -MAX_VALUE <= value <= MAX_VALUE:
        raise abort(422, f"value must be between -{MAX_VALUE} and {MAX_VALUE}")
    return value


@requester
def list_qualifications(request: Request, task: ServedTask) -> Response:
    """Granted qualifications (`?name=`, `?worker=` narrow it), as `quals list`."""
    with task.db.snapshot() as connection:
        rows = qualifications.grants(connection, request.query_params.get("name") or None,
                                     request.query_params.get("worker") or None)
    return JSON({"grants": [
        {"qualification": r.qualification, "provider": r.provider,
         "worker": r.provider_worker_id, "value": r.value, "granted_at": iso_utc(r.granted_at)}
        for r in rows]})


def _block_name(task: ServedTask, body: dict[str, Any]) -> str:
    """`name` if given, else this task's block qualification (`block_qualification`)."""
    return qualification_name(body) if "name" in body else block_name(task)


def _change(name_of: Callable[[ServedTask, dict[str, Any]], str],
            value_of: Callable[[dict[str, Any]], int | None]) -> Endpoint:
    """A route that sets (a value) or revokes (None) the named qualification of the worker
    the body or the address names."""

    @requester
    def change(request: Request, task: ServedTask) -> Response:
        provider, worker, shown_as, body = _fields(request, task)
        name, value = name_of(task, body), value_of(body)
        done = change_qualification(task, provider, worker, name, value, shown_as)
        return JSON({"ok": True, "qualification": name, "worker": shown_as,
                     "provider": provider, "value": value, "message": done})

    return change


grant = _change(lambda _task, body: qualification_name(body), qualification_value)
revoke = _change(lambda _task, body: qualification_name(body), lambda _body: None)
block = _change(_block_name, lambda _body: 1)
unblock = _change(_block_name, lambda _body: None)


ROUTES = [
    Route(f"{PREFIX}/qualifications", list_qualifications, methods=["GET"]),
    Route(f"{PREFIX}/qualifications/grant", grant, methods=["POST"]),
    Route(f"{PREFIX}/qualifications/revoke", revoke, methods=["POST"]),
    Route(f"{PREFIX}/qualifications/block", block, methods=["POST"]),
    Route(f"{PREFIX}/qualifications/unblock", unblock, methods=["POST"]),
    Route(f"{PREFIX}/workers/{{pseudonym}}/qualifications/grant", grant, methods=["POST"]),
    Route(f"{PREFIX}/workers/{{pseudonym}}/qualifications/revoke", revoke, methods=["POST"]),
]
