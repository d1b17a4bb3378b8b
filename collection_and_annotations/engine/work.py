"""A worker's unit: its content, drafts and the final submission."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from collection_and_annotations.blueprints.base import SubmitRefused, SubmittedUnit, TaskBlueprint
from collection_and_annotations.engine.hot_sql import UnitWithData, hot
from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.engine.viewed_units import ViewedUnits
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import iso_utc, utcnow

MAX_DRAFT_BYTES = 1_000_000
_VIEWED = ViewedUnits()  # this process's units as their pages last read them
OwnedT = TypeVar("OwnedT", bound=tuple)  # a unit row with `worker_id` and `times_expired`


class WorkRefused(Exception):
    """The request cannot be served; `status` is the HTTP status, `problems` any details."""

    def __init__(self, message: str, status: int, problems: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.status = status
        self.problems = problems


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
    """Everything the page shows for a unit, with this worker's latest draft (one query)."""
    with db.snapshot() as connection:
        unit = owned_unit(hot(connection).unit_view(connection, public_id, worker_id), worker_id)
        state = ({} if unit.status != "assigned" else blueprint.unit_state(
            connection, unit.id, unit.times_expired, unit.data, unit.layout))
    if unit.status == "assigned" and _submits_in_one_statement(db, blueprint, unit.pool):
        _VIEWED.keep(public_id, unit.for_submit())  # for the submit that follows
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
    with db.one_statement() as connection:
        # The unit row is locked before the draft is written: an expiry cannot slip between
        # the ownership check and the write and hand the unit to someone else. The draft is
        # written only to a unit that is this worker's and still assigned (one statement on
        # PostgreSQL, so it needs no transaction of its own).
        now = utcnow()
        unit = owned_unit(hot(connection).save_draft(connection, public_id, worker_id, answers,
                                                     position, now), worker_id)
        if unit.status != "assigned":
            raise WorkRefused(f"this unit is {unit.status}; drafts are closed", 409)
        return iso_utc(now)


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
    try:
        if db.one_statement_writes:
            stored = _store_in_one_statement(db, blueprint, public_id, worker_id, answers,
                                             timings, client_id)
            if stored:
                return "completed"
        return _store_submission(db, blueprint, public_id, worker_id, answers, timings,
                                 client_id, {} if outcome is None else outcome)
    except IntegrityError:
        # Only a concurrent submit of the same unit can get here: it won.
        raise WorkRefused("this unit was just submitted from another window", 409) from None


def _store_submission(
    db: Database, blueprint: TaskBlueprint, public_id: str, worker_id: int, answers: Any,
    timings: dict[str, Any], client_id: str | None, extra: dict[str, Any],
) -> str:
    with db.transaction() as connection:
        statements = hot(connection)
        unit = owned_unit(statements.lock_unit_with_data(connection, public_id), worker_id)
        submitted = SubmittedUnit(unit.id, unit.pool, unit.task_run_id, worker_id, unit.data,
                                  unit.layout, answers, unit.times_expired)
        if unit.status in DONE_STATUSES:
            stored = statements.stored_answers(connection, unit.id)
            if stored == _stored(connection, blueprint, submitted):
                return unit.status
            raise WorkRefused("this unit was already submitted with other answers", 409)
        if unit.status == "retired":
            raise WorkRefused("the requester withdrew this item from the task; nothing to "
                              "submit", 409)
        if unit.status != "assigned":
            raise WorkRefused(f"this unit is {unit.status} and takes no submission", 409)
        _check(blueprint, unit, answers)
        stored_answers = _stored(connection, blueprint, submitted)
        now = utcnow()
        statements.store_submission(
            connection, unit_id=unit.id, worker_id=worker_id, task_run_id=unit.task_run_id,
            answers=stored_answers, timings=_timings(unit, now, timings),
            client_id=client_id, now=now)
        try:
            outcome = blueprint.after_submit(connection, replace(submitted, stored=stored_answers))
        except SubmitRefused as exc:
            raise WorkRefused(str(exc), exc.status, exc.problems) from None
        if outcome:
            extra.update(outcome)
        return "completed"


def _store_in_one_statement(
    db: Database, blueprint: TaskBlueprint, public_id: str, worker_id: int, answers: Any,
    timings: dict[str, Any], client_id: str | None,
) -> bool:
    """PostgreSQL: the unit read without a lock (or as this worker's page last read it in
    this process, `ViewedUnits`), the answers judged, then stored in one statement if the
    unit is still the same open unit of this worker: one or two round trips where the locked
    submit takes four (with BEGIN and COMMIT). False when the submit must run in the locked
    transaction instead: the unit is not (or no longer) this worker's open unit (that
    transaction says why, or answers a retry as before), or the task kind writes more at
    submit (it completes the answers from the database, or scores the unit)."""
    if getattr(blueprint, "complete_answers", None) is not None:
        return False
    unit = _VIEWED.take(public_id, worker_id)
    if unit is None:
        with db.snapshot() as connection:
            unit = hot(connection).unit_with_data(connection, public_id)
    if unit is None or unit.worker_id != worker_id or unit.status != "assigned" \
            or _writes_after_submit(blueprint, unit.pool):
        return False
    _check(blueprint, unit, answers)
    stored = blueprint.stored_answers(unit.data, unit.layout, answers)
    now = utcnow()
    with db.one_statement() as connection:
        return hot(connection).store_if_unchanged(connection, unit, worker_id, stored,
                                                  _timings(unit, now, timings), client_id, now)


def _check(blueprint: TaskBlueprint, unit: UnitWithData, answers: Any) -> None:
    """Refuse (422) answers the task kind finds problems in."""
    problems = blueprint.check_submission(unit.data, unit.layout, answers)
    if problems:
        raise WorkRefused(_summary(problems), 422, problems)


def _submits_in_one_statement(db: Database, blueprint: TaskBlueprint, pool: str) -> bool:
    """Whether a unit of `pool` is stored in one statement (`_store_in_one_statement`):
    on PostgreSQL, when the task kind writes nothing else at submit."""
    return db.one_statement_writes and getattr(blueprint, "complete_answers", None) is None \
        and not _writes_after_submit(blueprint, pool)


def _writes_after_submit(blueprint: TaskBlueprint, pool: str) -> bool:
    """Whether the task kind's `after_submit` writes for a unit of `pool` (when it does not
    say, it may)."""
    if getattr(blueprint, "after_submit", None) is None:
        return False
    writes = getattr(blueprint, "after_submit_writes", None)
    return writes is None or writes(pool)


def _timings(unit: UnitWithData, now: datetime, client: dict[str, Any]) -> dict[str, Any]:
    """A submission's timings: the server's (assigned, submitted, how long between) and what
    the page sent."""
    return {"server": {"assigned_at": iso_utc(unit.assigned_at), "submitted_at": iso_utc(now),
                       "duration_seconds": round((now - unit.assigned_at).total_seconds(), 3)},
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
    with db.transaction() as connection:
        unit = owned_unit(hot(connection).lock_unit_with_data(connection, public_id), worker_id)
        if unit.status != "assigned":
            raise WorkRefused(f"this unit is {unit.status}; nothing to check", 409)
        result = blueprint.check_dialogue(connection, SubmittedUnit(
            unit.id, unit.pool, unit.task_run_id, worker_id, unit.data, unit.layout, answers,
            unit.times_expired), dialogue_key)
        if result is None:  # the same answer for real and gold units: nothing to check
            raise WorkRefused("this unit has no dialogue checks", 404)
        return result
