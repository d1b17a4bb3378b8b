"""Worker JSON API: claim or resume a unit, read it, save drafts, submit (docs/worker-api.md)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify, redirect, request
from sqlalchemy import select

from collection_and_annotations.engine.allocation import ClaimRefused, claim_unit, may_claim
from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.engine.work import (
    WorkRefused,
    check_dialogue,
    save_draft,
    submit,
    unit_view,
)
from collection_and_annotations.providers.base import Completion, IdentityRefused, Visit
from collection_and_annotations.server.auth import bearer, worker_from_token, worker_token
from collection_and_annotations.server.json_input import InvalidJson, parse_json_object
from collection_and_annotations.storage.models import Unit, Worker

worker_api = Blueprint("worker_api", __name__, url_prefix="/api")


def _served() -> ServedTask:
    return current_app.config["SERVED_TASK"]


def _error(message: str, status: int, problems: list[dict[str, Any]] | None = None):
    body: dict[str, Any] = {"error": message}
    if problems is not None:
        body["problems"] = problems
    return jsonify(body), status


def _body() -> dict[str, Any]:
    if not request.is_json:
        raise WorkRefused("send the request body as JSON (Content-Type: application/json)", 400)
    try:
        return parse_json_object(request.get_data(cache=False))
    except InvalidJson as exc:
        raise WorkRefused(str(exc), exc.status) from None


def _worker_id() -> int:
    token = bearer(request.headers.get("Authorization"))
    worker_id = worker_from_token(_served().secret, token) if token else None
    if worker_id is None:
        raise WorkRefused("missing or invalid worker token; open your task link again", 401)
    return worker_id


def _completion(served: ServedTask, unit_id: str) -> Completion:
    """The provider's completion for this unit (its visit is read only when it matters)."""
    if not served.provider.completion_varies:
        return served.provider.completion(None)
    with served.db.snapshot() as connection:
        worker, visit = connection.execute(
            select(Worker.provider_worker_id, Unit.provider_session)
            .join(Worker, Worker.id == Unit.worker_id).where(Unit.public_id == unit_id)).one()
    return served.provider.completion(Visit(unit_id, worker, visit or ""))


@worker_api.errorhandler(WorkRefused)
def _refused(exc: WorkRefused):
    return _error(str(exc), exc.status, exc.problems)


@worker_api.post("/claim")
def claim():
    served = _served()
    if not served.taking_work:
        return _error("this task is not taking work now (its server is open for review "
                      "only); ask the requester when it starts again", 503)
    try:
        identity = served.provider.identify(_body())
        result = claim_unit(served.db, served.task_id, served.run_id, served.provider.name,
                            identity.worker_id, identity.session_id, served.limits,
                            served.blocked_workers, served.blueprint.pools_for,
                            first_pools=served.new_worker_pools)
    except (IdentityRefused, ClaimRefused) as exc:
        return _error(str(exc), exc.status)
    return jsonify({
        "token": worker_token(served.secret, result.worker_id),
        "unit_id": result.unit_public_id,
        "status": result.status,
    })


@worker_api.get("/next")
def next_unit():
    """Whether this worker may take another unit now, and the link that starts it: for
    providers whose workers come back through links (local), after a submit."""
    served = _served()
    worker_id = _worker_id()
    offer = getattr(served.provider, "next_link", None)
    if offer is None or not served.taking_work:
        return jsonify({"next_url": None, "reason": None})
    with served.db.snapshot() as connection:
        worker = connection.scalar(select(Worker.provider_worker_id)
                                   .where(Worker.id == worker_id))
    refused = may_claim(served.db, served.task_id, served.run_id, served.provider.name, worker,
                        served.limits, served.blocked_workers, served.blueprint.pools_for)
    if refused is not None:
        return jsonify({"next_url": None, "reason": refused})
    return jsonify({"next_url": offer(worker), "reason": None})


@worker_api.get("/enter")
def enter():
    """Where a crowd platform sends its workers (its URL parameters name them): on to the page
    with a link this server signed. An MTurk preview gets a page that says so."""
    entry = getattr(_served().provider, "entry", None)
    if entry is None:
        return _error("this task is not served through a crowd platform", 404)
    try:
        return redirect(entry(request.args.to_dict()), 302)
    except IdentityRefused as exc:
        return _error(str(exc), exc.status)


def unit_payload(served: ServedTask, unit_id: str, worker_id: int) -> dict[str, Any]:
    """The unit as the worker page receives it, without the completion (read only: the
    requester dashboard shows a submission through it, as its worker saw it)."""
    view = unit_view(served.db, served.blueprint, unit_id, worker_id)
    view["task"] = {"title": served.title, "description_html": served.description_html}
    return view


@worker_api.get("/units/<unit_id>")
def get_unit(unit_id: str):
    """The unit; the completion (code, redirect) only for work done: never for a unit that
    is still open, nor one that expired, was retired by a data change or went back to the
    pool."""
    served = _served()
    view = unit_payload(served, unit_id, _worker_id())
    done = view["status"] in DONE_STATUSES
    view.update(_completion(served, unit_id).as_json() if done else {"completion_code": None})
    return jsonify(view)


@worker_api.put("/units/<unit_id>/draft")
def put_draft(unit_id: str):
    worker_id = _worker_id()
    body = _body()
    saved_at = save_draft(_served().db, unit_id, worker_id, body.get("answers"),
                          body.get("position"))
    return jsonify({"saved_at": saved_at})


@worker_api.post("/units/<unit_id>/submit")
def post_submit(unit_id: str):
    served = _served()
    worker_id = _worker_id()
    body = _body()
    if "answers" not in body:
        raise WorkRefused("the submission has no 'answers'", 400)
    client_id = body.get("client_id")
    outcome: dict[str, Any] = {}
    status = submit(served.db, served.blueprint, unit_id, worker_id, body["answers"],
                    body.get("timings", {}), str(client_id)[:64] if client_id else None,
                    outcome)
    return jsonify({"status": status, **_completion(served, unit_id).as_json(), **outcome})


@worker_api.post("/units/<unit_id>/dialogues/<dialogue_key>/check")
def post_check(unit_id: str, dialogue_key: str):
    """Submit one training dialogue: the answer is its mistakes with the expected answers and
    explanations (only now, after the worker committed to their answers)."""
    served = _served()
    worker_id = _worker_id()
    body = _body()
    if not isinstance(body.get("answers"), dict):
        raise WorkRefused("the check needs 'answers' as an object of buckets", 400)
    return jsonify(check_dialogue(served.db, served.blueprint, unit_id, worker_id,
                                  dialogue_key, body["answers"]))
