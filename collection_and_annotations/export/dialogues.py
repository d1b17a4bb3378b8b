"""Collected conversations in the task data JSONL format, so a collected set feeds a static
annotation task directly (the original's two modes chained): one `{"data": [dialogue]}` line
per conversation the worker ended in a submitted unit, and a `<stem>_units.json` beside it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Row, select

from collection_and_annotations.engine.chat import SPEAKERS, dialogue_id
from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.export.submissions import find_task
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Assignment,
    Conversation,
    Message,
    Unit,
    Worker,
    iso_utc,
)

PAGE_SIZE = 500


def collected_conversations(
    db: Database, task_name: str, page_size: int = PAGE_SIZE
) -> Iterator[tuple[Row, list[Row]]]:
    """Each conversation the worker ended in a submitted unit (with its unit's public id and
    the worker's pseudonym), and its messages in order, read a page at a time."""
    task = find_task(db, task_name)
    query = (
        select(Conversation, Unit.public_id, Worker.pseudonym)
        .join(Unit, Unit.id == Conversation.unit_id)
        .join(Assignment, Assignment.id == Unit.assignment_id)
        .join(Worker, Worker.id == Conversation.worker_id)
        .where(Assignment.task_id == task.id, Unit.status.in_(DONE_STATUSES),
               Conversation.attempt == Unit.times_expired, Conversation.status == "ended")
        .order_by(Conversation.id).limit(page_size)
    )
    after = 0
    while True:
        with db.read() as session:
            rows = session.execute(query.where(Conversation.id > after)).all()
            messages: dict[int, list[Row]] = {row[0].id: [] for row in rows}
            for message in session.execute(
                select(Message.conversation_id, Message.role, Message.text, Message.sent_at,
                       Message.opener, Message.first_piece_ms, Message.latency_ms)
                .where(Message.conversation_id.in_(list(messages)))
                .order_by(Message.conversation_id, Message.index)
            ):
                messages[message.conversation_id].append(message)
        if not rows:
            return
        for row in rows:
            yield row, messages[row[0].id]
        after = rows[-1][0].id


def collected_dialogues(db: Database, task_name: str, annotation_tasks: list[str],
                        page_size: int = PAGE_SIZE) -> Iterator[dict[str, Any]]:
    """Task data dialogues: the worker speaks as `user`, the bot as `system`; the bot's
    nickname is in `bot`, never in `dialogue_id`; `origin_worker_id` is the worker's
    pseudonym (so the author never annotates their own chat)."""
    for (conversation, unit_id, pseudonym), messages in collected_conversations(
            db, task_name, page_size):
        own_id = dialogue_id(task_name, conversation.id)
        yield {
            "dialogue_id": own_id, "group_id": own_id,
            "annotation_tasks": annotation_tasks,
            "turns": [[SPEAKERS[m.role], m.text] for m in messages],
            "origin_worker_id": pseudonym, "bot": conversation.bot,
            "unit_id": unit_id, "position": conversation.position,
            "collected_at": iso_utc(conversation.started_at),
        }


def write_dialogues(db: Database, task_name: str, output: Path, annotation_tasks: list[str],
                    annotators: int) -> int:
    """Write the JSONL and its units file; returns the number of dialogues."""
    groups: dict[str, int] = {}
    with output.open("w", encoding="utf-8") as out:
        for dialogue in collected_dialogues(db, task_name, annotation_tasks):
            out.write(json.dumps({"data": [dialogue]}, ensure_ascii=False) + "\n")
            groups[dialogue["group_id"]] = annotators
    units_file(output).write_text(json.dumps(groups, indent=1) + "\n", encoding="utf-8")
    return len(groups)


def units_file(output: Path) -> Path:
    """Where the static task looks for it: beside the data file, named by its stem."""
    return output.with_name(f"{output.stem}_units.json")
