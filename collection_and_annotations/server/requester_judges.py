"""Requester API of the judges (docs/dashboard.md, "Judges"): their progress, and their
answers beside a person's submission. Thin routes: the queries are in judges/review.py;
they are `requester` routes and so pass its token, cookie and CSRF checks."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.judges.review import judge_answers, judges_overview
from collection_and_annotations.server.requester_api import PREFIX, requester
from collection_and_annotations.server.web import JSON, abort


@requester
def judges(request: Request, task: ServedTask) -> Response:
    with task.db.read() as session:
        return JSON({"judges": judges_overview(session, task.task_id)})


@requester
def unit_judges(request: Request, task: ServedTask) -> Response:
    """What the judges answered about the same dialogues as this person's unit."""
    unit_id = request.path_params["unit_id"]
    with task.db.read() as session:
        found = judge_answers(session, task.task_id, unit_id, task.blueprint.chats)
    if found is None:
        raise abort(404, f"no unit '{unit_id}' of a person in this task")
    return JSON({"unit_id": unit_id, "judges": found})


ROUTES = [
    Route(f"{PREFIX}/judges", judges, methods=["GET"]),
    Route(f"{PREFIX}/units/{{unit_id}}/judges", unit_judges, methods=["GET"]),
]
