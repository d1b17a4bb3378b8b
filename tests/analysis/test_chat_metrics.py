"""`analyze` on a dialogue-collection task: automatic metrics per bot over the collected chats
in the database (texts and stored latencies known), checked against figures computed here by
hand; the chat submissions carry no annotation answers."""

from __future__ import annotations

import json
import statistics
from datetime import datetime, timedelta

import pytest
from helpers import cli
from sqlalchemy import insert, select

from collection_and_annotations.analysis.behaviours import load_behaviours
from collection_and_annotations.analysis.load import Tables, add_records
from collection_and_annotations.analysis.results import CHAT_NOTE, Settings, compute_results
from collection_and_annotations.blueprints.dialogue_collection.annotations import chat_submission
from collection_and_annotations.engine.chat import transcripts
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import (
    Assignment,
    Conversation,
    Message,
    ReviewDecision,
    Submission,
    Task,
    TaskRun,
    Unit,
    Worker,
)

from .synthetic import BUCKETS

START = datetime(2026, 1, 1, 12, 0, 0)
# per chat: (bot, status, messages); a message: (role, text, seconds after the one before,
# first_piece_ms, latency_ms); the first is the server's opener for the worker
CHATS = [
    ("bot_a", "ended", [
        ("worker", "Hi!", 0, None, None),
        ("bot", "hello there how are you", 1.5, 300, 1500),
        ("worker", "fine thanks", 4.0, None, None),
        ("bot", "good to hear that", 2.0, 250, 2000),
        ("worker", "what do you like", 6.5, None, None),
        ("bot", "i like music and books and films", 3.0, None, 3000),
    ]),
    ("bot_b", "ended", [
        ("worker", "Hi!", 0, None, None),
        ("bot", "hey", 0.5, 100, 500),
        ("worker", "hello bot", 3.0, None, None),
        ("bot", "hey hey hey", 0.75, 120, 750),
    ]),
    ("bot_a", "ended", [
        ("worker", "Hi!", 0, None, None),
        ("bot", "good morning", 1.0, 400, 1000),
        ("worker", "morning", 2.5, None, None),
        ("bot", "how is the weather", 4.0, 500, 4000),
    ]),
    ("bot_b", "active", [  # not ended: not collected, so not scored
        ("worker", "Hi!", 0, None, None),
        ("bot", "this chat never ended", 9.0, 9000, 9000),
    ]),
]


# offline labels of the bots' turns (odd indices), per chat, for the annotated variant
LABELS = {0: {"1": ["redundant"], "3": [], "5": ["redundant"]}, 1: {"1": [], "3": []}}


def _store(url: str, annotated: bool = False) -> None:
    db = Database(url)
    db.migrate()
    with db.session() as session:
        task = Task(name="chat", blueprint="dialogue_collection")
        session.add(task)
        session.flush()
        run = TaskRun(task_id=task.id, config={"buckets": {
            "consistency_label": BUCKETS["consistency_label"]}})
        session.add(run)
        session.flush()
        for number, (bot, status, messages) in enumerate(CHATS):
            worker = Worker(provider="local", provider_worker_id=f"p{number}",
                            pseudonym=f"W{number}")
            assignment = Assignment(task_id=task.id, key=f"a{number}", data={"bots": [bot]})
            session.add_all([worker, assignment])
            session.flush()
            unit = Unit(public_id=f"u{number}", assignment_id=assignment.id,
                        task_run_id=run.id, worker_id=worker.id, pool="chat_test",
                        status="completed" if status == "ended" else "assigned",
                        layout={"bots": [bot]})
            session.add(unit)
            session.flush()
            conversation = Conversation(unit_id=unit.id, worker_id=worker.id, attempt=0,
                                        position=0, bot=bot, status=status, started_at=START)
            session.add(conversation)
            session.flush()
            sent = START + timedelta(hours=number)
            for index, (role, text, after, first_piece, latency) in enumerate(messages):
                sent += timedelta(seconds=after)
                session.add(Message(conversation_id=conversation.id, index=index, role=role,
                                    text=text, sent_at=sent, opener=index == 0,
                                    bot=bot if role == "bot" else None,
                                    first_piece_ms=first_piece, latency_ms=latency))
    with db.transaction() as connection:  # submissions stored as the chat kind stores them
        ended = connection.execute(select(Unit.id, Unit.worker_id, Unit.task_run_id)
                                   .where(Unit.status == "completed").order_by(Unit.id)).all()
        for number, (unit_id, worker_id, run_id) in enumerate(ended):
            labels = LABELS.get(number) if annotated else None
            answers = chat_submission("chat", transcripts(connection, unit_id, 0), {},
                                      {"c0": {"consistency_label": labels}} if labels else {},
                                      None)
            connection.execute(insert(Submission).values(
                unit_id=unit_id, worker_id=worker_id, task_run_id=run_id, answers=answers,
                timings={"server": {"duration_seconds": 60.0}}))
    db.dispose()


def _expected(bot: str) -> dict[str, tuple[float, int]]:
    """metric -> (value, n), computed by hand from CHATS."""
    chats = [messages for b, status, messages in CHATS if b == bot and status == "ended"]
    replies = [m for messages in chats for m in messages if m[0] == "bot"]
    tokens = [word for m in replies for word in m[1].split()]
    latency = [m[4] / 1000 for m in replies]
    first = [m[3] / 1000 for m in replies if m[3] is not None]
    # the worker's own messages (not the opener), from the bot message before each
    response = [m[2] for messages in chats for m in messages[1:] if m[0] == "worker"]
    return {
        "bot_turns_per_dialogue": (len(replies) / len(chats), len(chats)),
        "richness.avg_turn_length": (len(tokens) / len(replies), len(replies)),
        "richness.distinct_1": (len(set(tokens)) / len(tokens), len(replies)),
        "latency.p50": (statistics.median(latency), len(replies)),
        "latency.mean": (statistics.mean(latency), len(replies)),
        "first_piece_latency.p50": (statistics.median(first), len(first)),
        "worker_response_time.p50": (statistics.median(response), len(response)),
        "worker_response_time.mean": (statistics.mean(response), len(response)),
    }


def _analyze(folder, annotated=False):
    url = f"sqlite:///{folder / 'cep.sqlite3'}"
    _store(url, annotated)
    out, report = folder / "results.json", folder / "report.html"
    result = cli("analyze", "--task", "chat", "--database-url", url, "--resamples", "10",
                 "--json", str(out), "--output", str(report))
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text()), report.read_text()


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    return _analyze(tmp_path_factory.mktemp("chat"))


@pytest.mark.parametrize("bot", ["bot_a", "bot_b"])
def test_automatic_metrics_per_bot(analysed, bot):
    results, _ = analysed
    rows = {r["metric"]: r for r in results["automatic_metrics"] if r["bot"] == bot}
    chats = sum(b == bot and status == "ended" for b, status, _ in CHATS)
    for metric, (value, n) in _expected(bot).items():
        assert rows[metric]["value"] == pytest.approx(value), metric
        assert rows[metric]["n"] == n, metric
        assert rows[metric]["n_dialogues"] == chats
    assert {"richness.msttr", "latency.p90", "first_piece_latency.mean"} <= set(rows)


def test_chat_task_without_answers(analysed):
    results, html = analysed
    assert results["signature"]["submissions"] == 3 and results["signature"]["answer_rows"] == 0
    assert results["signature"]["chat_dialogues"] == 3
    assert len(results["signature"]["chat_logs_sha256"]) == 64
    assert {"richness", "latency"} <= set(results["signature"]["metric_signatures"])
    assert results["behaviour_rates"] == [] and results["ranking"] == []
    assert results["quality"]["units"] == 3 and results["quality"]["units_by_pool"] == {
        "chat_test": 3}
    assert any("no references" in note for note in results["notes"])
    assert "Automatic metrics over collected chats" in html
    assert "BLEU and chrF are not computed" in html and "bot_a (2 chats)" in html


def test_chat_annotations_join_the_main_figures(tmp_path):
    results, _ = _analyze(tmp_path, annotated=True)
    rates = {r["bot"]: r for r in results["behaviour_rates"] if r["label"] == "redundant"}
    assert (rates["bot_a"]["n_turns"], rates["bot_a"]["rate"]) == (3, pytest.approx(2 / 3))
    assert (rates["bot_b"]["n_turns"], rates["bot_b"]["rate"]) == (2, 0.0)
    assert {r["bot"] for r in results["automatic_metrics"]} == {"bot_a", "bot_b"}


def test_chat_records_from_a_file_say_the_metrics_need_the_database():
    record = {"task": "chat", "task_kind": "dialogue_collection", "run_id": 1, "unit_id": "u1",
              "worker": "W1", "timings": {"server": {"duration_seconds": 60.0}},
              "layout": {"bots": ["bot_a"]},
              "dialogues": [{"key": "c0", "dialogue_id": "chat_c1", "group_id": "chat_c1",
                             "conversation_id": 1, "speakers": ["user", "system"],
                             "position": 1, "tasks": [], "left": None,
                             "source_fields": {"bot": "bot_a"}}],
              "answers": {}, "pool": "chat_test", "quality_mistakes": None,
              "quality_passed": None, "flagged_for_review": False}
    tables = add_records(Tables(), [(record, {})])
    results = compute_results(tables, load_behaviours(), Settings(tasks=[], resamples=10))
    assert results["automatic_metrics"] == [] and CHAT_NOTE in results["notes"]
    assert results["signature"]["chat_logs_sha256"] is None


def test_a_rejected_chat_leaves_the_automatic_metrics(tmp_path):
    url = f"sqlite:///{tmp_path / 'cep.sqlite3'}"
    _store(url)
    db = Database(url)
    with db.session() as session:  # the requester rejected the third chat (bot_a)
        unit = session.scalars(select(Unit).where(Unit.public_id == "u2")).one()
        unit.status = "rejected"
        session.add(ReviewDecision(unit_id=unit.id, decision="reject", reason="off task",
                                   sync_state="not_sent"))
    db.dispose()
    out = tmp_path / "results.json"
    result = cli("analyze", "--task", "chat", "--database-url", url, "--resamples", "10",
                 "--json", str(out))
    assert result.returncode == 0, result.stderr
    results = json.loads(out.read_text())
    rows = {r["metric"]: r for r in results["automatic_metrics"] if r["bot"] == "bot_a"}
    assert rows["bot_turns_per_dialogue"]["n_dialogues"] == 1
    assert rows["latency.p50"]["n"] == 3  # the first chat's three replies only
    assert results["signature"]["chat_dialogues"] == 3  # read, then left out
    assert results["review"]["units_left_out"] == 1
