"""The original study design kept: per-unit order and sides, the chosen dialogue of a
comparison, per-step timings in exports, display names per speaker."""

from __future__ import annotations

import random

import pytest
from helpers import app_client, dialogue, write_task
from sqlalchemy import select, update

from collection_and_annotations.blueprints.static_annotation.client_timings import step_seconds
from collection_and_annotations.blueprints.static_annotation.layout import (
    make_layout,
    shown_dialogues,
)
from collection_and_annotations.export.submissions import (
    ITEM_FIELDS,
    answered_items,
    whole_submissions,
)
from collection_and_annotations.server.app import create_app
from collection_and_annotations.storage.models import Unit

PREFERENCE = ["Dialogue 1 (left)", "Dialogue 2 (right)", "No real difference"]
TASKS = ["relevance", "issues", "overall_quality"]


def _pair(dialogue_id: str, group: str) -> dict:
    record = dialogue(dialogue_id, group, ["preference"])
    record["turns2"] = [["user", "hello"], ["system", f"second side of {dialogue_id}"]]
    return record


def _open(tmp_path, open_conf, database_url, lines, units, *overrides):
    served = open_conf(str(write_task(tmp_path, lines, units)), database_url, *overrides)
    return served, app_client(create_app(served))


def _unit(client, worker, assignment="a1"):
    claimed = client.post("/api/claim", json={"worker_id": worker,
                                              "assignment_id": assignment}).json()
    headers = {"Authorization": f"Bearer {claimed['token']}"}
    unit = client.get(f"/api/units/{claimed['unit_id']}", headers=headers).json()
    return claimed["unit_id"], headers, unit


def test_nothing_to_shuffle_stores_no_layout():
    single = [dialogue("d1", "g1", ["issues"])]
    assert make_layout(single, random.Random(1)) is None
    assert make_layout([dialogue("d1", "g1", TASKS)], random.Random(1)) is not None
    assert make_layout([_pair("p1", "g1")], random.Random(1)) is not None


def test_layout_is_reproducible_and_varies_between_units():
    sources = [dialogue(f"d{i}", "g", TASKS) for i in range(3)]
    layouts = [make_layout(sources, random.Random(f"7:key:{n}")) for n in range(40)]
    assert layouts[0] == make_layout(sources, random.Random("7:key:0"))
    orders = {tuple(e["index"] for e in lay["dialogues"]) for lay in layouts}
    tasks = {tuple(e["tasks"]) for lay in layouts for e in lay["dialogues"]}
    assert len(orders) > 1 and len(tasks) > 1
    for lay in layouts:
        assert sorted(e["index"] for e in lay["dialogues"]) == [0, 1, 2]
        assert all(sorted(e["tasks"]) == sorted(TASKS) for e in lay["dialogues"])


def test_a_layout_that_does_not_fit_falls_back_to_the_data_order():
    data = {"dialogues": [{"key": f"k{i}", "source": dialogue(f"d{i}", "g", TASKS)}
                          for i in range(2)]}
    for bad in (None, {}, {"dialogues": [{"index": 0}]}, {"dialogues": "x"},
                {"dialogues": [{"index": 1, "tasks": ["nope"]}, {"index": 0}]}):
        shown = shown_dialogues(data, bad)
        assert [d.item["key"] for d in shown] in (["k0", "k1"], ["k1", "k0"])
        assert all(d.tasks == TASKS for d in shown)


def test_units_get_their_own_order_served_as_laid_out(tmp_path, open_conf, database_url):
    line = {"data": [dialogue("d1", "g1", TASKS), dialogue("d2", "g2", ["issues", "flow"])]}
    served, client = _open(tmp_path, open_conf, database_url, [line], {"g1": 12, "g2": 12},
                           "mephisto.blueprint.random_seed=5")
    seen = set()
    for n in range(12):
        _, _, unit = _unit(client, f"w{n}")
        seen.add(tuple((d["key"], *d["annotation_tasks"]) for d in unit["dialogues"]))
        assert sorted(len(d["annotation_tasks"]) for d in unit["dialogues"]) == [2, 3]
    assert len(seen) > 1, "every unit showed the same order"
    with served.db.read() as session:
        layouts = session.scalars(select(Unit.layout)).all()
    assert all(lay and len(lay["dialogues"]) == 2 for lay in layouts)


def test_comparison_sides_are_randomised_and_the_choice_names_the_dialogue(
    tmp_path, open_conf, database_url
):
    served, client = _open(tmp_path, open_conf, database_url,
                           [{"data": [_pair("p1", "g1")]}], {"g1": 16},
                           "mephisto.blueprint.random_seed=3")
    lefts = set()
    for n in range(16):
        unit_id, headers, unit = _unit(client, f"w{n}")
        (shown,) = unit["dialogues"]
        swapped = shown["turns"][1]["text"] == "second side of p1"
        lefts.add(swapped)
        answers = {shown["key"]: {"preference": {"dialogue": PREFERENCE[0]}}}
        reply = client.post(f"/api/units/{unit_id}/submit", headers=headers,
                            json={"answers": answers, "timings": {}})
        assert reply.status_code == 200, reply.json()
        # an identical retry is recognised; a different choice is not
        again = client.post(f"/api/units/{unit_id}/submit", headers=headers,
                            json={"answers": answers})
        assert again.status_code == 200
        other = {shown["key"]: {"preference": {"dialogue": PREFERENCE[1]}}}
        assert client.post(f"/api/units/{unit_id}/submit", headers=headers,
                           json={"answers": other}).status_code == 409
    assert lefts == {True, False}, "the left side was never (or always) swapped"

    records = list(whole_submissions(served.db, "t"))
    for record, buckets in records:
        (stored,) = [v["preference"]["dialogue"] for v in record["answers"].values()]
        left = record["layout"]["dialogues"][0]["left"]
        assert stored == {"option": PREFERENCE[0], "side": "left", "dialogue": left}
        (row,) = answered_items(record, buckets)
        assert (row["answer"], row["left"], row["chosen"]) == (PREFERENCE[0], left, left)
        assert set(row) == set(ITEM_FIELDS)


def test_no_preference_and_right_side(tmp_path, open_conf, database_url):
    served, client = _open(tmp_path, open_conf, database_url,
                           [{"data": [_pair("p1", "g1")]}], {"g1": 2})
    for n, option in enumerate(PREFERENCE[1:]):
        unit_id, headers, unit = _unit(client, f"w{n}")
        key = unit["dialogues"][0]["key"]
        client.post(f"/api/units/{unit_id}/submit", headers=headers,
                    json={"answers": {key: {"preference": {"dialogue": option}}}})
    stored = []
    for record, _ in whole_submissions(served.db, "t"):
        left = record["layout"]["dialogues"][0]["left"]
        right = "turns2" if left == "turns" else "turns"
        stored.append((record["answers"], right))
    (first, right), (second, _) = stored
    assert next(iter(first.values()))["preference"]["dialogue"] == {
        "option": PREFERENCE[1], "side": "right", "dialogue": right}
    assert next(iter(second.values()))["preference"]["dialogue"] == {
        "option": PREFERENCE[2], "side": None, "dialogue": None}


def test_export_rows_carry_positions_and_step_time(tmp_path, open_conf, database_url):
    line = {"data": [dialogue("d1", "g1", ["issues", "overall_quality"])]}
    served, client = _open(tmp_path, open_conf, database_url, [line], {"g1": 1})
    unit_id, headers, unit = _unit(client, "w1")
    (shown,) = unit["dialogues"]
    key = shown["key"]
    timings = {"duration_ms": 9000, "steps": [
        {"dialogue": key, "bucket": "issues", "intervals": [[1000, 3000], [5000, 5500]]},
        {"dialogue": key, "bucket": "overall_quality", "intervals": [[3000, "x"], [9, 1]]},
        {"dialogue": 5, "bucket": "issues", "intervals": [[0, 10**9]]},
        "junk",
    ]}
    answers = {key: {"issues": {"1": ["off_topic"]},
                     "overall_quality": {"dialogue": {"Overall": 4}}}}
    reply = client.post(f"/api/units/{unit_id}/submit", headers=headers,
                        json={"answers": answers, "timings": timings})
    assert reply.status_code == 200, reply.json()
    ((record, buckets),) = whole_submissions(served.db, "t")
    assert record["timings"]["client"] == timings  # stored as given
    rows = {r["bucket"]: r for r in answered_items(record, buckets)}
    order = shown["annotation_tasks"]
    for name, row in rows.items():
        assert row["dialogue_position"] == 1
        assert row["bucket_position"] == order.index(name) + 1
        assert row["left"] is None and row["chosen"] is None
    assert rows["issues"]["step_seconds"] == 2.5
    assert rows["overall_quality"]["step_seconds"] is None  # only malformed intervals


@pytest.mark.parametrize("client", [None, [], {"steps": {}}, {"steps": [None, {"intervals": 1}]},
                                    {"steps": [{"dialogue": "k", "bucket": "b",
                                                "intervals": [[float("nan"), 1], [True, 2]]}]}])
def test_malformed_client_timings_are_skipped(client):
    assert step_seconds(client) == {}


def test_speaker_names_are_per_speaker(tmp_path, open_conf, database_url):
    line = {"data": [dialogue("d1", "g1", ["relevance"])]}
    _, client = _open(tmp_path, open_conf, database_url, [line], {"g1": 1},
                      "mephisto.blueprint.speaker_names.SPEAKER_Y=Human")
    _, _, unit = _unit(client, "w1")
    assert unit["speaker_names"] == {"system": "Bot", "user": "Human"}
    assert unit["kind"] == "annotation"


def test_refusals_number_dialogues_as_the_unit_shows_them(tmp_path, database_url, open_conf):
    lines = [{"data": [dialogue("d1", "g1", ["overall_quality"]),
                       dialogue("d2", "g2", ["overall_quality"])]}]
    served, client = _open(tmp_path, open_conf, database_url, lines, {"g1": 1, "g2": 1})
    reversed_order = {"dialogues": [{"index": 1, "tasks": ["overall_quality"]},
                                    {"index": 0, "tasks": ["overall_quality"]}]}
    with served.db.session() as session:
        session.execute(update(Unit).values(layout=reversed_order))
    unit_id, headers, unit = _unit(client, "w1")
    first, second = (d["key"] for d in unit["dialogues"])
    answers = {first: {"overall_quality": {"dialogue": {"Overall": 4}}}}  # the second is missing
    reply = client.post(f"/api/units/{unit_id}/submit", json={"answers": answers},
                        headers=headers)
    assert reply.status_code == 422
    (problem,) = reply.json()["problems"]
    assert problem["dialogue"] == second and problem["where"].startswith("dialogue 2")
    assert reply.json()["error"].startswith("dialogue 2, 'overall_quality': missing")
