"""A study as a requester runs it, analysed from the database: workers submit through the worker
API, the requester rejects work through the requester API, the `analyze` command runs and the
dashboard serves the report. Rejected work is left out of every figure (with the count and
the figures including it), the signature is the same from the database and from its export,
and one odd stored row (a 401-digit integer, a `$...$` name) never stops the analysis."""

from __future__ import annotations

import json

from helpers import BUCKETS, app_client, cli, dialogue, write_task
from sqlalchemy import select

from collection_and_annotations.providers.local import link_signature
from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.auth import requester_token
from collection_and_annotations.storage.models import Submission

API = "/api/requester"


class Study:
    """A static task of `issues` labels on two bot turns per dialogue, one annotator each."""

    def __init__(self, served):
        self.served = served
        self.client = app_client(create_app(served))
        self.auth = {"Authorization": f"Bearer {requester_token(served.secret)}"}
        self.visits = 0

    def submit(self, worker: str, labels: list[str]) -> str:
        """Claim a unit as `worker` and label both bot turns of its dialogue with `labels`."""
        self.visits += 1
        visit = f"a{self.visits}"
        claimed = self.client.post("/api/claim", json={
            "worker_id": worker, "assignment_id": visit,
            "sig": link_signature(self.served.secret, worker, visit)})
        assert claimed.status_code == 200, claimed.json()
        body = claimed.json()
        headers = {"Authorization": f"Bearer {body['token']}"}
        unit = self.client.get(f"/api/units/{body['unit_id']}", headers=headers).json()
        answers = {d["key"]: {"issues": {"1": labels, "3": labels}} for d in unit["dialogues"]}
        reply = self.client.post(f"/api/units/{body['unit_id']}/submit", headers=headers,
                                 json={"answers": answers})
        assert reply.status_code == 200, reply.json()
        return body["unit_id"]

    def review(self, unit_id: str, decision: str) -> None:
        reply = self.client.post(f"{API}/units/{unit_id}/review", headers=self.auth,
                                 json={"decision": decision, "reason": "did not read the task"})
        assert reply.status_code == 200, reply.json()

    def pseudonyms(self, workers: list[str]) -> list[str]:
        listed = self.client.get(f"{API}/workers/identities", headers=self.auth).json()
        names = {w["worker_id"]: w["pseudonym"] for w in listed["workers"]}
        return [names[w] for w in workers]

    def report(self) -> str:
        reply = self.client.get(f"{API}/report", headers=self.auth)
        assert reply.status_code == 200, reply.text[:2000]
        return reply.text


def _study(tmp_path, open_conf, database_url, bots, **task) -> Study:
    lines = []
    for i, bot in enumerate(bots):
        record = dialogue(f"d{i}", f"g{i}", ["issues"])
        record["bot"] = bot
        lines.append({"data": [record]})
    conf = write_task(tmp_path / "task", lines, {f"g{i}": 1 for i in range(len(bots))},
                      task=task or None)
    return Study(open_conf(str(conf), database_url))


def _analyze(tmp_path, database_url, *args):
    out = tmp_path / "results.json"
    done = cli("analyze", "--task", "t", "--database-url", database_url, "--resamples", "50",
               "--json", str(out), "--output", str(tmp_path / "report.html"), *args)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _off_topic(rows):
    return {r["bot"]: r for r in rows if r["label"] == "off_topic"}


def test_rejected_work_is_left_out_of_every_figure(tmp_path, open_conf, database_url):
    study = _study(tmp_path, open_conf, database_url, ["bot_a", "bot_a", "bot_a", "bot_b", "bot_b"],
                   return_rejected_units=True)
    careless = study.submit("careless", ["off_topic"])  # every turn off topic
    study.review(careless, "reject")  # its work goes back to the pool, done again below
    sloppy = study.submit("sloppy", ["off_topic"])
    study.review(sloppy, "soft_reject")  # left out, not done again
    for worker in ("w1", "w2", "w3"):
        study.submit(worker, [])
    study.review(study.submit("w4", []), "approve")
    results = _analyze(tmp_path, database_url)
    rates = _off_topic(results["behaviour_rates"])
    # 4 dialogues kept, careless's annotated again: each counts once (2 bot turns each)
    assert sum(r["n_turns"] for r in rates.values()) == 4 * 2
    assert all(r["rate"] == 0.0 and r["n_with_label"] == 0 for r in rates.values())
    review = results["review"]
    assert (review["units_left_out"], review["rejected"], review["soft_rejected"]) == (2, 1, 1)
    with_them = _off_topic(review["including_rejected"]["behaviour_rates"])
    assert sum(r["n_turns"] for r in with_them.values()) == 6 * 2
    assert sum(r["n_with_label"] for r in with_them.values()) == 4
    assert max(r["rate"] for r in with_them.values()) > 0
    assert [r["n_items"] for r in results["agreement"] if r["label"] == "off_topic"] == [0]
    assert sorted(w["worker"] for w in results["annotators"]["workers"]) == sorted(
        study.pseudonyms(["w1", "w2", "w3", "w4"]))
    assert sum(w["rejected_units"] for w in results["quality"]["per_worker"]) == 2
    report = study.report()
    assert "Left out: 2 units (1 rejected, 1 soft-rejected)" in report


def test_signature_is_the_same_from_the_database_and_its_export(tmp_path, open_conf,
                                                               database_url):
    study = _study(tmp_path, open_conf, database_url, ["bot_a", "bot_b", "bot_a", "bot_b"])
    for worker, labels in (("w1", ["off_topic"]), ("w2", []), ("w3", ["repetitive"]),
                           ("w4", ["off_topic", "repetitive"])):
        study.submit(worker, labels)
    export = tmp_path / "subs.jsonl"
    done = cli("export", "--task", "t", "--format", "submissions", "--database-url",
               database_url, "--output", str(export))
    assert done.returncode == 0, done.stderr
    from_db = _analyze(tmp_path, database_url)
    from_file = _analyze(tmp_path, database_url, "--from", str(export), "--buckets",
                         str(BUCKETS))
    for key in ("data_sha256", "buckets_sha256", "behaviours_sha256", "submissions",
                "answer_rows"):
        assert from_db["signature"][key] == from_file["signature"][key], key
    assert from_db["behaviour_rates"] == from_file["behaviour_rates"]
    assert from_db["differences"] == from_file["differences"]


def test_an_odd_stored_row_never_stops_the_analysis(tmp_path, open_conf, database_url):
    # a bot name and a label that matplotlib would read as mathtext, and one that is not valid
    study = _study(tmp_path, open_conf, database_url, ["$x^2$ bot", r"bot $\frac{$", "b", "b"])
    for worker in ("w1", "w2", "w3", "w4"):
        study.submit(worker, ["off_topic"])
    with study.served.db.session() as session:  # stored before integers were bounded
        first = session.scalars(select(Submission).order_by(Submission.id)).first()
        first.timings = {**first.timings, "client": {"steps": [
            {"dialogue": "k", "bucket": "issues", "intervals": [[0, 10**400]]}],
            "duration_ms": 10**400}}
    results = _analyze(tmp_path, database_url)
    assert results["signature"]["submissions"] == 4
    assert set(_off_topic(results["behaviour_rates"])) == {"$x^2$ bot", r"bot $\frac{$", "b"}
    report = study.report()
    assert "$x^2$ bot" in report and r"bot $\frac{$" in report
    written = (tmp_path / "report.html").read_text()
    drawn = written[written.index("<svg"):written.index("</svg>")]
    assert "$x^2$ bot" in drawn and r"bot $\frac{$" in drawn  # as text, not mathtext
    # an export row of a shape no version stored: left out, named, the rest analysed
    export = tmp_path / "subs.jsonl"
    done = cli("export", "--task", "t", "--format", "submissions", "--database-url",
               database_url, "--output", str(export))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in export.read_text().splitlines()]
    records[1]["answers"] = {"no such dialogue": {"issues": {"1": ["off_topic"]}}}
    records[2]["answers"] = {records[2]["dialogues"][0]["key"]: {"issues": {"x": []}}}
    export.write_text("".join(json.dumps(r) + "\n" for r in records))
    from_file = _analyze(tmp_path, database_url, "--from", str(export), "--buckets",
                         str(BUCKETS))
    assert from_file["signature"]["submissions"] == 2
    [note] = [n for n in from_file["notes"] if "could not be read" in n]
    assert note.startswith("2 submission(s)") and records[1]["unit_id"] in note

