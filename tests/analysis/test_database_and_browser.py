"""`analyze` reads the database through the export (the bot from the task data), and its report
opens in Chromium with no console errors and no network requests."""

from __future__ import annotations

import json

import pytest
from helpers import cli, dialogue, write_task

from collection_and_annotations.engine.allocation import claim_unit
from collection_and_annotations.engine.work import submit, unit_view


def _submit(served, worker, labels, session):
    claim = claim_unit(served.db, served.task_id, served.run_id, "local", worker, session,
                       served.limits)
    view = unit_view(served.db, served.blueprint, claim.unit_public_id, claim.worker_id)
    answers = {d["key"]: {"issues": {"1": labels, "3": []}} for d in view["dialogues"]}
    submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id, answers,
           {"duration_ms": 1}, None)


def test_analyze_from_the_database(tmp_path, database_url, open_conf):
    lines = []
    for i, bot in enumerate(["bot_a", "bot_b"]):
        record = dialogue(f"d{i}", f"g{i}", ["issues"])
        record["bot"] = bot
        lines.append({"data": [record]})
    conf = write_task(tmp_path, lines, {"g0": 2, "g1": 2})
    served = open_conf(str(conf), database_url)
    for worker in ("ann", "bob"):
        for session in ("1", "2"):
            _submit(served, worker, ["off_topic"], session)
    out = tmp_path / "results.json"
    result = cli("analyze", "--task", "t", "--database-url", database_url, "--resamples", "50",
                 "--json", str(out))
    assert result.returncode == 0, result.stderr
    rows = [r for r in json.loads(out.read_text())["behaviour_rates"]
            if r["label"] == "off_topic"]
    assert {r["bot"] for r in rows} == {"bot_a", "bot_b"}
    assert all(r["n_turns"] == 4 and r["rate"] == 0.5 for r in rows)


@pytest.mark.timeout(120)
def test_report_opens_offline_without_console_errors(tmp_path, browser):
    import numpy as np

    from collection_and_annotations.analysis.behaviours import load_behaviours
    from collection_and_annotations.analysis.load import Tables, add_records
    from collection_and_annotations.analysis.report import render_report
    from collection_and_annotations.analysis.results import Settings, compute_results
    from collection_and_annotations.export.writers import json_safe

    from .synthetic import BUCKETS, study

    records = study(np.random.default_rng(1), {"a": 0.2, "b": 0.3}, dialogues=8,
                    strengths={"a": 0.5, "b": 0.0}, comparisons=60)
    tables = add_records(Tables(), ((r, BUCKETS) for r in records))
    results = json_safe(compute_results(tables, load_behaviours(),
                                        Settings(tasks=["t"], resamples=100)))
    report = tmp_path / "report.html"
    report.write_text(render_report(results), encoding="utf-8")
    errors, requests = [], []
    page = browser.new_page()
    page.on("console", lambda m: m.type in ("error", "warning") and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: r.url != report.as_uri() and requests.append(r.url))
    page.goto(report.as_uri())
    assert page.locator("svg").count() >= 4
    assert page.locator("h2", has_text="Behaviour rates").count() == 1
    page.close()
    assert errors == [] and requests == []
