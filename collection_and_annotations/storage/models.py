"""Database tables for the domain model (design.md §3)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Index,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# `Unit.claim_order`: uniform keys over this many bits order a run's units as a random
# permutation (ties are negligible).
CLAIM_ORDER_BITS = 62


def utcnow() -> datetime:
    """Naive UTC: stored and compared the same way on SQLite and PostgreSQL."""
    return datetime.now(UTC).replace(tzinfo=None)


def random_claim_order() -> int:
    """The claim order of a unit made outside a run's start (work a rejection returns)."""
    return secrets.randbits(CLAIM_ORDER_BITS)


def iso_utc(moment: datetime) -> str:
    """A stored (naive UTC) time as ISO 8601 with its zone, as the APIs and exports show it."""
    return moment.isoformat() + "Z"


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON, datetime: DateTime()}


class Setting(Base):
    """Secrets and other values every server process of a deployment must share."""

    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Task(Base):
    __tablename__ = "tasks"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    blueprint: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class TaskRun(Base):
    """One launch of a conf. While it runs, its launcher renews `heartbeat_at`: a second
    launcher for the same task sees a fresh heartbeat and refuses to start."""

    __tablename__ = "task_runs"
    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id"), index=True)
    config: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16), default="running")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    ended_at: Mapped[datetime | None]
    server: Mapped[str | None] = mapped_column(String(200))
    heartbeat_at: Mapped[datetime | None]


class Assignment(Base):
    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("task_id", "key"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id"), index=True)
    key: Mapped[str] = mapped_column(String(64))  # hash of the content: new text, new key
    data: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    retired_at: Mapped[datetime | None]  # when its line left the task data (None: planned)


class AssignmentGroup(Base):
    """A group an assignment belongs to: a worker gets each group of a task at most once."""

    __tablename__ = "assignment_groups"
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id"), primary_key=True)
    group_id: Mapped[str] = mapped_column(String(200), primary_key=True)


class AssignmentExclusion(Base):
    """A provider worker id that may not take an assignment (it authored a dialogue in it)."""

    __tablename__ = "assignment_exclusions"
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id"), primary_key=True)
    provider_worker_id: Mapped[str] = mapped_column(String(200), primary_key=True)


class Worker(Base):
    __tablename__ = "workers"
    __table_args__ = (UniqueConstraint("provider", "provider_worker_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    provider: Mapped[str] = mapped_column(String(32))
    provider_worker_id: Mapped[str] = mapped_column(String(200))
    pseudonym: Mapped[str] = mapped_column(String(32), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Unit(Base):
    """One worker's slot on an assignment. Status: launched (free) -> assigned -> completed ->
    accepted | rejected | soft_rejected, or returned (rejected, and its work went back to the
    pool as a new unit); expired when no longer needed; retired when its data left the task.
    `pool` is what the task kind routes workers by (main work, screening, gold); `layout` is
    the unit's own presentation order, fixed when the unit is created."""

    __tablename__ = "units"
    __table_args__ = (
        # The claim walks this index in `claim_order`: the next free unit of a pool. Partial,
        # so taken units are not in it; no other index is in that order, so no planner walks
        # past taken units instead.
        Index("ix_units_free", "task_run_id", "pool", "claim_order",
              postgresql_where=text("status = 'launched'"),
              sqlite_where=text("status = 'launched'")),
        Index("ix_units_worker_session", "worker_id", "provider_session"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(String(40), unique=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id"), index=True)
    task_run_id: Mapped[int] = mapped_column(ForeignKey("task_runs.id"))
    status: Mapped[str] = mapped_column(String(16), default="launched")
    worker_id: Mapped[int | None] = mapped_column(ForeignKey("workers.id"))
    provider_session: Mapped[str | None] = mapped_column(String(200))
    assigned_at: Mapped[datetime | None]
    deadline: Mapped[datetime | None]
    completed_at: Mapped[datetime | None]
    times_expired: Mapped[int] = mapped_column(default=0)
    pool: Mapped[str] = mapped_column(String(16), default="main")
    layout: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    # whether the provider's platform lists this visit (Prolific's sync); None: not checked
    provider_verified: Mapped[bool | None]
    # Free units are served in this order: random keys make a random permutation of them,
    # drawn from `random_seed` when the study sets one (engine/runs.py). A unit written
    # without one (by hand) gets 0, the front of the queue.
    claim_order: Mapped[int] = mapped_column(BigInteger, default=random_claim_order,
                                             server_default="0")


class WorkerGroup(Base):
    """Groups a worker holds or has annotated in a task; the unique key forbids a second time."""

    __tablename__ = "worker_groups"
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id"), primary_key=True)
    worker_id: Mapped[int] = mapped_column(ForeignKey("workers.id"), primary_key=True)
    group_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    unit_id: Mapped[int] = mapped_column(ForeignKey("units.id"), index=True)


class Draft(Base):
    """A worker's unsubmitted answers: keyed by unit and worker, so a unit that expires and
    goes to someone else never shows them the first worker's draft."""

    __tablename__ = "drafts"
    unit_id: Mapped[int] = mapped_column(ForeignKey("units.id"), primary_key=True)
    worker_id: Mapped[int] = mapped_column(ForeignKey("workers.id"), primary_key=True)
    answers: Mapped[dict[str, Any]]
    position: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    saved_at: Mapped[datetime] = mapped_column(default=utcnow)


class Submission(Base):
    """`flagged_for_review`: real work of a worker later disqualified by failed golds, done
    since their last passed gold (quality/pools.py); exports carry it."""

    __tablename__ = "submissions"
    id: Mapped[int] = mapped_column(primary_key=True)
    unit_id: Mapped[int] = mapped_column(ForeignKey("units.id"), unique=True)
    worker_id: Mapped[int] = mapped_column(ForeignKey("workers.id"), index=True)
    task_run_id: Mapped[int] = mapped_column(ForeignKey("task_runs.id"), index=True)
    answers: Mapped[dict[str, Any]]
    timings: Mapped[dict[str, Any]]
    client_id: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    flagged_for_review: Mapped[bool] = mapped_column(default=False, server_default=false())


class Conversation(Base):
    """One chat of a worker with one bot, inside a dialogue-collection unit (`position` is its
    place in a paired unit). `attempt` is the unit's `times_expired` when the chat began, so a
    unit that went back to the pool keeps its earlier, marked transcripts apart from the next
    worker's. `awaiting` says whose turn it is: the worker's, the bot's, or a failed reply the
    worker may retry; `respond_by` is when the worker's next message is due."""

    __tablename__ = "conversations"
    __table_args__ = (UniqueConstraint("unit_id", "attempt", "position"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    unit_id: Mapped[int] = mapped_column(ForeignKey("units.id"), index=True)
    worker_id: Mapped[int] = mapped_column(ForeignKey("workers.id"), index=True)
    attempt: Mapped[int]
    position: Mapped[int]
    bot: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16), default="active")
    awaiting: Mapped[str] = mapped_column(String(16), default="bot")
    turns_done: Mapped[int] = mapped_column(default=0)
    respond_by: Mapped[datetime | None]
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    ended_at: Mapped[datetime | None]


class Message(Base):
    """A chat message. Bot messages keep the bot's nickname, its generation settings and its
    latency (from the worker's message being stored to the first piece and to the last)."""

    __tablename__ = "messages"
    __table_args__ = (UniqueConstraint("conversation_id", "index"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id"), index=True)
    index: Mapped[int]
    role: Mapped[str] = mapped_column(String(8))  # "worker" | "bot"
    text: Mapped[str] = mapped_column(Text)
    sent_at: Mapped[datetime] = mapped_column(default=utcnow)
    bot: Mapped[str | None] = mapped_column(String(200))
    settings: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    first_piece_ms: Mapped[int | None]
    latency_ms: Mapped[int | None]
    client_message_id: Mapped[str | None] = mapped_column(String(64))
    opener: Mapped[bool] = mapped_column(default=False, server_default=false())
    # bot messages: the worker's online annotation, `{bucket: value}` (final once stored)
    labels: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))


class Qualification(Base):
    __tablename__ = "qualifications"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class GrantedQualification(Base):
    __tablename__ = "granted_qualifications"
    __table_args__ = (UniqueConstraint("qualification_id", "worker_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    qualification_id: Mapped[int] = mapped_column(ForeignKey("qualifications.id"))
    worker_id: Mapped[int] = mapped_column(ForeignKey("workers.id"), index=True)
    value: Mapped[int] = mapped_column(default=1)
    granted_at: Mapped[datetime] = mapped_column(default=utcnow)


class UnitScore(Base):
    """How one worker's try (`attempt`: the unit's `times_expired` then) at a screening or
    gold unit was scored. `checks` holds, per training dialogue, the mistakes of its first
    check (what grading counts) and whether it was corrected; `passed` and `mistakes` are
    set when the unit is submitted and scored. A unit that expires and goes to another
    worker starts a new row; the old one stays as the first worker's attempt."""

    __tablename__ = "unit_scores"
    unit_id: Mapped[int] = mapped_column(ForeignKey("units.id"), primary_key=True)
    attempt: Mapped[int] = mapped_column(primary_key=True, default=0)
    worker_id: Mapped[int] = mapped_column(ForeignKey("workers.id"), index=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id"), index=True)
    pool: Mapped[str] = mapped_column(String(16))
    checks: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    mistakes: Mapped[int | None]
    passed: Mapped[bool | None]
    scored_at: Mapped[datetime | None]


class ReviewDecision(Base):
    """The requester's decision on a unit, and how far it got on the provider's platform.
    `sync_state`: pending -> sending (a sender holds it until `next_attempt_at`; one that
    died leaves it, and it is sent again after that) -> done (the platform took it) | failed
    (retried at `next_attempt_at`, with `last_error`) | not_sent (nothing to tell: local
    links, or a soft reject on Prolific). One per unit, so a retried request cannot decide
    twice."""

    __tablename__ = "review_decisions"
    id: Mapped[int] = mapped_column(primary_key=True)
    unit_id: Mapped[int] = mapped_column(ForeignKey("units.id"), unique=True)
    decision: Mapped[str] = mapped_column(String(16))  # approve | reject | soft_reject
    reason: Mapped[str] = mapped_column(Text, default="")
    rejection_category: Mapped[str | None] = mapped_column(String(32))  # Prolific's
    decided_at: Mapped[datetime] = mapped_column(default=utcnow)
    sync_state: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    next_attempt_at: Mapped[datetime | None]
    synced_at: Mapped[datetime | None]


class Bonus(Base):
    """A bonus for a unit's worker. Paying is two platform calls on Prolific (set up, then
    pay) and the second is not idempotent, so each step's outcome is written before the next:
    pending -> set_up (`provider_ref` kept) -> paying -> paid; failed (retried) | uncertain
    (the pay request may have reached the platform: it timed out, got 408 or a 5xx, or its
    sender died while `paying` and the lease ran out; never retried, checked by hand) |
    not_sent (no platform pays: local links). `dedupe_key` makes a retried request one bonus."""

    __tablename__ = "bonuses"
    id: Mapped[int] = mapped_column(primary_key=True)
    unit_id: Mapped[int] = mapped_column(ForeignKey("units.id"), index=True)
    worker_id: Mapped[int] = mapped_column(ForeignKey("workers.id"), index=True)
    amount_cents: Mapped[int]
    reason: Mapped[str] = mapped_column(Text, default="")
    dedupe_key: Mapped[str] = mapped_column(String(64), unique=True)
    state: Mapped[str] = mapped_column(String(16), default="pending")
    provider_ref: Mapped[str | None] = mapped_column(String(200))
    attempts: Mapped[int] = mapped_column(default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    next_attempt_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    paid_at: Mapped[datetime | None]


class JudgeCall(Base):
    """One call of an LLM judge on one bucket of one dialogue of its unit (judges/, pool
    `judge`): the reply as it came, what became of it (`outcome`: `answer`, the value it
    stores; `invalid`, a reply the checks refused; `failed`, no reply after the retries) and
    what it cost. An item has at most one `answer` (the partial unique index): a judge run
    killed and started again reuses it, never asks again. Never holds the endpoint's key."""

    __tablename__ = "judge_calls"
    __table_args__ = (
        Index("ix_judge_calls_answer", "unit_id", "dialogue_key", "bucket", unique=True,
              postgresql_where=text("outcome = 'answer'"),
              sqlite_where=text("outcome = 'answer'")),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    unit_id: Mapped[int] = mapped_column(ForeignKey("units.id"), index=True)
    worker_id: Mapped[int] = mapped_column(ForeignKey("workers.id"), index=True)
    dialogue_key: Mapped[str] = mapped_column(String(64))
    bucket: Mapped[str] = mapped_column(String(200))
    outcome: Mapped[str] = mapped_column(String(16))  # answer | invalid | failed
    answer: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    reason: Mapped[str | None] = mapped_column(Text)
    reply: Mapped[str | None] = mapped_column(Text)  # the model's raw reply
    prompt_sha256: Mapped[str] = mapped_column(String(64))
    settings: Mapped[dict[str, Any]]
    schema_used: Mapped[bool] = mapped_column(default=False)  # response_format sent and taken
    input_tokens: Mapped[int | None]
    output_tokens: Mapped[int | None]
    cost: Mapped[float | None] = mapped_column(Float)
    latency_ms: Mapped[int | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class BattleVote(Base):
    """A worker's vote in an arena battle (blueprints/arena): the two bots as the sides showed
    them (`model_a` left, `model_b` right), the side chosen (`choice`: a, b, tie, bothbad), the
    winner in Chatbot Arena's words and the bot it names (`preferred`, NULL for a tie), after
    `turn` of the worker's messages. One per turn and try of a unit."""

    __tablename__ = "battle_votes"
    __table_args__ = (UniqueConstraint("unit_id", "attempt", "turn"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    unit_id: Mapped[int] = mapped_column(ForeignKey("units.id"), index=True)
    worker_id: Mapped[int] = mapped_column(ForeignKey("workers.id"), index=True)
    attempt: Mapped[int]
    turn: Mapped[int]
    conversation_a: Mapped[int] = mapped_column(ForeignKey("conversations.id"))
    conversation_b: Mapped[int] = mapped_column(ForeignKey("conversations.id"))
    model_a: Mapped[str] = mapped_column(String(200))
    model_b: Mapped[str] = mapped_column(String(200))
    choice: Mapped[str] = mapped_column(String(8))
    winner: Mapped[str] = mapped_column(String(16))  # model_a | model_b | tie | tie (bothbad)
    preferred: Mapped[str | None] = mapped_column(String(200))
    voted_at: Mapped[datetime] = mapped_column(default=utcnow)
