"""A worker's unit: its content, drafts and the final submission."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Row
from sqlalchemy.exc import IntegrityError, OperationalError

from collection_and_annotations.blueprints.base import SubmitRefused, SubmittedUnit, TaskBlueprint
from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.engine.work_sql import (
    AFTER_LOCKING_DRAFT,
    LOCK_UNIT_WITH_DATA,
    SAVE_DRAFT,
    STORE_SUBMISSION,
    STORED_ANSWERS,
    UNIT_VIEW,
)
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import iso_utc, utcnow
from collection_and_annotations.storage.sql import waited_too_long

MAX_DRAFT_BYTES = 1_000_000
RETRY_AFTER_S = 2  # a step refused for a lock it waited too long on: when to come back
OwnedT = TypeVar("OwnedT")  # a unit row with `worker_id` and `times_expired`


class WorkRefused(Exception):
    """The request cannot be served; `status` is the HTTP status, `problems` any details,
    `retry_after` the seconds after which the same request may succeed (503)."""

    def __init__(self, message: str, status: int, problems: list[dict[str, Any]] | None = None,
                 retry_after: int | None = None):
        super().__init__(message)
        self.status = status
        self.problems = problems
        self.retry_after = retry_after


@contextmanager
def worker_step(db: Database, one_statement: bool = False) -> Iterator[Connection]:
    """A worker's step in one write transaction (`one_statement`: a step that is one statement
    on PostgreSQL, `Database.one_statement`); a step that waited too long for a lock another
    step holds (lock_timeout, or SQLite's busy timeout) is refused with a 503 that says when
    to try again, never a 500. Its transaction is rolled back: nothing is half written."""
    try:
        with db.one_statement(write=True) if one_statement else db.transaction() \
                as connection:
            yield connection
    except OperationalError as exc:
        if not waited_too_long(exc):
            raise
        raise WorkRefused("this unit is busy with another request; try again in a moment",
                          503, retry_after=RETRY_AFTER_S) from None


def owned_unit(unit: OwnedT | None, worker_id: int) -> OwnedT:
    """The unit if it is this worker's; otherwise why not (expired, or not theirs at all)."""
    if unit is not None and unit.worker_id == worker_id:
        return unit
    if unit is not None and unit.times_expired:
        raise WorkRefused("the time for this unit ran out and it went back to the pool", 409)
    raise WorkRefused("no such unit for this worker", 404)


def unit_view(
    db: Database, blueprint: TaskBlueprint, public_id: str, worker_id: int
) -> dict[str, Any]:
    """Everything the page shows for a unit, with this worker's latest draft: one statement
    (`Database.one_statement`: it sees a submit or an expiry whole or not at all), and for a
    chat the conversation's state in the same snapshot."""
    with db.snapshot() if blueprint.chats else db.one_statement(write=False) as connection:
        unit = owned_unit(connection.execute(
            UNIT_VIEW, {"public_id": public_id, "worker_id": worker_id}).first(), worker_id)
        state = ({} if unit.status != "assigned" else blueprint.unit_state(
            connection, unit.id, unit.times_expired, unit.data, unit.layout))
    seconds = None
    if unit.deadline is not None and unit.status == "assigned":
        seconds = max(0, int((unit.deadline - utcnow()).total_seconds()))
    return {
        "unit_id": unit.public_id,
        "kind": blueprint.unit_kind(unit.pool),
        "status": unit.status,
        "seconds_remaining": seconds,
        "draft": None if unit.saved_at is None else {
            "answers": unit.answers, "position": unit.position,
            "saved_at": iso_utc(unit.saved_at),
        },
        **blueprint.unit_content(unit.data, unit.layout),
        **state,
    }


def save_draft(db: Database, public_id: str, worker_id: int, answers: Any, position: Any) -> str:
    if not isinstance(answers, dict):
        raise WorkRefused("a draft needs 'answers' as an object", 400)
    if len(json.dumps([answers, position])) > MAX_DRAFT_BYTES:
        raise WorkRefused("the draft is larger than 1 MB", 413)
    with worker_step(db, one_statement=True) as connection:
        # The unit row is locked before the draft is written: an expiry cannot slip between
        # the ownership check and the write and hand the unit to someone else. On PostgreSQL
        # the lock, the check and the write are one statement (SAVE_DRAFT), on SQLite a
        # transaction.
        values = {"public_id": public_id, "worker_id": worker_id, "answers": answers,
                  "position": position, "now": utcnow()}
        unit = owned_unit(connection.execute(SAVE_DRAFT.on(connection), values).first(),
                          worker_id)
        if unit.status != "assigned":
            raise WorkRefused(f"this unit is {unit.status}; drafts are closed", 409)
        for statement in AFTER_LOCKING_DRAFT.on(connection):
            connection.execute(statement, {**values, "unit_id": unit.id})
        return iso_utc(values["now"])


def submit(
    db: Database, blueprint: TaskBlueprint, public_id: str, worker_id: int, answers: Any,
    timings: Any, client_id: str | None, outcome: dict[str, Any] | None = None,
) -> str:
    """Store the answers once and return the unit's status (`outcome` receives what the task
    kind's `after_submit` tells the worker, e.g. a screening result); a retry of the same
    submission gets the same answer. The unit row is locked first, so a submit and the expiry sweep
    serialise: either the submit is stored (and the sweep leaves the unit alone) or the unit
    had already gone back to the pool and the submit gets a 409."""
    if not isinstance(timings, dict):
        raise WorkRefused("'timings' must be an object", 400)
    extra = {} if outcome is None else outcome
    try:
        with worker_step(db) as connection:
            return _store_submission(connection, blueprint, public_id, worker_id, answers,
                                     timings, client_id, extra)
    except IntegrityError:
        # Only a concurrent submit of the same unit can get here: it won.
        raise WorkRefused("this unit was just submitted from another window", 409) from None


def _store_submission(
    connection: Connection, blueprint: TaskBlueprint, public_id: str, worker_id: int,
    answers: Any, timings: dict[str, Any], client_id: str | None, extra: dict[str, Any],
) -> str:
    unit = owned_unit(locked_unit_with_data(connection, public_id), worker_id)
    submitted = SubmittedUnit(unit.id, unit.pool, unit.task_run_id, worker_id, unit.data,
                              unit.layout, answers, unit.times_expired)
    if unit.status in DONE_STATUSES:
        stored = connection.execute(STORED_ANSWERS, {"unit_id": unit.id}).scalar_one()
        if stored == _stored(connection, blueprint, submitted):
            return unit.status
        raise WorkRefused("this unit was already submitted with other answers", 409)
    if unit.status == "retired":
        raise WorkRefused("the requester withdrew this item from the task; nothing to "
                          "submit", 409)
    if unit.status != "assigned":
        raise WorkRefused(f"this unit is {unit.status} and takes no submission", 409)
    problems = blueprint.check_submission(unit.data, unit.layout, answers)
    if problems:
        raise WorkRefused(_summary(problems), 422, problems)
    stored_answers = _stored(connection, blueprint, submitted)
    now = utcnow()
    values = {"unit_id": unit.id, "worker_id": worker_id, "task_run_id": unit.task_run_id,
              "answers": stored_answers, "timings": _timings(unit.assigned_at, now, timings),
              "client_id": client_id, "now": now}
    for statement in STORE_SUBMISSION.on(connection):
        connection.execute(statement, values)
    try:
        told = blueprint.after_submit(connection, replace(submitted, stored=stored_answers))
    except SubmitRefused as exc:
        raise WorkRefused(str(exc), exc.status, exc.problems) from None
    if told:
        extra.update(told)
    return "completed"


def locked_unit_with_data(connection: Connection, public_id: str) -> Row | None:
    """The unit locked, with its data and layout (None when there is no such unit)."""
    return connection.execute(LOCK_UNIT_WITH_DATA.on(connection),
                              {"public_id": public_id}).first()


def _timings(assigned_at: datetime, now: datetime, client: dict[str, Any]) -> dict[str, Any]:
    """A submission's timings: the server's (assigned, submitted, how long between) and what
    the page sent."""
    return {"server": {"assigned_at": iso_utc(assigned_at), "submitted_at": iso_utc(now),
                       "duration_seconds": round((now - assigned_at).total_seconds(), 3)},
            "client": client}


def _stored(connection: Connection, blueprint: TaskBlueprint, unit: SubmittedUnit) -> Any:
    """What a valid submission stores (the same for a retry of it)."""
    try:
        return blueprint.complete_answers(connection, unit)
    except SubmitRefused as exc:
        problems = exc.problems
        raise WorkRefused(_summary(problems) if problems else str(exc), exc.status,
                          problems) from None


def _summary(problems: list[dict[str, Any]]) -> str:
    """The first problems in one line, each after its place (`where`, as the task kind words
    it for the worker)."""
    lines = [f"{p['where']}: {p['message']}" if p.get("where") else p["message"]
             for p in problems[:3]]
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return "; ".join(lines) + more


def check_dialogue(
    db: Database, blueprint: TaskBlueprint, public_id: str, worker_id: int, dialogue_key: str,
    answers: Any,
) -> dict[str, Any]:
    """Score one dialogue of a unit the task kind checks per dialogue (screening): this is
    the dialogue's submission, so the feedback it returns may name the expected answers."""
    with worker_step(db) as connection:
        unit = owned_unit(locked_unit_with_data(connection, public_id), worker_id)
        if unit.status != "assigned":
            raise WorkRefused(f"this unit is {unit.status}; nothing to check", 409)
        result = blueprint.check_dialogue(connection, SubmittedUnit(
            unit.id, unit.pool, unit.task_run_id, worker_id, unit.data, unit.layout, answers,
            unit.times_expired), dialogue_key)
        if result is None:  # the same answer for real and gold units: nothing to check
            raise WorkRefused("this unit has no dialogue checks", 404)
        return result
