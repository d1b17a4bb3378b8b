"""The first report a newcomer makes: `analyze` on the demo's answers covers every bucket the
demo asks (its `relevance` question tree too, without a behaviour mapping) and, with the
demo's `bot`/`bot2`, compares the two bots and ranks them."""

from __future__ import annotations

import json

from demo_study import DRIFT, PROBLEMS_Q, RELEVANCE_Q, submit_demo
from helpers import cli


def test_analyze_on_the_demo_covers_relevance_and_ranks_the_bots(tmp_path, database_url,
                                                                   open_conf):
    served = open_conf("demo", database_url)
    submitted = submit_demo(served)
    out, report = tmp_path / "results.json", tmp_path / "report.html"
    result = cli("analyze", "--task", "demo", "--database-url", database_url, "--resamples",
                 "50", "--json", str(out), "--output", str(report))
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
