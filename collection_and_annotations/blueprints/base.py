"""What the task engine needs from a kind of task (a "blueprint", as the original called it).

Every kind is one module under `blueprints/` that registers a `TaskBlueprint` (see
`registry.py`). The engine calls these hooks and nothing else, so static annotation, dialogue
collection with bots, screening and gold plug in without edits to the engine:

- `plan` says which assignments exist (and in which pool: main work, screening, gold);
- `unit_layout` fixes a unit's own presentation order when the unit is created;
- `pools_for` routes a worker who asks for work (eligibility: screening first, gold on a
  schedule, back to a unit they must finish, or no work at all); an optional
  `new_worker_pools()` says where it routes a worker seen for the first time when that
  needs no database read, so a first claim can make the worker and take their unit in one
  statement;
- `unit_content` / `unit_kind` are what the worker page receives (it routes on the kind);
- `check_submission` judges a submission on the server, `stored_answers` completes it;
- `export_dialogues` / `export_rows` turn stored submissions into export records without the
  conf files (they read only what the run stored).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import Connection

MAIN_POOL = "main"
# Units a worker does before real work (training); finishing one does not end their visit.
SCREENING_POOL = "screening"
GOLD_POOL = "gold"
# Pools of quality-control units: not the work a task is run for (progress and
# `--exclude-quality` leave them out). Every other pool is real work (a chat task has one per
# bot spec).
QUALITY_POOLS = (SCREENING_POOL, GOLD_POOL)
# Units an LLM judge answers (`judges/`): made for that judge, never routed to a person, and
# left out of the task's progress, exports and human figures unless asked for.
JUDGE_POOL = "judge"


@dataclass(frozen=True)
class AssignmentPlan:
    """An assignment the engine should offer: a key that changes when its content changes,
    its groups, who may not take it, and the pool it is served from."""

    key: str
    annotators: int
    groups: list[str]
    excluded_workers: list[str]
    data: dict[str, Any]
    pool: str = MAIN_POOL
    label: str = ""  # how start-up names it when reporting changes (e.g. its dialogue ids)
    # `annotators` per run: units done in earlier runs do not count (screening and gold
    # units are a per-run supply, not a number of annotations wanted)
    per_run: bool = False


@dataclass(frozen=True)
class WorkerContext:
    """Who asks for work, as the pools hook sees them."""

    task_id: int
    run_id: int
    worker_id: int
    provider_worker_id: str
    # the names of the qualifications the worker holds (the claim has read them)
    qualifications: frozenset[str]
    # the worker's assigned and done units in this task, per pool (the claim has read them)
    units_by_pool: Mapping[str, int] = field(default_factory=dict)
    # the public id of the worker's open (assigned) unit in this task, per pool (the newest)
    open_units: Mapping[str, str] = field(default_factory=dict)


class NoWork(Exception):
    """Raised by `pools_for` when this worker gets nothing (e.g. failed screening); the
    message is shown to the worker, `status` is the HTTP status."""

    def __init__(self, message: str, status: int = 403):
        super().__init__(message)
        self.status = status


class ResumeUnit(Exception):
    """Raised by `pools_for` when this worker must go on with a unit they hold (a training
    or gold unit open on another visit) instead of taking a new one."""

    def __init__(self, public_id: str):
        super().__init__(public_id)
        self.public_id = public_id


@dataclass(frozen=True)
class SubmittedUnit:
    """A unit whose submission is being stored (inside the submit transaction)."""

    id: int
    pool: str
    task_run_id: int
    worker_id: int
    data: dict[str, Any]
    layout: dict[str, Any] | None
    answers: Any
    attempt: int = 0  # the unit's times_expired: which worker's try this is
    stored: Any = None  # what is being stored (`after_submit` sees it; None before)


class SubmitRefused(Exception):
    """Raised by a blueprint's `after_submit` or `complete_answers` to refuse a submission
    (nothing is stored); `problems` as `check_submission` gives them."""

    def __init__(self, message: str, status: int = 422,
                 problems: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.status = status
        self.problems = problems


class TaskBlueprint(Protocol):
    name: str

    def plan(self) -> list[AssignmentPlan]:
        """Every assignment of this task, in serving order."""

    def unit_layout(self, data: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        """The presentation order of one new unit of an assignment. None means the data's
        order, and must not depend on `rng`: the engine asks once per assignment and skips the
        per-unit call when there is nothing to shuffle."""

    def pools_for(self, connection: Connection, worker: WorkerContext) -> list[str]:
        """Pools to take a unit from, in order of preference; raise NoWork to refuse. A kind
        may also define `new_worker_pools() -> list[str] | None`: what this returns for a
        worker seen for the first time (no qualification, no unit), when it reads no
        database; None (or no such method) when it does."""

    def unit_kind(self, pool: str) -> str:
        """What the worker page shows for a unit of this pool (e.g. "annotation")."""

    def unit_content(self, data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
        """What the worker page receives for an assignment's `data` (nothing identifying).
        A kind whose units change as the worker works (live chat) may also define
        `unit_state(connection, unit_id, attempt, data, layout)`, merged into the same view."""

    def describe(self) -> dict[str, Any]:
        """Definitions stored with the run so exports read answers without the conf files."""

    def stored_answers(
        self, data: dict[str, Any], layout: dict[str, Any] | None, answers: Any
    ) -> Any:
        """What is stored of a valid submission: the answers, completed with what only the
        server knows (e.g. which dialogue a comparison's chosen side showed). A kind whose
        answers are about what the worker made in the unit (live chat) defines instead
        `complete_answers(connection, unit: SubmittedUnit, answers)`, which checks them
        against the database (raising SubmitRefused) and returns what is stored."""

    def check_submission(
        self, data: dict[str, Any], layout: dict[str, Any] | None, answers: Any
    ) -> list[dict[str, Any]]:
        """Problems that make the submission unacceptable; empty when it may be stored."""


class ExportReader(Protocol):
    """How a kind's stored submissions read back; needs only what the run stored."""

    def export_dialogues(
        self, data: dict[str, Any], layout: dict[str, Any] | None
    ) -> list[dict[str, Any]]:
        """The unit's dialogues as the export names them (their own ids, the order shown)."""

    def export_rows(
        self, record: dict[str, Any], definitions: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        """One row per answered item of a whole submission record."""
