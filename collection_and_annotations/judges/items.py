"""What a judge answers in a task, per kind of task: the items (a static task's assignments; a
chat task's submitted chat units), each item's own layout (shuffled as a worker's unit is: the
order of dialogues and buckets, the sides of a comparison), the questions of one unit (a
bucket on a dialogue, one call each), and what checks and stores its answers."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection, exists, select

from collection_and_annotations.blueprints.base import SubmittedUnit
from collection_and_annotations.blueprints.static_annotation.answers import (
    DialogueView,
    Problem,
    check_bucket,
)
from collection_and_annotations.blueprints.static_annotation.buckets import Bucket
from collection_and_annotations.blueprints.static_annotation.layout import SIDES, shown_dialogues
from collection_and_annotations.blueprints.static_annotation.speaker_names import display_names
from collection_and_annotations.engine.chat import SPEAKERS, full_layout, transcripts
from collection_and_annotations.engine.judge_work import JudgeItem, JudgeUnit
from collection_and_annotations.engine.runs import DONE_STATUSES, real_work
from collection_and_annotations.judges.forms import Form, make_form
from collection_and_annotations.judges.prompt import transcript
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Assignment, Submission, Unit

SIDE_TITLES = ("Dialogue 1 (left)", "Dialogue 2 (right)")


@dataclass(frozen=True)
class Question:
    """One bucket on one dialogue of a judge's unit: one call of the model."""

    dialogue_key: str
    bucket: Bucket
    form: Form
    speakers: list[str]  # of the annotated dialogue's turns (the left one of a comparison)
    dialogue: str  # as the prompt shows it
    instructions: str | None

    def problems(self, value: Any) -> list[Problem]:
        """What the task's checker refuses in the bucket's value (`{target: value}`)."""
        check = check_bucket(DialogueView(self.dialogue_key, self.speakers, [self.bucket.name]),
                             self.bucket, value)
        return check.invalid + check.missing


def _question(key: str, bucket: Bucket, sides: Sequence[Sequence[Sequence[str]]],
              names: dict[str, str], instructions: str | None,
              persona: str | None = None) -> Question:
    """`sides`: the dialogue's turns, or a comparison's left and right turns."""
    speakers = [turn[0] for turn in sides[0]]
    if len(sides) == 1:
        shown = transcript(sides[0], names, persona=persona)
    else:
        shown = "\n\n".join(transcript(turns, names, title, persona if i == 0 else None)
                            for i, (turns, title) in enumerate(zip(sides, SIDE_TITLES,
                                                                   strict=False)))
    return Question(key, bucket, make_form(bucket, speakers, names), speakers, shown,
                    instructions)


def _rng(seed: int | None, nickname: str, key: str) -> random.Random:
    """Seeded per judge and item when the study sets a seed (reproducible), else fresh."""
    return random.Random(f"{seed}:judge:{nickname}:{key}") if seed is not None \
        else random.Random()


class StaticItems:
    """Static annotation: one item per assignment of real work still planned."""

    def __init__(self, blueprint: Any, seed: int | None):
        self.blueprint, self.seed = blueprint, seed
        self.submitter = blueprint  # its own checks (`check_submission`, `stored_answers`)

    def items(self, db: Database, task_id: int) -> list[JudgeItem]:
        with db.snapshot() as connection:
            rows = connection.execute(
                select(Assignment.id, Assignment.data)
                .where(Assignment.task_id == task_id, Assignment.retired_at.is_(None),
                       exists().where(Unit.assignment_id == Assignment.id, real_work()))
                .order_by(Assignment.id)).all()
        return [JudgeItem(f"a{assignment_id}", assignment_id, data)
                for assignment_id, data in rows]

    def layout(self, item: JudgeItem, nickname: str) -> dict[str, Any] | None:
        return self.blueprint.unit_layout(item.data, _rng(self.seed, nickname, item.key))

    def questions(self, db: Database, unit: JudgeUnit) -> list[Question]:
        blueprint = self.blueprint
        found = []
        for shown in shown_dialogues(unit.data, unit.layout):
            source = shown.item["source"]
            sides = [source[shown.left], source[shown.right]] if shown.left else \
                [source[SIDES[0]]]
            persona = source.get("bot_persona") if blueprint.include_persona else None
            for name in shown.tasks:
                found.append(_question(shown.item["key"], blueprint.buckets[name], sides,
                                       blueprint.speaker_names, blueprint.instructions.get(name),
                                       persona if isinstance(persona, str) else None))
        return found


class _JudgedChats:
    """The chat task's checks for a judge's unit: its answers are about the conversations of
    the person's unit it judges (recorded in its layout), checked and stored as the person's
    offline answers are (`complete_answers`), with the judge's own order and sides."""

    def __init__(self, blueprint: Any):
        self.blueprint = blueprint

    def complete_answers(self, connection: Connection, unit: SubmittedUnit) -> dict[str, Any]:
        judged = unit.layout["judged"]
        stored = self.blueprint.complete_answers(
            connection, replace(unit, id=judged["unit"], attempt=judged["attempt"]))
        online = self.blueprint.annotations.online
        if online:  # the person's labels while chatting are theirs, not the judge's
            for answers in stored["answers"].values():
                answers.pop(online, None)
            for dialogue in stored["dialogues"]:
                dialogue["tasks"] = [name for name in dialogue["tasks"] if name != online]
        return stored

    def check_submission(self, *_args: Any) -> list[dict[str, Any]]:
        return []  # checked against the conversations, in complete_answers

    def after_submit(self, *_args: Any) -> None:
        """A judge's answers score nobody and tell nobody anything."""
        return None


class ChatItems:
    """Dialogue collection: one item per submitted chat unit of a person, asked the offline
    buckets of the conf about its conversations (and their comparison)."""

    def __init__(self, blueprint: Any, seed: int | None):
        self.blueprint, self.seed = blueprint, seed
        self.annotations = blueprint.annotations
        self.submitter = _JudgedChats(blueprint)
        self.names = display_names(None)  # the chat page's "You"/"Partner" mean nothing here
        self._judged: dict[str, tuple[int, int, dict[str, Any] | None]] = {}

    def items(self, db: Database, task_id: int) -> list[JudgeItem]:
        if self.annotations is None or not self.annotations.asks_offline():
            return []
        with db.snapshot() as connection:
            rows = connection.execute(
                select(Unit.public_id, Unit.id, Unit.times_expired, Unit.layout,
                       Unit.assignment_id, Assignment.data)
                .join(Assignment, Assignment.id == Unit.assignment_id)
                .join(Submission, Submission.unit_id == Unit.id)
                .where(Assignment.task_id == task_id, real_work(),
                       Unit.status.in_(DONE_STATUSES))
                .order_by(Unit.id)).all()
        found = []
        for public_id, unit_id, attempt, layout, assignment_id, data in rows:
            key = f"u{public_id}"
            self._judged[key] = (unit_id, attempt, layout)
            found.append(JudgeItem(key, assignment_id, data))
        return found

    def layout(self, item: JudgeItem, nickname: str) -> dict[str, Any]:
        unit_id, attempt, layout = self._judged[item.key]
        return {**full_layout(item.data, layout),
                **self.annotations.layout(_rng(self.seed, nickname, item.key)),
                "judged": {"unit": unit_id, "attempt": attempt}}

    def questions(self, db: Database, unit: JudgeUnit) -> list[Question]:
        judged = unit.layout["judged"]
        with db.snapshot() as connection:
            chats = transcripts(connection, judged["unit"], judged["attempt"])
        turns = {c.position: [[SPEAKERS[m.role], m.text] for m in c.messages] for c in chats}
        plan = self.annotations.plan(full_layout(unit.data, unit.layout), turns, set(turns))
        found = []
        for entry in plan["offline"]:
            for dialogue in entry["dialogues"]:
                position = dialogue["conversation"]
                sides = [turns[position]] if position is not None else \
                    [turns[dialogue["left"]], turns[dialogue["right"]]]
                for name in dialogue["annotation_tasks"]:
                    found.append(_question(dialogue["key"], self.annotations.buckets[name], sides,
                                           self.names, self.annotations.instructions.get(name)))
        return found


def task_items(blueprint: Any, seed: int | None) -> StaticItems | ChatItems:
    """The items of the task's kind."""
    return ChatItems(blueprint, seed) if blueprint.name == "dialogue_collection" \
        else StaticItems(blueprint, seed)
