"""The statements of a chat's and an arena battle's frequent steps (the worker's message, the
bot's reply), each written once as a text() constant with typed binds and result columns.

Each step is one transaction of three statements: the unit row locked together with what the
step reads (the unit's conversations and their messages, in one query), the message inserted,
the conversation updated. SQLite's group commit (engine/chat_batch.py) has its own statements
for many steps at once, their lists passed in as JSON.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, column, text

from collection_and_annotations.storage.sql import NULLABLE_DOCUMENT, TIME, columns, locking

MESSAGE_COLUMNS = ("conversation_id", "index", "role", "text", "sent_at", "bot", "settings",
                   "first_piece_ms", "latency_ms", "client_message_id", "opener")
_COLUMN_LIST = ", ".join(f'"{c}"' for c in MESSAGE_COLUMNS)

# A row per message of the unit's conversations of this try, in order (one row, its
# conversation and message columns NULL, when there is none yet; one per conversation without
# messages): the unit's four columns, the conversation's six, then the message's six.
LOCK_CHAT = locking(
    "SELECT u.id, u.status, u.worker_id, u.times_expired, c.id AS conversation_id, "
    "c.position, c.bot, c.status AS conversation_status, c.awaiting, c.turns_done, "
    "m.\"index\", m.role, m.text, m.client_message_id, m.sent_at, "
    "m.labels IS NOT NULL AS labelled FROM units u "
    "LEFT JOIN conversations c ON c.unit_id = u.id AND c.attempt = u.times_expired "
    "LEFT JOIN messages m ON m.conversation_id = c.id "
    "WHERE u.public_id = :public_id ORDER BY c.position, m.\"index\"{lock}",
    " FOR UPDATE OF u",
    ("id", "status", "worker_id", "times_expired", "conversation_id", "position", "bot",
     "conversation_status", "awaiting", "turns_done", "index", "role", "text",
     "client_message_id", column("sent_at", TIME), "labelled"))

ADD_CONVERSATION = text(
    "INSERT INTO conversations (unit_id, worker_id, attempt, position, bot, status, awaiting, "
    "turns_done, started_at, respond_by) VALUES (:unit_id, :worker_id, :attempt, :position, "
    ":bot, 'active', :awaiting, 0, :started_at, :respond_by) RETURNING id"
).bindparams(bindparam("started_at", type_=TIME), bindparam("respond_by", type_=TIME)
             ).columns(column("id"))

END_CONVERSATION = text(
    "UPDATE conversations SET status = 'ended', ended_at = :now, respond_by = NULL "
    "WHERE id = :conversation_id").bindparams(bindparam("now", type_=TIME))

# Whether a conversation still waits for a bot's reply, its unit row locked first.
LOCK_WAITING = locking(
    "SELECT c.status, c.awaiting FROM units u JOIN conversations c "
    "ON c.id = :conversation_id WHERE u.id = :unit_id{lock}",
    " FOR UPDATE OF u", ("status", "awaiting"))

ADD_MESSAGE = text(
    f"INSERT INTO messages ({_COLUMN_LIST}) "
    f"VALUES ({', '.join(':' + c for c in MESSAGE_COLUMNS)})"
).bindparams(bindparam("sent_at", type_=TIME), bindparam("settings", type_=NULLABLE_DOCUMENT))

WORKER_SPOKE = text(
    "UPDATE conversations SET awaiting = 'bot', turns_done = turns_done + 1, "
    "respond_by = NULL, error = NULL WHERE id = :conversation_id")

BOT_SPOKE = text(
    "UPDATE conversations SET awaiting = 'worker', respond_by = :respond_by "
    "WHERE id = :conversation_id").bindparams(bindparam("respond_by", type_=TIME))

# Only if still waiting for a retry: on PostgreSQL a concurrent retry's LOCK_CHAT may have
# read the chat before this one's committed, and this sees the row as it is now.
ASK_AGAIN = text(
    "UPDATE conversations SET awaiting = 'bot', error = NULL "
    "WHERE id = :conversation_id AND awaiting = 'retry'")

SET_LABELS = text(
    "UPDATE messages SET labels = :labels "
    "WHERE conversation_id = :conversation_id AND \"index\" = :index"
).bindparams(bindparam("labels", type_=NULLABLE_DOCUMENT))

# -- SQLite's group commit: many steps, each statement for all of them -----------------------

# Every unit the steps touch (as LOCK_CHAT's unit columns, its conversations of this try with
# their messages, the turns voted on) and the waiting state of the conversations replies go
# to, as two JSON values.
LOCK_BATCH = text(
    "SELECT (SELECT json_group_array(json_array(u.public_id, u.id, u.status, u.worker_id, "
    "u.times_expired, json((SELECT json_group_array(json_array(c.id, c.position, c.bot, "
    "c.status, c.awaiting, c.turns_done, json((SELECT json_group_array(json_array("
    "m.\"index\", m.role, m.text, m.client_message_id, m.sent_at, m.labels IS NOT NULL)) "
    "FROM messages m WHERE m.conversation_id = c.id)))) FROM conversations c "
    "WHERE c.unit_id = u.id AND c.attempt = u.times_expired)), "
    "json((SELECT json_group_array(v.turn) FROM battle_votes v "
    "WHERE v.unit_id = u.id AND v.attempt = u.times_expired)))) FROM units u "
    "WHERE u.public_id IN (SELECT value FROM json_each(:public_ids))) AS units, "
    "(SELECT json_group_array(json_array(c.id, c.status, c.awaiting)) "
    "FROM conversations c WHERE c.id IN (SELECT value FROM json_each(:conversation_ids))) "
    "AS waiting"
).columns(*columns("units", "waiting"))

ADD_MESSAGES = text(
    f"INSERT INTO messages ({_COLUMN_LIST}) SELECT "
    + ", ".join(f"json_extract(value, '$[{n}]')" for n in range(len(MESSAGE_COLUMNS)))
    + " FROM json_each(:rows)")

WORKERS_SPOKE = text(
    "UPDATE conversations SET awaiting = 'bot', turns_done = turns_done + 1, "
    "respond_by = NULL, error = NULL "
    "WHERE id IN (SELECT value FROM json_each(:conversation_ids))")

BOTS_SPOKE = text(
    "UPDATE conversations SET awaiting = 'worker', respond_by = :respond_by "
    "WHERE id IN (SELECT value FROM json_each(:conversation_ids))"
).bindparams(bindparam("respond_by", type_=TIME))


def message(conversation_id: int, index: int, role: str, text: str, sent_at: datetime,
            **extra: Any) -> dict[str, Any]:
    """The binds of `ADD_MESSAGE`: `extra` names the other columns given (NULL if not,
    `opener` false)."""
    return {**dict.fromkeys(MESSAGE_COLUMNS), "opener": False, **extra,
            "conversation_id": conversation_id, "index": index, "role": role, "text": text,
            "sent_at": sent_at}


def sqlite_message_values(row: dict[str, Any]) -> list[Any]:
    """A message (`message`) as one JSON list for `ADD_MESSAGES`, its time and settings in the
    form their typed binds store on SQLite (the ORM reads both back)."""
    stored = {**row, "sent_at": row["sent_at"].isoformat(" ", "microseconds"),
              "settings": None if row["settings"] is None else json.dumps(row["settings"])}
    return [stored[c] for c in MESSAGE_COLUMNS]
