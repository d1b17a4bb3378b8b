"""Collected chats with their message times, read from the database for the automatic metrics.

The dialogues are those `export.dialogues.collected_dialogues` yields (chats the worker ended
in a submitted unit, the bot being the conversation's stored nickname); each message gets the
time it was stored and, for a bot message, its stored latencies."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from itertools import islice

from sqlalchemy import select

from collection_and_annotations.export.dialogues import collected_dialogues
from collection_and_annotations.export.submissions import find_task
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Conversation, Message, Unit

CHAT_KIND = "dialogue_collection"
PAGE_SIZE = 500


@dataclass(frozen=True)
class LoggedMessage:
    speaker: str  # "user" (the worker) or "system" (the bot), as in task data
    text: str
    sent_at: datetime  # when the server stored it (naive UTC)
    opener: bool  # the "Hi!" the server sent for the worker: not the worker's own message
    first_piece_ms: int | None  # bot messages: worker's message stored -> first piece
    latency_ms: int | None  # bot messages: worker's message stored -> whole reply


@dataclass(frozen=True)
class ChatLog:
    task: str
    dialogue_id: str
    bot: str
    messages: list[LoggedMessage]


def _times(db: Database, units: list[str]) -> dict[tuple[str, int], list[tuple]]:
    """(unit, position) -> (sent_at, opener, first_piece_ms, latency_ms) per message, in order,
    of the conversations of the units' current attempt (the ones collected_dialogues yields)."""
    query = (
        select(Unit.public_id, Conversation.position, Message.sent_at, Message.opener,
               Message.first_piece_ms, Message.latency_ms)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .join(Unit, Unit.id == Conversation.unit_id)
        .where(Unit.public_id.in_(units), Conversation.attempt == Unit.times_expired)
        .order_by(Conversation.id, Message.index))
    times: dict[tuple[str, int], list[tuple]] = {}
    with db.read() as session:
        for unit, position, *row in session.execute(query):
            times.setdefault((unit, position), []).append(tuple(row))
    return times


def task_chat_logs(db: Database, task_name: str) -> Iterator[ChatLog]:
    """The collected chats of one dialogue-collection task, a page of units at a time."""
    dialogues = collected_dialogues(db, task_name, [])
    while page := list(islice(dialogues, PAGE_SIZE)):
        times = _times(db, sorted({d["unit_id"] for d in page}))
        for dialogue in page:
            stored = times[(dialogue["unit_id"], dialogue["position"])]
            messages = [LoggedMessage(speaker, text, *row)
                        for (speaker, text), row in zip(dialogue["turns"], stored, strict=True)]
            yield ChatLog(task_name, dialogue["dialogue_id"], dialogue["bot"], messages)


def database_chat_logs(database_url: str, tasks: list[str]) -> list[ChatLog]:
    """The collected chats of the dialogue-collection tasks among `tasks`."""
    db = Database(database_url)
    try:
        return [log for task in tasks if find_task(db, task).blueprint == CHAT_KIND
                for log in task_chat_logs(db, task)]
    finally:
        db.dispose()


def logs_sha256(logs: list[ChatLog]) -> str:
    """A hash of the chats read, in order, for the results' signature."""
    digest = hashlib.sha256()
    for log in logs:
        digest.update(json.dumps(asdict(log), sort_keys=True, default=str,
                                 ensure_ascii=False).encode())
    return digest.hexdigest()
