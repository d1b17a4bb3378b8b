"""The built-in demo (`conf=demo`) in Chromium: every unit of one worker, resuming after a reload,
and what the page and the server do with incomplete answers."""

from __future__ import annotations

import copy
import re

import httpx
import pytest
from playwright.sync_api import expect

from .worker_page import tree_choices

pytestmark = pytest.mark.browser


def test_demo_units_store_what_was_clicked(serve, worker):
    server = serve("demo")
    configs = set()
    for assignment in "1234":  # the demo's four groups, one unit each for this worker
        unit = worker.open(server.link("worker_1", assignment))
        if assignment == "1":
            assert server.links[0] == server.link("worker_1", "1")
            _instructions_dialog_opens_and_closes(worker)
        worker.complete()
        assert server.stored_answers(worker.unit_id) == worker.expected
        configs |= {b["config"] for b in unit["buckets"].values()}
        relevance = [v for d in worker.expected.values() for v in d.get("relevance", {}).values()]
        if relevance:  # nested questions and checkboxes were answered
            chosen = tree_choices(relevance)
            assert chosen["Where does it drift?"]
            assert chosen["Which problems does the reply have?"]

    assert configs == {"nondetails_nonhelp_button_flow", "multiselect", "likert-5-dialogue",
                       "comparative"}
    worker.open(server.link("worker_1", "1"))  # a submitted link shows the completion page
    expect(worker.page.get_by_role("heading", name="Thank you!")).to_be_visible()
    worker.check_clean()


def _instructions_dialog_opens_and_closes(worker) -> None:
    worker.start()  # step 1 is `relevance`, a nondetails_nonhelp_button_flow: no Help links
    expect(worker.page.get_by_role("button", name="Help about this question")).to_have_count(0)
    opener = worker.button("Instructions")
    opener.click()
    dialog = worker.page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_have_accessible_name(re.compile("^Instructions: "))
    worker.page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(opener).to_be_focused()
    worker.back()


def test_reload_restores_answers_and_step(serve, worker):
    server = serve("demo")
    worker.open(server.links[0])
    assert [name for _, name in worker.steps] == ["relevance", "issues", "overall_quality"]
    worker.start()
    worker.answer_step(1)
    worker.next()
    worker.expect_step(2)
    key, name, bucket = worker.bucket_of(2)
    first, *rest = bucket["targets"][key]
    worker.answer_step(2, [first])
    assert worker.expected[key][name][str(first)], "the partial answer checks a label"
    worker.wait_saved()

    worker.open()  # reload the same link
    worker.expect_step(2, focused=False)
    worker.expect_shown(2)
    worker.back()
    worker.expect_step(1)
    worker.expect_shown(1)
    worker.next()
    worker.answer_step(2, rest)
    worker.next()
    worker.answer_step(3)
    worker.submit()
    assert server.stored_answers(worker.unit_id) == worker.expected
    worker.check_clean()


def test_incomplete_steps_are_gated_and_refused_by_the_server(serve, worker):
    server = serve("demo")
    worker.open(server.links[0])
    worker.start()
    key, name, bucket = worker.bucket_of(1)
    assert name == "relevance" and bucket["require"] == {"level": "turn"}
    targets = bucket["targets"][key]
    question = worker.show(next(iter(bucket["options"])))
    next_button, hint = worker.button("Next"), worker.page.locator(".missing")
    expect(next_button).to_be_disabled()
    expect(hint).to_contain_text(f"Still to do ({len(targets)}):")
    for index in targets:
        expect(hint).to_contain_text(f"Turn {index + 1}: answer '{question}'")
    expect(next_button).to_have_accessible_description(re.compile(r"^Still to do"))

    worker.answer_step(1, targets[:1])
    expect(hint).not_to_contain_text(f"Turn {targets[0] + 1}:")
    expect(hint).to_contain_text(f"Still to do ({len(targets) - 1}):")
    expect(next_button).to_be_disabled()
    worker.answer_step(1, targets[1:])
    expect(next_button).to_be_enabled()
    expect(hint).to_be_hidden()
    worker.next()
    worker.answer_step(2)  # `issues` has no require: nothing gates it
    worker.next()
    submit = worker.button("Submit")
    expect(submit).to_be_disabled()
    overall = "Overall, how good a conversation partner was SPEAKER_X?"
    expect(hint).to_have_text(f"Still to do: Rate '{worker.show(overall)}'")

    # The same incomplete answers sent directly, with the worker's own token, are refused.
    claim = httpx.post(f"{server.base}/api/claim",
                       json={"worker_id": "worker_1", "assignment_id": "1"}).json()
    assert claim["unit_id"] == worker.unit_id
    def submit_directly(answers):
        return httpx.post(f"{server.base}/api/units/{claim['unit_id']}/submit",
                          headers={"Authorization": f"Bearer {claim['token']}"},
                          json={"answers": answers})

    reply = submit_directly(worker.expected)
    assert reply.status_code == 422, reply.text
    [problem] = reply.json()["problems"]
    assert (problem["dialogue"], problem["bucket"], problem["turn"]) == \
        (key, "overall_quality", None)
    assert overall in problem["message"]
    fewer = copy.deepcopy(worker.expected)
    del fewer[key]["relevance"][str(targets[1])]
    reply = submit_directly(fewer)
    assert reply.status_code == 422, reply.text
    assert {(p["bucket"], p["turn"]) for p in reply.json()["problems"]} == \
        {("relevance", targets[1]), ("overall_quality", None)}

    worker.answer_step(3)  # nothing was stored: the page still submits the whole unit
    worker.submit()
    assert server.stored_answers(worker.unit_id) == worker.expected
    worker.check_clean()
