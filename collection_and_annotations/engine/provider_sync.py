"""Bring recorded decisions and bonuses to the provider's platform, each once.

A row is taken with a conditional UPDATE (its state and due time as read), so two senders
(the launcher's background loop and a request) never both send it. A failure is written with
its error and retried with back-off; nothing is dropped. A bonus's pay call is not idempotent
on Prolific, so `paying` is committed before it is made and a pay whose outcome is unknown
(the request may have arrived) becomes `uncertain` and is never repeated on its own.
"""

from __future__ import annotations

import sys
import threading
from datetime import timedelta
from typing import Any

from sqlalchemy import bindparam, select, update

from collection_and_annotations.engine.allocation import release_statement, release_units
from collection_and_annotations.engine.runs import task_units
from collection_and_annotations.providers.base import Provider, ProviderError, Visit
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Assignment,
    Bonus,
    ReviewDecision,
    Submission,
    Unit,
    Worker,
    utcnow,
)

LEASE = timedelta(minutes=5)  # a row being sent; a sender that died frees it after this
MAX_BACKOFF_SECONDS = 3600
BATCH = 20
# the states a row is sent from: a decision left `sending` by a sender that died is sent again
# after the lease (a change of state: sent twice, it cannot apply twice); a bonus `set_up` is
# paid, not set up again
SENT_DECISIONS = ("pending", "failed", "sending")
SENT_BONUSES = ("pending", "failed", "set_up")
# sends the requester is shown and may retry or settle (the dashboard's "not sent" lists)
FAILED_DECISION = ReviewDecision.sync_state == "failed"
UNSETTLED_BONUS = Bonus.state.in_(("failed", "uncertain"))
INTERRUPTED_PAY = ("the server stopped while this bonus was being paid, so the platform may "
                   "have paid it: check there, then mark it paid or not paid")
# platform statuses of a visit the worker gave up (Prolific's): its unit goes back to the pool
ABANDONED = frozenset({"RETURNED", "TIMED-OUT"})
# Abandoned visits' units back to the pool, only if still open: a submit that committed
# meanwhile stays.
_ABANDONED = release_statement(Unit.id.in_(bindparam("ids", expanding=True)),
                               Unit.status == "assigned")


def backoff(attempts: int) -> timedelta:
    return timedelta(seconds=min(MAX_BACKOFF_SECONDS, 5 * 2 ** max(0, attempts - 1)))


def _take(db: Database, model: type, row_id: int, states: tuple[str, ...],
          **values: object) -> tuple[Any, Visit, bool | None] | None:
    """Lease a due row in one of `states` (writing `values` with the lease): the row, its
    unit's visit and whether the platform lists it (None: not checked); None when someone
    else has it or it is not due."""
    now = utcnow()
    state = model.sync_state if model is ReviewDecision else model.state
    with db.session() as session:
        taken = session.execute(
            update(model).where(model.id == row_id, model.next_attempt_at <= now,
                                state.in_(states))
            .values(attempts=model.attempts + 1, next_attempt_at=now + LEASE, **values)
            .execution_options(synchronize_session=False))
    if taken.rowcount != 1:
        return None
    with db.read() as session:
        row = session.get(model, row_id)
        public_id, worker, visit_id, verified = session.execute(
            select(Unit.public_id, Worker.provider_worker_id, Unit.provider_session,
                   Unit.provider_verified).join(Worker, Worker.id == Unit.worker_id)
            .where(Unit.id == row.unit_id)).one()
    return row, Visit(public_id, worker, visit_id or ""), verified


def _write(db: Database, model: type, row_id: int, **values: object) -> None:
    with db.session() as session:
        session.execute(update(model).where(model.id == row_id).values(**values)
                        .execution_options(synchronize_session=False))


def send_review(db: Database, provider: Provider, row_id: int) -> None:
    taken = _take(db, ReviewDecision, row_id, SENT_DECISIONS, sync_state="sending")
    if taken is None:
        return
    row, visit, verified = taken
    if verified is False and row.decision != "reject":
        _write(db, ReviewDecision, row_id, sync_state="not_sent", next_attempt_at=None,
               last_error="the platform does not list this worker's visit (forged identity)")
        return
    try:
        sent = provider.review(visit, row.decision, row.reason, row.rejection_category)
    except ProviderError as exc:
        _write(db, ReviewDecision, row_id, sync_state="failed", last_error=str(exc),
               next_attempt_at=utcnow() + backoff(row.attempts))
        return
    _write(db, ReviewDecision, row_id, sync_state="done" if sent else "not_sent",
           synced_at=utcnow(), last_error=None, next_attempt_at=None)


def send_bonus(db: Database, provider: Provider, row_id: int) -> None:
    taken = _take(db, Bonus, row_id, SENT_BONUSES)
    if taken is None:
        return
    row, visit, _ = taken
    ref = row.provider_ref
    if row.state != "set_up":
        try:
            ref = provider.bonus_setup(visit, row.amount_cents, row.reason)
        except ProviderError as exc:
            _write(db, Bonus, row_id, state="failed", last_error=str(exc),
                   next_attempt_at=utcnow() + backoff(row.attempts))
            return
    _write(db, Bonus, row_id, state="paying", provider_ref=ref)  # committed before paying
    try:
        provider.bonus_pay(visit, ref, row.amount_cents, row.reason)
    except ProviderError as exc:
        if exc.maybe_done:
            _write(db, Bonus, row_id, state="uncertain", last_error=str(exc),
                   next_attempt_at=None)
        else:
            _write(db, Bonus, row_id, state="set_up", last_error=str(exc),
                   next_attempt_at=utcnow() + backoff(row.attempts))
        return
    _write(db, Bonus, row_id, state="paid", paid_at=utcnow(), last_error=None,
           next_attempt_at=None)


def verify_visits(db: Database, provider: Provider, task_id: int) -> int:
    """Check the task's units against the visits the platform lists (Prolific). A completed
    unit it does not list is marked unverified and its submission flagged for review; an open
    unit whose visit the worker returned or let time out there goes back to the pool now, not
    at our own deadline. Returns how many units were flagged."""
    listed = provider.listed_visits()
    if listed is None:
        return 0
    # One query for both: submitted units not yet verified, and open units.
    to_verify = Submission.id.is_not(None) & Unit.provider_verified.is_not(True)
    is_open = Unit.status == "assigned"
    with db.read() as session:
        units = session.execute(
            select(Unit.id, Worker.provider_worker_id, Unit.provider_session, to_verify, is_open)
            .join(Worker, Worker.id == Unit.worker_id).join(Assignment)
            .outerjoin(Submission, Submission.unit_id == Unit.id)
            .where(Assignment.task_id == task_id, to_verify | is_open)).all()
    submitted = [(u, (worker, visit)) for u, worker, visit, unverified, _ in units if unverified]
    forged = [u for u, visit in submitted if visit not in listed]
    verified = [u for u, visit in submitted if visit in listed]
    abandoned = [u for u, worker, visit, _, still_open in units
                 if still_open and listed.get((worker, visit)) in ABANDONED]
    with db.session() as session:
        if verified:
            session.execute(update(Unit).where(Unit.id.in_(verified))
                            .values(provider_verified=True))
        if forged:
            session.execute(update(Unit).where(Unit.id.in_(forged))
                            .values(provider_verified=False))
            session.execute(update(Submission).where(Submission.unit_id.in_(forged))
                            .values(flagged_for_review=True))
        if abandoned:
            release_units(session, _ABANDONED, {"ids": abandoned}, "timed_out")
    return len(forged)

def settle_interrupted_pays(db: Database, task_id: int) -> int:
    """Bonuses left `paying` past their lease: their sender stopped (a crash, a kill) after
    committing `paying` and before writing what the pay call gave, so the platform may have
    paid them. They become `uncertain`, for the requester to check, and are never paid again
    on their own. Returns how many."""
    now = utcnow()
    with db.session() as session:
        return session.execute(
            update(Bonus).where(Bonus.unit_id.in_(task_units(task_id)),
                                Bonus.state == "paying", Bonus.next_attempt_at <= now)
            .values(state="uncertain", next_attempt_at=None, last_error=INTERRUPTED_PAY)
            .execution_options(synchronize_session=False)).rowcount


def sync_due(db: Database, provider: Provider, task_id: int) -> None:
    """One pass: pays a stopped sender left unknown settled as uncertain, then decisions,
    then bonuses, that are due (oldest first)."""
    settle_interrupted_pays(db, task_id)
    now = utcnow()
    with db.read() as session:
        due = [(send, session.scalars(
            select(model.id).where(model.unit_id.in_(task_units(task_id)),
                                   model.next_attempt_at <= now, state.in_(states))
            .order_by(model.id).limit(BATCH)).all())
            for model, state, states, send in (
                (ReviewDecision, ReviewDecision.sync_state, SENT_DECISIONS, send_review),
                (Bonus, Bonus.state, SENT_BONUSES, send_bonus))]
    for send, row_ids in due:
        for row_id in row_ids:
            send(db, provider, row_id)


class ProviderSync(threading.Thread):
    """The launcher's background sender: platform calls take seconds, so they run here and
    not in the once-a-second monitor (whose heartbeat must not wait for them)."""

    def __init__(self, db: Database, provider: Provider, task_id: int,
                 every: float = 2.0, verify_every: float = 60.0):
        super().__init__(name="provider-sync", daemon=True)
        self.db, self.provider, self.task_id = db, provider, task_id
        self.every, self.verify_every = every, verify_every
        self.stopped = threading.Event()

    def run(self) -> None:
        since_verify = self.verify_every
        while not self.stopped.wait(self.every):
            try:
                since_verify += self.every
                if since_verify >= self.verify_every:
                    verify_visits(self.db, self.provider, self.task_id)
                    since_verify = 0.0
                sync_due(self.db, self.provider, self.task_id)
            except Exception as exc:  # reported, retried at the next pass; never stops serving
                print(f"warning: provider sync failed ({type(exc).__name__}: {exc}); "
                      "retrying", file=sys.stderr, flush=True)

    def stop(self) -> None:
        self.stopped.set()
