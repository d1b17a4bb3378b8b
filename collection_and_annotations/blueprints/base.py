"""The hooks of a kind of task (a "blueprint", as the original called it), and what they pass.

A kind is a class registered by name (one module under `blueprints/`, or an installed plug-in,
docs/plugins.md). It subclasses `TaskBlueprint`, is made from its conf keys
(`cls(blueprint_cfg, task_name)`, checking every file they name) and defines `plan` and
`unit_content`; every other hook below has a default. The engine calls these hooks and nothing
else, whatever the database, so static annotation, dialogue collection with bots, screening and
gold plug in without edits to the engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from sqlalchemy import Connection

from collection_and_annotations.config.schema import BlueprintConf

if TYPE_CHECKING:
    from collection_and_annotations.bots.base import Bot

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


class ExportReader(Protocol):
    """How a kind's stored submissions read back: called on the class, with only what the run
    stored (no conf files)."""

    @staticmethod
    def export_dialogues(data: dict[str, Any], layout: dict[str, Any] | None
                         ) -> list[dict[str, Any]]:
        """The unit's dialogues as the export names them (their own ids, the order shown)."""
        return []

    @staticmethod
    def exported_answers(stored: Any, dialogues: list[dict[str, Any]]
                         ) -> tuple[list[dict[str, Any]], Any]:
        """The dialogues and answers a stored submission exports: by default the unit's
        (`export_dialogues`) and the answers as stored; a chat stores its own dialogues."""
        return dialogues, stored

    @staticmethod
    def export_rows(record: dict[str, Any], definitions: dict[str, Any]
                    ) -> Iterator[dict[str, Any]]:
        """One row per answered item of a whole submission record (`export.ITEM_FIELDS`); by
        default one per key of the answers."""
        answers = record["answers"]
        for question, answer in (answers.items() if isinstance(answers, dict)
                                 else [("answers", answers)]):
            yield {"task": record["task"], "run_id": record["run_id"],
                   "unit_id": record["unit_id"], "worker": record["worker"],
                   "question": question, "answer": answer,
                   "submitted_at": record["submitted_at"]}


class TaskBlueprint(ExportReader, Protocol):
    """Every hook of a task kind: `plan` and `unit_content` are its own, the rest default."""

    name: str  # the registered name, stored with the task
    conf: ClassVar[type[BlueprintConf]] = BlueprintConf  # its keys (`mephisto.blueprint.*`)
    # workers chat with bots (`make_bots`): the chat routes, the idle-chat sweep and the
    # start-up repair of interrupted replies are for these kinds
    chats: ClassVar[bool] = False
    # the chat routes it is served with: `chat` (one bot at a time), `arena` (two at once)
    chat_server: ClassVar[str] = "chat"

    def plan(self) -> list[AssignmentPlan]:
        """Every assignment of this task, in serving order, each in its pool."""

    def unit_content(self, data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
        """What the worker page receives for an assignment's `data` (nothing identifying)."""

    def unit_layout(self, data: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        """A new unit's own presentation order; None (the data's order) must not depend on
        `rng`: asked once per assignment, the per-unit call is then skipped."""
        return None

    def pools_for(self, connection: Connection, worker: WorkerContext) -> list[str]:
        """Pools the worker takes a unit from, in order; raise NoWork or ResumeUnit instead."""
        return [MAIN_POOL]

    def unit_kind(self, pool: str) -> str:
        """What the worker page shows for a unit of this pool (it routes on it)."""
        return "annotation"

    def unit_state(self, connection: Connection, unit_id: int, attempt: int,
                   data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
        """What changes as the worker works on an open unit (a chat), merged into its view."""
        return {}

    def describe(self) -> dict[str, Any]:
        """Definitions stored with the run (`buckets`), so exports need no conf files."""
        return {}

    def check_submission(self, data: dict[str, Any], layout: dict[str, Any] | None,
                         answers: Any) -> list[dict[str, Any]]:
        """Problems that refuse a submission (422); empty when it may be stored."""
        return []

    def stored_answers(self, data: dict[str, Any], layout: dict[str, Any] | None,
                       answers: Any) -> Any:
        """What is stored of valid answers, completed with what only the server knows."""
        return answers

    def complete_answers(self, connection: Connection, unit: SubmittedUnit) -> Any:
        """What is stored, read with the database (raise SubmitRefused): for answers about
        what the worker made in the unit (a chat's conversations)."""
        return self.stored_answers(unit.data, unit.layout, unit.answers)

    def after_submit(self, connection: Connection, unit: SubmittedUnit) -> dict[str, Any] | None:
        """Writes that go with a stored submission (scoring); what the worker is told."""
        return None

    def check_dialogue(self, connection: Connection, unit: SubmittedUnit,
                       dialogue_key: str) -> dict[str, Any] | None:
        """Feedback on one dialogue of a unit checked per dialogue (screening); None: none."""
        return None

    def make_bots(self) -> dict[str, Bot]:
        """The bots of a chat task, made in each serving process."""
        return {}

    def check_bots(self) -> list[str]:
        """At launch, warnings about the bots (a refusal raises UserError)."""
        return []

    def pool_labels(self) -> dict[str, str]:
        """How the dashboard names the pools of real work (a chat task: its bot specs)."""
        return {}

    def max_incorrect_golds(self) -> int:
        """Failed gold units that disqualify a worker (the report marks them); 0: none."""
        return 0
