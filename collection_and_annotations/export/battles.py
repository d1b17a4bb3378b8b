"""Arena votes in Chatbot Arena's public battle format (FastChat's `clean_battle_data.py`
output, which its `elo_analysis.py` reads): one JSON object per vote of a submitted battle.

Each vote is on the conversation so far: `turn` is the worker's messages at the vote, and
`conversation_a` / `conversation_b` hold those messages and both sides' replies to them as
`{"role": "user" | "assistant", "content"}`. `winner` is `model_a`, `model_b`, `tie` or
`tie (bothbad)`, `model_a` being the bot shown as Model A; `judge` is the worker's pseudonym.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC
from typing import Any

from sqlalchemy import select

from collection_and_annotations.blueprints.base import QUALITY_POOLS
from collection_and_annotations.engine.runs import DONE_STATUSES
from collection_and_annotations.export.submissions import find_task
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Assignment,
    BattleVote,
    Message,
    Unit,
    Worker,
)

PAGE_SIZE = 500
ROLES = {"worker": "user", "bot": "assistant"}


def battles(db: Database, task_name: str, page_size: int = PAGE_SIZE
            ) -> Iterator[dict[str, Any]]:
    """Every vote of the task's submitted battles, oldest first, read a page at a time."""
    task = find_task(db, task_name)
    query = (select(*BattleVote.__table__.columns, Unit.public_id, Worker.pseudonym)
             .join(Unit, Unit.id == BattleVote.unit_id)
             .join(Assignment, Assignment.id == Unit.assignment_id)
             .join(Worker, Worker.id == BattleVote.worker_id)
             .where(Assignment.task_id == task.id, Unit.status.in_(DONE_STATUSES),
                    # gold and screening battles test the worker, not the bots
                    Unit.pool.not_in(QUALITY_POOLS),
                    BattleVote.attempt == Unit.times_expired)
             .order_by(BattleVote.id).limit(page_size))
    after = 0
    while True:
        with db.snapshot() as connection:
            page = connection.execute(query.where(BattleVote.id > after)).all()
            if not page:
                return
            ids = {c for row in page for c in (row.conversation_a, row.conversation_b)}
            messages: dict[int, list[Any]] = {c: [] for c in ids}
            for message in connection.execute(
                    select(Message.conversation_id, Message.index, Message.role, Message.text)
                    .where(Message.conversation_id.in_(ids))
                    .order_by(Message.conversation_id, Message.index)):
                messages[message.conversation_id].append(message)
        for vote in page:
            yield {
                "question_id": f"{vote.public_id}_t{vote.turn}",
                "model_a": vote.model_a, "model_b": vote.model_b, "winner": vote.winner,
                "judge": vote.pseudonym, "turn": vote.turn, "anony": True,
                "tstamp": vote.voted_at.replace(tzinfo=UTC).timestamp(),  # stored naive UTC
                "conversation_a": _conversation(messages[vote.conversation_a], vote.turn),
                "conversation_b": _conversation(messages[vote.conversation_b], vote.turn),
            }
        after = page[-1].id


def _conversation(messages: list[Any], turn: int) -> list[dict[str, str]]:
    """The side's messages up to the reply to the worker's `turn`-th message."""
    return [{"role": ROLES[m.role], "content": m.text} for m in messages if m.index < 2 * turn]
