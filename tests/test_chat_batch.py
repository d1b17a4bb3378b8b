"""The chat's group commit on SQLite (engine/chat_batch.py, server/chat/writer.py), on real
database files: a batch of steps stores exactly what the single steps (`send`, `store_reply`)
store and answers what they answer; each step of a batch gets its own outcome (a refused
message, a repeated one, a reply nobody waits for any more); a batch whose transaction fails
falls back to one transaction per step; texts round-trip through the JSON of the batched
insert; and the writer thread never puts two steps of one unit in one batch, settles every
result on the waiting loop and ends after the steps queued before `shutdown`."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from arena_helpers import write_arena_conf
from chat_helpers import write_chat_conf
from helpers import BUCKETS, run_coroutine

from collection_and_annotations.blueprints import build_blueprint
from collection_and_annotations.cli.run import open_task
from collection_and_annotations.config.loader import load_run_config
from collection_and_annotations.engine import arena, chat, chat_batch
from collection_and_annotations.engine.allocation import claim_unit, return_unit
from collection_and_annotations.engine.arena import BattleVoteStep
from collection_and_annotations.engine.chat import ChatRules, MessageStep, ReplyJob, ReplyStep
from collection_and_annotations.engine.chat_batch import Outcome, Step, write_batch
from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.server.chat import writer as writer_module
from collection_and_annotations.server.chat.writer import StepWriter
from collection_and_annotations.storage.database import Database

SETTINGS = {"kind": "scripted", "delay": 0.005}
ONLINE = (f"    annotations_config_path: {BUCKETS}\n"
          "    do_interactive_online_annotations: turn_quality\n")
TRICKY_TEXTS = [
    "héllo wörld, ça va? Ωμέγα, 日本語のテキスト",
    'she said "hi" and \'bye\'; back\\slash',
    '{"index": 3, "role": "bot", "text": [1, 2.50, null, true]}',
    "[1, 2, 3]", "null", "true", "42", "1.50", "  leading and trailing  ",
    "emoji 😀👍🏽 🇫🇷 👩‍👩‍👧 and a line\nbreak\ttab",
    "$[0] json_extract('x', '$') -- ; DROP TABLE messages;",
]


@dataclasses.dataclass
class Task:
    """A served chat task on an SQLite file, with one claimed unit per worker."""

    db: Database
    path: Path
    rules: ChatRules
    units: list[tuple[str, int]]  # (public_id, worker_id) in claim order

    def start(self, n: int) -> ReplyJob:
        public_id, worker_id = self.units[n]
        [job], _ = chat.start(self.db, public_id, worker_id, self.rules, lambda _id: None)
        return job

    def message(self, n: int, text: str, client_id: str | None = None,
                label: Any = None, worker_id: int | None = None) -> MessageStep:
        public_id, owner = self.units[n]
        return MessageStep.checked(public_id, owner if worker_id is None else worker_id,
                                   text, client_id, self.rules, label)

    def rows(self, sql: str, *params: Any) -> list[tuple]:
        with sqlite3.connect(self.path) as connection:
            return connection.execute(sql, params).fetchall()

    def messages(self) -> list[tuple]:
        """Every message as stored, its conversation and unit named by claim order, its times
        by their form alone (the storage class of every column compared too)."""
        names = self._names()
        return [(names[row[0]], *row[1:]) for row in self.rows(
            'SELECT conversation_id, "index", role, text, typeof(text), bot, settings, '
            "typeof(settings), first_piece_ms, typeof(first_piece_ms), latency_ms, "
            "typeof(latency_ms), client_message_id, typeof(client_message_id), opener, "
            "typeof(opener), labels, typeof(sent_at), length(sent_at) FROM messages "
            'ORDER BY conversation_id, "index"')]

    def conversations(self) -> list[tuple]:
        names = self._names()
        return sorted((names[row[0]], *row[1:]) for row in self.rows(
            "SELECT id, position, bot, status, awaiting, turns_done, error, "
            "typeof(respond_by), length(respond_by), ended_at IS NOT NULL FROM conversations"))

    def conversation(self, n: int) -> tuple:
        return next(row[1:] for row in self.conversations() if row[0][0] == n)

    def votes(self) -> list[tuple]:
        """The arena's votes as stored, their unit named by claim order."""
        names = self._names()
        return sorted((names[a][0], turn, *rest) for a, _b, turn, *rest in self.rows(
            "SELECT conversation_a, conversation_b, turn, choice, winner, model_a, model_b, "
            "preferred, worker_id, attempt, typeof(voted_at) FROM battle_votes"))

    def count(self) -> int:
        return self.rows("SELECT count(*) FROM messages")[0][0]

    def _names(self) -> dict[int, tuple[int, int]]:
        """conversation id -> (claim number, position)."""
        order = {public_id: n for n, (public_id, _) in enumerate(self.units)}
        return {cid: (order[public_id], position) for cid, public_id, position in self.rows(
            "SELECT c.id, u.public_id, c.position FROM conversations c "
            "JOIN units u ON u.id = c.unit_id")}


@dataclasses.dataclass
class Fallbacks:
    """The steps written on their own (`write_one`): none, unless a test expects them."""

    steps: list[Any] = dataclasses.field(default_factory=list)
    expected: bool = False


@pytest.fixture(autouse=True)
def fallbacks(monkeypatch):
    """Every batch is one transaction: its steps' outcomes come from the batch itself, not
    from the fallback (which would hide a batch that fails as a whole)."""
    seen = Fallbacks()
    write_one = chat_batch.write_one

    def recorded(db, step, rules):
        seen.steps.append(step)
        return write_one(db, step, rules)

    monkeypatch.setattr(chat_batch, "write_one", recorded)
    yield seen
    assert seen.expected or not seen.steps, f"{len(seen.steps)} step(s) fell back"


@pytest.fixture
def serve():
    """`serve(conf, units)`: the conf's task served on its SQLite file, `units` claimed."""
    opened: list[Database] = []

    def _serve(conf: Path, units: int) -> Task:
        folder = conf.parent
        cfg = load_run_config(str(conf), [f"data_dir={folder / 'data'}"]).config
        blueprint = build_blueprint(cfg)
        path = folder / "data" / "cep.sqlite3"
        db = Database(f"sqlite:///{path}")
        opened.append(db)
        served = open_task(cfg, str(conf), db, blueprint)
        claims = [claim_unit(db, served.task_id, served.run_id, served.provider.name,
                             f"worker_{n}", None, served.limits, served.blocked_workers,
                             blueprint.pools_for) for n in range(units)]
        return Task(db, path, blueprint.rules,
                    [(claim.unit_public_id, claim.worker_id) for claim in claims])

    yield _serve
    for db in opened:
        db.dispose()


@pytest.fixture
def make_task(tmp_path, serve):
    def _make(name: str, units: int, num_turns: int = 2, extra: str = "",
              max_resp_time: int = 600) -> Task:
        return serve(write_chat_conf(tmp_path / name, f"alpha:{units}", ["alpha"],
                                     num_turns=num_turns, max_resp_time=max_resp_time,
                                     extra=extra), units)

    return _make


def reply(job: ReplyJob, text: str | None = None, first_piece_ms: int | None = 10,
          latency_ms: int = 2000) -> ReplyStep:
    return ReplyStep(job, f"alpha heard: {job.history[-1].text}" if text is None else text,
                     SETTINGS, first_piece_ms, latency_ms)


def one_by_one(task: Task, steps: list[Step]) -> list[Outcome]:
    """The single-step functions, each in its own transaction, as outcomes."""
    outcomes = []
    for step in steps:
        try:
            if isinstance(step, BattleVoteStep):
                result = arena.vote(task.db, step, task.rules)
            elif isinstance(step, MessageStep):
                result = chat.send(task.db, step, task.rules)
            else:
                result = chat.store_reply(task.db, step, task.rules)
            outcomes.append(Outcome(result))
        except WorkRefused as exc:
            outcomes.append(Outcome(error=exc))
    return outcomes


def is_time(value: Any) -> bool:
    return isinstance(value, str) and value.endswith("Z") \
        and isinstance(datetime.fromisoformat(value[:-1]), datetime)


def normal(task: Task, value: Any) -> Any:
    """A result with its units and conversations named by claim order and its times by their
    form alone, so two databases' results compare."""
    order = {public_id: n for n, (public_id, _) in enumerate(task.units)}
    if isinstance(value, Outcome):
        if value.error is not None:
            error = value.error
            return ("error", type(error).__name__, str(error), getattr(error, "status", None))
        return ("result", normal(task, value.result))
    if isinstance(value, ReplyJob):
        assert isinstance(value.asked_at, datetime)
        [[unit_id, conversation_n]] = task.rows(
            "SELECT c.unit_id, c.position FROM conversations c WHERE c.id = ?",
            value.conversation_id)
        assert unit_id == value.unit_id
        return dataclasses.replace(value, unit_id=-1, conversation_id=conversation_n,
                                   public_id=f"unit {order[value.public_id]}",
                                   asked_at=datetime.min)
    if isinstance(value, dict):
        return {key: ("<time>" if key in ("sent_at", "respond_by") and is_time(item)
                      else normal(task, item)) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(normal(task, item) for item in value)
    return value


def assert_same(batched: Task, single: Task, batch_outcomes: list[Outcome],
                single_outcomes: list[Outcome]) -> None:
    assert [normal(batched, o) for o in batch_outcomes] == \
        [normal(single, o) for o in single_outcomes]
    assert batched.messages() == single.messages()
    assert batched.conversations() == single.conversations()


def sent_at(task: Task, n: int, index: int) -> datetime:
    public_id = task.units[n][0]
    [[value]] = task.rows(
        'SELECT m.sent_at FROM messages m JOIN conversations c ON c.id = m.conversation_id '
        'JOIN units u ON u.id = c.unit_id WHERE u.public_id = ? AND m."index" = ?',
        public_id, index)
    return datetime.fromisoformat(value)


# -- one batch is the single steps -----------------------------------------------------------

def test_a_batch_stores_the_same_rows_and_answers_as_the_single_steps(make_task):
    """Four chats to their last turn, every round one batch on one database and the single
    steps on the other (a fifth unit, never started, is refused in both)."""
    batched, single = make_task("batched", 5), make_task("single", 5)
    jobs = {name: [task.start(n) for n in range(4)]
            for name, task in (("batched", batched), ("single", single))}
    assert batched.messages() == single.messages()

    def round_of(make_steps) -> None:
        outcomes = {}
        for name, task in (("batched", batched), ("single", single)):
            steps = make_steps(task, jobs[name])
            outcomes[name] = (write_batch(task.db, steps, task.rules) if name == "batched"
                              else one_by_one(task, steps))
            jobs[name] = [o.result[1][0] if o.result and isinstance(o.result, tuple)
                          else job for o, job in zip(outcomes[name], jobs[name], strict=False)]
        assert_same(batched, single, outcomes["batched"], outcomes["single"])

    # the openers' replies (one without a first piece)
    round_of(lambda task, jobs: [reply(job, first_piece_ms=None if n == 2 else 7 * n,
                                       latency_ms=100 + n)
                                 for n, job in enumerate(jobs)])
    assert {row[4] for row in batched.conversations()} == {"worker"}
    for turn in range(2):
        # a message each (one without a client id), and one to the unit never started
        round_of(lambda task, _jobs, turn=turn: [
            task.message(n, f"message {turn} of {n}", None if n == 1 else f"c{turn}{n}")
            for n in range(5)])
        conversations = batched.conversations()
        assert [row[4:6] + row[7:8] for row in conversations] == [("bot", turn + 1, "null")] * 4
        round_of(lambda task, jobs: [reply(job) for job in jobs])
        assert [row[4:6] + row[7:9] for row in batched.conversations()] == \
            [("worker", turn + 1, "text", 26)] * 4

    # the turns are used up: refused in both, nothing stored
    round_of(lambda task, _jobs: [task.message(n, "one more", f"x{n}") for n in range(4)])
    assert batched.count() == single.count() == 4 * 6

    # the deadline runs from the reply's time, and the page reads the same chat
    for n in range(4):
        [[respond_by]] = batched.rows(
            "SELECT respond_by FROM conversations c JOIN units u ON u.id = c.unit_id "
            "WHERE u.public_id = ?", batched.units[n][0])
        assert datetime.fromisoformat(respond_by) - sent_at(batched, n, 5) == \
            timedelta(seconds=batched.rules.max_resp_time)
    for n in range(5):
        states = [normal(task, chat.read_chat(task.db, *task.units[n], task.rules,
                                              lambda _id: None))
                  for task in (batched, single)]
        assert states[0] == states[1]


def test_the_answer_of_a_batched_message_is_its_stored_row(make_task):
    task = make_task("task", 2)
    for n in range(2):
        write_batch(task.db, [reply(task.start(n))], task.rules)
    outcomes = write_batch(task.db, [task.message(0, "first", "a"), task.message(1, "second")],
                           task.rules)
    for n, outcome in enumerate(outcomes):
        answer, [job] = outcome.result
        assert answer["index"] == 2 and job.index == 3
        assert datetime.fromisoformat(answer["sent_at"][:-1]) == sent_at(task, n, 2)
        assert job.asked_at == sent_at(task, n, 2)
        assert job.public_id == task.units[n][0] and job.bot == "alpha"
        assert [(turn.role, turn.text) for turn in job.history] == [
            ("worker", "Hi!"), ("bot", "alpha heard: Hi!"), ("worker", ["first", "second"][n])]
    [shown] = [o.result for o in write_batch(task.db, [reply(outcomes[0].result[1][0], "ok")],
                                             task.rules)]
    assert shown == {"position": 0, "index": 3, "role": "bot", "text": "ok",
                     "sent_at": shown["sent_at"]}
    assert datetime.fromisoformat(shown["sent_at"][:-1]) == sent_at(task, 0, 3)


def test_online_labels_are_checked_and_stored_in_a_batch_as_on_their_own(make_task):
    batched = make_task("batched", 3, extra=ONLINE)
    single = make_task("single", 3, extra=ONLINE)
    for task in (batched, single):
        for n in range(3):
            chat.store_reply(task.db, reply(task.start(n), "hello"), task.rules)

    def steps(task: Task) -> list[MessageStep]:
        return [task.message(0, "good", "a", {"Quality": 4}),
                task.message(1, "no label", "b"),  # required: refused
                task.message(2, "bad label", "c", {"Quality": 9})]

    batch_outcomes = write_batch(batched.db, steps(batched), batched.rules)
    assert_same(batched, single, batch_outcomes, one_by_one(single, steps(single)))
    assert [o.error.status if o.error else None for o in batch_outcomes] == [None, 422, 422]
    assert batch_outcomes[2].error.problems
    assert batched.rows("SELECT labels FROM messages WHERE labels IS NOT NULL") == \
        [('{"turn_quality": {"Quality": 4}}',)]


# -- the arena's messages --------------------------------------------------------------------

@pytest.fixture
def make_battles(tmp_path, serve):
    def _make(name: str, battles: int, vote: str = "per_turn", extra: str = "") -> Task:
        """Battles of two turns (the same sides on every database made)."""
        return serve(write_arena_conf(tmp_path / name, ["alpha", "beta"], num_turns=2,
                                      battles_per_pair=battles, vote=vote,
                                      extra=f"    random_seed: 7\n{extra}"),
                     battles)

    return _make


def battle_message(task: Task, n: int, text: str, client_id: str | None = None,
                   labels: Any = None) -> MessageStep:
    public_id, worker_id = task.units[n]
    return MessageStep.checked(public_id, worker_id, text, client_id, task.rules, labels)


def battle_vote(task: Task, n: int, choice: str, labels: Any = None) -> BattleVoteStep:
    public_id, worker_id = task.units[n]
    return BattleVoteStep.checked(public_id, worker_id, choice, labels)


def in_both(batched: Task, single: Task, make_steps) -> dict[str, list[Outcome]]:
    """The steps `make_steps(task)` gives as one batch on `batched` and one by one on
    `single`: the same outcomes and the same rows."""
    outcomes = {"batched": write_batch(batched.db, make_steps(batched), batched.rules),
                "single": one_by_one(single, make_steps(single))}
    assert_same(batched, single, outcomes["batched"], outcomes["single"])
    return outcomes


def replies_to(outcomes: list[Outcome], position: int) -> list[ReplyStep]:
    """One side's replies to the battle messages stored."""
    return [reply(o.result[1][position]) for o in outcomes if o.result and o.result[1]]


def test_a_batch_of_battle_messages_stores_what_the_single_steps_store(make_battles):
    """Four battles of two turns voted per turn, each round one batch on one database and the
    single steps on the other; a fifth battle, never started, is refused in both."""
    batched, single = make_battles("batched", 5), make_battles("single", 5)
    for task in (batched, single):
        for n in range(4):
            chat.start(task.db, *task.units[n], task.rules, lambda _id: None)
    first = in_both(batched, single, lambda task: [
        battle_message(task, n, f"turn 0 of {n}", None if n == 1 else f"c{n}")
        for n in range(5)])
    assert [o.error.status if o.error else len(o.result[1]) for o in first["batched"]] == \
        [2, 2, 2, 2, 409]
    assert [row[4:6] for row in batched.conversations()] == [("bot", 1)] * 8
    # sent again (the same client id: the earlier answer), or another while the bots think
    again = in_both(batched, single, lambda task: [
        battle_message(task, 0, "turn 0 of 0", "c0"), battle_message(task, 1, "too soon")])
    assert again["batched"][0].result == (first["batched"][0].result[0], [])
    assert again["batched"][1].error.status == 409
    for position in (0, 1):  # the two sides' replies of a battle never share a batch
        in_both(batched, single, lambda task, p=position: replies_to(
            first["batched" if task is batched else "single"], p))
    # voted per turn: the next message waits for the vote; a second vote on a turn is refused
    assert all(o.error.status == 409 for o in in_both(batched, single, lambda task: [
        battle_message(task, n, f"turn 1 of {n}", f"d{n}") for n in range(4)])["batched"])
    voted = in_both(batched, single, lambda task: [
        battle_vote(task, n, choice) for n, choice in enumerate(["a", "b", "tie"])]
        + [battle_vote(task, 4, "a")])
    assert [o.error.status if o.error else None for o in voted["batched"]] == \
        [None, None, None, 409]
    assert in_both(batched, single, lambda task: [battle_vote(task, 0, "b")]
                   )["batched"][0].error.status == 409
    second = in_both(batched, single, lambda task: [
        battle_message(task, n, f"turn 1 of {n}", f"d{n}") for n in range(4)])
    assert [o.error.status if o.error else o.result[0]["index"] for o in second["batched"]] \
        == [2, 2, 2, 409]
    assert [(turn.role, turn.text) for turn in second["batched"][0].result[1][1].history] == [
        ("worker", "turn 0 of 0"), ("bot", "alpha heard: turn 0 of 0"), ("worker", "turn 1 of 0")]
    for position in (0, 1):
        in_both(batched, single, lambda task, p=position: replies_to(
            second["batched" if task is batched else "single"], p))
    # the last vote a battle asks for ends both sides
    in_both(batched, single, lambda task: [battle_vote(task, n, "bothbad") for n in range(3)])
    assert [row[3] for row in batched.conversations()] == ["ended"] * 6 + ["active"] * 2
    assert batched.votes() == single.votes()
    assert [row[:3] for row in batched.votes()] == [
        (0, 1, "a"), (0, 2, "bothbad"), (1, 1, "b"), (1, 2, "bothbad"), (2, 1, "tie"),
        (2, 2, "bothbad")]
    for n in range(4):
        states = [normal(task, chat.read_chat(task.db, *task.units[n], task.rules,
                                              lambda _id: None))
                  for task in (batched, single)]
        assert states[0] == states[1]


def test_a_battle_message_stores_its_sides_labels_only_if_both_are_right(make_battles):
    """Both replies' online labels are checked before either is stored, in a batch as on its
    own: a wrong label on side B refuses the message and leaves side A's unlabelled."""
    batched = make_battles("batched", 3, vote="end", extra=ONLINE)
    single = make_battles("single", 3, vote="end", extra=ONLINE)
    for task in (batched, single):
        for n in range(3):
            chat.start(task.db, *task.units[n], task.rules, lambda _id: None)
            for job in chat.send(task.db, battle_message(task, n, "first", f"f{n}"),
                                 task.rules)[1]:
                chat.store_reply(task.db, reply(job, "hello"), task.rules)
    good, bad = {"Quality": 4}, {"Quality": 9}
    outcomes = in_both(batched, single, lambda task: [
        battle_message(task, 0, "second", "a", {"0": good, "1": bad}),
        battle_message(task, 1, "second", "b", {"0": good, "1": good}),
        battle_message(task, 2, "second", "c", {"0": good})])  # B's is required
    assert [o.error.status if o.error else None for o in outcomes["batched"]] == \
        [422, None, 422]
    assert batched.rows("SELECT count(*) FROM messages WHERE labels IS NOT NULL") == [(2,)]


# -- each step its own outcome ---------------------------------------------------------------

def test_refused_messages_get_their_own_error_and_the_rest_of_the_batch_is_stored(make_task):
    task = make_task("task", 6, num_turns=1)
    jobs = [task.start(n) for n in range(5)]  # unit 5 is never started
    write_batch(task.db, [reply(job) for job in jobs[2:]], task.rules)  # 0, 1: the bot is due
    [[_, [turn_job]]] = [o.result for o in write_batch(
        task.db, [task.message(4, "my only turn", "t")], task.rules)]
    write_batch(task.db, [reply(turn_job)], task.rules)
    before = task.count()
    other_worker = task.units[0][1]

    outcomes = write_batch(task.db, [
        task.message(0, "too early", "e"),               # the bot has not answered yet
        task.message(1, "also too early", "s"),          # ... nor here
        task.message(2, "stored", "ok2"),
        task.message(3, "not my unit", "w", worker_id=other_worker),
        task.message(4, "turns are used up", "u"),
        task.message(5, "not started", "n"),
    ], task.rules)
    errors = [(o.error.status, str(o.error)) if o.error else None for o in outcomes]
    assert errors[0] == (409, "your partner has not answered yet; wait for the reply")
    assert errors[1] == errors[0]
    assert errors[2] is None and outcomes[2].result[0]["index"] == 2
    assert errors[3] == (404, "no such unit for this worker")
    assert errors[4][0] == 409 and "End chat" in errors[4][1]
    assert errors[5] == (409, "no chat is open: start the chat first")
    assert all(isinstance(o.error, WorkRefused) for n, o in enumerate(outcomes) if n != 2)
    assert task.count() == before + 1
    assert task.rows("SELECT text, client_message_id FROM messages WHERE role = 'worker' "
                     "AND NOT opener ORDER BY id") == [("my only turn", "t"), ("stored", "ok2")]
    assert task.conversation(2)[3:5] == ("bot", 1)
    assert task.conversation(3)[3:5] == ("worker", 0)  # untouched by the other worker


def test_a_message_to_an_expired_unit_is_refused_and_others_are_stored(make_task):
    task = make_task("task", 2)
    jobs = [task.start(n) for n in range(2)]
    write_batch(task.db, [reply(job) for job in jobs], task.rules)
    with task.db.transaction() as connection:
        assert return_unit(connection, jobs[0].unit_id, "timed_out")
    outcomes = write_batch(task.db, [task.message(0, "late", "l"), task.message(1, "in time")],
                           task.rules)
    assert outcomes[0].error.status == 409 and "ran out" in str(outcomes[0].error)
    assert outcomes[1].error is None and outcomes[1].result[0]["index"] == 2
    assert task.rows("SELECT text FROM messages WHERE role = 'worker' AND NOT opener") == \
        [("in time",)]


def test_empty_or_too_long_messages_are_refused_before_any_batch(make_task):
    task = make_task("task", 1)
    for text, status in (("", 422), ("  \n ", 422), (None, 422), (7, 422),
                         ("x" * (task.rules.max_message_chars + 1), 413)):
        with pytest.raises(WorkRefused) as refused:
            task.message(0, text)
        assert refused.value.status == status
    assert task.message(0, "x" * task.rules.max_message_chars, "y" * 80).client_id == "y" * 64


def test_a_repeated_message_returns_the_earlier_answer_and_stores_nothing(make_task):
    task = make_task("task", 3)
    jobs = [task.start(n) for n in range(3)]
    write_batch(task.db, [reply(job) for job in jobs], task.rules)
    [first] = write_batch(task.db, [task.message(0, "hello", "same")], task.rules)
    answer, [job] = first.result
    before = task.messages()

    # the bot has not answered: a repeat still gets the answer, a new message is refused
    repeated, refused, other = write_batch(task.db, [
        task.message(0, "hello (sent again)", "same"), task.message(1, "a", "same"),
        task.message(2, "b", "c2")], task.rules)
    assert repeated.error is None and repeated.result == (answer, [])
    assert refused.error is None and refused.result[1] != []  # a client id is per chat
    assert other.error is None
    assert task.count() == len(before) + 2
    assert [row for row in task.messages() if row[0][0] == 0] == \
        [row for row in before if row[0][0] == 0]

    # answered and the turn moved on: the repeat is still the earlier answer
    write_batch(task.db, [reply(job)], task.rules)
    [again] = write_batch(task.db, [task.message(0, "hello", "same")], task.rules)
    assert again.result == (answer, [])
    assert task.conversation(0)[3:5] == ("worker", 1)


def test_a_reply_nobody_waits_for_is_dropped_and_the_others_are_stored(make_task):
    task = make_task("task", 5)
    jobs = [task.start(n) for n in range(5)]
    write_batch(task.db, [reply(jobs[1])], task.rules)  # 1: this reply is in already
    with task.db.transaction() as connection:
        assert return_unit(connection, jobs[2].unit_id, "timed_out")  # 2: unit expired
    assert chat.reply_failed(task.db, jobs[3], "unavailable", retryable=True)  # 3: retry
    before = task.messages()

    outcomes = write_batch(task.db, [reply(jobs[n], f"reply {n}") for n in range(5)],
                           task.rules)
    assert [o.error for o in outcomes] == [None] * 5
    assert [o.result is None for o in outcomes] == [False, True, True, True, False]
    assert [o.result["text"] for o in outcomes if o.result] == ["reply 0", "reply 4"]
    assert task.count() == len(before) + 2
    assert [row for row in task.messages() if row[0][0] in (1, 2, 3)] == \
        [row for row in before if row[0][0] in (1, 2, 3)]
    assert [task.conversation(n)[2:4] for n in range(5)] == [
        ("active", "worker"), ("active", "worker"), ("timed_out", "bot"), ("active", "retry"),
        ("active", "worker")]
    # the single step drops the same replies
    assert [chat.store_reply(task.db, reply(jobs[n], "again"), task.rules)
            for n in (1, 2, 3)] == [None] * 3
    assert task.count() == len(before) + 2


# -- the fallback ----------------------------------------------------------------------------

def mixed_batch(task: Task) -> tuple[list[MessageStep | ReplyStep], int]:
    """Unit 0 due a message, 1 a reply, 2 refused (the bot is due), 3 a repeat."""
    jobs = [task.start(n) for n in range(4)]
    write_batch(task.db, [reply(jobs[0]), reply(jobs[3])], task.rules)
    [[answer, _]] = [o.result for o in write_batch(task.db, [task.message(3, "once", "r")],
                                                   task.rules)]
    steps = [task.message(0, "stored", "m0"), reply(jobs[1], "reply 1"),
             task.message(2, "too early", "m2"), task.message(3, "once", "r")]
    return steps, answer["index"]


def assert_mixed_outcomes(task: Task, outcomes: list[Outcome], repeated_index: int) -> None:
    assert outcomes[0].error is None and outcomes[0].result[0]["index"] == 2
    assert outcomes[0].result[1][0].index == 3
    assert outcomes[1].error is None and outcomes[1].result["text"] == "reply 1"
    assert isinstance(outcomes[2].error, WorkRefused) and outcomes[2].error.status == 409
    assert outcomes[3].error is None and outcomes[3].result[0]["index"] == repeated_index
    assert outcomes[3].result[1] == []
    texts = task.rows("SELECT text FROM messages WHERE NOT opener ORDER BY id")
    assert [text for (text,) in texts] == [
        "alpha heard: Hi!", "alpha heard: Hi!", "once", "stored", "reply 1"]
    assert [task.conversation(n)[3:5] for n in range(4)] == [
        ("bot", 1), ("worker", 0), ("bot", 0), ("bot", 1)]


def test_a_failed_transaction_falls_back_to_one_transaction_per_step(make_task, monkeypatch,
                                                                     fallbacks):
    task = make_task("task", 4)
    steps, repeated_index = mixed_batch(task)
    fallbacks.expected = True
    tried = []

    def failing(db, batch, rules):
        tried.append(len(batch))
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(chat_batch, "_in_one_transaction", failing)
    outcomes = write_batch(task.db, steps, task.rules)
    assert tried == [4] and fallbacks.steps == steps
    assert_mixed_outcomes(task, outcomes, repeated_index)


def test_a_transaction_that_fails_after_its_insert_is_rolled_back_before_the_fallback(
        make_task, monkeypatch, fallbacks):
    task = make_task("task", 4)
    steps, repeated_index = mixed_batch(task)
    fallbacks.expected = True
    # the statement that runs after the messages were inserted fails
    monkeypatch.setattr(chat_batch, "WORKERS_SPOKE",
                        sqlalchemy.text("UPDATE no_such_table SET x = 1"))
    outcomes = write_batch(task.db, steps, task.rules)
    assert fallbacks.steps == steps
    assert_mixed_outcomes(task, outcomes, repeated_index)  # no row twice


def test_the_batch_matches_the_fallback_outcome_for_outcome(make_task):
    task = make_task("batched", 4)
    steps, repeated_index = mixed_batch(task)
    assert_mixed_outcomes(task, write_batch(task.db, steps, task.rules), repeated_index)


# -- texts -----------------------------------------------------------------------------------

def test_texts_round_trip_exactly_through_the_batched_insert(make_task):
    count = len(TRICKY_TEXTS)
    task = make_task("task", count)
    jobs = [task.start(n) for n in range(count)]
    outcomes = write_batch(task.db, [reply(job, text) for job, text in zip(jobs, TRICKY_TEXTS,
                                                                           strict=True)],
                           task.rules)
    assert [o.result["text"] for o in outcomes] == TRICKY_TEXTS
    outcomes = write_batch(task.db, [task.message(n, text, text[:64])
                                     for n, text in enumerate(TRICKY_TEXTS)], task.rules)
    assert [o.result[1][0].history[-1].text for o in outcomes] == TRICKY_TEXTS
    stored = task.rows("SELECT role, text, typeof(text), client_message_id FROM messages "
                       'WHERE "index" > 0 ORDER BY "index", conversation_id')
    assert stored == [("bot", text, "text", None) for text in TRICKY_TEXTS] + \
        [("worker", text, "text", text[:64]) for text in TRICKY_TEXTS]
    # and as the next step reads them back (lock_batch's JSON): each repeat is recognised
    again = write_batch(task.db, [task.message(n, "again", text[:64])
                                  for n, text in enumerate(TRICKY_TEXTS)], task.rules)
    assert [o.result for o in again] == [(o.result[0], []) for o in outcomes]
    history = chat.read_chat(task.db, *task.units[0], task.rules, lambda _id: None)
    assert [m["text"] for m in history["conversations"][0]["messages"]] == \
        ["Hi!", TRICKY_TEXTS[0], TRICKY_TEXTS[0]]


@pytest.mark.parametrize("unstorable", ["\x00", "\ud800"])
def test_a_worker_message_sqlite_cannot_keep_whole_is_refused(make_task, unstorable):
    """NUL (json_extract would cut the text at it) and an unpaired surrogate (not UTF-8):
    refused before any write, as the step is made (the batch and `send` take only checked
    steps)."""
    task = make_task("task", 1)
    write_batch(task.db, [reply(task.start(0))], task.rules)
    with pytest.raises(WorkRefused) as refused:
        task.message(0, f"before{unstorable}after", "bad")
    assert refused.value.status == 422 and "cannot be stored" in str(refused.value)
    assert task.count() == 2


@pytest.mark.parametrize("batched", [True, False])
def test_a_bot_reply_with_nul_or_an_unpaired_surrogate_is_stored_readable(make_task, batched):
    """A bot may send anything: what SQLite cannot keep whole becomes U+FFFD, the same in
    the batch and on its own, and the chat stays readable and writable."""
    task = make_task("task", 2)
    jobs = [task.start(n) for n in range(2)]
    step = reply(jobs[0], "bot\x00reply \ud800!")
    if batched:
        [outcome] = write_batch(task.db, [step], task.rules)
        shown = outcome.result
    else:
        shown = chat.store_reply(task.db, step, task.rules)
    assert shown["text"] == "bot\ufffdreply \ufffd!"
    assert task.rows('SELECT text FROM messages WHERE "index" = 1 AND role = \'bot\' '
                     "ORDER BY id LIMIT 1") == [("bot\ufffdreply \ufffd!",)]
    chat.read_chat(task.db, *task.units[0], task.rules, lambda _id: None)
    outcomes = write_batch(task.db, [task.message(0, "plain text", "p"),
                                     reply(jobs[1])], task.rules)
    assert [o.error for o in outcomes] == [None, None]


# -- the writer thread -----------------------------------------------------------------------

def test_the_writer_batches_waiting_steps_one_per_unit_and_ends_on_shutdown(
        make_task, monkeypatch):
    units = 50
    task = make_task("task", units)
    write_batch(task.db, [reply(task.start(n)) for n in range(units)], task.rules)
    monkeypatch.setattr(writer_module, "MAX_BATCH", 20)
    batches: list[list[str]] = []
    entered, release = threading.Event(), threading.Event()

    def recording(db, steps, rules):
        batches.append([step.public_id for step in steps])
        if len(batches) == 1:
            entered.set()
            assert release.wait(10)
        return write_batch(db, steps, rules)

    monkeypatch.setattr(writer_module, "write_batch", recording)
    writer = StepWriter(task.db, task.rules)

    async def main() -> tuple[Any, list[Any]]:
        first = asyncio.ensure_future(writer.write(task.message(0, "first of 0", "f0")))
        while not entered.is_set():  # the thread holds the first batch
            await asyncio.sleep(0.001)
        steps = [task.message(n, f"to {n}", f"c{n}") for n in range(1, units)]
        steps += [task.message(1, "to 1 (sent again)", "c1"),  # repeats: the same answer
                  task.message(2, "to 2, too early", "other"),  # the bot is due: refused
                  task.message(0, "first of 0", "f0"),
                  task.message(1, "to 1 (a third time)", "c1")]
        waiting = [asyncio.ensure_future(writer.write(step)) for step in steps]
        try:
            await asyncio.sleep(0)
            assert writer._steps.qsize() == len(steps)
            writer.shutdown()  # the steps queued before are still written
        finally:
            release.set()
        results = await asyncio.wait_for(
            asyncio.gather(*waiting, return_exceptions=True), 10)
        return await first, results

    first, results = run_coroutine(main())
    writer._thread.join(5)
    assert not writer._thread.is_alive()

    assert first[0]["index"] == 2 and first[1] != []
    plain = results[:units - 1]
    assert [answer["index"] for answer, _ in plain] == [2] * (units - 1)
    assert all(job.index == 3 for _, [job] in plain)
    repeat_1, early_2, repeat_0, third_1 = results[units - 1:]
    assert repeat_1 == (plain[0][0], []) and third_1 == (plain[0][0], [])
    assert repeat_0 == (first[0], [])
    assert isinstance(early_2, WorkRefused) and early_2.status == 409

    assert sum(map(len, batches)) == 1 + len(results)
    assert all(len(batch) <= 20 and len(set(batch)) == len(batch) for batch in batches)
    assert len(batches[1]) == 20  # the queue formed full batches
    public = [public_id for public_id, _ in task.units]

    def batch_of(public_id: str, nth: int) -> int:
        return [n for n, batch in enumerate(batches) if public_id in batch][nth]

    assert batch_of(public[1], 0) < batch_of(public[1], 1) < batch_of(public[1], 2)
    assert batch_of(public[2], 0) < batch_of(public[2], 1)
    assert batch_of(public[0], 0) == 0 < batch_of(public[0], 1)
    # one row per message, whatever was sent again
    assert task.count() == units * 3
    assert task.rows("SELECT count(DISTINCT client_message_id) FROM messages "
                     "WHERE client_message_id IS NOT NULL") == [(units,)]


def test_the_writer_settles_every_result_when_many_steps_arrive_at_once(make_task):
    units = 50
    task = make_task("task", units)
    jobs = [task.start(n) for n in range(units)]
    writer = StepWriter(task.db, task.rules)

    async def main() -> list[Any]:
        shown = await asyncio.gather(*(writer.write(reply(job)) for job in jobs))
        sent = await asyncio.gather(*(writer.write(task.message(n, f"hello {n}", f"h{n}"))
                                      for n in range(units)))
        return [*shown, *sent]

    results = run_coroutine(main(), 20)
    writer.shutdown()
    writer._thread.join(5)
    assert not writer._thread.is_alive()
    assert [shown["index"] for shown in results[:units]] == [1] * units
    assert [(answer["index"], job.history[-1].text) for answer, [job] in results[units:]] == \
        [(2, f"hello {n}") for n in range(units)]
    assert task.count() == units * 3
