"""The statements of the worker API's hot path (claim, view, draft, submit), as driver SQL.

Building an SQLAlchemy expression and computing its cache key on every request cost more CPU
than the database work itself (about two thirds of a request); running even prepared textual
statements through SQLAlchemy's execution path still cost a sixth of a request. So these run on
the driver's cursor (engine/driver_sql.py), inside the caller's SQLAlchemy transaction, and
each method binds and reads its values as the ORM stores them. The SQL is the same on SQLite
and PostgreSQL except for row locks, which SQLite does not have (it serialises writers instead).
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import Connection

from collection_and_annotations.engine.driver_sql import DriverSQL, first, run
from collection_and_annotations.engine.runs import DONE_STATUSES


class UnitView(NamedTuple):
    """A unit as its worker's page shows it, with that worker's draft (None without one)."""

    id: int
    public_id: str
    status: str
    worker_id: int | None
    times_expired: int
    deadline: datetime | None
    pool: str
    layout: Any
    data: Any
    answers: Any
    position: Any
    saved_at: datetime | None
    task_run_id: int
    assigned_at: datetime | None

    def for_submit(self) -> UnitWithData:
        """What a submission needs of this unit, as read here."""
        return UnitWithData(self.id, self.status, self.worker_id, self.times_expired,
                            self.task_run_id, self.assigned_at, self.layout, self.pool,
                            self.data)


class LockedUnit(NamedTuple):
    id: int
    status: str
    worker_id: int | None
    times_expired: int


class UnitWithData(NamedTuple):
    """A locked unit with what a submission or a chat step needs of it."""

    id: int
    status: str
    worker_id: int | None
    times_expired: int
    task_run_id: int
    assigned_at: datetime | None
    layout: Any
    pool: str
    data: Any


class WorkerView(NamedTuple):
    """A worker as an optimistic claim reads them: their row's version, their units in the
    task, newest first ((public id, status, provider session, pool) each), and the names of
    the qualifications they hold."""

    id: int
    version: str
    held: list[tuple[str, str, str | None, str]]
    qualifications: frozenset[str]


class Claimant(NamedTuple):
    """Who takes a unit, in which run, and when (with the deadline that gives them)."""

    run_id: int
    task_id: int
    worker_id: int
    provider_worker_id: str
    session_id: str
    now: datetime
    deadline: datetime | None


class NewWorkerTake(NamedTuple):
    """What a worker seen for the first time takes with their first claim: a unit of `pool`
    in the run, on this visit (`session_id`), until `deadline`."""

    run_id: int
    session_id: str
    deadline: datetime | None
    pool: str


class TakenUnit(NamedTuple):
    id: int
    public_id: str
    assignment_id: int
    times_expired: int


class HotStatements(DriverSQL):
    """One dialect's statements, each as a method on an open transaction's connection."""

    def __init__(self, dialect: str):
        super().__init__(dialect)
        lock = " FOR UPDATE" if self.postgres else ""
        lock_unit = " FOR UPDATE OF u" if self.postgres else ""
        skip_locked = " FOR UPDATE SKIP LOCKED" if self.postgres else ""
        done = ", ".join(f"'{status}'" for status in DONE_STATUSES)
        sql = self.sql

        # A new worker's name in exports and on the dashboard, made by the database: a
        # random source in Python is a system call, and each lets go of the GIL under load.
        pseudonym = ("'w_' || substr(md5(random()::text), 1, 12)" if self.postgres
                     else "'w_' || lower(hex(randomblob(6)))")
        upsert_worker = (
            "INSERT INTO workers (provider, provider_worker_id, pseudonym, created_at) "
            f"VALUES (:provider, :provider_worker_id, {pseudonym}, :now) "
            "ON CONFLICT (provider, provider_worker_id) DO UPDATE SET provider = excluded.provider "
            "RETURNING id")
        held_units = (
            "SELECT u.id, u.public_id, u.status, u.provider_session, u.pool FROM units u "
            "JOIN assignments a ON a.id = u.assignment_id "
            f"WHERE a.task_id = :task_id AND u.worker_id = {{worker}} "
            f"AND u.status IN ('assigned', {done})")
        held_qualifications = (
            "SELECT q.name FROM granted_qualifications g JOIN qualifications q "
            "ON q.id = g.qualification_id WHERE g.worker_id = {worker}")
        self._upsert_worker = sql(upsert_worker)
        if self.postgres:
            # The worker's qualifications (once, in their own CTE, not once per unit row) and
            # units in the task, of the worker in `w` (a row with `id`).
            # `{also}`: more of the worker's units, beside those the statement's snapshot holds.
            state = ("q AS MATERIALIZED (SELECT ARRAY("
                     + held_qualifications.format(worker="w.id") + ") AS names FROM w) "
                     "SELECT w.id, {version}q.names, h.public_id, h.status, "
                     "h.provider_session, h.pool FROM w CROSS JOIN q LEFT JOIN LATERAL ("
                     + held_units.format(worker="w.id") + "{also}) h ON true ORDER BY h.id DESC")
            # After `upsert_worker` locked the row, in a statement of its own: a statement
            # sees what was committed when it began, and the lock may have waited for
            # another claim of this worker that took a unit.
            self._worker_state = sql("WITH w AS (SELECT :worker_id AS id), "
                                     + state.format(version="", also=""))
            # Without a lock or a write for a known worker (optimistic claims): the row's
            # version (xmin, which every write of the row changes) is what the claim's take
            # checks, and the units are those of that version. The SELECT does not see a row
            # `ins` inserts, nor one a concurrent first claim inserted after this statement
            # began: then there is no row at all.
            new_worker = (
                "WITH ins AS (INSERT INTO workers (provider, provider_worker_id, pseudonym, "
                f"created_at) VALUES (:provider, :provider_worker_id, {pseudonym}, :now) "
                "ON CONFLICT (provider, provider_worker_id) DO NOTHING RETURNING id, xmin), ")
            worker_row = (
                "w AS (SELECT id, xmin FROM ins UNION ALL SELECT id, xmin FROM workers "
                "WHERE provider = :provider AND provider_worker_id = :provider_worker_id), ")
            self._worker_view = sql(new_worker + worker_row
                                    + state.format(version="w.xmin::text, ", also=""))
        else:
            self._held_units = sql(held_units.format(worker=":worker_id") + " ORDER BY u.id DESC")
            self._held_qualifications = sql(held_qualifications.format(worker=":worker_id"))
        # `claim_order`: the units' random order, the key of ix_units_free (models.Unit).
        # `{gate}`: a condition checked once before any unit is looked at (or locked).
        # `{worker}`: the taking worker's id (a value, or the row a first claim inserts).
        # `{pseudonym}`: their pseudonym, which exports write as a chat's `origin_worker_id`:
        # an author is excluded by it or by their provider id (NULL for a worker made by
        # this statement, whose new pseudonym no data can hold).
        take_unit = (
            "UPDATE units SET status = 'assigned', worker_id = {worker}, "
            "provider_session = :session_id, assigned_at = :now, deadline = :deadline "
            "WHERE id = (SELECT u.id FROM units u WHERE {gate}u.task_run_id = :run_id "
            "AND u.pool = :pool AND u.status = 'launched' "
            "AND NOT EXISTS (SELECT 1 FROM assignment_groups ag JOIN worker_groups wg "
            "ON wg.group_id = ag.group_id WHERE ag.assignment_id = u.assignment_id "
            "AND wg.task_id = :task_id AND wg.worker_id = {worker}) "
            "AND NOT EXISTS (SELECT 1 FROM assignment_exclusions ae "
            "WHERE ae.assignment_id = u.assignment_id "
            "AND ae.provider_worker_id IN (:provider_worker_id, {pseudonym})) "
            f"ORDER BY u.claim_order LIMIT 1{skip_locked}) AND status = 'launched' "
            "RETURNING id, public_id, assignment_id, times_expired")
        known_pseudonym = "(SELECT pseudonym FROM workers WHERE id = :worker_id)"
        if self.postgres:  # one round trip: the unit taken, its groups noted, old drafts gone
            after_taking = (
                "g AS (INSERT INTO worker_groups (task_id, worker_id, group_id, unit_id) "
                "SELECT :task_id, {worker}, ag.group_id, t.id FROM assignment_groups ag "
                "JOIN t ON ag.assignment_id = t.assignment_id), "
                "d AS (DELETE FROM drafts WHERE unit_id IN "
                "(SELECT id FROM t WHERE times_expired > 0) AND worker_id <> {worker}) ")
            known = {"worker": ":worker_id", "pseudonym": known_pseudonym}
            self._assign_unit = sql(
                f"WITH t AS ({take_unit.format(gate='', **known)}), "
                f"{after_taking.format(**known)}"
                "SELECT id, public_id, assignment_id, times_expired FROM t")
            # Optimistic claims, without a transaction: the worker's row is locked before any
            # unit and must still be the version the claim read (`worker_view`); taking a
            # unit writes the row, so every other claim of this worker that read the old
            # version finds it changed here. The first column says whether it was unchanged.
            self._assign_unit_if_unchanged = sql(
                "WITH w AS MATERIALIZED (SELECT id FROM workers WHERE id = :worker_id "
                "AND xmin::text = :version FOR UPDATE), "
                f"t AS ({take_unit.format(gate='EXISTS (SELECT 1 FROM w) AND ', **known)}), "
                "v AS (UPDATE workers SET provider = provider WHERE id = :worker_id "
                f"AND EXISTS (SELECT 1 FROM t)), {after_taking.format(**known)}"
                "SELECT EXISTS (SELECT 1 FROM w), t.id, t.public_id, t.assignment_id, "
                "t.times_expired FROM (VALUES (1)) AS one LEFT JOIN t ON true")
            # A first claim in one statement (`worker_view` with a take): a worker seen for
            # the first time is made and takes a unit in the same statement, which then reads
            # as `worker_view` does with that unit among the worker's (the snapshot does not
            # hold it). A known worker is only read. A new row needs no version check: a
            # concurrent first claim of the same worker waits on the insert, then does not
            # see the row (see `_worker_view`).
            made = {"worker": "(SELECT id FROM ins)", "pseudonym": "NULL"}
            self._worker_view_or_take = sql(
                new_worker
                + f"t AS ({take_unit.format(gate='EXISTS (SELECT 1 FROM ins) AND ', **made)}), "
                + after_taking.format(**made) + ", " + worker_row
                + state.format(version="w.xmin::text, ",
                               also=" UNION ALL SELECT t.id, t.public_id, 'assigned', "
                                    ":session_id, :pool FROM t"))
        else:
            self._take_unit = sql(take_unit.format(gate="", worker=":worker_id",
                                                   pseudonym=known_pseudonym))
            self._clear_other_drafts = sql(
                "DELETE FROM drafts WHERE unit_id = :unit_id AND worker_id <> :worker_id")
            self._add_groups = sql(
                "INSERT INTO worker_groups (task_id, worker_id, group_id, unit_id) "
                "SELECT :task_id, :worker_id, group_id, :unit_id FROM assignment_groups "
                "WHERE assignment_id = :assignment_id")
        self._unit_view = sql(
            "SELECT u.id, u.public_id, u.status, u.worker_id, u.times_expired, u.deadline, "
            "u.pool, u.layout, a.data, d.answers, d.position, d.saved_at, u.task_run_id, "
            "u.assigned_at FROM units u "
            "JOIN assignments a ON a.id = u.assignment_id "
            "LEFT JOIN drafts d ON d.unit_id = u.id AND d.worker_id = :worker_id "
            "WHERE u.public_id = :public_id")
        lock_row = ("SELECT id, status, worker_id, times_expired FROM units "
                    f"WHERE public_id = :public_id{lock}")
        upsert_draft = (
            "INSERT INTO drafts (unit_id, worker_id, answers, position, saved_at) {values} "
            "ON CONFLICT (unit_id, worker_id) DO UPDATE SET answers = excluded.answers, "
            "position = excluded.position, saved_at = excluded.saved_at")
        if self.postgres:  # one round trip: the unit locked, the draft written if it may be
            self._save_draft = sql(
                f"WITH u AS ({lock_row}), w AS ("
                + upsert_draft.format(values="SELECT id, :worker_id, :answers, :position, :now "
                                             "FROM u WHERE worker_id = :worker_id "
                                             "AND status = 'assigned'")
                + ") SELECT id, status, worker_id, times_expired FROM u")
        else:
            self._lock_unit = sql(lock_row)
            self._upsert_draft = sql(upsert_draft.format(
                values="VALUES (:unit_id, :worker_id, :answers, :position, :now)"))
        unit_with_data = (
            "SELECT u.id, u.status, u.worker_id, u.times_expired, u.task_run_id, u.assigned_at, "
            "u.layout, u.pool, a.data FROM units u JOIN assignments a ON a.id = u.assignment_id "
            "WHERE u.public_id = :public_id")
        self._unit_with_data = sql(unit_with_data)
        self._lock_unit_with_data = sql(unit_with_data + lock_unit)
        self._stored_answers = sql("SELECT answers FROM submissions WHERE unit_id = :unit_id")
        insert_submission = (
            "INSERT INTO submissions (unit_id, worker_id, task_run_id, answers, timings, "
            "client_id, created_at) VALUES (:unit_id, :worker_id, :task_run_id, :answers, "
            ":timings, :client_id, :now)")
        delete_drafts = "DELETE FROM drafts WHERE unit_id = :unit_id"
        complete_unit = (
            "UPDATE units SET status = 'completed', completed_at = :now WHERE id = :unit_id")
        # PostgreSQL: one round trip; SQLite (no writing WITH) answers in process anyway.
        self._store_submission = (
            [sql(f"WITH s AS ({insert_submission}), d AS ({delete_drafts}) {complete_unit}")]
            if self.postgres else [sql(insert_submission), sql(delete_drafts), sql(complete_unit)])
        if self.postgres:
            # Without a transaction: the unit completed only if it is still the assignment the
            # submission was judged on (its worker's, still assigned, the same try), and the
            # submission stored and the drafts removed only with it.
            self._store_if_unchanged = sql(
                f"WITH c AS ({complete_unit} AND status = 'assigned' "
                "AND worker_id = :worker_id AND times_expired = :attempt RETURNING id), "
                "s AS (INSERT INTO submissions (unit_id, worker_id, task_run_id, answers, "
                "timings, client_id, created_at) SELECT id, :worker_id, :task_run_id, "
                ":answers, :timings, :client_id, :now FROM c), "
                "d AS (DELETE FROM drafts WHERE unit_id IN (SELECT id FROM c)) "
                "SELECT EXISTS (SELECT 1 FROM c)")

    # -- claim --------------------------------------------------------------------------------

    def upsert_worker(self, connection: Connection, provider: str, provider_worker_id: str,
                      now: datetime) -> int:
        """The worker's id; their row stays locked until the transaction ends."""
        return run(connection, self._upsert_worker, {
            "provider": provider, "provider_worker_id": provider_worker_id,
            "now": self.time(now)}).fetchone()[0]

    def worker_and_units(self, connection: Connection, provider: str,
                         provider_worker_id: str, now: datetime, task_id: int
                         ) -> tuple[int, list[tuple[str, str, str | None, str]], frozenset[str]]:
        """`upsert_worker`, the worker's units in the task, newest first ((public id, status,
        provider session, pool) each), and the names of the qualifications they hold: read
        after the row is locked, so every earlier claim of theirs is seen."""
        worker_id = self.upsert_worker(connection, provider, provider_worker_id, now)
        if self.postgres:
            rows = run(connection, self._worker_state,
                       {"worker_id": worker_id, "task_id": task_id}).fetchall()
            return worker_id, [row[2:] for row in rows if row[2] is not None], \
                frozenset(rows[0][1])
        rows = run(connection, self._held_units,
                   {"task_id": task_id, "worker_id": worker_id}).fetchall()
        names = run(connection, self._held_qualifications, {"worker_id": worker_id}).fetchall()
        return worker_id, [row[1:] for row in rows], frozenset(name for (name,) in names)

    def worker_view(self, connection: Connection, provider: str, provider_worker_id: str,
                    now: datetime, task_id: int, take: NewWorkerTake | None = None
                    ) -> WorkerView | None:
        """PostgreSQL, without a transaction: what `worker_and_units` reads, without locking
        or writing a known worker's row, and the version of that row. None when a concurrent
        first claim of the same worker created the row meanwhile. With `take`, a worker seen
        for the first time also takes a unit of `take.pool` in the same statement (when the
        pool has one they may take): it is among their units, assigned, on this visit."""
        values = {"provider": provider, "provider_worker_id": provider_worker_id,
                  "now": self.time(now), "task_id": task_id}
        statement = self._worker_view
        if take is not None:
            statement = self._worker_view_or_take
            values.update(run_id=take.run_id, session_id=take.session_id,
                          deadline=self.time(take.deadline), pool=take.pool)
        rows = run(connection, statement, values).fetchall()
        if not rows:
            return None
        return WorkerView(rows[0][0], rows[0][1], [row[3:] for row in rows if row[3] is not None],
                          frozenset(rows[0][2]))

    def assign_unit_if_unchanged(self, connection: Connection, version: str,
                                 claimant: Claimant, pool: str) -> tuple[bool, TakenUnit | None]:
        """PostgreSQL, without a transaction: `assign_unit` if the worker's row is still at
        `version` (as `worker_view` read it). Returns whether it was, and the unit taken."""
        row = run(connection, self._assign_unit_if_unchanged,
                  {**self._assign_values(claimant, pool), "version": version}).fetchone()
        return row[0], None if row[1] is None else TakenUnit._make(row[1:])

    def _assign_values(self, claimant: Claimant, pool: str) -> dict[str, Any]:
        return {**claimant._asdict(), "now": self.time(claimant.now),
                "deadline": self.time(claimant.deadline), "pool": pool}

    def assign_unit(self, connection: Connection, claimant: Claimant, pool: str
                    ) -> TakenUnit | None:
        """Assign the pool's first unit this worker may take (a group they have not had, an
        assignment they did not author), note its groups as theirs and clear drafts an
        earlier worker left on it."""
        values = self._assign_values(claimant, pool)
        if self.postgres:
            return first(connection, self._assign_unit, values, TakenUnit._make)
        taken = first(connection, self._take_unit, values, TakenUnit._make)
        if taken is None:
            return None
        if taken.times_expired:  # a unit that changed hands keeps nothing of its earlier worker
            run(connection, self._clear_other_drafts,
                {"unit_id": taken.id, "worker_id": claimant.worker_id})
        run(connection, self._add_groups, {"task_id": claimant.task_id,
                                           "worker_id": claimant.worker_id,
                                           "unit_id": taken.id,
                                           "assignment_id": taken.assignment_id})
        return taken

    # -- view and draft -----------------------------------------------------------------------

    def unit_view(self, connection: Connection, public_id: str, worker_id: int
                  ) -> UnitView | None:
        return first(connection, self._unit_view,
                     {"public_id": public_id, "worker_id": worker_id}, self._read_unit_view)

    def _read_unit_view(self, row: tuple[Any, ...]) -> UnitView:
        (unit_id, public, status, owner, expired, deadline, pool, layout, data, answers,
         position, saved_at, run_id, assigned_at) = row
        read_json, read_time = self.read_json, self.read_time
        return UnitView(unit_id, public, status, owner, expired, read_time(deadline), pool,
                        read_json(layout), read_json(data), read_json(answers),
                        read_json(position), read_time(saved_at), run_id,
                        read_time(assigned_at))

    def save_draft(self, connection: Connection, public_id: str, worker_id: int,
                   answers: Any, position: Any, now: datetime) -> LockedUnit | None:
        """Lock the unit and, if it is this worker's and still assigned, write their draft;
        returns the unit as locked (None when there is no such unit). One statement on
        PostgreSQL (`Database.one_statement`)."""
        values = {"public_id": public_id, "worker_id": worker_id,
                  "answers": self.document(answers), "position": self.document(position),
                  "now": self.time(now)}
        if self.postgres:
            return first(connection, self._save_draft, values, LockedUnit._make)
        unit = first(connection, self._lock_unit, values, LockedUnit._make)
        if unit is not None and unit.worker_id == worker_id and unit.status == "assigned":
            run(connection, self._upsert_draft, {**values, "unit_id": unit.id})
        return unit

    # -- submit -------------------------------------------------------------------------------

    def lock_unit_with_data(self, connection: Connection, public_id: str
                            ) -> UnitWithData | None:
        return first(connection, self._lock_unit_with_data, {"public_id": public_id},
                     self._read_unit_with_data)

    def unit_with_data(self, connection: Connection, public_id: str) -> UnitWithData | None:
        """As `lock_unit_with_data`, without the lock."""
        return first(connection, self._unit_with_data, {"public_id": public_id},
                     self._read_unit_with_data)

    def _read_unit_with_data(self, row: tuple[Any, ...]) -> UnitWithData:
        unit_id, status, owner, expired, run_id, assigned_at, layout, pool, data = row
        return UnitWithData(unit_id, status, owner, expired, run_id,
                            self.read_time(assigned_at), self.read_json(layout), pool,
                            self.read_json(data))

    def stored_answers(self, connection: Connection, unit_id: int) -> Any:
        return self.read_json(
            run(connection, self._stored_answers, {"unit_id": unit_id}).fetchone()[0])

    def store_submission(self, connection: Connection, *, unit_id: int, worker_id: int,
                         task_run_id: int, answers: Any, timings: Any, client_id: str | None,
                         now: datetime) -> None:
        """The submission stored, the unit's drafts gone and the unit completed."""
        values = self._submission_values(unit_id, worker_id, task_run_id, answers, timings,
                                         client_id, now)
        for statement in self._store_submission:
            run(connection, statement, values)

    def store_if_unchanged(self, connection: Connection, unit: UnitWithData, worker_id: int,
                           answers: Any, timings: Any, client_id: str | None, now: datetime
                           ) -> bool:
        """PostgreSQL, without a transaction: `store_submission` if the unit is still
        `worker_id`'s, assigned, on the same try as `unit` was read; whether it was."""
        values = self._submission_values(unit.id, worker_id, unit.task_run_id, answers, timings,
                                         client_id, now)
        values["attempt"] = unit.times_expired
        return run(connection, self._store_if_unchanged, values).fetchone()[0]

    def _submission_values(self, unit_id: int, worker_id: int, task_run_id: int, answers: Any,
                           timings: Any, client_id: str | None, now: datetime
                           ) -> dict[str, Any]:
        return {"unit_id": unit_id, "worker_id": worker_id, "task_run_id": task_run_id,
                "answers": self.document(answers), "timings": self.document(timings),
                "client_id": client_id, "now": self.time(now)}


@cache
def _for_dialect(dialect: str) -> HotStatements:
    return HotStatements(dialect)


def hot(connection: Connection) -> HotStatements:
    return _for_dialect(connection.dialect.name)
