"""Arena battles in the database: one worker's messages go to two bots at once, and the
worker votes on the replies (docs/arena.md).

A battle is a unit with two conversations of the chat tables, at position 0 (side A) and 1
(side B), which take the worker's messages together; each bot's reply is stored by the chat
runner on its own conversation (engine/chat.py `store_reply`), so one side may fail and be
asked again while the other's reply stays. Votes are rows of `battle_votes` naming the bots.
Every step is a write transaction that locks the unit row first, as the chat's steps do, so a
step and the expiry sweep serialise.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, insert, select, update

from collection_and_annotations.bots.base import Turn
from collection_and_annotations.engine.chat import (
    BOT,
    RETRY,
    WORKER,
    ChatRules,
    ReplyJob,
    assigned_unit,
    chat_state,
    check_text,
    checked_label,
    client_id_of,
    respond_by,
    store_labels,
    transcripts,
    unit_bots,
)
from collection_and_annotations.engine.chat_sql import (
    ADD_MESSAGE,
    END_CONVERSATION,
    WORKER_SPOKE,
    message,
)
from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    BattleVote,
    Conversation,
    Unit,
    iso_utc,
    utcnow,
)

SIDES = ("A", "B")
PANES = ("Model A", "Model B")
# a vote's choice -> the winner in Chatbot Arena's battle format
WINNERS = {"a": "model_a", "b": "model_b", "tie": "tie", "bothbad": "tie (bothbad)"}


@dataclass(frozen=True)
class ArenaRules(ChatRules):
    """The chat's rules plus the arena's: when the worker votes, with which words, and whether
    the bots are named once the battle is voted."""

    vote: str = "end"  # per_turn | end
    reveal_after_vote: bool = False
    question: str = "Which reply is better?"
    labels: Mapping[str, str] = field(default_factory=dict)  # choice -> the words shown
    # `pairs: adaptive`: (connection, unit id, worker id) -> the bots of a battle whose pair
    # is chosen as it starts, in side order (blueprints/arena/adaptive.py)
    choose_sides: Callable[[Connection, int, int], list[str]] | None = None

    def votes_needed(self) -> int:
        return self.num_turns if self.vote == "per_turn" else 1

    def vote_due(self, turns_done: int, voted: set[int]) -> int | None:
        """The turn the worker votes on now (both replies in), or None."""
        if turns_done < 1 or turns_done in voted:
            return None
        if self.vote == "end" and turns_done < self.num_turns:
            return None
        return turns_done


def _voted(connection: Connection, unit_id: int, attempt: int) -> dict[int, str]:
    """The unit's votes of this try: turn -> choice."""
    return dict(connection.execute(
        select(BattleVote.turn, BattleVote.choice)
        .where(BattleVote.unit_id == unit_id, BattleVote.attempt == attempt)).all())


def arena_state(connection: Connection, unit_id: int, attempt: int, layout: dict[str, Any],
                rules: ArenaRules, live_text: Callable[[int], str | None] = lambda _id: None
                ) -> dict[str, Any]:
    """The chat object of docs/chat-api.md for both panes (`partner` Model A, Model B; with
    the chat's `annotations` when the conf asks for them), with `arena`: the vote asked, the
    votes given, the turn to vote on now, whether the battle is over, and
    (reveal_after_vote, once it is) the bots' names. `layout` as `full_layout` gives it."""
    bots = layout["bots"]
    # an adaptive battle has its bots once it starts: two sides all the same
    state = chat_state(connection, unit_id, attempt, {**layout, "bots": bots or ["", ""]},
                       rules, live_text)
    voted = _voted(connection, unit_id, attempt)
    panes = state["conversations"]
    for pane, name in zip(panes, PANES, strict=True):
        pane["partner"], pane["can_end"] = name, False
    started = all(p["status"] != "pending" for p in panes)
    both_in = started and all(p["status"] == "active" and p["reply"] is None
                              and p["error"] is None for p in panes)
    finished = len(voted) >= rules.votes_needed()
    state["current"] = None if finished or not started else state["current"]
    state["arena"] = {
        "vote": rules.vote, "question": rules.question,
        "options": [{"value": choice, "label": label} for choice, label in rules.labels.items()],
        "votes": [{"turn": turn, "choice": choice} for turn, choice in sorted(voted.items())],
        "vote_due": (rules.vote_due(panes[0]["turns_done"], set(voted)) if both_in else None),
        "finished": finished,
        "models": (dict(zip(SIDES, bots, strict=True))
                   if finished and rules.reveal_after_vote else None),
    }
    return state


def start(db: Database, public_id: str, worker_id: int, rules: ArenaRules) -> None:
    """Open both sides of the battle if they are not open (idempotent): the worker writes
    first."""
    with db.transaction() as connection:
        unit = assigned_unit(connection, public_id, worker_id, "battle")
        if not transcripts(connection, unit.id, unit.times_expired):
            bots = unit_bots(unit.data, unit.layout)
            # adaptive: the pair chosen as this try starts (a try that went back to the pool
            # chose for its worker, not for this one)
            if not unit.data["bots"] and rules.choose_sides is not None:
                bots = rules.choose_sides(connection, unit.id, worker_id)
                connection.execute(update(Unit).where(Unit.id == unit.id)
                                   .values(layout={**(unit.layout or {}), "bots": bots}))
            now = utcnow()
            connection.execute(insert(Conversation), [{
                "unit_id": unit.id, "worker_id": worker_id, "attempt": unit.times_expired,
                "position": position, "bot": bot, "status": "active", "awaiting": WORKER,
                "turns_done": 0, "started_at": now,
                "respond_by": respond_by(now, rules)}
                for position, bot in enumerate(bots)])


def _checked_labels(sides: Sequence[Any], histories: Mapping[int, Sequence[Any]],
                    labels: Any, rules: ArenaRules) -> list[dict[str, Any] | None]:
    """The online labels of both sides' last replies (`labels`: position -> label, as the page
    sends them) checked before the worker moves on, as the chat kind does: their binds to
    store (engine/chat.py `store_labels`), or WorkRefused before anything is written."""
    if labels is None:
        labels = {}
    if labels and (rules.annotations is None or rules.annotations.online is None):
        raise WorkRefused("this battle takes no labels ('labels' must be absent)", 400)
    if not isinstance(labels, dict) or not set(labels) <= {"0", "1"}:
        raise WorkRefused("'labels' must map a side (\"0\" for Model A, \"1\" for Model B) "
                          "to the label of its latest reply", 400)
    return [checked_label(side.id, histories[side.id], labels.get(str(side.position)), rules,
                          PANES[side.position]) for side in sides]


@dataclass(frozen=True)
class Battle:
    """A battle as its worker's message or vote reads it: the unit (UnitRow's columns), its
    sides in order (ConversationRow's), each side's messages in order (MessageRow's) by
    conversation id, and the turns voted on (a message reads them for `vote: per_turn`)."""

    unit: Any
    sides: Sequence[Any]
    histories: Mapping[int, Sequence[Any]]
    voted: Collection[int]


def _battle(connection: Connection, unit: Row, voted: Collection[int]) -> Battle:
    """The battle of the worker's unit (locked by the caller) as its steps read it."""
    sides = transcripts(connection, unit.id, unit.times_expired)
    return Battle(unit, [side.conversation for side in sides],
                  {side.conversation_id: side.messages for side in sides}, voted)


def send(db: Database, public_id: str, worker_id: int, text: Any, client_message_id: Any,
         rules: ArenaRules, labels: Any = None) -> tuple[dict[str, Any], list[ReplyJob]]:
    """Store the worker's message on both sides (and `labels`, the online labels of the
    replies before it); returns what the API answers and the two bot turns to run (none when
    this repeats a message already stored). SQLite's batches take the same step
    (engine/chat_batch.py)."""
    text, client_id = check_text(text, rules), client_id_of(client_message_id)
    with db.transaction() as connection:
        unit = assigned_unit(connection, public_id, worker_id, "battle")
        voted = (set(_voted(connection, unit.id, unit.times_expired))
                 if rules.vote == "per_turn" else set())
        battle = _battle(connection, unit, voted)
        answer, jobs, rows = accept_message(connection, battle, public_id, text, client_id,
                                            labels, rules, utcnow())
        if rows:
            connection.execute(ADD_MESSAGE, rows)
            connection.execute(WORKER_SPOKE, [{"conversation_id": s.id} for s in battle.sides])
        return answer, jobs


def accept_message(connection: Connection, battle: Battle, public_id: str, text: str,
                   client_id: str | None, labels: Any, rules: ArenaRules, now: datetime
                   ) -> tuple[dict[str, Any], list[ReplyJob], list[dict[str, Any]]]:
    """The checks of a worker's message against its battle (WorkRefused when it may not be
    sent) and the replies' online labels stored: the answer, both bot turns and both message
    rows to insert (engine/chat_sql.py `message`), or the earlier answer alone when this
    repeats a message already stored."""
    unit, sides, histories = battle.unit, battle.sides, battle.histories
    if client_id is not None and sides:
        repeated = next((m for m in histories[sides[0].id]
                         if m.client_message_id == client_id), None)
        if repeated is not None:
            return {"index": repeated.index, "sent_at": iso_utc(repeated.sent_at)}, [], []
    if len(sides) != 2 or any(side.status != "active" for side in sides):
        raise WorkRefused("no battle is open: start it first", 409)
    if any(side.awaiting != WORKER for side in sides):
        raise WorkRefused("both models must answer before your next message; wait for "
                          "them (or press Try again on a side that failed)", 409)
    turns_done = sides[0].turns_done
    if turns_done >= rules.num_turns:
        raise WorkRefused(f"this battle has its {rules.num_turns} messages; vote to "
                          "finish it", 409)
    if rules.vote == "per_turn" and turns_done and turns_done not in battle.voted:
        raise WorkRefused("vote on these replies before your next message", 409)
    store_labels(connection, _checked_labels(sides, histories, labels, rules))
    index = len(histories[sides[0].id])
    jobs = [ReplyJob.after(unit, public_id, side,
                           (*(Turn(m.role, m.text) for m in histories[side.id]),
                            Turn("worker", text)), now)
            for side in sides]
    rows = [message(side.id, index, "worker", text, now, client_message_id=client_id)
            for side in sides]
    return {"index": index, "sent_at": iso_utc(now)}, jobs, rows


def retry(db: Database, public_id: str, worker_id: int, position: Any) -> ReplyJob:
    """Ask one side's bot again for the reply that failed (the other side's reply stays)."""
    if type(position) is not int or position not in (0, 1):  # not a JSON true either
        raise WorkRefused("'position' must be 0 (Model A) or 1 (Model B)", 400)
    with db.transaction() as connection:
        unit = assigned_unit(connection, public_id, worker_id, "battle")
        battle = _battle(connection, unit, ())
        side = next((s for s in battle.sides if s.position == position), None)
        if side is None or side.status != "active" or side.awaiting != RETRY:
            raise WorkRefused(f"{PANES[position]} has no failed reply to ask for again", 409)
        connection.execute(update(Conversation).where(Conversation.id == side.id)
                           .values(awaiting=BOT, error=None))
        history = tuple(Turn(m.role, m.text) for m in battle.histories[side.id])
        return ReplyJob.after(unit, public_id, side, history, utcnow())


def checked_choice(choice: Any) -> str:
    """A vote's choice, or WorkRefused for one the battle does not offer (needs no database)."""
    if not isinstance(choice, str) or choice not in WINNERS:
        raise WorkRefused(f"'choice' must be one of {', '.join(WINNERS)}", 422)
    return choice


def vote(db: Database, public_id: str, worker_id: int, choice: Any, rules: ArenaRules,
         labels: Any = None) -> None:
    """Store the worker's vote on the replies now shown (and `labels`, their online labels),
    naming the bots; the last vote the battle asks for ends both sides. SQLite's batches take
    the same step (engine/chat_batch.py)."""
    choice = checked_choice(choice)
    with db.transaction() as connection:
        unit = assigned_unit(connection, public_id, worker_id, "battle")
        battle = _battle(connection, unit, set(_voted(connection, unit.id, unit.times_expired)))
        now = utcnow()
        row, ended = accept_vote(connection, battle, worker_id, choice, labels, rules, now)
        store_votes(connection, [row], ended, now)


def accept_vote(connection: Connection, battle: Battle, worker_id: int, choice: str,
                labels: Any, rules: ArenaRules, now: datetime
                ) -> tuple[dict[str, Any], list[int]]:
    """The checks of a vote against its battle (WorkRefused when it may not be given) and the
    replies' online labels stored: the vote's row (naming the bots) and the sides it ends (both,
    when it is the last vote the battle asks for; else none)."""
    unit, sides = battle.unit, battle.sides
    if len(sides) != 2 or any(s.status != "active" or s.awaiting != WORKER for s in sides):
        raise WorkRefused("both models must answer before you vote", 409)
    turn = rules.vote_due(sides[0].turns_done, set(battle.voted))
    if turn is None:
        raise WorkRefused(
            "this battle asks for your vote after your last message"
            if rules.vote == "end" and sides[0].turns_done < rules.num_turns
            else "you have voted on these replies; send your next message", 409)
    store_labels(connection, _checked_labels(sides, battle.histories, labels, rules))
    bots = [side.bot for side in sides]
    row = {"unit_id": unit.id, "worker_id": worker_id, "attempt": unit.times_expired,
           "turn": turn, "conversation_a": sides[0].id, "conversation_b": sides[1].id,
           "model_a": bots[0], "model_b": bots[1], "choice": choice,
           "winner": WINNERS[choice], "preferred": {"a": bots[0], "b": bots[1]}.get(choice),
           "voted_at": now}
    ended = [s.id for s in sides] if len(battle.voted) + 1 >= rules.votes_needed() else []
    return row, ended


def store_votes(connection: Connection, rows: list[dict[str, Any]], ended: list[int],
                now: datetime) -> None:
    """Votes (`accept_vote`'s rows) inserted and the sides they end ended, `now`."""
    connection.execute(insert(BattleVote), rows)
    if ended:
        connection.execute(END_CONVERSATION, [{"conversation_id": conversation_id, "now": now}
                                              for conversation_id in ended])
