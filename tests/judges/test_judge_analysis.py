"""`analyze`'s Judges section on a study that people annotated through the worker API (with a
few mistakes) and a fake judge answered with a planted 20 % error on one label: the judge is
flagged on that label only, and the figures equal an independent computation from the
export."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest
from helpers import cli, live_server, migrated_sqlite

from collection_and_annotations.analysis.judges import AS_GOOD, TOO_LITTLE, WORSE

from .fake_judge import FakeJudge, Served
from .study import LABELS, annotate, open_study, run_judge, write_study

JUDGE_ROW = {"judge", "bucket", "label", "n_items", "accuracy", "accuracy_ci_low",
             "accuracy_ci_high", "kappa", "alpha_humans", "alpha_with_judge", "verdict"}
BIAS_ROW = {"judge", "bucket", "label", "bot", "judge_value", "human_value", "difference",
            "ci_low", "ci_high"}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """60 dialogues of three bots and 12 comparisons, 3 people each (5 % mistakes), one judge
    with 20 % of its `rude` answers wrong; analysed and exported."""
    tmp_path = tmp_path_factory.mktemp("study")
    url = migrated_sqlite(tmp_path / "cep.sqlite3")
    fake = FakeJudge(errors={"rude": 0.2}, cost=0.001)
    server = Served(fake)
    served = open_study(write_study(tmp_path, 60, fake.base_url, pairs=12), url, tmp_path)
    try:
        with live_server(served) as base:
            assert annotate(base, workers=3, mistakes=0.05) == 72 * 3
        done = run_judge(tmp_path, url, "--bot", "gpt")
        assert done.returncode == 0, done.stderr
    finally:
        server.stop()
        served.db.dispose()
    analysed = cli("analyze", "--task", "t", "--database-url", url, "--json", "results.json",
                   "--output", "report.html", "--resamples", "400", cwd=tmp_path)
    assert analysed.returncode == 0, analysed.stderr
    assert "judge gpt: 72 submissions" in analysed.stderr
    exported = cli("export", "--task", "t", "--database-url", url, "--format", "submissions",
                   "--include-judges")
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    return {"results": json.loads((tmp_path / "results.json").read_text()),
            "report": (tmp_path / "report.html").read_text(), "records": records,
            "fake": fake, "path": tmp_path}


def test_the_planted_error_is_flagged_on_its_label_and_no_other(study):
    rows = {(r["bucket"], r["label"]): r for r in study["results"]["judges"]}
    assert all(set(r) == JUDGE_ROW for r in rows.values())
    assert set(rows) == {("labels", v) for v in LABELS} | {
        ("quality", "Quality"), ("preference", "chosen dialogue")}
    assert rows[("labels", "rude")]["verdict"] == WORSE
    for label in ("off_topic", "repetitive"):
        assert rows[("labels", label)]["verdict"] == AS_GOOD
    assert rows[("quality", "Quality")]["verdict"] == AS_GOOD
    assert rows[("preference", "chosen dialogue")]["verdict"] == TOO_LITTLE  # 12 items
    rude = rows[("labels", "rude")]
    assert rude["alpha_with_judge"] < rude["alpha_humans"]
    assert rude["accuracy_ci_low"] < rude["accuracy"] < rude["accuracy_ci_high"] < 0.95
    details = {(d["bucket"], d["label"]): d for d in study["results"]["judge_figures"]["agreement"]}
    assert details[("labels", "rude")]["alpha_difference_ci_high"] < 0
    assert details[("labels", "off_topic")]["alpha_difference_ci_high"] >= 0
    assert details[("quality", "Quality")]["mae"] is not None


def _items(records: list[dict], judge: bool) -> dict[tuple, list]:
    """(bucket, label, item) -> answers: 0/1 per turn label, the 1-5 rating, the chosen
    dialogue."""
    found: dict[tuple, list] = defaultdict(list)
    for record in records:
        if ("judge" in record) != judge:
            continue
        for dialogue in record["dialogues"]:
            answers = record["answers"][dialogue["key"]]
            item = dialogue["dialogue_id"]
            for turn, values in answers.get("labels", {}).items():
                for label in LABELS:
                    found[("labels", label, f"{item}#{turn}")].append(int(label in values))
            if "quality" in answers:
                found[("quality", "Quality", item)].append(
                    answers["quality"]["dialogue"]["Quality"])
            if "preference" in answers:
                found[("preference", "chosen dialogue", item)].append(
                    answers["preference"]["dialogue"]["dialogue"] or "none")
    return found


def _alpha_nominal(answers: list[list]) -> float:
    """Krippendorff's alpha, nominal, from its definition (pairs within items)."""
    units = [a for a in answers if len(a) >= 2]
    n = sum(len(a) for a in units)
    observed = sum(sum(x != y for i, x in enumerate(a) for j, y in enumerate(a) if i != j)
                   / (len(a) - 1) for a in units) / n
    totals = Counter(v for a in units for v in a)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k) \
        / (n * (n - 1))
    return 1 - observed / expected


def _kappa(pairs: list[tuple]) -> float:
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[c] * second[c] for c in first) / n ** 2
    return (observed - chance) / (1 - chance)


def test_agreement_figures_equal_an_independent_computation(study):
    humans, judge = _items(study["records"], False), _items(study["records"], True)
    for row in study["results"]["judges"]:
        if row["bucket"] == "quality":
            continue  # ordinal: alpha and weighted kappa, computed the same way below
        keys = [k for k in judge if k[:2] == (row["bucket"], row["label"]) and humans.get(k)]
        decided = []
        for key in keys:
            counts = Counter(humans[key]).most_common()
            if len(counts) == 1 or counts[0][1] > counts[1][1]:
                decided.append((judge[key][0], counts[0][0]))
        assert row["n_items"] == len(decided)
        assert row["accuracy"] == pytest.approx(sum(a == b for a, b in decided) / len(decided))
        assert row["kappa"] == pytest.approx(_kappa(decided))
        assert row["alpha_humans"] == pytest.approx(_alpha_nominal([humans[k] for k in keys]))
        assert row["alpha_with_judge"] == pytest.approx(_alpha_nominal(
            [humans[k] + judge[k] for k in keys if len(humans[k]) >= 2]))


def test_bias_and_rankings_per_bot_equal_an_independent_computation(study):
    from scipy.stats import spearmanr  # slow to import: loaded by the test that uses it

    records = study["records"]
    bot_of = {d["dialogue_id"]: d["source_fields"].get("bot")
              for r in records for d in r["dialogues"]}
    humans, judge = _items(records, False), _items(records, True)
    rows = study["results"]["bias"]
    assert rows and all(set(r) == BIAS_ROW for r in rows)
    means: dict[tuple, dict[str, tuple]] = defaultdict(dict)
    for row in rows:
        keys = [k for k in judge if k[:2] == (row["bucket"], row["label"])
                and bot_of[k[2].split("#")[0]] == row["bot"] and humans.get(k)]
        judged = sum(judge[k][0] for k in keys) / len(keys)
        people = [v for k in keys for v in humans[k]]
        assert row["judge_value"] == pytest.approx(judged)
        assert row["human_value"] == pytest.approx(sum(people) / len(people))
        assert row["difference"] == pytest.approx(judged - sum(people) / len(people))
        assert row["ci_low"] < row["difference"] < row["ci_high"]
        means[(row["bucket"], row["label"])][row["bot"]] = (row["human_value"],
                                                             row["judge_value"])
    rankings = {(r["bucket"], r["label"], r["method"]): r
                for r in study["results"]["judge_figures"]["rankings"]}
    for (bucket, label), scores in means.items():
        ranked = rankings[(bucket, label, "mean")]
        bots = sorted(scores)
        expected = spearmanr([scores[b][0] for b in bots], [scores[b][1] for b in bots])
        assert ranked["rank_correlation"] == pytest.approx(expected.statistic)
    assert rankings[("preference", "chosen dialogue", "bradley_terry")]["n_bots"] == 3


def test_cost_and_time_per_100_dialogues(study):
    (costs,) = study["results"]["judge_figures"]["costs"]
    calls = study["fake"].calls
    assert costs["dialogues"] == 72 and costs["calls"] == calls
    assert costs["per_100_dialogues"]["calls"] == pytest.approx(100 * calls / 72)
    assert costs["per_100_dialogues"]["cost"] == pytest.approx(100 * 0.001 * calls / 72)
    assert costs["per_100_dialogues"]["input_tokens"] > 0
    assert study["results"]["signature"]["judges"]["gpt"]["submissions"] == 72


def test_the_report_has_a_judges_section_and_people_s_figures_stay_human(study):
    report = study["report"]
    assert "<h2 id='judges'>Judges</h2>" in report and WORSE in report
    results = study["results"]
    # the main figures are the people's: one worker set, no judge among them
    assert {w["worker"] for w in results["annotators"]["workers"]}.isdisjoint(
        {r["worker"] for r in study["records"] if "judge" in r})
    assert results["signature"]["submissions"] == 72 * 3
