"""Requester API of the judges (docs/dashboard.md, "Judges"): their progress, and their
answers beside a person's submission. Thin routes: the queries are in judges/review.py.
Routes join the `requester_api` blueprint and so its token, cookie and CSRF checks."""

from __future__ import annotations

from flask import Response, abort, jsonify

from collection_and_annotations.judges.review import judge_answers, judges_overview
from collection_and_annotations.server.requester_api import _served, requester_api


@requester_api.get("/judges")
def judges() -> Response:
    served = _served()
    with served.db.read() as session:
        return jsonify({"judges": judges_overview(session, served.task_id)})


@requester_api.get("/units/<unit_id>/judges")
def unit_judges(unit_id: str) -> Response:
    """What the judges answered about the same dialogues as this person's unit."""
    served = _served()
    with served.db.read() as session:
        found = judge_answers(session, served.task_id, unit_id, served.chats)
    if found is None:
        abort(404, f"no unit '{unit_id}' of a person in this task")
    return jsonify({"unit_id": unit_id, "judges": found})
