"""The statements of a chat's frequent steps (the worker's message, the bot's reply), as driver
SQL (engine/driver_sql.py) built once per dialect.

Each step is one transaction of three statements: the unit row locked together with what the
step reads (the current conversation and its messages, in one query), the message inserted,
the conversation updated. Through SQLAlchemy these steps took seven and four statements, and
its per-statement work cost more CPU than the database's.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from collection_and_annotations.engine.driver_sql import DriverSQL

_MESSAGE_COLUMNS = ("conversation_id", "index", "role", "text", "sent_at", "bot", "settings",
                    "first_piece_ms", "latency_ms", "client_message_id", "opener")
_COLUMN_LIST = ", ".join(f'"{c}"' for c in _MESSAGE_COLUMNS)
_INSERT_MESSAGE = (f"INSERT INTO messages ({_COLUMN_LIST}) "
                   f"VALUES ({', '.join(':' + c for c in _MESSAGE_COLUMNS)})")


class ChatStatements(DriverSQL):
    """One dialect's statements."""

    def __init__(self, dialect: str):
        super().__init__(dialect)
        postgres = self.postgres
        lock = " FOR UPDATE OF u" if postgres else ""
        driver = self.sql

        # A row per message of the unit's current conversation (one row, its message columns
        # NULL, when it has none or there is no conversation yet).
        self.lock_chat = driver(
            "SELECT u.id, u.status, u.worker_id, u.times_expired, c.id, c.position, c.bot, "
            "c.status, c.awaiting, c.turns_done, m.\"index\", m.role, m.text, "
            "m.client_message_id, m.sent_at, m.labels IS NOT NULL FROM units u "
            "LEFT JOIN conversations c ON c.id = (SELECT id FROM conversations "
            "WHERE unit_id = u.id AND attempt = u.times_expired ORDER BY position DESC LIMIT 1) "
            "LEFT JOIN messages m ON m.conversation_id = c.id "
            f"WHERE u.public_id = :public_id ORDER BY m.\"index\"{lock}")
        self.add_conversation = driver(
            "INSERT INTO conversations (unit_id, worker_id, attempt, position, bot, status, "
            "awaiting, turns_done, started_at, respond_by) VALUES (:unit_id, :worker_id, "
            ":attempt, :position, :bot, 'active', :awaiting, 0, :started_at, :respond_by) "
            "RETURNING id")
        self.end_conversation = driver(
            "UPDATE conversations SET status = 'ended', ended_at = :now, respond_by = NULL "
            "WHERE id = :conversation_id")
        self.lock_waiting = driver(
            "SELECT c.status, c.awaiting FROM units u JOIN conversations c "
            f"ON c.id = :conversation_id WHERE u.id = :unit_id{lock}")
        self.add_message = driver(_INSERT_MESSAGE)
        self.worker_spoke = driver(
            "UPDATE conversations SET awaiting = 'bot', turns_done = turns_done + 1, "
            "respond_by = NULL, error = NULL WHERE id = :conversation_id")
        self.bot_spoke = driver(
            "UPDATE conversations SET awaiting = 'worker', respond_by = :respond_by "
            "WHERE id = :conversation_id")
        # only if still waiting for a retry: on PostgreSQL a concurrent retry's lock_chat may
        # have read the chat before this one's committed, and this sees the row as it is now
        self.ask_again = driver(
            "UPDATE conversations SET awaiting = 'bot', error = NULL "
            "WHERE id = :conversation_id AND awaiting = 'retry'")
        self.set_labels = driver(
            "UPDATE messages SET labels = :labels "
            "WHERE conversation_id = :conversation_id AND \"index\" = :index")
        if not postgres:
            self._batch_statements()

    def _batch_statements(self) -> None:
        """SQLite: many steps in one transaction, each statement for all of them (see
        engine/chat_batch.py). Lists go in as JSON and come out as one JSON value, so a
        statement is one call into SQLite however many steps it serves."""
        self.lock_batch = (
            "SELECT (SELECT json_group_array(json_array(u.public_id, u.id, u.status, "
            "u.worker_id, u.times_expired, c.id, c.position, c.bot, c.status, c.awaiting, "
            "c.turns_done, json((SELECT json_group_array(json_array(m.\"index\", m.role, "
            "m.text, m.client_message_id, m.sent_at, m.labels IS NOT NULL)) FROM messages m "
            "WHERE m.conversation_id = c.id)))) FROM units u "
            "LEFT JOIN conversations c ON c.id = (SELECT id FROM conversations "
            "WHERE unit_id = u.id AND attempt = u.times_expired ORDER BY position DESC LIMIT 1) "
            "WHERE u.public_id IN (SELECT value FROM json_each(:public_ids))), "
            "(SELECT json_group_array(json_array(c.id, c.status, c.awaiting)) "
            "FROM conversations c WHERE c.id IN (SELECT value FROM json_each(:conversation_ids)))")
        self.add_messages = (
            f"INSERT INTO messages ({_COLUMN_LIST}) SELECT "
            + ", ".join(f"json_extract(value, '$[{n}]')" for n in range(len(_MESSAGE_COLUMNS)))
            + " FROM json_each(:rows)")
        self.workers_spoke = (
            "UPDATE conversations SET awaiting = 'bot', turns_done = turns_done + 1, "
            "respond_by = NULL, error = NULL "
            "WHERE id IN (SELECT value FROM json_each(:conversation_ids))")
        self.bots_spoke = (
            "UPDATE conversations SET awaiting = 'worker', respond_by = :respond_by "
            "WHERE id IN (SELECT value FROM json_each(:conversation_ids))")

    @staticmethod
    def message_values(row: dict[str, Any]) -> list[Any]:
        """A message's parameters (`message`) in `add_messages`' column order."""
        return [row[c] for c in _MESSAGE_COLUMNS]

    def message(self, conversation_id: int, index: int, role: str, text: str,
                sent_at: datetime, **extra: Any) -> dict[str, Any]:
        """The parameters of `add_message`."""
        return {"conversation_id": conversation_id, "index": index, "role": role, "text": text,
                "sent_at": self.time(sent_at), "bot": extra.get("bot"),
                "settings": self.json(extra.get("settings")),
                "first_piece_ms": extra.get("first_piece_ms"),
                "latency_ms": extra.get("latency_ms"),
                "client_message_id": extra.get("client_message_id"),
                "opener": extra.get("opener", False)}


@cache
def chat_sql(dialect: str) -> ChatStatements:
    return ChatStatements(dialect)

