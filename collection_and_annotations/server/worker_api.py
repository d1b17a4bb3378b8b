"""Worker JSON API: claim or resume a unit, read it, save drafts, submit (docs/worker-api.md)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from collection_and_annotations.engine.allocation import claim_unit, may_claim
from collection_and_annotations.engine.chat import client_id_of
from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.engine.work import (
    WorkRefused,
    check_dialogue,
    save_draft,
    submit,
    unit_view,
)
from collection_and_annotations.providers.base import Completion, Visit
from collection_and_annotations.server.auth import worker_of, worker_token
from collection_and_annotations.server.web import JSON, blocking, error, json_body
from collection_and_annotations.storage.models import Unit, Worker


def _completion(served: ServedTask, unit_id: str) -> Completion:
    """The provider's completion for this unit (its visit is read only when it matters, in
    one statement)."""
    if not served.provider.completion_varies:
        return served.provider.completion(None)
    with served.db.one_statement(write=False) as connection:
        worker, visit = connection.execute(
            select(Worker.provider_worker_id, Unit.provider_session)
            .join(Worker, Worker.id == Unit.worker_id).where(Unit.public_id == unit_id)).one()
    return served.provider.completion(Visit(unit_id, worker, visit or ""))


@blocking
def claim(request: Request, task: ServedTask) -> Response:
    if not task.taking_work:
        return error("this task is not taking work now (its server is open for review "
                     "only); ask the requester when it starts again", 503)
    identity = task.provider.identify(json_body(request))
    result = claim_unit(task.db, task.task_id, task.run_id, task.provider.name,
                        identity.worker_id, identity.session_id, task.limits,
                        task.blocked_workers, task.blueprint.pools_for)
    return JSON({
        "token": worker_token(task.secret, result.worker_id),
        "unit_id": result.unit_public_id,
        "status": result.status,
    })


@blocking
def next_unit(request: Request, task: ServedTask) -> Response:
    """Whether this worker may take another unit now, and the link that starts it: for
    providers whose workers come back through links (local), after a submit."""
    worker_id = worker_of(request, task.secret)
    with task.db.one_statement(write=False) as connection:
        worker = connection.scalar(select(Worker.provider_worker_id)
                                   .where(Worker.id == worker_id))
    link = task.provider.next_link(worker) if task.taking_work else None
    if link is None:
        return JSON({"next_url": None, "reason": None})
    refused = may_claim(task.db, task.task_id, task.run_id, task.provider.name, worker,
                        task.limits, task.blocked_workers, task.blueprint.pools_for)
    return JSON({"next_url": link if refused is None else None, "reason": refused})


async def enter(request: Request) -> Response:
    """Where a crowd platform sends its workers (its URL parameters name them): on to the page
    with a link this server signed. An MTurk preview gets a page that says so."""
    provider = request.app.state.served.provider
    return RedirectResponse(provider.entry(dict(request.query_params)), 302)


def unit_payload(served: ServedTask, unit_id: str, worker_id: int) -> dict[str, Any]:
    """The unit as the worker page receives it, without the completion (read only: the
    requester dashboard shows a submission through it, as its worker saw it)."""
    view = unit_view(served.db, served.blueprint, unit_id, worker_id)
    view["task"] = {"title": served.title, "description_html": served.description_html}
    return view


@blocking
def get_unit(request: Request, task: ServedTask) -> Response:
    """The unit; the completion (code, redirect) only for work done: never for a unit that
    is still open, nor one that expired, was retired by a data change or went back to the
    pool."""
    unit_id = request.path_params["unit_id"]
    view = unit_payload(task, unit_id, worker_of(request, task.secret))
    done = view["status"] in DONE_STATUSES
    view.update(_completion(task, unit_id).as_json() if done else {"completion_code": None})
    return JSON(view)


@blocking
def put_draft(request: Request, task: ServedTask) -> Response:
    worker_id = worker_of(request, task.secret)
    body = json_body(request)
    saved_at = save_draft(task.db, request.path_params["unit_id"], worker_id,
                          body.get("answers"), body.get("position"))
    return JSON({"saved_at": saved_at})


@blocking
def post_submit(request: Request, task: ServedTask) -> Response:
    unit_id = request.path_params["unit_id"]
    worker_id = worker_of(request, task.secret)
    body = json_body(request)
    if "answers" not in body:
        raise WorkRefused("the submission has no 'answers'", 400)
    outcome: dict[str, Any] = {}
    status = submit(task.db, task.blueprint, unit_id, worker_id, body["answers"],
                    body.get("timings", {}), client_id_of(body.get("client_id")), outcome)
    return JSON({"status": status, **_completion(task, unit_id).as_json(), **outcome})


@blocking
def post_check(request: Request, task: ServedTask) -> Response:
    """Submit one training dialogue: the answer is its mistakes with the expected answers and
    explanations (only now, after the worker committed to their answers)."""
    worker_id = worker_of(request, task.secret)
    body = json_body(request)
    if not isinstance(body.get("answers"), dict):
        raise WorkRefused("the check needs 'answers' as an object of buckets", 400)
    return JSON(check_dialogue(task.db, task.blueprint, request.path_params["unit_id"],
                               worker_id, request.path_params["dialogue_key"], body["answers"]))


ROUTES = [
    Route("/api/claim", claim, methods=["POST"]),
    Route("/api/next", next_unit, methods=["GET"]),
    Route("/api/enter", enter, methods=["GET"]),
    Route("/api/units/{unit_id}", get_unit, methods=["GET"]),
    Route("/api/units/{unit_id}/draft", put_draft, methods=["PUT"]),
    Route("/api/units/{unit_id}/submit", post_submit, methods=["POST"]),
    Route("/api/units/{unit_id}/dialogues/{dialogue_key}/check", post_check, methods=["POST"]),
]
