"""Screening and gold served over the worker API, on the fixture conf `consistency` (its
screening file and gold file), against SQLite and PostgreSQL."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from helpers import app_client
from quality_helpers import pool_of
from sqlalchemy import func, select, update

from collection_and_annotations.engine.allocation import expire_overdue
from collection_and_annotations.engine.runs import end_run
from collection_and_annotations.export.submissions import whole_submissions
from collection_and_annotations.providers.local import link_signature
from collection_and_annotations.quality import qualifications
from collection_and_annotations.quality.files import read_gold
from collection_and_annotations.quality.pools import NOT_ELIGIBLE
from collection_and_annotations.quality.translation import nest
from collection_and_annotations.server.app import create_app
from collection_and_annotations.storage.models import Unit, UnitScore, utcnow

BUCKET = "consistency_label"


@pytest.fixture
def start(cep_fixtures, open_conf, database_url):
    """Open the unchanged fixture conf (plus test overrides); returns (served, client)."""
    conf = cep_fixtures / "hydra_configs" / "conf" / "consistency.yaml"

    def _start(*overrides: str):
        served = open_conf(str(conf), database_url, f"task_dir={cep_fixtures}", *overrides)
        return served, app_client(create_app(served))
    return _start


def _buckets(served):
    return served.blueprint.buckets


def _expected_answers(served, source):
    """What a perfect worker submits for a dialogue: each scored turn as expected."""
    from collection_and_annotations.quality.files import scored_turns
    answers = {}
    for turn in scored_turns(source, _buckets(served)):
        answers[str(turn.index)] = nest(_buckets(served)[BUCKET], turn.expected.alternatives[0])
    for index in range(1, len(source["turns"]), 2):
        answers.setdefault(str(index), [])
    return {BUCKET: answers}


def _wrong_answers(served, source, count):
    """The perfect answers with `count` scored turns wrong."""
    answers = _expected_answers(served, source)
    turns = answers[BUCKET]
    for key in list(turns)[:count]:
        turns[key] = [] if turns[key] else ["redundant"]
    return answers


class Worker:
    def __init__(self, client, name, assignment="a1"):
        self.client, self.name, self.assignment = client, name, assignment
        self.secret = client.app.state.served.secret
        self.bodies: list[str] = []  # every response body this worker received
        self.headers = None

    def record(self, reply):
        self.bodies.append(reply.text)
        return reply

    def claim(self):
        reply = self.record(self.client.post("/api/claim", json={
            "worker_id": self.name, "assignment_id": self.assignment,
            "sig": link_signature(self.secret, self.name, self.assignment)}))
        body = reply.json()
        if reply.status_code == 200:
            self.headers = {"Authorization": f"Bearer {body['token']}"}
        return reply

    def unit(self, unit_id):
        return self.record(self.client.get(f"/api/units/{unit_id}", headers=self.headers))

    def check(self, unit_id, key, answers):
        return self.record(self.client.post(f"/api/units/{unit_id}/dialogues/{key}/check",
                                            json={"answers": answers}, headers=self.headers))

    def submit(self, unit_id, answers):
        return self.record(self.client.post(f"/api/units/{unit_id}/submit",
                                            json={"answers": answers, "timings": {}},
                                            headers=self.headers))


def _do_screening(served, worker, mistakes_on_graded=0):
    claimed = worker.claim().json()
    unit_id = claimed["unit_id"]
    unit = worker.unit(unit_id).json()
    assert unit["kind"] == "screening"
    training = served.blueprint.quality.training
    assert unit["screening"]["dialogues"] == len(training) == 3
    answers = {}
    for position, shown in enumerate(unit["dialogues"]):
        source = training[position].source
        wrong = mistakes_on_graded if position == 2 else 1
        given = _wrong_answers(served, source, wrong)
        first = worker.check(unit_id, shown["key"], given).json()
        assert first["first_check"] and first["mistakes"] == wrong
        assert len(first["wrong"]) == wrong
        if wrong:
            assert first["wrong"][0]["explanation"]
            # the correction loop: refused to finish until fixed, then fixed
            refused = worker.submit(unit_id, {**answers, shown["key"]: given})
            assert refused.status_code in (422,)
        fixed = _expected_answers(served, source)
        again = worker.check(unit_id, shown["key"], fixed).json()
        assert again["corrected"] and again["counted_mistakes"] == wrong
        answers[shown["key"]] = fixed
    return unit_id, worker.submit(unit_id, answers)


def test_screening_pass_then_real_work_in_the_same_visit(start):
    served, client = start()
    worker = Worker(client, "good")
    unit_id, reply = _do_screening(served, worker, mistakes_on_graded=2)  # pass_criteria 2
    assert reply.status_code == 200 and reply.json()["screening"]["passed"] is True
    again = worker.claim().json()  # same link: real work follows
    assert again["unit_id"] != unit_id
    assert worker.unit(again["unit_id"]).json()["kind"] == "annotation"
    with served.db.transaction() as connection:
        assert [g.qualification for g in qualifications.grants(
            connection, provider_worker_id="good")] == ["consistency_screen"]
    # the training submission exports like any other (its dialogues have no group_id)
    exported = [r for r, _ in whole_submissions(served.db, served.task_name)]
    assert [r["unit_id"] for r in exported] == [unit_id]
    assert exported[0]["dialogues"][0]["group_id"] is None


def test_screening_fail_blocks_for_good_across_runs(start):
    served, client = start()
    worker = Worker(client, "bad")
    _, reply = _do_screening(served, worker, mistakes_on_graded=3)
    assert reply.json()["screening"]["passed"] is False
    refused = worker.claim()
    assert refused.status_code == 403 and "not eligible" in refused.json()["error"]
    end_run(served.db, served.run_id, "stopped")
    _, client2 = start()  # a new run of the task: still no second attempt
    refused = Worker(client2, "bad", "a2").claim()
    assert refused.status_code == 403 and "not eligible" in refused.json()["error"]


def test_check_refuses_other_units_and_unknown_dialogues(start):
    served, client = start("mephisto.blueprint.use_screening_task=false")
    worker = Worker(client, "w")
    unit_id = worker.claim().json()["unit_id"]
    key = worker.unit(unit_id).json()["dialogues"][0]["key"]
    assert worker.check(unit_id, key, {}).status_code == 404


def test_screening_cap_gives_a_clear_page(start):
    served, client = start("mephisto.blueprint.max_screening_units=1")
    assert Worker(client, "first").claim().status_code == 200
    full = Worker(client, "second").claim()
    assert full.status_code == 503 and "training task is full" in full.json()["error"]


def _pass_screening(served, client, name):
    worker = Worker(client, name)
    worker.claim()  # creates the worker row
    with served.db.transaction() as connection:
        qualifications.grant(connection, qualifications.worker_id(connection, "local", name),
                             "consistency_screen")
    return worker


def _finish(served, worker, unit_json, perfect_golds=True, wrong_golds=0):
    """Submit a unit: real units with empty labels, gold units as expected (or wrong)."""
    answers = {}
    golds = {json.dumps(g.source["turns"][0]): g.source
             for g in served.blueprint.quality.gold_dialogues}
    for shown in unit_json["dialogues"]:
        source = golds.get(json.dumps([shown["turns"][0]["speaker"],
                                       shown["turns"][0]["text"]]))
        if source is not None and len(source["turns"]) == len(shown["turns"]):
            answers[shown["key"]] = _wrong_answers(served, source, wrong_golds)
        else:
            answers[shown["key"]] = {BUCKET: {str(i): [] for i in range(1, len(shown["turns"]),
                                                                       2)}}
    return worker.submit(unit_json["unit_id"], answers)


def test_golds_on_schedule_and_disqualification(start):
    served, client = start("mephisto.blueprint.use_golds=true", "mephisto.blueprint.min_golds=1",
                           "mephisto.blueprint.gold_every_n_units=2",
                           "mephisto.blueprint.max_incorrect_golds=1",
                           "mephisto.blueprint.allowed_gold_mistakes=0")
    worker = _pass_screening(served, client, "gw")
    pools = []
    for n in range(6):
        worker.assignment = f"visit{n}"
        reply = worker.claim()
        if reply.status_code != 200:
            pools.append(reply.status_code)
            break
        unit_id = reply.json()["unit_id"]
        unit_json = worker.unit(unit_id).json()
        assert unit_json["kind"] == "annotation"  # gold or not, the same kind
        pools.append(pool_of(served, unit_id))
        assert _finish(served, worker, unit_json, wrong_golds=2).status_code == 200
    # min_golds=1 first; then one gold after every 2 real units; 2 failed golds > 1: blocked
    assert pools[:4] == ["gold", "main", "main", "gold"]
    assert pools[4] == 403
    with served.db.read() as session:
        scores = session.scalars(select(UnitScore).where(UnitScore.pool == "gold")).all()
    assert [s.passed for s in scores] == [False, False] and scores[0].mistakes == 2


def _expire(served, unit_id):
    """The unit's time runs out and the launcher's sweep gives it back to the pool."""
    with served.db.session() as session:
        session.execute(update(Unit).where(Unit.public_id == unit_id)
                        .values(deadline=utcnow() - timedelta(seconds=1)))
        assert expire_overdue(session, served.run_id) == 1


def _check_first_dialogue(worker, unit_id):
    """Check the first training dialogue (all turns unanswered): its feedback is shown."""
    key = worker.unit(unit_id).json()["dialogues"][0]["key"]
    assert worker.check(unit_id, key, {}).json()["first_check"] is True


def test_a_training_unit_served_again_is_graded_on_its_new_worker_alone(start):
    """The first worker checks the graded dialogue with 3 mistakes and lets the unit expire;
    its next worker, who makes none, passes (their first check is their own)."""
    served, client = start("mephisto.blueprint.max_screening_units=1")
    first = Worker(client, "first")
    unit_id = first.claim().json()["unit_id"]
    graded = first.unit(unit_id).json()["dialogues"][2]["key"]
    wrong = _wrong_answers(served, served.blueprint.quality.training[2].source, 3)
    assert first.check(unit_id, graded, wrong).json()["mistakes"] == 3
    _expire(served, unit_id)
    again, reply = _do_screening(served, Worker(client, "second"), mistakes_on_graded=0)
    assert again == unit_id  # the only training unit, served again
    assert reply.json()["screening"]["passed"] is True
    with served.db.read() as session:  # each try kept as its worker's
        tries = session.execute(select(UnitScore.attempt, UnitScore.passed)
                                .order_by(UnitScore.attempt)).all()
    assert tries == [(0, None), (1, True)]


@pytest.mark.parametrize("overrides", [(), ("mephisto.task.max_num_concurrent_units=100",)],
                         ids=["claim", "locked claim"])
def test_a_second_visit_during_training_goes_back_to_the_training_unit(start, overrides):
    """The fixture conf allows 3 units open at once. A limit on the whole task sends every
    claim to the locked transaction (on PostgreSQL the others are optimistic first)."""
    served, client = start(*overrides)
    worker = Worker(client, "twice")
    unit_id = worker.claim().json()["unit_id"]
    _check_first_dialogue(worker, unit_id)
    worker.assignment = "a2"
    again = worker.claim()
    assert again.status_code == 200 and again.json()["unit_id"] == unit_id
    # Visits that claim at once all get one training unit.
    app = client.app

    def visit(n):
        return Worker(app_client(app), "racer", f"visit{n}").claim().json()["unit_id"]

    with ThreadPoolExecutor(6) as pool:
        assert len(set(pool.map(visit, range(6)))) == 1
    with served.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Unit).where(
            Unit.pool == "screening", Unit.status == "assigned")) == 2


def test_no_second_training_attempt_after_feedback(start):
    """A training unit whose feedback was shown is the worker's attempt, even when it
    expires; one that expired before any check is not."""
    served, client = start()
    worker = Worker(client, "quitter")
    unit_id = worker.claim().json()["unit_id"]
    _check_first_dialogue(worker, unit_id)
    _expire(served, unit_id)
    worker.assignment = "a2"
    refused = worker.claim()
    assert refused.status_code == 403
    assert "already had your attempt at the training" in refused.json()["error"]
    idle = Worker(client, "idle")
    _expire(served, idle.claim().json()["unit_id"])
    idle.assignment = "a2"
    assert idle.claim().status_code == 200


def test_screening_attempts_allows_more_tries(start):
    served, client = start("mephisto.blueprint.screening_attempts=2")
    worker = Worker(client, "persistent")
    first, reply = _do_screening(served, worker, mistakes_on_graded=3)  # pass_criteria 2
    outcome = reply.json()["screening"]
    assert outcome["passed"] is False and "try again 1 more time" in outcome["message"]
    worker.assignment = "a2"
    second, reply = _do_screening(served, worker, mistakes_on_graded=3)
    assert second != first
    assert reply.json()["screening"]["message"] == NOT_ELIGIBLE
    worker.assignment = "a3"
    assert worker.claim().status_code == 403


def test_a_second_visit_with_a_gold_unit_open_goes_back_to_it(start):
    served, client = start("mephisto.blueprint.use_screening_task=false",
                           "mephisto.blueprint.use_golds=true", "mephisto.blueprint.min_golds=1")
    worker = Worker(client, "golden")
    gold = worker.claim().json()["unit_id"]
    assert pool_of(served, gold) == "gold"
    worker.assignment = "a2"
    assert worker.claim().json()["unit_id"] == gold
    _finish(served, worker, worker.unit(gold).json())
    worker.assignment = "a3"
    assert pool_of(served, worker.claim().json()["unit_id"]) == "main"


def test_gold_files_parse(cep_fixtures):
    from collection_and_annotations.blueprints.static_annotation.buckets import load_buckets
    buckets = load_buckets(cep_fixtures / "task_config" / "annotation_buckets.json")
    assert len(read_gold(cep_fixtures / "task_config" / "gold_data" / "consistency.jsonl",
                         buckets)) == 2


def _secrets_of(dialogue) -> list[str]:
    """Strings only the answer key holds: explanations, the file's ids, flat answer keys."""
    found = [t[3] for t in dialogue.source["turns"] if len(t) > 3 and t[3]]
    return found + [dialogue.name, "_disjunction", f"{BUCKET}_labels", "pass_criteria"]


def test_nothing_leaks_before_its_submit(start):
    """Every response body of a whole screening unit and a whole gold unit: no explanation or
    answer-key string of a dialogue appears before that dialogue was submitted (checked)."""
    served, client = start("mephisto.blueprint.use_golds=true", "mephisto.blueprint.min_golds=1")
    training = served.blueprint.quality.training
    worker = Worker(client, "leaky")
    unit_id = worker.claim().json()["unit_id"]
    unit = worker.unit(unit_id).json()
    answers = {}
    for position, shown in enumerate(unit["dialogues"]):
        before = "".join(worker.bodies)
        revealed = {x for earlier in training[:position] for x in _secrets_of(earlier)}
        for secret in set(_secrets_of(training[position])) - revealed:
            assert secret not in before, (position, secret[:40])
        assert "gold" not in before.lower() and "onboarding" not in before.lower()
        given = _wrong_answers(served, training[position].source, 1)
        feedback = worker.check(unit_id, shown["key"], given).json()
        assert feedback["wrong"][0]["explanation"] in worker.bodies[-1]  # revealed now
        answers[shown["key"]] = _expected_answers(served, training[position].source)
        worker.check(unit_id, shown["key"], answers[shown["key"]])
    assert worker.submit(unit_id, answers).json()["screening"]["passed"] is True
    worker.bodies.clear()
    worker.assignment = "after-training"
    gold_id = worker.claim().json()["unit_id"]
    gold_unit = worker.unit(gold_id).json()
    _finish(served, worker, gold_unit, wrong_golds=1)
    text = "".join(worker.bodies)
    for gold in served.blueprint.quality.gold_dialogues:
        for secret in _secrets_of(gold):
            assert secret not in text, secret[:40]
    assert "gold" not in text.lower() and "screening" not in text.lower()
    # the gold unit looks like real work: same kind, same fields, same submit answer
    assert gold_unit["kind"] == "annotation" and "screening" not in gold_unit
    assert set(json.loads(worker.bodies[-1])) == {"status", "completion_code"}
