"""The original project's run confs, each served by `welcome.py` and answered in Chromium: what
the server stores equals what the worker clicked."""

from __future__ import annotations

import pytest

from .worker_page import answers_of, training_answers, tree_choices, tree_depth

pytestmark = pytest.mark.browser

# Confs with a screening file start with it: the worker passes the training (answered as the
# file expects), then does the real work in the same visit.
SCREENING = {"consistency": "consistency.json", "transitions": "transitions.json",
             "knowledge": "knowledge.json"}
CONFS = {
    "consistency": (),
    "transitions": (),
    "knowledge": (),
    "likert": (),
    "likert_turn": (),
    "comparative": (),
}


def _values(expected: dict) -> list:
    return [v for buckets in expected.values() for targets in buckets.values()
            for v in targets.values()]


@pytest.mark.parametrize("name", list(CONFS))
def test_fixture_conf_stores_what_was_clicked(name, cep_fixtures, serve, worker):
    conf = cep_fixtures / "hydra_configs" / "conf" / f"{name}.yaml"
    server = serve(conf, f"task_dir={cep_fixtures}", *CONFS[name])
    unit = worker.open(server.links[0])
    assert unit["kind"] == ("screening" if name in SCREENING else "annotation")
    if name in SCREENING:
        outcome = worker.train(training_answers(cep_fixtures, SCREENING[name]))
        assert outcome["screening"] == {"passed": True, "message": None}
        assert worker.continue_to_task()["kind"] == "annotation"
    worker.complete()

    assert server.stored_answers(worker.unit_id) == worker.expected
    values = _values(worker.expected)
    assert len(values) >= 8
    if name == "knowledge":  # the checkbox left empty, and answers three questions deep
        assert any(tree_depth(v) == 0 for v in values)
        assert max(tree_depth(v) for v in values) == 3
    elif name == "consistency":  # none, one and several labels
        assert {len(v) for v in values} >= {0, 1, 3}
    elif name in ("likert", "likert_turn"):
        assert worker.keys_used >= 2
        assert {r for v in values for r in v.values()} == {1, 2, 3, 4, 5}
    elif name == "transitions":  # every answer of every question chosen somewhere
        options = worker.unit["buckets"]["transitions"]["options"]
        assert tree_choices(values) == {q: set(answers_of(a)) for q, a in options.items()}
    else:  # comparative: every option chosen somewhere
        assert set(values) == set(worker.unit["buckets"]["grammatical_comparative"]["options"])
