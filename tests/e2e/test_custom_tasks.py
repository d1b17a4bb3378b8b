"""Small tasks written by the tests (tests/helpers.py `write_task`, the package's own buckets):
every renderer the demo does not reach, conditional questions, hostile dialogue text, and a
phone-sized screen."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from helpers import BUCKETS, dialogue, write_task
from playwright.sync_api import expect

from .worker_page import tree_choices

pytestmark = pytest.mark.browser

PAYLOAD = "<img src=x onerror=alert(1)>"

# Buckets only these tests use, next to the package's own: a `nondetails_button_flow` tree with
# `_dep_` conditions (speaker and answered) and a multiselect with speaker-specific options.
EXTRA_BUCKETS = {
    "e2e_facts": {
        "config": "nondetails_button_flow", "task_title": "facts", "indices": "all",
        "require": {"level": "turn"},
        "options": {
            "Does SPEAKER_X state a fact?": {
                "_dep_": {"speaker": "system"},
                "Yes, SPEAKER_X states a fact.": {
                    "Is the fact correct?": {"Correct.": {}, "Wrong.": {}, "Cannot tell.": {}},
                },
                "No facts.": {},
            },
            "Does SPEAKER_X ask something?": {  # X: the annotated turn's speaker, here the user
                "_dep_": {"speaker": "user"}, "Yes, a question.": {}, "No question.": {},
            },
            "Which tones fit?": {
                "_type_": {"checkbox": {}}, "Friendly.": {}, "Neutral.": {}, "Rude.": {},
            },
            "Why is it rude?": {
                "_dep_": {"answered": {"question": "Which tones fit?", "answer": "Rude."}},
                "Insults.": {}, "Dismissive.": {},
            },
        },
    },
    "e2e_labels": {
        "config": "multiselect", "task_title": "labels", "indices": "all",
        "question": "Which labels fit this turn?",
        "options": [
            {"value": "on_topic", "label": "On topic"},
            {"value": "asks", "label": "SPEAKER_X asks SPEAKER_Y", "speaker": "user"},
            {"value": "claims", "label": "SPEAKER_X claims something", "speaker": "system"},
        ],
    },
}


def _task(tmp_path, records: list[dict], **blueprint: str) -> tuple:
    """A one-group task (two annotators, so the run outlives the unit the test submits) with
    the package's buckets plus EXTRA_BUCKETS; returns (conf, overrides)."""
    for record in records:
        record["group_id"] = "g1"
    conf = write_task(tmp_path / "task", [{"data": records}], {"g1": 2})
    buckets = json.loads(BUCKETS.read_text())
    buckets["config"].update(EXTRA_BUCKETS)
    path = tmp_path / "task" / "buckets.json"
    path.write_text(json.dumps(buckets))
    (tmp_path / "task" / "instructions").mkdir()
    (tmp_path / "task" / "instructions" / "e2e_facts.md").write_text("Mark **facts**.\n")
    overrides = [f"mephisto.blueprint.annotations_config_path={path}",
                 *(f"mephisto.blueprint.{k}={v}" for k, v in blueprint.items())]
    return conf, overrides


def _pair(dialogue_id: str, tasks: list[str], turns: int = 4) -> dict:
    record = dialogue(dialogue_id, "g1", tasks, turns=turns)
    record["turns2"] = [[s, f"other {t}"] for s, t in record["turns"]]
    return record


def test_every_other_renderer_stores_what_was_clicked(tmp_path, serve, worker):
    tasks = ["flow", "turn_quality", "reply_scores", "dialogue_scores", "e2e_facts", "e2e_labels"]
    records = [dialogue("d1", "g1", tasks, turns=6),
               dialogue("d2", "g1", ["flow", "dialogue_scores"])]
    conf, overrides = _task(tmp_path, records)
    server = serve(conf, *overrides)
    unit = worker.open(server.links[0])
    assert len(worker.steps) == 8 and len(unit["dialogues"]) == 2
    assert {b["config"] for b in unit["buckets"].values()} == {
        "button_flow", "likert-5-turn", "foreach-5-select", "foreach-5-select-dialogue",
        "nondetails_button_flow", "multiselect"}
    worker.start()
    for number in range(1, len(worker.steps) + 1):
        worker.expect_step(number)
        if worker.steps[number - 1][1] == "e2e_facts":
            _names_follow_the_annotated_turn(worker, number)
        worker.answer_step(number)
        if worker.steps[number - 1][1] == "e2e_facts":
            _help_link_opens_instructions(worker)
        if number < len(worker.steps):
            worker.next()
    expect(worker.page.get_by_text("Dialogue 2 of 2", exact=True)).to_be_visible()
    worker.submit()
    assert server.stored_answers(worker.unit_id) == worker.expected
    worker.check_clean()

    # The unit's order is shuffled: find the dialogue with every bucket by its tasks.
    first = next(d for d in unit["dialogues"] if "e2e_facts" in d["annotation_tasks"])
    answers = worker.expected[first["key"]]
    speakers = [t["speaker"] for t in first["turns"]]
    for index, value in answers["e2e_facts"].items():  # conditional questions follow the speaker
        asked = "Does SPEAKER_X state a fact?" if speakers[int(index)] == "system" else \
            "Does SPEAKER_X ask something?"
        assert asked in value
        assert ("Why is it rude?" in value) == ("Rude." in value["Which tones fit?"])
    chosen = tree_choices(list(answers["e2e_facts"].values()))
    assert chosen["Is the fact correct?"] and chosen["Why is it rude?"]
    assert worker.reopened == 0  # no turn moved on before all its questions were seen
    labels = answers["e2e_labels"]  # each speaker's own option was offered and chosen
    assert all("claims" not in v for i, v in labels.items() if speakers[int(i)] == "user")
    assert all("asks" not in v for i, v in labels.items() if speakers[int(i)] == "system")
    assert any("asks" in v for v in labels.values()) and any("claims" in v for v in labels.values())


def _names_follow_the_annotated_turn(worker, number: int) -> None:
    """Indices `all`: on a user turn SPEAKER_X is the user, on a bot turn the bot."""
    key, _, bucket = worker.bucket_of(number)
    panel = worker.page.locator(f'[data-dialogue-key="{key}"]')
    first_user, first_bot = bucket["targets"][key][:2]  # turns 0 (user) and 1 (system)
    expect(worker.turn(panel, first_user).get_by_role(
        "group", name="Does User ask something?", exact=True)).to_be_visible()
    worker.turn(panel, first_bot).get_by_role("button", name="Answer turn 2").click()
    expect(worker.turn(panel, first_bot).get_by_role(
        "group", name="Does Bot state a fact?", exact=True)).to_be_visible()
    worker.turn(panel, first_user).get_by_role("button", name="Answer turn 1").click()
    worker.open_turn = first_user


def _help_link_opens_instructions(worker) -> None:
    help_links = worker.page.get_by_role("button", name="Help about this question")
    expect(help_links.first).to_be_visible()
    help_links.first.click()
    dialog = worker.page.get_by_role("dialog", name="Instructions: Facts")
    expect(dialog).to_contain_text("Mark facts.")
    worker.page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(help_links.first).to_be_focused()


def test_dialogue_text_is_shown_as_text_never_as_html(tmp_path, serve, worker):
    record = _pair("d1", ["preference", "overall_quality"])
    record["turns"][1][1] = PAYLOAD
    record["turns2"][1][1] = PAYLOAD
    record["bot_persona"] = [PAYLOAD]
    conf, overrides = _task(tmp_path, [record], include_persona="true")
    server = serve(conf, *overrides)
    worker.open(server.links[0])
    worker.start()
    for number in (1, 2):
        worker.expect_step(number)
        # the comparison shows turns, turns2 (side by side) and the persona; the other step
        # one dialogue and the persona (the unit's order decides which comes first)
        shown = 3 if worker.steps[number - 1][1] == "preference" else 2
        expect(worker.page.get_by_text(PAYLOAD, exact=True)).to_have_count(shown)
        assert worker.page.locator("img, [onerror]").count() == 0
        worker.answer_step(number)
        if number == 1:
            worker.next()
    worker.submit()
    assert server.stored_answers(worker.unit_id) == worker.expected
    worker.check_clean()
    worker.page.evaluate("alert('probe')")  # the listener that saw no dialog does see one
    assert worker.dialogs == ["probe"]


def test_phone_width_keeps_the_page_usable(tmp_path, serve, new_worker):
    record = _pair("d1", ["relevance", "issues", "overall_quality", "preference"], turns=6)
    conf, overrides = _task(tmp_path, [record])
    server = serve(conf, *overrides)
    worker = new_worker(viewport=(375, 740), mobile=True)
    worker.open(server.links[0])
    worker.start()
    page = worker.page
    for number in range(1, len(worker.steps) + 1):
        worker.expect_step(number)
        worker.answer_step(number)
        overflow = page.evaluate("""() => [document.documentElement.scrollWidth,
                                           document.body.scrollWidth, window.innerWidth]""")
        assert max(overflow[:2]) <= overflow[2], f"step {number} scrolls sideways: {overflow}"
        gate = worker.button("Submit" if number == len(worker.steps) else "Next")
        expect(gate).to_be_in_viewport()
        _stacked_on_narrow_screens(worker, number)
        if number < len(worker.steps):
            worker.next()
    worker.submit()
    assert server.stored_answers(worker.unit_id) == worker.expected
    worker.check_clean()


def _stacked_on_narrow_screens(worker, number: int) -> None:
    """Side panels and side-by-side dialogues sit below one another at phone width."""
    _, _, bucket = worker.bucket_of(number)
    regions = {"likert-5-dialogue": ("Dialogue", "Questions about the dialogue"),
               "comparative": ("Dialogue 1", "Dialogue 2")}.get(bucket["config"])
    if regions:
        upper, lower = (worker.page.get_by_role("region", name=n, exact=True).bounding_box()
                        for n in regions)
        assert lower["y"] >= upper["y"] + upper["height"]
        assert abs(lower["x"] - upper["x"]) < 2 and lower["width"] <= 375


def test_time_running_out_is_shown_and_the_server_refuses_late_answers(tmp_path, serve, worker):
    conf = write_task(tmp_path / "task", [{"data": [dialogue("d1", "g1", ["overall_quality"])]}],
                      {"g1": 2}, task={"assignment_duration_in_seconds": 2})
    server = serve(conf)
    worker.open(server.links[0])
    worker.start()
    expect(worker.page.get_by_text("Time is over", exact=True)).to_be_visible()
    alert = worker.page.get_by_role("alert")
    expect(alert).to_contain_text("The time for this unit is over. Your answers can no longer "
                                  "be changed or submitted")
    expect(worker.page.get_by_role("radio").first).to_be_disabled()  # the form is read-only
    expect(worker.button("Submit")).to_be_disabled()
    _wait_until_expired(server, worker)
    # The server refuses late answers on its own too (a page that kept its form open).
    headers = {"Authorization": f"Bearer {worker.token}"}
    went_back = "the time for this unit ran out and it went back to the pool"
    for method, path, body in (("PUT", "draft", {"answers": {}}),
                               ("POST", "submit", {"answers": {}})):
        late = httpx.request(method, f"{server.base}/api/units/{worker.unit_id}/{path}",
                             json=body, headers=headers)
        assert late.status_code == 409 and went_back in late.json()["error"], late.text
    assert server.submissions(worker.unit_id) == []
    worker.check_clean()


def _wait_until_expired(server, worker, timeout: float = 10) -> None:
    """The server's monitor returns overdue units to the pool about once a second."""
    deadline = time.monotonic() + timeout
    while httpx.get(f"{server.base}/api/units/{worker.unit_id}",
                    headers={"Authorization": f"Bearer {worker.token}"}).status_code != 409:
        assert time.monotonic() < deadline, "the unit never went back to the pool"
        time.sleep(0.1)
