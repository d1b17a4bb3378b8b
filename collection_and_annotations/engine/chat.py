"""A worker's live chats with bots, kept in the database (docs/chat-api.md).

Every step is one write transaction that locks the unit row first, like drafts and submits, so
a chat step and the expiry sweep serialise: a unit that went back to the pool takes no more
messages, and a bot reply that arrives after that is dropped (the transcript up to then is kept,
its conversation marked). The server keeps no chat state a restart would lose: a page that
reloads, or reconnects to another server process, reads it all from here.

A bot turn is not done inside a request: `send` stores the worker's message and returns a
`ReplyJob`, which the chat runner (server/chat/runner.py) works on outside any transaction and
finishes with `store_reply` or `reply_failed`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol

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
_CONVERSATIONS = (select(Conversation)
                  .where(Conversation.unit_id == bindparam("unit_id"),
                         Conversation.attempt == bindparam("attempt"))
                  .order_by(Conversation.position))
_CURRENT = _CONVERSATIONS.order_by(None).order_by(Conversation.position.desc()).limit(1)
_SHOWN_MESSAGES = (select(Message.conversation_id, Message.index, Message.role, Message.text,
                          Message.sent_at, Message.labels, Message.client_message_id,
                          Message.labels.is_not(None).label("labelled"))
                   .where(Message.conversation_id.in_(bindparam("ids", expanding=True)))
                   .order_by(Message.conversation_id, Message.index))
_UNIT_LAYOUT = (select(Unit.layout, Assignment.data)
                .join(Assignment, Assignment.id == Unit.assignment_id)
                .where(Unit.id == bindparam("unit_id")))


@dataclass(frozen=True)
class ChatRules:
    """The conf's chat keys, as the server enforces them."""

    num_turns: int
    max_resp_time: int
    start_mode: str = "hi"
    max_message_chars: int = 2000
    annotations: Annotations | None = None


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
              now: datetime, layout: dict[str, Any] | None = None) -> ReplyJob:
        """The bot's turn after `history` in the unit's `conversation` (their rows)."""
        return cls(unit.id, public_id, conversation.id, unit.times_expired,
                   conversation.position, conversation.bot, layout, len(history), history, now)


def dialogue_id(task_name: str, *conversation_ids: int) -> str:
    """A collected conversation's dialogue id (or a comparison's, of two): never the bot."""
    return task_name + "".join(f"_c{i}" for i in conversation_ids)


def partner_names(count: int) -> list[str]:
    """Neutral names the worker sees: bot nicknames never reach the browser."""
    if count == 1:
        return ["Partner"]
    return [f"Partner {chr(ord('A') + i)}" for i in range(count)]


def unit_bots(data: dict[str, Any], layout: dict[str, Any] | None) -> list[str]:
    """The bots of a unit in the order this unit chats with them (recorded in its layout)."""
    return list((layout or {}).get("bots") or data["bots"])


def full_layout(data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
    """The layout with the bots in order, also for units whose order is the data's."""
    return {**(layout or {}), "bots": unit_bots(data, layout)}


# -- reading ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Transcript:
    """A conversation with its messages (index, role, text, sent_at, labels,
    client_message_id, labelled), as the page, the submission and the arena's steps read it."""

    conversation: Row
    messages: list[Row]

    @property
    def conversation_id(self) -> int:
        return self.conversation.id

    @property
    def position(self) -> int:
        return self.conversation.position

    @property
    def bot(self) -> str:
        return self.conversation.bot

    @property
    def status(self) -> str:
        return self.conversation.status


def transcripts(connection: Connection, unit_id: int, attempt: int) -> list[Transcript]:
    """The unit's conversations of this attempt, in order, with their messages."""
    conversations = connection.execute(_CONVERSATIONS,
                                       {"unit_id": unit_id, "attempt": attempt}).all()
    messages: dict[int, list[Row]] = {c.id: [] for c in conversations}
    if conversations:
        for row in connection.execute(_SHOWN_MESSAGES, {"ids": list(messages)}):
            messages[row.conversation_id].append(row)
    return [Transcript(c, messages[c.id]) for c in conversations]


def chat_state(
    connection: Connection, unit_id: int, attempt: int, layout: dict[str, Any],
    rules: ChatRules, live_text: Callable[[int], str | None] = lambda _id: None,
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
        conversation = chat.conversation
        listed = [_shown_message(m, rules) for m in chat.messages]
        active = conversation.status == "active"
        awaits_worker = active and conversation.awaiting == WORKER
        shown.append({
            "position": position, "partner": name, "status": conversation.status,
            "turns_done": conversation.turns_done,
            "can_end": awaits_worker and conversation.turns_done >= rules.num_turns,
            "respond_by": (iso_utc(conversation.respond_by)
                           if awaits_worker and conversation.respond_by else None),
            "reply": ({"index": len(listed), "text": live_text(conversation.id) or ""}
                      if active and conversation.awaiting == BOT else None),
            "error": conversation.error if active or conversation.status == "failed" else None,
            "messages": listed,
        })
    current = next((c["position"] for c in shown if c["status"] in ("pending", "active")), None)
    if any(c["status"] in ("timed_out", "failed") for c in shown):
        current = None
    state = {
        "num_turns": rules.num_turns, "max_resp_time": rules.max_resp_time,
        "max_message_chars": rules.max_message_chars,
        "conversation_start_mode": rules.start_mode, "current": current,
        "conversations": shown,
    }
    if rules.annotations is not None:
        turns = {position: [[SPEAKERS[m.role], m.text] for m in chat.messages]
                 for position, chat in by_position.items()}
        state["annotations"] = rules.annotations.plan(
            layout, turns, {c["position"] for c in shown if c["status"] == "ended"})
    return state


def _shown_message(message: Row, rules: ChatRules) -> dict[str, Any]:
    shown = {"index": message.index, "role": message.role, "text": message.text,
             "sent_at": iso_utc(message.sent_at)}
    if rules.annotations is not None and message.role == "bot":
        # Stored as {bucket: value} (exports name the bucket); the page gets the value.
        stored = message.labels or {}
        shown["labels"] = stored.get(rules.annotations.online) if isinstance(stored, dict) \
            else None
    return shown


# `chat_state`, or the arena's `arena_state` (engine/arena.py): a unit's state from its rows
StateOf = Callable[..., dict[str, Any]]


def read_chat(db: Database, public_id: str, worker_id: int, rules: ChatRules,
              live_text: Callable[[int], str | None], state: StateOf = chat_state,
              what: str = "chat") -> dict[str, Any]:
    """The `chat` object of a worker's unit that is still theirs (`what`: chat or battle)."""
    with db.snapshot() as connection:
        unit = open_unit(connection.execute(
            UNIT_VIEW, {"public_id": public_id, "worker_id": worker_id}).first(), worker_id,
            what)
        return state(connection, unit.id, unit.times_expired,
                     full_layout(unit.data, unit.layout), rules, live_text)


def job_state(db: Database, job: ReplyJob, rules: ChatRules,
              live_text: Callable[[int], str | None], state: StateOf = chat_state
              ) -> dict[str, Any]:
    """The `chat` object of a bot turn's unit, as the worker who chatted sees it."""
    with db.snapshot() as connection:
        layout = job.layout
        if layout is None:
            row = connection.execute(_UNIT_LAYOUT, {"unit_id": job.unit_id}).one()
            layout = full_layout(row.data, row.layout)
        return state(connection, job.unit_id, job.attempt, layout, rules, live_text)


# -- the worker's steps ----------------------------------------------------------------------

def assigned_unit(connection: Connection, public_id: str, worker_id: int,
                  what: str = "chat") -> Row:
    """The worker's unit, locked, with its data and layout (a step that shows the state)."""
    return open_unit(locked_unit_with_data(connection, public_id), worker_id, what)


def open_unit(unit: Any, worker_id: int, what: str = "chat") -> Any:
    """The unit (None if not found) if it is the worker's and its chat (or battle: `what`)
    still takes steps."""
    unit = owned_unit(unit, worker_id)
    if unit.status != "assigned":
        raise WorkRefused(f"this unit is {unit.status}; the {what} is closed", 409)
    return unit


class UnitRow(NamedTuple):
    """A unit as a step reads it (the chat's and the arena's batched steps too)."""

    id: int
    status: str
    worker_id: int | None
    times_expired: int


class ConversationRow(NamedTuple):
    """A conversation as a step reads it."""

    id: int
    position: int
    bot: str
    status: str
    awaiting: str
    turns_done: int


class MessageRow(NamedTuple):
    """A message as a step reads it."""

    index: int
    role: str
    text: str
    client_message_id: str | None
    sent_at: Any
    labelled: bool


@dataclass(frozen=True)
class LockedChat:
    """The worker's unit, locked, with its current conversation and that one's messages."""

    unit: UnitRow
    conversation: ConversationRow | None
    messages: list[MessageRow]

    @property
    def history(self) -> tuple[Turn, ...]:
        return tuple(Turn(m.role, m.text) for m in self.messages)


def _lock_chat(connection: Connection, public_id: str, worker_id: int) -> LockedChat:
    """One statement: the unit row locked first, as every step does."""
    rows = connection.execute(LOCK_CHAT.on(connection), {"public_id": public_id}).all()
    return locked_chat(rows[0][:10] if rows else None,
                       [row[10:] for row in rows if row[10] is not None], worker_id)


def locked_chat(head: Sequence[Any] | None, messages: Sequence[Sequence[Any]],
                worker_id: int) -> LockedChat:
    """The chat from its unit and conversation columns (`lock_chat`'s first ten) and its
    message rows; WorkRefused when the unit is not this worker's or no longer takes steps."""
    unit = open_unit(UnitRow(*head[:4]) if head else None, worker_id)
    conversation = None if head[4] is None else ConversationRow(*head[4:10])
    return LockedChat(unit, conversation,
                       sorted((MessageRow(*row) for row in messages), key=lambda m: m.index))


def start(db: Database, public_id: str, worker_id: int, rules: ChatRules,
          live_text: Callable[[int], str | None]) -> tuple[ReplyJob | None, dict[str, Any]]:
    """Begin the current conversation if it has not begun (idempotent); with the `hi` start
    mode the worker's opener is stored and the bot answers first. Returns the bot turn to
    run, if any, and the `chat` object after the step."""
    with worker_step(db) as connection:
        unit = assigned_unit(connection, public_id, worker_id)
        layout = full_layout(unit.data, unit.layout)
        job = _begin(connection, unit, public_id, worker_id, layout, rules)
    return job, _state_after(db, unit, layout, rules, live_text)


def _state_after(db: Database, unit: Row, layout: dict[str, Any], rules: ChatRules,
                 live_text: Callable[[int], str | None]) -> dict[str, Any]:
    """The `chat` object once a step has committed, read outside its write transaction (so
    the write lock is held for the step's writes alone): the step's change, or a later one."""
    with db.snapshot() as connection:
        return chat_state(connection, unit.id, unit.times_expired, layout, rules, live_text)


def _begin(connection: Connection, unit: Row, public_id: str, worker_id: int,
           layout: dict[str, Any], rules: ChatRules) -> ReplyJob | None:
    bots = layout["bots"]
    # the conversation the worker is in (None before the first starts)
    current = connection.execute(_CURRENT, {"unit_id": unit.id,
                                            "attempt": unit.times_expired}).first()
    if current is not None and current.status != "ended":
        return None
    position = 0 if current is None else current.position + 1
    if position >= len(bots):
        return None  # every chat is done: the page submits
    now = utcnow()
    opens = rules.start_mode == "hi"
    conversation_id = connection.execute(ADD_CONVERSATION, {
        "unit_id": unit.id, "worker_id": worker_id, "attempt": unit.times_expired,
        "position": position, "bot": bots[position], "awaiting": BOT if opens else WORKER,
        "started_at": now,
        "respond_by": None if opens else respond_by(now, rules)}
    ).scalar_one()
    if not opens:
        return None
    connection.execute(ADD_MESSAGE, message(conversation_id, 0, "worker", OPENER, now,
                                            opener=True))
    return ReplyJob(unit.id, public_id, conversation_id, unit.times_expired, position,
                    bots[position], layout, 1, (Turn("worker", OPENER),), now)


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
    return str(client_message_id)[:64] if client_message_id else None


def send(db: Database, public_id: str, worker_id: int, text: Any, client_message_id: Any,
         rules: ChatRules, label: Any = None) -> tuple[dict[str, Any], ReplyJob | None]:
    """Store the worker's message (and `label`, the online annotation of the bot's last
    message); returns what the API answers and the bot turn to run (None when this was a
    retry of a message already stored)."""
    step = (db, public_id, worker_id, check_text(text, rules), client_id_of(client_message_id),
            rules, label)
    try:
        return _store_message(*step)
    except IntegrityError:
        # PostgreSQL: a message of this chat committed while this step waited for the unit's
        # lock, after the statement that read the chat took its snapshot. Read again: the
        # step then sees it (a repeat, or "wait for the reply").
        try:
            return _store_message(*step)
        except IntegrityError:
            raise WorkRefused("another message of this chat was stored at the same time; "
                              "wait for the reply", 409) from None


def _store_message(db: Database, public_id: str, worker_id: int, text: str,
                   client_id: str | None, rules: ChatRules, label: Any
                   ) -> tuple[dict[str, Any], ReplyJob | None]:
    """`send` in one transaction."""
    with worker_step(db) as connection:
        chat = _lock_chat(connection, public_id, worker_id)
        answer, job, row = accept_message(connection, chat, public_id, text, client_id,
                                          label, rules, utcnow())
        if row is not None:
            connection.execute(ADD_MESSAGE, row)
            connection.execute(WORKER_SPOKE, {"conversation_id": chat.conversation.id})
        return answer, job


def accept_message(connection: Connection, chat: LockedChat, public_id: str,
                   text: str, client_id: str | None, label: Any, rules: ChatRules,
                   now: datetime) -> tuple[dict[str, Any], ReplyJob | None, dict[str, Any] | None]:
    """The checks of a worker's message against its locked chat (WorkRefused when it may not
    be sent) and its online label stored: the answer, the bot turn and the message row to
    insert, or the earlier answer alone when this repeats a message already stored."""
    unit, conversation = chat.unit, chat.conversation
    if client_id is not None:
        repeated = next((m for m in chat.messages if m.client_message_id == client_id), None)
        if repeated is not None:
            return {"index": repeated.index, "sent_at": iso_utc(repeated.sent_at)}, None, None
    if conversation is None or conversation.status != "active":
        raise WorkRefused("no chat is open: start the chat first", 409)
    if conversation.awaiting != WORKER:
        raise WorkRefused("your partner has not answered yet; wait for the reply", 409)
    if conversation.turns_done >= rules.num_turns:
        raise WorkRefused(f"this chat has its {rules.num_turns} turns; end it with the "
                          "End chat button", 409)
    store_labels(connection, [checked_label(conversation.id, chat.messages, label, rules)])
    index = len(chat.messages)
    job = ReplyJob.after(unit, public_id, conversation, (*chat.history, Turn("worker", text)),
                         now)
    row = message(conversation.id, index, "worker", text, now, client_message_id=client_id)
    return {"index": index, "sent_at": iso_utc(now)}, job, row


def end(db: Database, public_id: str, worker_id: int, rules: ChatRules,
        live_text: Callable[[int], str | None], label: Any = None
        ) -> tuple[int, dict[str, Any]]:
    """End the current conversation (only once it has its turns; `label` is the online
    annotation of the bot's last message); returns its id and the `chat` object after."""
    with worker_step(db) as connection:
        unit = assigned_unit(connection, public_id, worker_id)
        conversation = (chat := _lock_chat(connection, public_id, worker_id)).conversation
        if conversation is None or conversation.status != "active":
            raise WorkRefused("no chat is open to end", 409)
        if conversation.awaiting != WORKER or conversation.turns_done < rules.num_turns:
            raise WorkRefused(f"the chat can end after {rules.num_turns} of your messages, "
                              "each answered", 409)
        store_labels(connection,
                     [checked_label(conversation.id, chat.messages, label, rules)])
        connection.execute(END_CONVERSATION, {"conversation_id": conversation.id,
                                              "now": utcnow()})
    return conversation.id, _state_after(db, unit, full_layout(unit.data, unit.layout), rules,
                                         live_text)


def store_labels(connection: Connection, labels: Sequence[dict[str, Any] | None]) -> None:
    """The labels `checked_label` gave, stored (once all of a step's are checked)."""
    for binds in labels:
        if binds is not None:
            connection.execute(SET_LABELS, binds)


def checked_label(conversation_id: int, messages: Sequence[Any], label: Any, rules: ChatRules,
                  partner: str = "your partner") -> dict[str, Any] | None:
    """The check of the online label of the conversation's last bot message (`messages`: its
    messages in order, each with `role` and `labelled`) before the worker moves on: the binds
    of `SET_LABELS` (None when there is nothing to store), or WorkRefused (422 for a required
    label that is missing or wrong)."""
    annotations = rules.annotations
    if annotations is None or annotations.online is None:
        if label is not None:
            raise WorkRefused("this chat takes no labels ('label' must be absent)", 400)
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
        details = [{**p.as_dict(), "where": f"{partner}'s message {number}"}
                   for p in problems]
        first = problems[0].message
        raise WorkRefused(f"label {partner}'s message {number} first "
                          f"('{annotations.online}'): {first}", 422, details)
    if label is None:
        return None
    return {"conversation_id": conversation_id, "index": index,
            "labels": {annotations.online: label}}


def retry(db: Database, public_id: str, worker_id: int) -> ReplyJob:
    """Ask the bot again for a reply that failed with a retryable error."""
    with worker_step(db) as connection:
        chat = _lock_chat(connection, public_id, worker_id)
        unit, conversation = chat.unit, chat.conversation
        refused = WorkRefused("there is no failed reply to ask for again", 409)
        if conversation is None or conversation.status != "active" \
                or conversation.awaiting != RETRY:
            raise refused
        if not connection.execute(ASK_AGAIN, {"conversation_id": conversation.id}).rowcount:
            # another retry asked first
            raise refused
        return ReplyJob.after(unit, public_id, conversation, chat.history, utcnow())


# -- the runner's side -----------------------------------------------------------------------

def _waits_for(connection: Connection, job: ReplyJob) -> bool:
    """Whether the job's conversation still waits for this reply (the unit row locked first)."""
    waiting = connection.execute(LOCK_WAITING.on(connection), {
        "unit_id": job.unit_id, "conversation_id": job.conversation_id}).first()
    return waiting is not None and tuple(waiting) == ("active", BOT)


def store_reply(db: Database, job: ReplyJob, text: str, bot_settings: dict[str, Any],
                first_piece_ms: int | None, latency_ms: int, rules: ChatRules
                ) -> dict[str, Any] | None:
    """Store the bot's message; None when the conversation stopped waiting for it (the unit
    timed out or went back to the pool meanwhile): the reply is dropped."""
    text = storable(text)
    with worker_step(db) as connection:
        if not _waits_for(connection, job):
            return None
        now = utcnow()
        connection.execute(ADD_MESSAGE, reply_row(job, text, bot_settings, first_piece_ms,
                                                  latency_ms, now))
        connection.execute(BOT_SPOKE, {"conversation_id": job.conversation_id,
                                       "respond_by": respond_by(now, rules)})
        return shown_reply(job, text, now)


def reply_row(job: ReplyJob, text: str, bot_settings: dict[str, Any],
              first_piece_ms: int | None, latency_ms: int, now: datetime) -> dict[str, Any]:
    """The bot message's row to insert (`text` as `storable` gives it)."""
    return message(job.conversation_id, job.index, "bot", text, now, bot=job.bot,
                   settings=bot_settings, first_piece_ms=first_piece_ms, latency_ms=latency_ms)


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
