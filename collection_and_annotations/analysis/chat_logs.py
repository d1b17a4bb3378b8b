"""Collected chats with their message times, read from the database for the automatic metrics.

The chats are those `export.dialogues.collected_conversations` reads (the ones the worker
ended in a submitted unit, the bot being the conversation's stored nickname); each message
keeps the time it was stored and, for a bot message, its stored latencies."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime

from collection_and_annotations.engine.chat import SPEAKERS, dialogue_id
from collection_and_annotations.export.dialogues import collected_conversations
from collection_and_annotations.export.submissions import find_task
from collection_and_annotations.storage.database import Database

CHAT_KIND = "dialogue_collection"


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
    unit: str  # the unit's public id (its review decision can leave the chat out)


def task_chat_logs(db: Database, task_name: str) -> Iterator[ChatLog]:
    """The collected chats of one dialogue-collection task, with their message times."""
    for (conversation, unit, _worker), messages in collected_conversations(db, task_name):
        yield ChatLog(task_name, dialogue_id(task_name, conversation.id), conversation.bot, [
            LoggedMessage(SPEAKERS[m.role], m.text, m.sent_at, m.opener, m.first_piece_ms,
                          m.latency_ms) for m in messages], unit)


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
