"""Arena battles in the database: one worker's messages go to two bots at once, and the
worker votes on the replies (docs/arena.md).

A battle is a unit with two conversations of the chat tables, at position 0 (side A) and 1
(side B), side by side: they start together and take the worker's messages together, by the
chat's steps (engine/chat.py) under `ArenaRules`; each bot's reply is stored on its own
conversation, so one side may fail and be asked again while the other's reply stays. Votes are
rows of `battle_votes` naming the bots. Every step is a write transaction that locks the unit
row first, as the chat's steps do, so a step and the expiry sweep serialise.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import Connection, Row, insert, select, update

from collection_and_annotations.engine.chat import (
    WORKER,
    ChatRules,
    LockedUnit,
    Side,
    UnitRow,
    lock_unit,
    no_labels,
    store_labels,
)
from collection_and_annotations.engine.chat_sql import END_CONVERSATION
from collection_and_annotations.engine.work import WorkRefused, worker_step
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import BattleVote, Unit, utcnow

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

    what: ClassVar[str] = "battle"
    label_field: ClassVar[str] = "labels"
    side_by_side: ClassVar[bool] = True

    def votes_needed(self) -> int:
        return self.num_turns if self.vote == "per_turn" else 1

    def vote_due(self, turns_done: int, voted: Collection[int]) -> int | None:
        """The turn the worker votes on now (both replies in), or None."""
        if turns_done < 1 or turns_done in voted:
            return None
        if self.vote == "end" and turns_done < self.num_turns:
            return None
        return turns_done

    def state(self, connection: Connection, unit_id: int, attempt: int,
              layout: dict[str, Any], live_text: Callable[[int], str | None] = lambda _id: None,
              ) -> dict[str, Any]:
        """The chat object of docs/chat-api.md for both panes (`partner` Model A, Model B;
        with the chat's `annotations` when the conf asks for them), with `arena`: the vote
        asked, the votes given, the turn to vote on now, whether the battle is over, and
        (reveal_after_vote, once it is) the bots' names. `layout` as `full_layout` gives it."""
        bots = layout["bots"]
        # an adaptive battle has its bots once it starts: two sides all the same
        state = super().state(connection, unit_id, attempt,
                              {**layout, "bots": bots or ["", ""]}, live_text)
        voted = _voted(connection, unit_id, attempt)
        panes = state["conversations"]
        for pane, name in zip(panes, PANES, strict=True):
            pane["partner"], pane["can_end"] = name, False
        started = all(p["status"] != "pending" for p in panes)
        both_in = started and all(p["status"] == "active" and p["reply"] is None
                                  and p["error"] is None for p in panes)
        finished = len(voted) >= self.votes_needed()
        state["current"] = None if finished or not started else state["current"]
        state["arena"] = {
            "vote": self.vote, "question": self.question,
            "options": [{"value": choice, "label": label}
                        for choice, label in self.labels.items()],
            "votes": [{"turn": turn, "choice": choice} for turn, choice in sorted(voted.items())],
            "vote_due": (self.vote_due(panes[0]["turns_done"], set(voted)) if both_in else None),
            "finished": finished,
            "models": (dict(zip(SIDES, bots, strict=True))
                       if finished and self.reveal_after_vote else None),
        }
        return state

    def partner(self, position: int | None) -> str:
        return PANES[position or 0]

    def voted(self, connection: Connection, unit: UnitRow) -> Collection[int]:
        return set(_voted(connection, unit.id, unit.times_expired))

    def first_bots(self, connection: Connection, unit: Row, worker_id: int,
                   bots: list[str]) -> list[str]:
        """An adaptive battle's pair, chosen as this try starts (a try that went back to the
        pool chose for its worker, not for this one) and kept in the unit's layout."""
        if unit.data["bots"] or self.choose_sides is None:
            return bots
        chosen = self.choose_sides(connection, unit.id, worker_id)
        connection.execute(update(Unit).where(Unit.id == unit.id)
                           .values(layout={**(unit.layout or {}), "bots": chosen}))
        return chosen

    def side_labels(self, given: Any, sides: Sequence[Side]) -> list[Any]:
        """`labels` maps a side ("0", "1") to the label of its latest reply."""
        if given is None:
            given = {}
        if given and (self.annotations is None or self.annotations.online is None):
            raise no_labels(self)
        if not isinstance(given, dict) or not set(given) <= {"0", "1"}:
            raise WorkRefused("'labels' must map a side (\"0\" for Model A, \"1\" for Model B) "
                              "to the label of its latest reply", 400)
        return [given.get(str(side.position)) for side in sides]

    def checked_position(self, position: Any) -> int | None:
        if type(position) is not int or position not in (0, 1):  # not a JSON true either
            raise WorkRefused("'position' must be 0 (Model A) or 1 (Model B)", 400)
        return position

    def check_message(self, sides: Sequence[Side], voted: Collection[int]) -> None:
        if len(sides) != 2 or any(side.status != "active" for side in sides):
            raise WorkRefused("no battle is open: start it first", 409)
        if any(side.awaiting != WORKER for side in sides):
            raise WorkRefused("both models must answer before your next message; wait for "
                              "them (or press Try again on a side that failed)", 409)
        turns_done = sides[0].turns_done
        if turns_done >= self.num_turns:
            raise WorkRefused(f"this battle has its {self.num_turns} messages; vote to "
                              "finish it", 409)
        if self.vote == "per_turn" and turns_done and turns_done not in voted:
            raise WorkRefused("vote on these replies before your next message", 409)


def _voted(connection: Connection, unit_id: int, attempt: int) -> dict[int, str]:
    """The unit's votes of this try: turn -> choice."""
    return dict(connection.execute(
        select(BattleVote.turn, BattleVote.choice)
        .where(BattleVote.unit_id == unit_id, BattleVote.attempt == attempt)).all())


@dataclass(frozen=True)
class BattleVoteStep:
    """A worker's vote on a battle's replies (`vote`)."""

    public_id: str
    worker_id: int
    choice: str
    labels: Any = None  # the online labels of the replies voted on, as the page sends them

    @classmethod
    def checked(cls, public_id: str, worker_id: int, choice: Any,
                labels: Any = None) -> BattleVoteStep:
        """The step, or WorkRefused at once for a choice the battle does not offer."""
        if not isinstance(choice, str) or choice not in WINNERS:
            raise WorkRefused(f"'choice' must be one of {', '.join(WINNERS)}", 422)
        return cls(public_id, worker_id, choice, labels)


def vote(db: Database, step: BattleVoteStep, rules: ArenaRules) -> None:
    """Store the worker's vote on the replies now shown (and its `labels`, their online
    labels), naming the bots; the last vote the battle asks for ends both sides. SQLite's
    batches take the same step (engine/chat_batch.py)."""
    with worker_step(db) as connection:
        battle = lock_unit(connection, step.public_id, step.worker_id, rules)
        now = utcnow()
        row, ended = accept_vote(connection, battle, step, rules, now)
        store_votes(connection, [row], ended, now)


def accept_vote(connection: Connection, battle: LockedUnit, step: BattleVoteStep,
                rules: ArenaRules, now: datetime) -> tuple[dict[str, Any], list[int]]:
    """The checks of a vote against its battle (WorkRefused when it may not be given) and the
    replies' online labels stored: the vote's row (naming the bots) and the sides it ends (both,
    when it is the last vote the battle asks for; else none)."""
    unit, sides = battle.unit, battle.sides
    if len(sides) != 2 or any(s.status != "active" or s.awaiting != WORKER for s in sides):
        raise WorkRefused("both models must answer before you vote", 409)
    turn = rules.vote_due(sides[0].turns_done, battle.voted)
    if turn is None:
        raise WorkRefused(
            "this battle asks for your vote after your last message"
            if rules.vote == "end" and sides[0].turns_done < rules.num_turns
            else "you have voted on these replies; send your next message", 409)
    store_labels(connection, sides, step.labels, rules)
    bots, choice = [side.bot for side in sides], step.choice
    row = {"unit_id": unit.id, "worker_id": step.worker_id, "attempt": unit.times_expired,
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
