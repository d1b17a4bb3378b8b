"""Requester API for review and payment (docs/providers.md): decisions, bonuses, blocks by
pseudonym, and the pseudonym -> provider worker id mapping.

A decision or bonus is recorded first, then sent to the provider's platform at once; a
failed send stays recorded with its error and the launcher's background sync retries it.
Routes are `requester` routes and so pass its checks.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from collection_and_annotations.engine import review
from collection_and_annotations.engine.provider_sync import send_bonus, send_review
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.export.identities import identities
from collection_and_annotations.export.writers import spreadsheet_text, write_csv
from collection_and_annotations.providers.base import ProviderError
from collection_and_annotations.quality import qualifications
from collection_and_annotations.server.requester_api import PREFIX, attachment, requester
from collection_and_annotations.server.web import JSON, abort, json_body
from collection_and_annotations.storage.models import Bonus, ReviewDecision, Worker

IDENTITY_FIELDS = ("pseudonym", "provider", "worker_id", "units_submitted")


@requester
def review_unit(request: Request, task: ServedTask) -> Response:
    """`{"decision": "approve"|"reject"|"soft_reject", "reason": "...",
    "rejection_category": "..." (Prolific's, for a reject)}`."""
    body = json_body(request)
    unit_id = request.path_params["unit_id"]
    row_id = review.decide(task, unit_id, body.get("decision"), body.get("reason", ""),
                           body.get("rejection_category"))
    send_review(task.db, task.provider, row_id)
    with task.db.read() as session:
        row = session.get(ReviewDecision, row_id)
        return JSON({"unit_id": unit_id, **review.decision_json(row)})


@requester
def bonus_unit(request: Request, task: ServedTask) -> Response:
    """`{"amount": 0.5, "reason": "..."}` (amount in the currency's units)."""
    body = json_body(request)
    unit_id = request.path_params["unit_id"]
    row_id = review.add_bonus(task, unit_id, body.get("amount"), body.get("reason"))
    send_bonus(task.db, task.provider, row_id)
    with task.db.read() as session:
        row = session.get(Bonus, row_id)
        return JSON({"unit_id": unit_id, **review.bonus_json(row)})


def worker_by_pseudonym(task: ServedTask, pseudonym: str) -> tuple[str, str]:
    """(provider, provider worker id) of a worker of this database, or 404."""
    with task.db.read() as session:
        found = session.execute(select(Worker.provider, Worker.provider_worker_id)
                                .where(Worker.pseudonym == pseudonym)).first()
    if found is None:
        raise abort(404, f"no worker with pseudonym '{pseudonym}'")
    return found[0], found[1]


def change_qualification(task: ServedTask, provider: str, worker: str, name: str,
                         value: int | None, shown_as: str | None = None) -> str:
    """`qualifications.change` in a transaction: what was done, or 404 for a revoke with
    nothing to revoke; `shown_as` names the worker in either (the dashboard's pseudonym)."""
    with task.db.transaction() as connection:
        try:
            done = qualifications.change(connection, provider, worker, name, value)
        except qualifications.NotChanged as exc:
            raise abort(404, str(exc).replace(worker, shown_as or worker)) from None
    return done.replace(worker, shown_as or worker)


def block_name(task: ServedTask) -> str:
    """This task's block qualification (its conf's `block_qualification`)."""
    with task.db.snapshot() as connection:
        name = qualifications.task_block_name(connection, task.task_name)
    return name or qualifications.block_name(task.task_name, None)


@requester
def block_worker(request: Request, task: ServedTask) -> Response:
    """Blocked here at once (the claim refuses them); on platforms with blocks (MTurk) too.
    Body (optional): `{"reason": "..."}`."""
    reason = (json_body(request) if request.state.body else {}).get("reason", "")
    if not isinstance(reason, str):
        raise abort(422, "reason must be text")
    return _set_block(task, request.path_params["pseudonym"], 1,
                      lambda worker: task.provider.block(worker, reason))


@requester
def unblock_worker(request: Request, task: ServedTask) -> Response:
    return _set_block(task, request.path_params["pseudonym"], None, task.provider.unblock)


def _set_block(task: ServedTask, pseudonym: str, value: int | None,
               on_platform: Callable[[str], bool]) -> Response:
    """The worker blocked (`value` 1) or unblocked (None) here, then on their platform: `done`,
    `not_sent` (another provider's worker, or a platform without blocks) or `failed: <why>`
    (recorded here anyway)."""
    provider, worker = worker_by_pseudonym(task, pseudonym)
    name = block_name(task)
    change_qualification(task, provider, worker, name, value)
    platform = "not_sent"
    if provider == task.provider.name:
        try:
            platform = "done" if on_platform(worker) else "not_sent"
        except ProviderError as exc:
            platform = f"failed: {exc}"
    return JSON({"worker": pseudonym, "blocked": value is not None, "qualification": name,
                 "platform": platform})


@requester
def worker_identities(request: Request, task: ServedTask) -> Response:
    """Pseudonym -> provider worker id, for payment; exports keep pseudonyms only.
    `?format=csv` gives the same rows as a file."""
    rows = identities(task.db, task.task_name)
    fmt = request.query_params.get("format", "json")
    if fmt == "json":
        return JSON({"task": task.task_name, "workers": rows})
    if fmt != "csv":
        raise abort(400, "format must be json or csv")
    out = io.StringIO()
    # ids come from workers' links: none may run as a formula when the file is opened
    write_csv(({**row, "worker_id": spreadsheet_text(row["worker_id"])} for row in rows),
              IDENTITY_FIELDS, out)
    return attachment(out.getvalue(), "text/csv", f"{task.task_name}-worker-identities.csv")


ROUTES = [
    Route(f"{PREFIX}/units/{{unit_id}}/review", review_unit, methods=["POST"]),
    Route(f"{PREFIX}/units/{{unit_id}}/bonus", bonus_unit, methods=["POST"]),
    Route(f"{PREFIX}/workers/identities", worker_identities, methods=["GET"]),
    Route(f"{PREFIX}/workers/{{pseudonym}}/block", block_worker, methods=["POST"]),
    Route(f"{PREFIX}/workers/{{pseudonym}}/unblock", unblock_worker, methods=["POST"]),
]
