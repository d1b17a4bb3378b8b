"""The first report a newcomer makes: `analyze` on the demo's answers covers every bucket the
demo asks (its `relevance` question tree too, without a behaviour mapping) and, with the
demo's `bot`/`bot2`, compares the two bots and ranks them."""

from __future__ import annotations

import json
import subprocess
import sys

from collection_and_annotations.engine.allocation import claim_unit
from collection_and_annotations.engine.work import submit, unit_view

RELEVANCE_Q = "Does SPEAKER_X's reply follow from what SPEAKER_Y just said?"
PROBLEMS_Q = "Which problems does the reply have?"
DRIFT = "Partly, it responds but drifts away."


def _answers(dialogue: dict, worker: int) -> dict:
    """Answers every demo bucket asks of one dialogue (the first worker is stricter)."""
    bot_turns = [str(t["index"]) for t in dialogue["turns"] if t["speaker"] == "system"]
    given: dict = {}
    for bucket in dialogue["annotation_tasks"]:
        if bucket == "relevance":
            given[bucket] = {turn: {RELEVANCE_Q: {DRIFT: {"Where does it drift?": {
                "To something unrelated.": {}}}} if (i + worker) % 2 else
                {"Yes, it responds to it directly.": {}},
                PROBLEMS_Q: {"It repeats an earlier reply.": {}} if i == worker else {}}
                for i, turn in enumerate(bot_turns)}
        elif bucket == "issues":
            given[bucket] = {turn: ["off_topic"] if i == 0 else [] for i, turn in
                             enumerate(bot_turns)}
        elif bucket == "overall_quality":
            given[bucket] = {"dialogue": {"Overall": 3 + worker}}
        elif bucket == "preference":
            # helper-a's dialogue is the good one, wherever the unit shows it
            left_is_a = "mystery novel" in dialogue["turns"][1]["text"]
            choice = "Dialogue 1 (left)" if left_is_a else "Dialogue 2 (right)"
            given[bucket] = {"dialogue": choice if worker else "No real difference"}
    return given


def test_analyze_on_the_demo_covers_relevance_and_ranks_the_bots(tmp_path, database_url,
                                                                   open_conf):
    served = open_conf("demo", database_url)
    submitted = 0
    for worker in range(2):
        for visit in range(4):  # 4 data lines, two annotators each
            claim = claim_unit(served.db, served.task_id, served.run_id, "local",
                               f"worker{worker}", str(visit), served.limits)
            view = unit_view(served.db, served.blueprint, claim.unit_public_id,
                             claim.worker_id)
            answers = {d["key"]: _answers(d, worker) for d in view["dialogues"]}
            submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id, answers,
                   {"duration_ms": 1}, None)
            submitted += 1
    out, report = tmp_path / "results.json", tmp_path / "report.html"
    result = subprocess.run(
        [sys.executable, "-m", "collection_and_annotations", "analyze", "--task", "demo",
         "--database-url", database_url, "--resamples", "50", "--json", str(out),
         "--output", str(report)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    results = json.loads(out.read_text())
    assert results["signature"]["submissions"] == submitted == 8

    shares = {(r["question"], r["answer"], r["bot"]): r for r in results["answer_shares"]
              if r["bucket"] == "relevance"}
    assert {bot for *_, bot in shares} == {"helper-a", "helper-b"}
    # helper-a: 2 dialogues x 3 bot turns x 2 annotators asked the top question
    yes = shares[(RELEVANCE_Q, "Yes, it responds to it directly.", "helper-a")]
    assert yes["n"] == 12 and yes["n_dialogues"] == 2 and 0 <= yes["ci_low"] <= yes["share"]
    # the nested question is asked only after "Partly"; the checkbox question of every turn
    drift = shares[("Where does it drift?", "To something unrelated.", "helper-a")]
    assert drift["n"] == shares[(RELEVANCE_Q, DRIFT, "helper-a")]["n_with_answer"]
    assert drift["share"] == 1.0
    repeats = shares[(PROBLEMS_Q, "It repeats an earlier reply.", "helper-b")]
    assert repeats["n"] == 6 and repeats["n_with_answer"] == 2
    assert any("'relevance' is not in the behaviour rates" in n for n in results["notes"])

    # the comparison counts by bot, and the two bots are ranked
    pooled = [r for r in results["ranking"] if r["dimension"] == "all"]
    assert {r["bot"] for r in pooled} == {"helper-a", "helper-b"}
    assert [r["bot"] for r in pooled if r["rank"] == 1] == ["helper-a"]
    assert {(r["bot_a"], r["bot_b"], r["wins"], r["ties"]) for r in results["comparisons"]} \
        == {("helper-a", "helper-b", 1, 1)}
    assert {r["bot"] for r in results["likert"]} == {"helper-a", "helper-b"}
    html = report.read_text()
    assert "Answers to question trees" in html and "Where does it drift?" in html
