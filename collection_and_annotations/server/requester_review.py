"""Requester API for review and payment (docs/providers.md): decisions, bonuses, blocks by
pseudonym, and the pseudonym -> provider worker id mapping.

A decision or bonus is recorded first, then sent to the provider's platform at once; a
failed send stays recorded with its error and the launcher's background sync retries it.
Routes join the `requester_api` blueprint and so its bearer-token check.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from flask import Response, abort, jsonify, request
from sqlalchemy import select

from collection_and_annotations.engine import review
from collection_and_annotations.engine.provider_sync import send_bonus, send_review
from collection_and_annotations.export.identities import identities
from collection_and_annotations.export.writers import spreadsheet_text, write_csv
from collection_and_annotations.providers.base import ProviderError
from collection_and_annotations.quality import qualifications
from collection_and_annotations.server.requester_api import _served, json_body, requester_api
from collection_and_annotations.storage.models import Bonus, ReviewDecision, Worker

IDENTITY_FIELDS = ("pseudonym", "provider", "worker_id", "units_submitted")


@requester_api.errorhandler(review.ReviewRefused)
def _refused(exc: review.ReviewRefused) -> tuple[Response, int]:
    return jsonify({"error": str(exc)}), exc.status


@requester_api.post("/units/<unit_id>/review")
def review_unit(unit_id: str) -> Response:
    """`{"decision": "approve"|"reject"|"soft_reject", "reason": "...",
    "rejection_category": "..." (Prolific's, for a reject)}`."""
    served, body = _served(), json_body()
    row_id, _ = review.decide(served.db, served.provider, served.task_id, served.run_id,
                              unit_id, body.get("decision"), body.get("reason", ""),
                              body.get("rejection_category"), served.return_rejected_units)
    send_review(served.db, served.provider, row_id)
    with served.db.read() as session:
        row = session.get(ReviewDecision, row_id)
        return jsonify({"unit_id": unit_id, **review.decision_json(row)})


@requester_api.post("/units/<unit_id>/bonus")
def bonus_unit(unit_id: str) -> Response:
    """`{"amount": 0.5, "reason": "..."}` (amount in the currency's units)."""
    served, body = _served(), json_body()
    row_id, _ = review.add_bonus(served.db, served.provider, served.task_id, unit_id,
                                 body.get("amount"), body.get("reason"))
    send_bonus(served.db, served.provider, row_id)
    with served.db.read() as session:
        row = session.get(Bonus, row_id)
        return jsonify({"unit_id": unit_id, **review.bonus_json(row)})


def worker_by_pseudonym(pseudonym: str) -> tuple[str, str]:
    """(provider, provider worker id) of a worker of this database, or 404."""
    with _served().db.read() as session:
        found = session.execute(select(Worker.provider, Worker.provider_worker_id)
                                .where(Worker.pseudonym == pseudonym)).first()
    if found is None:
        abort(404, f"no worker with pseudonym '{pseudonym}'")
    return found[0], found[1]


def block_name() -> str:
    """This task's block qualification (its conf's `block_qualification`)."""
    served = _served()
    with served.db.snapshot() as connection:
        name = qualifications.task_block_name(connection, served.task_name)
    return name or qualifications.block_name(served.task_name, None)


@requester_api.post("/workers/<pseudonym>/block")
def block_worker(pseudonym: str) -> Response:
    """Blocked here at once (the claim refuses them); on platforms with blocks (MTurk) too.
    Body (optional): `{"reason": "..."}`."""
    served = _served()
    reason = json_body() if request.get_data() else {}
    if not isinstance(reason.get("reason", ""), str):
        abort(422, "reason must be text")
    provider, worker = worker_by_pseudonym(pseudonym)
    name = block_name()
    with served.db.transaction() as connection:
        qualifications.change(connection, provider, worker, name, 1)
    platform = _on_platform(provider, lambda: served.provider.block(
        worker, str(reason.get("reason", ""))))
    return jsonify({"worker": pseudonym, "blocked": True, "qualification": name,
                    "platform": platform})


def _on_platform(provider: str, action: Callable[[], bool]) -> str:
    """Carry a block or unblock to the worker's platform: `done`, `not_sent` (another
    provider's worker, or a platform without blocks) or `failed: <why>` (recorded here
    anyway)."""
    if provider != _served().provider.name:
        return "not_sent"
    try:
        return "done" if action() else "not_sent"
    except ProviderError as exc:
        return f"failed: {exc}"


@requester_api.post("/workers/<pseudonym>/unblock")
def unblock_worker(pseudonym: str) -> Response:
    served = _served()
    provider, worker = worker_by_pseudonym(pseudonym)
    name = block_name()
    with served.db.transaction() as connection:
        try:
            qualifications.change(connection, provider, worker, name, None)
        except qualifications.NotChanged as exc:
            abort(404, str(exc))
    return jsonify({"worker": pseudonym, "blocked": False, "qualification": name,
                    "platform": _on_platform(provider, lambda: served.provider.unblock(worker))})


@requester_api.get("/workers/identities")
def worker_identities() -> Response:
    """Pseudonym -> provider worker id, for payment; exports keep pseudonyms only.
    `?format=csv` gives the same rows as a file."""
    served = _served()
    rows = identities(served.db, served.task_name)
    fmt = request.args.get("format", "json")
    if fmt == "json":
        return jsonify({"task": served.task_name, "workers": rows})
    if fmt != "csv":
        abort(400, "format must be json or csv")
    out = io.StringIO()
    # ids come from workers' links: none may run as a formula when the file is opened
    write_csv(({**row, "worker_id": spreadsheet_text(row["worker_id"])} for row in rows),
              IDENTITY_FIELDS, out)
    filename = f"{served.task_name}-worker-identities.csv"
    return Response(out.getvalue(), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})
