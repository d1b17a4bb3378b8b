"""The worker page in Chromium on what a first day shows (issue 27): a text question and an
explanation stored as typed, a comparison's question in view on long dialogues, and a unit
whose time runs out turning read-only."""

from __future__ import annotations

import json

import pytest
from helpers import BUCKETS
from playwright.sync_api import expect

from .test_custom_tasks import _pair, _task, _wait_until_expired

pytestmark = pytest.mark.browser

FEEDBACK = {"config": "text", "question": "What did SPEAKER_X do well?", "min_chars": 10,
            "max_chars": 300, "require": {"level": "dialogue"}}


def _with_buckets(tmp_path, records: list[dict], extra: dict, *overrides: str) -> tuple:
    conf, base = _task(tmp_path, records)
    path = tmp_path / "task" / "buckets.json"
    buckets = json.loads(path.read_text())
    buckets["config"].update(extra)
    path.write_text(json.dumps(buckets))
    return conf, [*base, *overrides]


def test_a_text_question_is_required_and_stored_with_an_explained_choice(tmp_path, serve, worker):
    preference = json.loads(BUCKETS.read_text())["config"]["preference"]
    extra = {"feedback": FEEDBACK,
             "prefer": {**preference, "require": {"level": "dialogue"}, "explain": True,
                        "explain_min_chars": 5}}
    conf, overrides = _with_buckets(tmp_path, [_pair("d1", ["feedback", "prefer"])], extra)
    server = serve(conf, *overrides)
    unit = worker.open(server.links[0])
    key = unit["dialogues"][0]["key"]
    worker.start()
    page = worker.page
    typed = {"feedback": "  Kind, and it\nstayed on topic.  ", "prefer": "It listens."}
    for number, (_, bucket) in enumerate(worker.steps, start=1):
        worker.expect_step(number)
        gate = worker.button("Submit" if number == 2 else "Next")
        expect(gate).to_be_disabled()
        if bucket == "feedback":
            box = page.get_by_role("textbox", name="What did Bot do well?")
            box.fill("Kind")
            expect(page.get_by_text("answer 'What did Bot do well?' in at least 10 "
                                    "characters")).to_be_visible()
            expect(gate).to_be_disabled()
            box.fill(typed["feedback"])
        else:
            expect(page.get_by_text("Two dialogues to compare", exact=True)).to_be_visible()
            page.get_by_role("radio", name=preference["options"][1]).check()
            expect(page.get_by_text("explain your answer in at least 5 characters")).to_be_visible()
            expect(gate).to_be_disabled()
            page.get_by_role("textbox", name="Explain your answer").fill(typed["prefer"])
        expect(gate).to_be_enabled()
        if number == 1:
            worker.next()
    worker.submit()
    stored = server.stored_answers(worker.unit_id)[key]
    assert stored["feedback"] == {"dialogue": typed["feedback"]}  # as typed, spaces and all
    assert stored["prefer"] == {"dialogue": preference["options"][1],
                                "explanation": {"dialogue": typed["prefer"]}}
    worker.check_clean()


def test_a_comparison_question_stays_in_view_on_long_dialogues(tmp_path, serve, new_worker):
    records = [_pair(f"d{n}", ["preference"], turns=40) for n in (1, 2)]
    conf, overrides = _task(tmp_path, records)
    server = serve(conf, *overrides)
    for viewport, mobile in (((1280, 800), False), ((375, 740), True)):
        worker = new_worker(viewport=viewport, mobile=mobile)
        page = worker.page
        worker.open(server.links[0] if not mobile else server.links[1])
        worker.start()
        question = page.get_by_role("region", name="Comparison question")
        for number in (1, 2):
            worker.expect_step(number)
            context = f"Two dialogues to compare (item {number} of 2)"
            expect(page.get_by_text(context)).to_be_visible()
            expect(question).to_be_in_viewport()
            page.mouse.wheel(0, 4000)  # down the long dialogues: the question stays in view
            page.wait_for_function("() => window.scrollY > 1000")
            expect(question).to_be_in_viewport()
            side = "(above)" if mobile else "(left)"  # stacked dialogues on a phone
            choice = question.get_by_role("radio").first
            expect(choice).to_have_accessible_name(f"Dialogue 1 {side}")
            choice.check()
            if number == 1:
                worker.next()
        worker.submit()
        worker.check_clean()


def test_an_expired_unit_turns_read_only_and_a_new_one_is_taken_on_request(tmp_path, serve,
                                                                           worker):
    conf, overrides = _task(tmp_path, [_pair("d1", ["overall_quality"])])
    server = serve(conf, *overrides, "mephisto.task.assignment_duration_in_seconds=6")
    worker.open(server.links[0])
    worker.start()
    page = worker.page
    page.get_by_role("radio", name="4").first.check()
    alert = page.get_by_role("alert").filter(has_text="The time for this unit is over.")
    expect(alert).to_be_visible(timeout=10_000)
    expect(page.get_by_role("radio", name="5").first).to_be_disabled()
    expect(worker.button("Submit")).to_be_disabled()
    # A reload gets a unit afresh (the first went back to the pool): the page says so first.
    _wait_until_expired(server, worker)  # the launcher returns overdue units once a second
    page.reload()
    expect(page.get_by_role("heading", name="The time for your previous unit ran out")) \
        .to_be_visible()
    page.get_by_role("button", name="Start the new unit").click()
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    # Once that one runs out too, the worker asks for another with the button.
    expect(alert).to_be_visible(timeout=10_000)
    # (until the server returns it to the pool, the page asks again a moment later)
    with page.expect_response(lambda r: r.url.endswith("/api/claim")):
        alert.get_by_role("button", name="Take a new unit").click()
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    worker.check_clean()
