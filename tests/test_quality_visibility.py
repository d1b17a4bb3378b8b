"""What a requester sees of screening and gold: progress (console line and API), the pool and
score of each exported submission, leaving them out, and review flags after disqualification."""

from __future__ import annotations

import csv
import io

from quality_helpers import pool_of
from test_quality_flows import Worker, _do_screening, _finish, _pass_screening, start  # noqa: F401

from collection_and_annotations.cli.run import _progress_line
from collection_and_annotations.engine.runs import Progress
from collection_and_annotations.export.submissions import whole_submissions
from collection_and_annotations.quality.stats import Outcomes, task_outcomes
from collection_and_annotations.server.auth import requester_token

GOLDS = ("mephisto.blueprint.use_golds=true", "mephisto.blueprint.min_golds=0",
         "mephisto.blueprint.gold_every_n_units=1", "mephisto.blueprint.max_incorrect_golds=0",
         "mephisto.blueprint.allowed_gold_mistakes=0")


def _work(served, worker, visits):
    """One unit per visit; `visits` says how to answer a gold unit (mistakes). Returns the
    pools served in order and the public ids of the real units."""
    pools, real = [], []
    for n, wrong in enumerate(visits):
        worker.assignment = f"v{n}"
        reply = worker.claim()
        if reply.status_code != 200:
            pools.append(reply.status_code)
            continue
        unit_id = reply.json()["unit_id"]
        pool = pool_of(served, unit_id)
        pools.append(pool)
        if pool == "main":
            real.append(unit_id)
        assert _finish(served, worker, worker.unit(unit_id).json(),
                       wrong_golds=wrong).status_code == 200
    return pools, real


def _api(client, served, path):
    reply = client.get(path, headers={
        "Authorization": f"Bearer {requester_token(served.secret)}"})
    assert reply.status_code == 200, reply.text
    return reply


def test_outcomes_in_progress_exports_and_review_flags(start):  # noqa: F811
    served, client = start(*GOLDS)
    _do_screening(served, Worker(client, "passes"), mistakes_on_graded=0)
    _do_screening(served, Worker(client, "fails"), mistakes_on_graded=3)
    gw = _pass_screening(served, client, "gw")
    # real A; gold passed; real B; gold failed (0 allowed) -> blocked; B is flagged, A is not
    pools, (real_a, real_b) = _work(served, gw, [0, 0, 0, 2, 0])
    assert pools == ["main", "gold", "main", "gold", 403]

    with served.db.read() as session:
        outcomes = task_outcomes(session, served.task_id)
    assert (outcomes.screening_passed, outcomes.screening_failed) == (1, 1)
    assert (outcomes.gold_passed, outcomes.gold_failed, outcomes.gold_pass_rate) == (1, 1, 0.5)
    line = _progress_line(Progress(2, 0, 3), outcomes)
    assert line.endswith("screening 1 passed, 1 failed; golds 1/2 passed (50%)")
    assert _progress_line(Progress(0, 0, 3), Outcomes()).endswith("3 waiting")

    body = _api(client, served, "/api/requester/progress").json()
    assert body["quality"]["screening"] == {"passed": 1, "failed": 1}
    assert body["quality"]["gold"] == {"passed": 1, "failed": 1, "pass_rate": 0.5}
    workers = body["quality"]["workers"]
    assert len(workers) == 3 and all(name.startswith("w_") for name in workers)
    assert sorted(w["gold"]["pass_rate"] or 0 for w in workers.values()) == [0, 0, 0.5]

    records = {r["unit_id"]: r for r, _ in whole_submissions(served.db, served.task_name)}
    by_pool = sorted(r["pool"] for r in records.values())
    assert by_pool == ["gold", "gold", "main", "main", "screening", "screening"]
    assert records[real_a]["quality_passed"] is None and not records[real_a]["flagged_for_review"]
    assert records[real_b]["flagged_for_review"] is True
    scored = sorted((r["pool"], r["quality_passed"], r["quality_mistakes"])
                    for r in records.values() if r["pool"] != "main")
    assert scored == [("gold", False, 2), ("gold", True, 0), ("screening", False, 3),
                      ("screening", True, 0)]

    kept = _api(client, served, "/api/requester/submissions?exclude=quality").json()
    assert {s["unit_id"] for s in kept["submissions"]} == {real_a, real_b}
    rows = list(csv.DictReader(io.StringIO(_api(
        client, served, "/api/requester/submissions?format=csv").text)))
    assert {r["pool"] for r in rows} == {"main", "gold", "screening"}
    assert {r["flagged_for_review"] for r in rows if r["unit_id"] == real_b} == {"True"}
    rows = list(csv.DictReader(io.StringIO(_api(
        client, served, "/api/requester/submissions?format=csv&exclude=quality"
    ).text)))
    assert {r["unit_id"] for r in rows} == {real_a, real_b}
    bad = client.get("/api/requester/submissions?exclude=golds", headers={
        "Authorization": f"Bearer {requester_token(served.secret)}"})
    assert bad.status_code == 400


def test_review_flags_can_be_turned_off(start):  # noqa: F811
    served, client = start(*GOLDS, "mephisto.blueprint.flag_for_review_on_gold_block=false")
    gw = _pass_screening(served, client, "gw")
    pools, _ = _work(served, gw, [0, 2, 0])
    assert pools == ["main", "gold", 403]  # disqualified, nothing flagged
    assert not any(r["flagged_for_review"] for r, _ in
                   whole_submissions(served.db, served.task_name))
