"""A worker's live chats with bots, kept in the database (docs/chat-api.md).

Every step is one write transaction that locks the unit row first, like drafts and submits, so
a chat step and the expiry sweep serialise: a unit that went back to the pool takes no more
messages, and a bot reply that arrives after that is dropped (the transcript up to then is kept,
its conversation marked). The server keeps no chat state a restart would lose: a page that
reloads, or reconnects to another server process, reads it all from here.

A unit's conversations run one after the other (a chat with several bots: a message goes to
the current one) or side by side (an arena battle: to both); the steps are the same, and the
kind's rules (`ChatRules`, engine/arena.py `ArenaRules`) say what differs.

A bot turn is not done inside a request: `send` stores the worker's message and returns a
`ReplyJob` per bot, which the chat runner (server/chat/runner.py) works on outside any
transaction and finishes with `store_reply` or `reply_failed`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, NamedTuple, Protocol

from sqlalchemy import Connection, Row, bindparam, select, update
from sqlalchemy.exc import IntegrityError

from collection_and_annotations.bots.base import Turn
from collection_and_annotations.engine.allocation import (
    release_statement,
    release_units,
    return_unit,
)
from collection_and_annotations.engine.chat_sql import (
    ADD_CONVERSATION,
    ADD_MESSAGE,
    ASK_AGAIN,
    BOT_SPOKE,
    END_CONVERSATION,
    LOCK_CHAT,
    LOCK_WAITING,
    SET_LABELS,
    WORKER_SPOKE,
    message,
)
from collection_and_annotations.engine.work import (
    WorkRefused,
    locked_unit_with_data,
    owned_unit,
    worker_step,
)
from collection_and_annotations.engine.work_sql import UNIT_VIEW
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Assignment,
    Conversation,
    Message,
    Unit,
    iso_utc,
    utcnow,
)

OPENER = "Hi!"
SPEAKERS = {"worker": "user", "bot": "system"}  # as task data names them
START_MODES = ("hi", "worker")
# awaiting: whose move it is in an active conversation
WORKER, BOT, RETRY = "worker", "bot", "retry"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
INTERRUPTED = ("Your partner's reply was interrupted (the server restarted). "
               "Press Try again to ask again.")


class Annotations(Protocol):
    """Annotating while and after chatting, as the task kind defines it."""

    online: str | None  # the bucket of online labels
    online_required: bool

    def check_label(self, speakers: list[str], index: int, value: Any) -> list[Any]:
        """Problems (with `as_dict()`) of the online answer for the message at `index`."""

    def plan(self, layout: Mapping[str, Any], transcripts: Mapping[int, list[list[str]]],
             ended: set[int]) -> dict[str, Any]:
        """The `annotations` of the chat object."""


# The statements that read chats, built once.
_CONVERSATIONS = (select(Conversation.id, Conversation.position, Conversation.bot,
                         Conversation.status, Conversation.awaiting, Conversation.turns_done,
                         Conversation.respond_by, Conversation.error)
                  .where(Conversation.unit_id == bindparam("unit_id"),
                         Conversation.attempt == bindparam("attempt"))
                  .order_by(Conversation.position))
_CURRENT = _CONVERSATIONS.order_by(None).order_by(Conversation.position.desc()).limit(1)
_SHOWN_MESSAGES = (select(Message.conversation_id, Message.index, Message.role, Message.text,
                          Message.sent_at, Message.labels)
                   .where(Message.conversation_id.in_(bindparam("ids", expanding=True)))
                   .order_by(Message.conversation_id, Message.index))
_UNIT_LAYOUT = (select(Unit.layout, Assignment.data)
                .join(Assignment, Assignment.id == Unit.assignment_id)
                .where(Unit.id == bindparam("unit_id")))


@dataclass(frozen=True)
class ChatRules:
    """The conf's chat keys, as the server enforces them; a kind whose conversations run side
    by side (the arena's `ArenaRules`) says here what it does differently."""

    num_turns: int
    max_resp_time: int
    start_mode: str = "hi"
    max_message_chars: int = 2000
    annotations: Annotations | None = None

    what: ClassVar[str] = "chat"  # the word for the unit's conversations, in refusals
    label_field: ClassVar[str] = "label"  # the request's key for the online label(s)
    # False: the conversations run one after the other, a message goes to the current one;
    # True: they start together and each message goes to all of them
    side_by_side: ClassVar[bool] = False

    def state(self, connection: Connection, unit_id: int, attempt: int,
              layout: dict[str, Any], live_text: Callable[[int], str | None] = lambda _id: None,
              ) -> dict[str, Any]:
        """The `chat` object of docs/chat-api.md (`layout` as `full_layout` gives it).
        `live_text` gives the text so far of a reply this process is generating (other
        processes' replies show from their next piece)."""
        by_position = {t.position: t for t in transcripts(connection, unit_id, attempt)}
        shown = []
        for position, name in enumerate(partner_names(len(layout["bots"]))):
            chat = by_position.get(position)
            if chat is None:
                shown.append({"position": position, "partner": name, "status": "pending",
                              "turns_done": 0, "can_end": False, "respond_by": None,
                              "reply": None, "error": None, "messages": []})
                continue
            listed = [_shown_message(m, self) for m in chat.messages]
            active = chat.status == "active"
            awaits_worker = active and chat.awaiting == WORKER
            shown.append({
                "position": position, "partner": name, "status": chat.status,
                "turns_done": chat.turns_done,
                "can_end": awaits_worker and chat.turns_done >= self.num_turns,
                "respond_by": (iso_utc(chat.respond_by) if awaits_worker and chat.respond_by
                               else None),
                "reply": ({"index": len(listed), "text": live_text(chat.conversation_id) or ""}
                          if active and chat.awaiting == BOT else None),
                "error": chat.error if active or chat.status == "failed" else None,
                "messages": listed,
            })
        current = next((c["position"] for c in shown
                        if c["status"] in ("pending", "active")), None)
        if any(c["status"] in ("timed_out", "failed") for c in shown):
            current = None
        state = {
            "num_turns": self.num_turns, "max_resp_time": self.max_resp_time,
            "max_message_chars": self.max_message_chars,
            "conversation_start_mode": self.start_mode, "current": current,
            "conversations": shown,
        }
        if self.annotations is not None:
            turns = {position: [[SPEAKERS[m.role], m.text] for m in chat.messages]
                     for position, chat in by_position.items()}
            state["annotations"] = self.annotations.plan(
                layout, turns, {c["position"] for c in shown if c["status"] == "ended"})
        return state

    def partner(self, position: int | None) -> str:
        """The bot of a conversation as the worker is told of it."""
        return "your partner"

    def sides(self, conversations: Sequence[Side]) -> list[Side]:
        """The conversations (of this try) a worker's message goes to."""
        ordered = sorted(conversations, key=lambda side: side.position)
        return ordered if self.side_by_side else ordered[-1:]

    def voted(self, connection: Connection, unit: UnitRow) -> Collection[int]:
        """The turns the worker has voted on (a kind without votes has none)."""
        return ()

    def first_bots(self, connection: Connection, unit: Row, worker_id: int,
                   bots: list[str]) -> list[str]:
        """The unit's bots as its first conversation starts."""
        return bots

    def side_labels(self, given: Any, sides: Sequence[Side]) -> list[Any]:
        """The online label the request gives for each side's last reply."""
        return [given for _ in sides]

    def checked_position(self, position: Any) -> int | None:
        """The side a retry names (a chat's is the current one: None)."""
        return None

    def check_message(self, sides: Sequence[Side], voted: Collection[int]) -> None:
        """WorkRefused when the worker may not send a message to `sides` now."""
        conversation = sides[0] if sides else None
        if conversation is None or conversation.status != "active":
            raise WorkRefused("no chat is open: start the chat first", 409)
        if conversation.awaiting != WORKER:
            raise WorkRefused("your partner has not answered yet; wait for the reply", 409)
        if conversation.turns_done >= self.num_turns:
            raise WorkRefused(f"this chat has its {self.num_turns} turns; end it with the "
                              "End chat button", 409)


@dataclass(frozen=True)
class ReplyJob:
    """A bot turn to work on: the whole conversation so far, and where the reply goes."""

    unit_id: int
    public_id: str  # the unit as the page and the event bus name it
    conversation_id: int
    attempt: int
    position: int
    bot: str
    layout: dict[str, Any] | None  # the unit's full layout, if the step had read it
    index: int  # the index the bot's message will have
    history: tuple[Turn, ...]
    asked_at: datetime  # when the worker's message was stored

    @classmethod
    def after(cls, unit: Any, public_id: str, conversation: Any, history: tuple[Turn, ...],
              now: datetime) -> ReplyJob:
        """The bot's turn after `history` in the unit's `conversation` (their rows)."""
        return cls(unit.id, public_id, conversation.id, unit.times_expired,
                   conversation.position, conversation.bot, None, len(history), history, now)


@dataclass(frozen=True)
class MessageStep:
    """A worker's message (`send`)."""

    public_id: str
    worker_id: int
    text: str
    client_id: str | None
    labels: Any = None  # the online label(s) of the replies before it, as the page sends them

    @classmethod
    def checked(cls, public_id: str, worker_id: int, text: Any, client_message_id: Any,
                rules: ChatRules, labels: Any = None) -> MessageStep:
        """The step, or WorkRefused at once for what needs no database (empty, too long)."""
        return cls(public_id, worker_id, check_text(text, rules),
                   client_id_of(client_message_id), labels)


@dataclass(frozen=True)
class ReplyStep:
    """A bot's finished reply (`store_reply`)."""

    job: ReplyJob
    text: str
    settings: dict[str, Any]
    first_piece_ms: int | None
    latency_ms: int

    @property
    def public_id(self) -> str:
        return self.job.public_id


def dialogue_id(task_name: str, *conversation_ids: int) -> str:
    """A collected conversation's dialogue id (or a comparison's, of two): never the bot."""
    return task_name + "".join(f"_c{i}" for i in conversation_ids)


def partner_names(count: int) -> list[str]:
    """Neutral names the worker sees: bot nicknames never reach the browser."""
    if count == 1:
        return ["Partner"]
    return [f"Partner {chr(ord('A') + i)}" for i in range(count)]


def full_layout(data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
    """The unit's layout with its bots in the order it chats with them: recorded there, or
    the data's."""
    return {**(layout or {}), "bots": list((layout or {}).get("bots") or data["bots"])}


# -- reading ---------------------------------------------------------------------------------

class Transcript(NamedTuple):
    """A conversation (`_CONVERSATIONS`' columns) with its messages (index, role, text,
    sent_at, labels), as the page, the submission and the requester read it."""

    conversation_id: int
    position: int
    bot: str
    status: str
    awaiting: str
    turns_done: int
    respond_by: datetime | None
    error: dict[str, Any] | None
    messages: list[Row]


def transcripts(connection: Connection, unit_id: int, attempt: int) -> list[Transcript]:
    """The unit's conversations of this attempt, in order, with their messages."""
    conversations = connection.execute(_CONVERSATIONS,
                                       {"unit_id": unit_id, "attempt": attempt}).all()
    messages: dict[int, list[Row]] = {c.id: [] for c in conversations}
    if conversations:
        for row in connection.execute(_SHOWN_MESSAGES, {"ids": list(messages)}):
            messages[row.conversation_id].append(row)
    return [Transcript(*c, messages[c.id]) for c in conversations]


def _shown_message(message: Row, rules: ChatRules) -> dict[str, Any]:
    shown = {"index": message.index, "role": message.role, "text": message.text,
             "sent_at": iso_utc(message.sent_at)}
    if rules.annotations is not None and message.role == "bot":
        # Stored as {bucket: value} (exports name the bucket); the page gets the value.
        stored = message.labels or {}
        shown["labels"] = stored.get(rules.annotations.online) if isinstance(stored, dict) \
            else None
    return shown


def read_chat(db: Database, public_id: str, worker_id: int, rules: ChatRules,
              live_text: Callable[[int], str | None]) -> dict[str, Any]:
    """The `chat` object of a worker's unit that is still theirs."""
    with db.snapshot() as connection:
        unit = open_unit(connection.execute(
            UNIT_VIEW, {"public_id": public_id, "worker_id": worker_id}).first(), worker_id,
            rules.what)
        return rules.state(connection, unit.id, unit.times_expired,
                           full_layout(unit.data, unit.layout), live_text)


def unit_state(db: Database, unit_id: int, attempt: int, layout: dict[str, Any] | None,
               rules: ChatRules, live_text: Callable[[int], str | None]) -> dict[str, Any]:
    """The `chat` object of a unit's try as its worker sees it (`layout` as `full_layout`
    gives it, read when None), read outside any write transaction (so a step holds the write
    lock for its writes alone): a step's change, or a later one."""
    with db.snapshot() as connection:
        if layout is None:
            row = connection.execute(_UNIT_LAYOUT, {"unit_id": unit_id}).one()
            layout = full_layout(row.data, row.layout)
        return rules.state(connection, unit_id, attempt, layout, live_text)


# -- the worker's steps ----------------------------------------------------------------------

def open_unit(unit: Any, worker_id: int, what: str) -> Any:
    """The unit (None if not found) if it is the worker's and its chat (or battle: `what`)
    still takes steps."""
    unit = owned_unit(unit, worker_id)
    if unit.status != "assigned":
        raise WorkRefused(f"this unit is {unit.status}; the {what} is closed", 409)
    return unit


class UnitRow(NamedTuple):
    """A unit as a step reads it."""

    id: int
    status: str
    worker_id: int | None
    times_expired: int


class MessageRow(NamedTuple):
    """A message as a step reads it."""

    index: int
    role: str
    text: str
    client_message_id: str | None
    sent_at: Any
    labelled: bool


class Side(NamedTuple):
    """A conversation as a step reads it, with its messages in order."""

    id: int
    position: int
    bot: str
    status: str
    awaiting: str
    turns_done: int
    messages: tuple[MessageRow, ...]

    @property
    def history(self) -> tuple[Turn, ...]:
        return tuple(Turn(m.role, m.text) for m in self.messages)


def side(conversation: Sequence[Any], messages: Iterable[Sequence[Any]]) -> Side:
    """A conversation from its six columns (LOCK_CHAT's) and its messages' six, in any order."""
    return Side(*conversation, tuple(sorted((MessageRow(*row) for row in messages),
                                            key=lambda m: m.index)))


@dataclass(frozen=True)
class LockedUnit:
    """The worker's unit, locked, with the conversations a message goes to (`ChatRules.sides`)
    and the turns voted on."""

    unit: UnitRow
    sides: list[Side]
    voted: Collection[int]


def lock_unit(connection: Connection, public_id: str, worker_id: int,
              rules: ChatRules) -> LockedUnit:
    """One statement: the unit row locked first, as every step does, with its conversations;
    WorkRefused when the unit is not this worker's or no longer takes steps."""
    rows = connection.execute(LOCK_CHAT.on(connection), {"public_id": public_id}).all()
    unit = open_unit(UnitRow(*rows[0][:4]) if rows else None, worker_id, rules.what)
    conversations: dict[int, Sequence[Any]] = {}
    messages: dict[int, list[Sequence[Any]]] = defaultdict(list)
    for row in rows:
        if row[4] is not None:
            conversations[row[4]] = row[4:10]
            if row[10] is not None:
                messages[row[4]].append(row[10:])
    return LockedUnit(unit, rules.sides([side(conversation, messages[conversation_id])
                                         for conversation_id, conversation
                                         in conversations.items()]),
                      rules.voted(connection, unit))


def start(db: Database, public_id: str, worker_id: int, rules: ChatRules,
          live_text: Callable[[int], str | None]) -> tuple[list[ReplyJob], dict[str, Any]]:
    """Begin the unit's next conversation (side by side: all of them) if none has begun or
    the current one has ended (idempotent); with the `hi` start mode the worker's opener is
    stored and the bot answers first. Returns the bot turns to run and the `chat` object
    after the step."""
    with worker_step(db) as connection:
        unit = open_unit(locked_unit_with_data(connection, public_id), worker_id, rules.what)
        jobs, layout = _begin(connection, unit, public_id, worker_id,
                              full_layout(unit.data, unit.layout), rules)
    return jobs, unit_state(db, unit.id, unit.times_expired, layout, rules, live_text)


def _begin(connection: Connection, unit: Row, public_id: str, worker_id: int,
           layout: dict[str, Any], rules: ChatRules) -> tuple[list[ReplyJob], dict[str, Any]]:
    """The conversations opened and their bot turns (`hi`), and the layout with the bots."""
    # the conversation the worker is in (None before the first starts)
    current = connection.execute(_CURRENT, {"unit_id": unit.id,
                                            "attempt": unit.times_expired}).first()
    if current is not None and current.status != "ended":
        return [], layout
    position = 0 if current is None else current.position + 1
    if position == 0:
        layout = {**layout, "bots": rules.first_bots(connection, unit, worker_id,
                                                     layout["bots"])}
    bots = layout["bots"]
    # past the last bot every conversation is done: the page submits
    opened = range(position, len(bots) if rules.side_by_side else min(position + 1, len(bots)))
    now, opens, jobs = utcnow(), rules.start_mode == "hi", []
    for n in opened:
        conversation_id = connection.execute(ADD_CONVERSATION, {
            "unit_id": unit.id, "worker_id": worker_id, "attempt": unit.times_expired,
            "position": n, "bot": bots[n], "awaiting": BOT if opens else WORKER,
            "started_at": now, "respond_by": None if opens else respond_by(now, rules)}
        ).scalar_one()
        if opens:
            connection.execute(ADD_MESSAGE, message(conversation_id, 0, "worker", OPENER, now,
                                                    opener=True))
            jobs.append(ReplyJob(unit.id, public_id, conversation_id, unit.times_expired, n,
                                 bots[n], layout, 1, (Turn("worker", OPENER),), now))
    return jobs, layout


def check_text(text: Any, rules: ChatRules) -> str:
    """A worker's message as sent, refused when empty or too long."""
    if not isinstance(text, str) or not text.strip():
        raise WorkRefused("the message is empty; write something first", 422)
    if len(text) > rules.max_message_chars:
        raise WorkRefused(f"the message is longer than {rules.max_message_chars} characters; "
                          "shorten it", 413)
    if storable(text) != text:
        raise WorkRefused("the message holds a character that cannot be stored (NUL or an "
                          "unpaired surrogate); remove it", 422)
    return text


def storable(text: str) -> str:
    """Text as the database keeps it whole: NUL and unpaired surrogates (which a bot may
    send; a worker's message is refused for them) become U+FFFD."""
    return _UNSTORABLE.sub("\ufffd", text)


def client_id_of(client_message_id: Any) -> str | None:
    """The id a client gave a request it may retry, as stored (at most 64 characters)."""
    return str(client_message_id)[:64] if client_message_id else None


def send(db: Database, step: MessageStep, rules: ChatRules
         ) -> tuple[dict[str, Any], list[ReplyJob]]:
    """Store the worker's message on the conversations it goes to (and its `labels`, the
    online labels of the replies before it); returns what the API answers and the bot turns
    to run (none when this was a retry of a message already stored). SQLite's batches take
    the same step (engine/chat_batch.py)."""
    try:
        return _store_message(db, step, rules)
    except IntegrityError:
        # PostgreSQL: a message of this chat committed while this step waited for the unit's
        # lock, after the statement that read the chat took its snapshot. Read again: the
        # step then sees it (a repeat, or "wait for the reply").
        try:
            return _store_message(db, step, rules)
        except IntegrityError:
            raise WorkRefused("another message of this chat was stored at the same time; "
                              "wait for the reply", 409) from None


def _store_message(db: Database, step: MessageStep, rules: ChatRules
                   ) -> tuple[dict[str, Any], list[ReplyJob]]:
    """`send` in one transaction."""
    with worker_step(db) as connection:
        answer, jobs, rows = accept_message(
            connection, lock_unit(connection, step.public_id, step.worker_id, rules), step,
            rules, utcnow())
        if rows:
            connection.execute(ADD_MESSAGE, rows)
            connection.execute(WORKER_SPOKE, [{"conversation_id": row["conversation_id"]}
                                              for row in rows])
        return answer, jobs


def accept_message(connection: Connection, locked: LockedUnit, step: MessageStep,
                   rules: ChatRules, now: datetime
                   ) -> tuple[dict[str, Any], list[ReplyJob], list[dict[str, Any]]]:
    """The checks of a worker's message against its locked unit (WorkRefused when it may not
    be sent) and the replies' online labels stored: the answer, the bot turns and the message
    rows to insert (engine/chat_sql.py `message`), or the earlier answer alone when this
    repeats a message already stored."""
    sides, client_id = locked.sides, step.client_id
    if client_id is not None and sides:
        repeated = next((m for m in sides[0].messages if m.client_message_id == client_id),
                        None)
        if repeated is not None:
            return {"index": repeated.index, "sent_at": iso_utc(repeated.sent_at)}, [], []
    rules.check_message(sides, locked.voted)
    store_labels(connection, sides, step.labels, rules)
    index, text = len(sides[0].messages), step.text
    jobs = [ReplyJob.after(locked.unit, step.public_id, side,
                           (*side.history, Turn("worker", text)), now) for side in sides]
    rows = [message(side.id, index, "worker", text, now, client_message_id=client_id)
            for side in sides]
    return {"index": index, "sent_at": iso_utc(now)}, jobs, rows


def end(db: Database, public_id: str, worker_id: int, rules: ChatRules,
        live_text: Callable[[int], str | None], label: Any = None
        ) -> tuple[int, dict[str, Any]]:
    """End the current conversation (only once it has its turns; `label` is the online
    annotation of the bot's last message); returns its id and the `chat` object after."""
    with worker_step(db) as connection:
        locked = lock_unit(connection, public_id, worker_id, rules)
        if not locked.sides or locked.sides[0].status != "active":
            raise WorkRefused("no chat is open to end", 409)
        conversation = locked.sides[0]
        if conversation.awaiting != WORKER or conversation.turns_done < rules.num_turns:
            raise WorkRefused(f"the chat can end after {rules.num_turns} of your messages, "
                              "each answered", 409)
        store_labels(connection, locked.sides, label, rules)
        connection.execute(END_CONVERSATION, {"conversation_id": conversation.id,
                                              "now": utcnow()})
    return conversation.id, unit_state(db, locked.unit.id, locked.unit.times_expired, None,
                                       rules, live_text)


def no_labels(rules: ChatRules) -> WorkRefused:
    """The refusal of labels sent to a kind that takes none."""
    return WorkRefused(f"this {rules.what} takes no labels ('{rules.label_field}' must be "
                       "absent)", 400)


def store_labels(connection: Connection, sides: Sequence[Side], given: Any,
                 rules: ChatRules) -> None:
    """The online labels of the sides' last bot messages (`given` as the request sends them),
    checked before the worker moves on and stored once all are: WorkRefused (422 for a
    required label that is missing or wrong) stores none."""
    checked = [_checked_label(side, label, rules)
               for side, label in zip(sides, rules.side_labels(given, sides), strict=True)]
    for binds in checked:
        if binds is not None:
            connection.execute(SET_LABELS, binds)


def _checked_label(side: Side, label: Any, rules: ChatRules) -> dict[str, Any] | None:
    """The binds of `SET_LABELS` for one side's label (None where there is nothing to store)."""
    annotations, messages = rules.annotations, side.messages
    if annotations is None or annotations.online is None:
        if label is not None:
            raise no_labels(rules)
        return None
    index = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "bot"),
                 None)
    if index is None:
        return None
    if messages[index].labelled:
        return None  # labelled before (a stored label is final)
    if label is None and not annotations.online_required:
        return None
    problems = annotations.check_label([SPEAKERS[m.role] for m in messages], index, label)
    if problems:
        number = sum(1 for m in messages[:index + 1] if m.role == "bot")  # as the page
        partner = rules.partner(side.position)
        details = [{**p.as_dict(), "where": f"{partner}'s message {number}"}
                   for p in problems]
        first = problems[0].message
        raise WorkRefused(f"label {partner}'s message {number} first "
                          f"('{annotations.online}'): {first}", 422, details)
    if label is None:
        return None
    return {"conversation_id": side.id, "index": index, "labels": {annotations.online: label}}


def retry(db: Database, public_id: str, worker_id: int, rules: ChatRules,
          position: Any = None) -> ReplyJob:
    """Ask a bot again for a reply that failed with a retryable error (side by side: the bot
    at `position`; the other side's reply stays)."""
    position = rules.checked_position(position)
    with worker_step(db) as connection:
        locked = lock_unit(connection, public_id, worker_id, rules)
        side = next((s for s in locked.sides if position in (None, s.position)), None)
        refused = WorkRefused(f"{rules.partner(position)} has no failed reply to ask for "
                              "again", 409)
        if side is None or side.status != "active" or side.awaiting != RETRY:
            raise refused
        if not connection.execute(ASK_AGAIN, {"conversation_id": side.id}).rowcount:
            # another retry asked first
            raise refused
        return ReplyJob.after(locked.unit, public_id, side, side.history, utcnow())


# -- the runner's side -----------------------------------------------------------------------

def _waits_for(connection: Connection, job: ReplyJob) -> bool:
    """Whether the job's conversation still waits for this reply (the unit row locked first)."""
    waiting = connection.execute(LOCK_WAITING.on(connection), {
        "unit_id": job.unit_id, "conversation_id": job.conversation_id}).first()
    return waiting is not None and tuple(waiting) == ("active", BOT)


def store_reply(db: Database, step: ReplyStep, rules: ChatRules) -> dict[str, Any] | None:
    """Store the bot's message; None when the conversation stopped waiting for it (the unit
    timed out or went back to the pool meanwhile): the reply is dropped."""
    text = storable(step.text)
    with worker_step(db) as connection:
        if not _waits_for(connection, step.job):
            return None
        now = utcnow()
        connection.execute(ADD_MESSAGE, reply_row(step, text, now))
        connection.execute(BOT_SPOKE, {"conversation_id": step.job.conversation_id,
                                       "respond_by": respond_by(now, rules)})
        return shown_reply(step.job, text, now)


def reply_row(step: ReplyStep, text: str, now: datetime) -> dict[str, Any]:
    """The bot message's row to insert (`text` as `storable` gives it)."""
    job = step.job
    return message(job.conversation_id, job.index, "bot", text, now, bot=job.bot,
                   settings=step.settings, first_piece_ms=step.first_piece_ms,
                   latency_ms=step.latency_ms)


def respond_by(now: datetime, rules: ChatRules) -> datetime:
    """The worker's deadline for answering a reply stored `now`."""
    return now + timedelta(seconds=rules.max_resp_time)


def shown_reply(job: ReplyJob, text: str, now: datetime) -> dict[str, Any]:
    """The stored reply as the chat's streams show it."""
    return {"position": job.position, "index": job.index, "role": "bot", "text": text,
            "sent_at": iso_utc(now)}


def reply_failed(db: Database, job: ReplyJob, message: str, retryable: bool) -> bool:
    """Record a failed bot turn. Retryable: the worker may ask again. Otherwise the chat ends
    as failed and the unit goes back to the pool. Returns False when the conversation had
    already stopped waiting for this reply."""
    with worker_step(db) as connection:
        if not _waits_for(connection, job):
            return False
        error = {"message": message, "retry": retryable}
        connection.execute(update(Conversation).where(Conversation.id == job.conversation_id)
                           .values(awaiting=RETRY if retryable else BOT, error=error))
        if not retryable:
            return_unit(connection, job.unit_id, "failed")
        return True


_IDLE = release_statement(
    Unit.task_run_id == bindparam("run_id"), Unit.status == "assigned",
    Unit.id.in_(select(Conversation.unit_id).where(
        Conversation.status == "active", Conversation.awaiting == WORKER,
        Conversation.respond_by < bindparam("now")).scalar_subquery()))


def expire_idle_chats(connection: Connection, run_id: int) -> int:
    """Units whose worker let `max_resp_time` pass without answering go back to the pool, the
    chat marked timed out; returns how many."""
    return len(release_units(connection, _IDLE, {"run_id": run_id, "now": utcnow()},
                             "timed_out"))


def ended_conversations(db: Database, conversation_ids: list[int]) -> list[int]:
    """Those of the conversations that are no longer active (ended, timed out, failed)."""
    with db.snapshot() as connection:
        return list(connection.scalars(select(Conversation.id).where(
            Conversation.id.in_(conversation_ids), Conversation.status != "active")))


def mark_interrupted_replies(connection: Connection, task_id: int) -> int:
    """At start-up: replies that were being generated when the last server stopped will never
    arrive; their workers may ask again. Returns how many."""
    units = (select(Unit.id).join(Assignment, Assignment.id == Unit.assignment_id)
             .where(Assignment.task_id == task_id, Unit.status == "assigned").scalar_subquery())
    return connection.execute(
        update(Conversation)
        .where(Conversation.unit_id.in_(units), Conversation.status == "active",
               Conversation.awaiting == BOT)
        .values(awaiting=RETRY, error={"message": INTERRUPTED, "retry": True})
        .execution_options(synchronize_session=False)).rowcount
