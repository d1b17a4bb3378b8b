"""The `judge` command against a fake OpenAI-compatible judge over HTTP: what it stores, how
it copes with bad replies and a busy endpoint, kill -9 and resume, and the key."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import time

import pytest
from helpers import cli
from sqlalchemy import MetaData, func, select

from collection_and_annotations.export.submissions import whole_submissions
from collection_and_annotations.judges.prompt import DEFAULT_TEMPLATE
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import JudgeCall, Submission, Unit, Worker

from .fake_judge import expected_rating
from .study import KEY, KEY_ENV, judge_command, judge_env, run_judge, truth_of, write_study


def _sources(tmp_path) -> dict[str, dict]:
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    return {d["dialogue_id"]: d for line in lines for d in json.loads(line)["data"]}


def _check_rule(record: dict, sources: dict[str, dict]) -> None:
    """The stored answers are what the fake's rule gives (no planted error)."""
    for dialogue in record["dialogues"]:
        source = sources[dialogue["dialogue_id"]]
        given = record["answers"][dialogue["key"]]
        if "preference" in given:
            side = "turns" if "#better" in json.dumps(source["turns"]) else "turns2"
            assert given["preference"]["dialogue"]["dialogue"] == side
            continue
        turns = source["turns"]
        assert given["labels"] == {str(t): truth_of(turns[t][1])
                                   for t in range(len(turns)) if turns[t][0] == "system"}
        text = " ".join(t[1] for t in turns)
        assert given["quality"] == {"dialogue": {"Quality": expected_rating(
            "Quality", "dialogue", text, {})}}


def test_a_judge_answers_as_the_rule_says_and_is_stored_as_a_model_worker(
        tmp_path, database_url, open_conf, fake):
    fake.cost = 0.002
    served = open_conf(str(write_study(tmp_path, 6, fake.base_url, pairs=3)), database_url)
    done = run_judge(tmp_path, database_url, "--bot", "gpt")
    assert done.returncode == 0, done.stderr
    assert "judge 'gpt': 9 units answered now" in done.stdout
    records = [r for r, _ in whole_submissions(served.db, "t", judges="only")]
    assert len(records) == 9 and {r["judge"] for r in records} == {"gpt"}
    assert {r["pool"] for r in records} == {"judge"}
    sources = _sources(tmp_path)
    for record in records:
        _check_rule(record, sources)
        summary = record["timings"]["client"]["judge"]
        assert summary["settings"]["model"] == "fake-judge-1"
        assert summary["settings"]["params"] == {"temperature": 0}
        assert summary["prompt_sha256"] == hashlib.sha256(DEFAULT_TEMPLATE.read_bytes()) \
            .hexdigest()
        assert summary["cost"] == pytest.approx(0.002 * summary["calls"])
    with served.db.read() as session:
        assert session.execute(select(Worker.provider, Worker.provider_worker_id)
                               .join(Submission, Submission.worker_id == Worker.id)
                               .distinct()).all() == [("model", "judge:gpt")]
        calls = session.scalars(select(JudgeCall)).all()
    assert len(calls) == 6 * 2 + 3 and {c.outcome for c in calls} == {"answer"}
    assert all(c.reply and c.input_tokens and c.latency_ms is not None and c.schema_used
               for c in calls)
    # response_format holds each bucket's schema; the key came from the environment
    chats = [r for r in fake.requests if r["path"] == "/v1/chat/completions"]
    assert len(chats) == len(calls)
    for request in chats:
        assert request["body"]["response_format"]["type"] == "json_schema"
        assert request["body"]["response_format"]["json_schema"]["strict"] is True
        assert request["body"]["stream"] is False
        assert request["headers"]["authorization"] == f"Bearer {KEY}"
    # people's figures leave the judge out; asked for, the export has it
    assert list(whole_submissions(served.db, "t")) == []
    exported = cli("export", "--task", "t", "--database-url", database_url, "--format", "csv",
                   "--include-judges", cwd=tmp_path)
    assert exported.returncode == 0 and exported.stdout.count(",judge,") == 6 * 4 + 3


def test_malformed_replies_busy_endpoints_and_a_refused_schema(tmp_path, database_url,
                                                                open_conf, fake):
    served = open_conf(str(write_study(tmp_path, 3, fake.base_url)), database_url)
    fake.failures = [429, 500, 503]  # retried by the endpoint's own backoff
    fake.scripted = ["Sure! Here it is: not json", '{"turn 2": "off_topic"}']
    fake.refuse_schema = True
    done = run_judge(tmp_path, database_url, "--bot", "gpt", "--concurrency", "1")
    assert done.returncode == 0, done.stderr
    with served.db.read() as session:
        calls = session.scalars(select(JudgeCall).order_by(JudgeCall.id)).all()
    assert [c.outcome for c in calls].count("invalid") == 2
    assert [c.outcome for c in calls].count("answer") == 6
    refused = [c for c in calls if c.outcome == "invalid"]
    assert "no JSON object" in refused[0].reason and refused[0].reply.startswith("Sure!")
    assert refused[1].reply == '{"turn 2": "off_topic"}' and "keys" in refused[1].reason
    assert not any(c.schema_used for c in calls)  # the endpoint refused response_format
    sources = _sources(tmp_path)
    for record, _ in whole_submissions(served.db, "t", judges="only"):
        _check_rule(record, sources)
    # the second try of a refused reply quotes what was wrong
    repairs = [r["body"]["messages"] for r in fake.requests
               if r["path"] == "/v1/chat/completions" and len(r["body"]["messages"]) == 4]
    assert repairs and "cannot be used" in repairs[0][-1]["content"]


def test_a_reply_refused_after_its_retries_is_a_failure_never_an_answer(
        tmp_path, database_url, open_conf, fake):
    served = open_conf(str(write_study(tmp_path, 1, fake.base_url)), database_url)
    fake.scripted = ["no"] * 3
    done = run_judge(tmp_path, database_url, "--bot", "gpt", "--concurrency", "1",
                     "--invalid-retries", "2")
    assert done.returncode == 1
    assert "1 left open" in done.stdout and "no answer for" in done.stdout
    with served.db.read() as session:
        outcomes = session.scalars(select(JudgeCall.outcome).order_by(JudgeCall.id)).all()
        assert session.scalar(select(func.count()).select_from(Submission)) == 0
    assert outcomes == ["invalid", "invalid", "invalid", "answer"]
    asked = fake.calls
    again = run_judge(tmp_path, database_url, "--bot", "gpt")
    assert again.returncode == 0, again.stderr
    assert fake.calls == asked + 1  # only the question without an answer is asked again
    (record, _), = whole_submissions(served.db, "t", judges="only")
    _check_rule(record, _sources(tmp_path))


def _database_text(database_url: str) -> str:
    """Every row of every table, as text."""
    db = Database(database_url)
    metadata = MetaData()
    metadata.reflect(db.engine)
    with db.engine.connect() as connection:
        text = "\n".join(repr(row) for table in metadata.sorted_tables
                         for row in connection.execute(select(table)))
    db.dispose()
    return text


def test_the_key_comes_only_from_the_environment(tmp_path, database_url, open_conf, fake):
    open_conf(str(write_study(tmp_path, 2, fake.base_url)), database_url)
    without = run_judge(tmp_path, database_url, "--bot", "gpt", key=False)
    assert without.returncode != 0
    assert KEY_ENV in without.stderr and "model_opts.yaml" in without.stderr
    fake.failures = [401]  # refused: the endpoint's error quotes the key it got
    first = run_judge(tmp_path, database_url, "--bot", "gpt", "--concurrency", "1")
    second = run_judge(tmp_path, database_url, "--bot", "gpt")
    assert first.returncode == 1 and second.returncode == 0, second.stderr
    dump = _database_text(database_url)
    assert "HTTP 401" in dump and "key was Bearer ***" in dump
    assert KEY not in dump
    for run in (without, first, second):
        assert KEY not in run.stdout + run.stderr
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in fake.requests
               if r["path"] == "/v1/chat/completions")


def test_kill_9_and_resume_leave_no_duplicate_and_lose_nothing(tmp_path, database_url,
                                                               open_conf, fake):
    served = open_conf(str(write_study(tmp_path, 40, fake.base_url)), database_url)
    fake.latency = 0.05
    process = subprocess.Popen(judge_command(database_url, "--bot", "gpt",
                                             "--concurrency", "4"),
                               cwd=tmp_path, env=judge_env(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while _answers(served.db) < 30:
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    killed_at = _answers(served.db)
    assert killed_at < 80
    done = run_judge(tmp_path, database_url, "--bot", "gpt", "--concurrency", "4")
    assert done.returncode == 0, done.stderr
    with served.db.read() as session:
        answers = session.execute(
            select(JudgeCall.unit_id, JudgeCall.dialogue_key, JudgeCall.bucket, func.count())
            .where(JudgeCall.outcome == "answer")
            .group_by(JudgeCall.unit_id, JudgeCall.dialogue_key, JudgeCall.bucket)).all()
        units = session.execute(select(Unit.provider_session, func.count())
                                .where(Unit.pool == "judge")
                                .group_by(Unit.provider_session)).all()
    assert len(answers) == 80 and {n for *_, n in answers} == {1}
    assert len(units) == 40 and {n for _, n in units} == {1}
    records = [r for r, _ in whole_submissions(served.db, "t", judges="only")]
    assert len(records) == 40
    sources = _sources(tmp_path)
    for record in records:
        _check_rule(record, sources)
    # nothing answered before the kill was asked again: only calls in flight were lost
    assert fake.calls <= 80 + 4


def _answers(db: Database) -> int:
    with db.read() as session:
        return session.scalar(select(func.count()).select_from(JudgeCall)
                              .where(JudgeCall.outcome == "answer"))


def test_a_command_judge_and_judges_of_the_wrong_kind(tmp_path, database_url, open_conf, fake):
    served = open_conf(str(write_study(tmp_path, 2, fake.base_url, pairs=1)), database_url)
    demo = run_judge(tmp_path, database_url, "--bot", "parrot")
    assert demo.returncode != 0 and "model_opts.yaml:" in demo.stderr
    assert "a judge is a bot of type openai or command, not 'demo'" in demo.stderr
    unknown = run_judge(tmp_path, database_url, "--bot", "nobody")
    assert unknown.returncode != 0 and "judge 'nobody' is not in" in unknown.stderr
    done = run_judge(tmp_path, database_url, "--bot", "cmd")
    assert done.returncode == 0, done.stderr
    records = [r for r, _ in whole_submissions(served.db, "t", judges="only")]
    assert len(records) == 3 and {r["judge"] for r in records} == {"cmd"}
    sources = _sources(tmp_path)
    for record in records:
        _check_rule(record, sources)


def test_the_prompt_is_built_from_the_bucket_the_instructions_and_the_page_s_names(
        tmp_path, database_url, open_conf, fake):
    conf = write_study(tmp_path, 1, fake.base_url)
    (tmp_path / "instructions").mkdir()
    (tmp_path / "instructions" / "labels.md").write_text("Mark **rude** replies as *rude*.\n")
    open_conf(str(conf), database_url,
              "mephisto.blueprint.speaker_names={SPEAKER_X:Assistant,SPEAKER_Y:Visitor}")
    own = tmp_path / "prompt.txt"
    own.write_text("Be strict.\n---\n${instructions}\n${dialogue}\n${questions}\n"
                   "${answer_format}\n")
    done = run_judge(tmp_path, database_url, "--bot", "gpt", "--prompt-template", str(own))
    assert done.returncode == 0, done.stderr
    prompts = {tuple(r["body"]["response_format"]["json_schema"]["schema"]["properties"]):
               r["body"]["messages"] for r in fake.requests
               if r["path"] == "/v1/chat/completions"}
    labels = prompts[("turn 2", "turn 4", "turn 6")]
    assert labels[0] == {"role": "system", "content": "Be strict."}
    text = labels[1]["content"]
    source = next(iter(_sources(tmp_path).values()))
    assert "<strong>rude</strong>" in text  # the instructions file, as the page shows it
    assert f"Turn 1 (Visitor): {source['turns'][0][1]}" in text
    assert f"Turn 2 (Assistant): {source['turns'][1][1]}" in text
    assert "Which labels apply to Assistant's reply?" in text
    assert '"off_topic": off topic' in text and '"turn 6"' in text
    quality = prompts[("dialogue",)]
    assert "How good a partner was Assistant?" in quality[1]["content"]
    db = Database(database_url)
    with db.read() as session:
        hashes = set(session.scalars(select(JudgeCall.prompt_sha256)))
    db.dispose()
    assert hashes == {hashlib.sha256(own.read_bytes()).hexdigest()}
