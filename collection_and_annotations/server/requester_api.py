"""Requester API (token required): progress of runs, submissions as JSON, JSONL or CSV."""

from __future__ import annotations

import hmac
import io
import secrets
from typing import Any

from flask import Blueprint, Response, abort, current_app, jsonify, request
from sqlalchemy import func, select

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.export.submissions import (
    whole_submissions,
)
from collection_and_annotations.export.writers import json_safe, write_export
from collection_and_annotations.quality.stats import task_outcomes, worker_outcomes
from collection_and_annotations.server.auth import bearer, requester_token
from collection_and_annotations.server.json_input import InvalidJson, parse_json_object
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


@requester_api.before_request
def _require_token() -> Any:
    """The token travels only in a header: a query string ends up in logs and browser history."""
    given = bearer(request.headers.get("Authorization"))
    if not given or not hmac.compare_digest(given, requester_token(_served().secret)):
        hint = " (not as ?token=)" if "token" in request.args else ""
        return jsonify({"error": "requester token missing or wrong: send the token printed at "
                                 f"start as 'Authorization: Bearer <token>'{hint}"}), 401
    return None


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
    records = whole_submissions(served.db, served.task_name, exclude_quality=bool(exclude))
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
