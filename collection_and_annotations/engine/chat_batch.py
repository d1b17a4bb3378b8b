"""The chat's and the arena's frequent steps (the worker's message, the bot's reply, the
worker's vote) many to one transaction, on SQLite: group commit.

SQLite has one writer at a time, and each call into it releases the GIL. A step run on its own
makes about ten such calls while it holds the write lock, and under load each call can wait
milliseconds for the GIL (the event loop streaming replies holds it), so every writer queues
behind one that waits. Here the steps that wait together share one transaction of at most eight
calls, whatever their number: one query reads every chat and battle they touch (as JSON
values), one statement inserts every message, one updates the conversations of each kind, one
inserts the arena's votes and one ends the battles they finish. Each step is checked exactly
as on its own (engine/chat.py, engine/arena.py) and its outcome is its own: one step refused
does not refuse the others.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from collection_and_annotations.engine import arena
from collection_and_annotations.engine.arena import ArenaRules, BattleVoteStep
from collection_and_annotations.engine.chat import (
    BOT,
    ChatRules,
    LockedUnit,
    MessageStep,
    ReplyStep,
    UnitRow,
    accept_message,
    open_unit,
    reply_row,
    respond_by,
    send,
    shown_reply,
    side,
    storable,
    store_reply,
)
from collection_and_annotations.engine.chat_sql import (
    ADD_MESSAGES,
    BOTS_SPOKE,
    LOCK_BATCH,
    WORKERS_SPOKE,
    sqlite_message_values,
)
from collection_and_annotations.engine.work import WorkRefused, worker_step
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import utcnow

Step = MessageStep | BattleVoteStep | ReplyStep


@dataclass
class Outcome:
    """A step's result, or the exception it raises to its caller."""

    result: Any = None
    error: BaseException | None = None


def write_one(db: Database, step: Step, rules: ChatRules) -> Any:
    """A step in a transaction of its own (PostgreSQL, and the fallback of a failed batch)."""
    if isinstance(step, MessageStep):
        return send(db, step, rules)
    if isinstance(step, BattleVoteStep):
        assert isinstance(rules, ArenaRules)
        return arena.vote(db, step, rules)
    return store_reply(db, step, rules)


def write_batch(db: Database, steps: list[Step], rules: ChatRules) -> list[Outcome]:
    """Every step in one SQLite transaction; at most one step per unit (the caller's rule:
    a second step of a chat must see the first). If the transaction fails as a whole, each
    step is written on its own, so each gets its own result or error."""
    assert len({step.public_id for step in steps}) == len(steps), "one step per unit"
    try:
        return _in_one_transaction(db, steps, rules)
    except Exception:  # noqa: BLE001 - each step on its own says what went wrong with it
        outcomes = []
        for step in steps:
            try:
                outcomes.append(Outcome(write_one(db, step, rules)))
            except Exception as exc:  # noqa: BLE001 - handed to the step's caller
                outcomes.append(Outcome(error=exc))
        return outcomes


def _in_one_transaction(db: Database, steps: list[Step], rules: ChatRules) -> list[Outcome]:
    outcomes: list[Outcome] = []
    rows: list[list[Any]] = []
    spoke: list[int] = []
    answered: list[int] = []
    votes: list[dict[str, Any]] = []
    ended: list[int] = []  # battles' sides the votes end
    with worker_step(db) as connection:
        now = utcnow()
        units_json, waiting_json = connection.execute(LOCK_BATCH, {
            "public_ids": json.dumps([step.public_id for step in steps
                                      if not isinstance(step, ReplyStep)]),
            "conversation_ids": json.dumps([step.job.conversation_id for step in steps
                                            if isinstance(step, ReplyStep)]),
        }).one()
        units = {row[0]: row[1:] for row in json.loads(units_json)}
        waiting = {row[0]: (row[1], row[2]) for row in json.loads(waiting_json)}

        def take(step: Step) -> Any:
            """The step checked as on its own (WorkRefused) and its writes queued: its result."""
            if isinstance(step, ReplyStep):
                job = step.job
                if waiting.get(job.conversation_id) != ("active", BOT):
                    return None  # dropped, as store_reply drops it
                text = storable(step.text)
                rows.append(sqlite_message_values(reply_row(step, text, now)))
                answered.append(job.conversation_id)
                return shown_reply(job, text, now)
            locked = _locked(units.get(step.public_id), step.worker_id, rules)
            if isinstance(step, BattleVoteStep):
                assert isinstance(rules, ArenaRules)
                vote, ending = arena.accept_vote(connection, locked, step, rules, now)
                votes.append(vote)
                ended.extend(ending)
                return None
            answer, jobs, sent = accept_message(connection, locked, step, rules, now)
            rows.extend(sqlite_message_values(row) for row in sent)
            spoke.extend(row["conversation_id"] for row in sent)
            return answer, jobs

        for step in steps:
            try:
                outcomes.append(Outcome(take(step)))
            except WorkRefused as exc:  # this step only: the others are written
                outcomes.append(Outcome(error=exc))
        if rows:
            connection.execute(ADD_MESSAGES, {"rows": json.dumps(rows)})
        if spoke:
            connection.execute(WORKERS_SPOKE, {"conversation_ids": json.dumps(spoke)})
        if answered:
            connection.execute(BOTS_SPOKE, {"conversation_ids": json.dumps(answered),
                                            "respond_by": respond_by(now, rules)})
        if votes:
            arena.store_votes(connection, votes, ended, now)
    return outcomes


def _locked(found: list[Any] | None, worker_id: int, rules: ChatRules) -> LockedUnit:
    """A unit as `LOCK_BATCH` lists it (its message times, as SQLite stores them, read back);
    WorkRefused when it is not the worker's or no longer takes steps."""
    unit = open_unit(UnitRow(*found[:4]) if found else None, worker_id, rules.what)
    return LockedUnit(unit, rules.sides([
        side(conversation[:6], [[*row[:4], datetime.fromisoformat(row[4]), *row[5:]]
                                for row in conversation[6]])
        for conversation in found[4]]), set(found[5]))
