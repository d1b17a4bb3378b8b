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
    dialog_checked = False
    assert server.links[0] == server.link("worker_1", "1")
    link = server.link("worker_1", "1")
    for number in range(1, 5):  # the demo's four groups, one unit each for this worker
        unit = worker.open(link)
        if not dialog_checked and worker.bucket_of(1)[2]["instructions_html"]:
            _instructions_dialog_opens_and_closes(worker)
            dialog_checked = True
        with worker.page.expect_response(lambda r: r.url.endswith("/api/next")) as offer:
            worker.complete()
        next_unit = worker.page.get_by_role("link", name="Take another unit")
        if number < 4:  # the completion page leads on to the next unit while there is one
            expect(next_unit).to_have_attribute(
                "href", re.compile(r"/\?worker_id=worker_1&assignment_id=[0-9a-f]{8}$"))
            link = next_unit.get_attribute("href")
        else:
            assert offer.value.json()["next_url"] is None
            expect(next_unit).to_have_count(0)
        _timings_cover_every_step(server, worker)
        assert server.stored_answers(worker.unit_id) == worker.expected
        configs |= {b["config"] for b in unit["buckets"].values()}
        relevance = [v for d in worker.expected.values() for v in d.get("relevance", {}).values()]
        if relevance:  # nested questions and checkboxes were answered
            chosen = tree_choices(relevance)
            assert chosen["Where does it drift?"]
            assert chosen["Which problems does the reply have?"]

    assert dialog_checked, "no unit starts with a bucket that has instructions"
    assert configs == {"nondetails_nonhelp_button_flow", "multiselect", "likert-5-dialogue",
                       "comparative"}
    worker.open(server.link("worker_1", "1"))  # a submitted link shows the completion page
    expect(worker.page.get_by_role("heading", name="Thank you!")).to_be_visible()
    worker.check_clean()


def _open_a_dialogue_unit(server, worker) -> str:
    """Open the links of new workers until one is served a unit of one of the demo's three
    dialogues, not of its comparison (units are served in a random order); their id."""
    for number in range(1, 4):  # the comparison has 2 units: the third worker gets a dialogue
        worker.open(server.link(f"worker_{number}", "1"))
        if "relevance" in [name for _, name in worker.steps]:
            return f"worker_{number}"
    raise AssertionError("none of the demo's first three units is a dialogue unit")


def _timings_cover_every_step(server, worker) -> None:
    """The page sent `[start, end]` intervals for every step it showed; they are stored."""
    (record,) = server.submissions(worker.unit_id)
    steps = record["timings"]["client"]["steps"]
    assert [(s["dialogue"], s["bucket"]) for s in steps] == worker.steps
    for step in steps:
        assert step["intervals"] and all(0 <= end - start < 600_000
                                         for start, end in step["intervals"])
    shown = [(d["key"], d["tasks"]) for d in record["dialogues"]]
    assert shown == [(d["key"], d["annotation_tasks"]) for d in worker.unit["dialogues"]]


def _instructions_dialog_opens_and_closes(worker) -> None:
    worker.start()  # no demo bucket is a button_flow or nondetails_button_flow: no Help links
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
    _open_a_dialogue_unit(server, worker)
    names = [name for _, name in worker.steps]
    assert sorted(names) == ["issues", "overall_quality", "relevance"]  # in this unit's order
    partial = names.index("issues") + 1  # no `require`: a partly answered step is saved as is
    worker.start()
    for number in range(1, partial):
        worker.answer_step(number)
        worker.next()
    worker.expect_step(partial)
    key, name, bucket = worker.bucket_of(partial)
    first, *rest = bucket["targets"][key]
    worker.answer_step(partial, [first])
    assert worker.expected[key][name][str(first)], "the partial answer checks a label"
    worker.wait_saved()

    worker.open()  # reload the same link
    worker.expect_step(partial, focused=False)
    worker.expect_shown(partial)
    if partial > 1:
        worker.back()
        worker.expect_step(partial - 1)
        worker.expect_shown(partial - 1)
        worker.next()
    worker.answer_step(partial, rest)
    for number in range(partial + 1, len(names) + 1):
        worker.next()
        worker.answer_step(number)
    worker.submit()
    assert server.stored_answers(worker.unit_id) == worker.expected
    worker.check_clean()


def test_incomplete_steps_are_gated_and_refused_by_the_server(serve, worker):
    server = serve("demo")
    worker_id = _open_a_dialogue_unit(server, worker)
    worker.start()
    names = [name for _, name in worker.steps]  # this unit's own order
    next_button, hint = worker.button("Next"), worker.page.locator(".missing")
    for number, name in enumerate(names, 1):
        worker.expect_step(number)
        if name == "relevance":
            _relevance_is_gated(worker, number, hint)
        elif name == "overall_quality":
            _overall_quality_is_gated_and_refused(server, worker, worker_id, number, hint)
        else:
            worker.answer_step(number)  # `issues` has no require: nothing gates it
        if number < len(names):
            expect(next_button).to_be_enabled()
            worker.next()
    worker.submit()
    assert server.stored_answers(worker.unit_id) == worker.expected
    worker.check_clean()


def _relevance_is_gated(worker, number, hint) -> None:
    key, name, bucket = worker.bucket_of(number)
    assert bucket["require"] == {"level": "turn"}
    targets = bucket["targets"][key]
    question = worker.show(next(iter(bucket["options"])), "system")
    gate = worker.button("Submit" if number == len(worker.steps) else "Next")
    expect(gate).to_be_disabled()
    expect(hint).to_contain_text(f"Still to do ({len(targets)}):")
    for index in targets:
        expect(hint).to_contain_text(f"Turn {index + 1}: answer '{question}'")
    expect(gate).to_have_accessible_description(re.compile(r"^Still to do"))
    worker.answer_step(number, targets[:1])
    expect(hint).not_to_contain_text(f"Turn {targets[0] + 1}:")
    expect(hint).to_contain_text(f"Still to do ({len(targets) - 1}):")
    expect(gate).to_be_disabled()
    worker.answer_step(number, targets[1:])
    if number < len(worker.steps):
        expect(gate).to_be_enabled()
        expect(hint).to_be_hidden()


def _overall_quality_is_gated_and_refused(server, worker, worker_id, number, hint) -> None:
    key, name, _ = worker.bucket_of(number)
    gate = worker.button("Submit" if number == len(worker.steps) else "Next")
    expect(gate).to_be_disabled()
    overall = "Overall, how good a conversation partner was SPEAKER_X?"
    expect(hint).to_have_text(f"Still to do: Rate '{worker.show(overall)}'")

    # The same incomplete answers sent directly, with the worker's own token, are refused.
    claim = httpx.post(f"{server.base}/api/claim",
                       json={"worker_id": worker_id, "assignment_id": "1"}).json()
    assert claim["unit_id"] == worker.unit_id

    def problems(answers):
        reply = httpx.post(f"{server.base}/api/units/{claim['unit_id']}/submit",
                           headers={"Authorization": f"Bearer {claim['token']}"},
                           json={"answers": answers})
        assert reply.status_code == 422, reply.text
        return {(p["dialogue"], p["bucket"], p["turn"]) for p in reply.json()["problems"]}

    relevance = worker.unit["buckets"]["relevance"]["targets"][key]
    answered = worker.expected.get(key, {}).get("relevance", {})
    missing = {(key, "relevance", t) for t in relevance if str(t) not in answered}
    assert problems(worker.expected) == {(key, "overall_quality", None)} | missing
    if answered:
        fewer = copy.deepcopy(worker.expected)
        del fewer[key]["relevance"][str(relevance[-1])]
        assert problems(fewer) == {(key, "overall_quality", None),
                                   (key, "relevance", relevance[-1])} | missing
    worker.answer_step(number)  # nothing was stored: the page still submits the whole unit


def test_a_checkbox_question_is_seen_before_the_turn_moves_on(serve, worker):
    """With the mouse, answering a turn's radio question does not collapse the turn while its
    checkbox question was not looked at; "None of these" (or a tick) counts as looked at."""
    server = serve("demo")
    _open_a_dialogue_unit(server, worker)
    number = [name for _, name in worker.steps].index("relevance") + 1
    worker.start()
    for earlier in range(1, number):
        worker.answer_step(earlier)
        worker.next()
    key, _, bucket = worker.bucket_of(number)
    first, second, *_ = bucket["targets"][key]
    radio_q, checkbox_q = (worker.show(q, "system") for q in bucket["options"])
    panel = worker.page.locator(f'[data-dialogue-key="{key}"]')
    turn = worker.turn(panel, first)
    turn.get_by_role("group", name=radio_q, exact=True).get_by_role(
        "radio", name="Yes, it responds to it directly.", exact=True).click()
    worker.page.wait_for_timeout(600)  # longer than the page's move-on delay
    problems = turn.get_by_role("group", name=checkbox_q, exact=True)
    expect(problems).to_be_visible()  # still open: the checkbox question was not seen
    expect(worker.turn(panel, second).get_by_role(
        "button", name=f"Answer turn {second + 1}")).to_be_visible()
    problems.get_by_role("checkbox", name="None of these", exact=True).click()
    expect(turn.get_by_role("button", name=f"Change turn {first + 1}")).to_be_visible()
    expect(worker.turn(panel, second).get_by_role("group", name=radio_q, exact=True)) \
        .to_be_visible()  # the page moved on to the next turn
    second_turn = worker.turn(panel, second)
    second_turn.get_by_role("group", name=checkbox_q, exact=True).get_by_role(
        "checkbox", name="It repeats an earlier reply.", exact=True).click()
    second_turn.get_by_role("group", name=radio_q, exact=True).get_by_role(
        "radio", name="No, it ignores what User said.", exact=True).click()
    expect(second_turn.get_by_role("button", name=f"Change turn {second + 1}")).to_be_visible()
    answered = {
        str(first): {bucket_q(bucket, 0): {"Yes, it responds to it directly.": {}},
                     bucket_q(bucket, 1): {}},
        str(second): {bucket_q(bucket, 0): {"No, it ignores what SPEAKER_Y said.": {}},
                      bucket_q(bucket, 1): {"It repeats an earlier reply.": {}}},
    }

    def holds(response) -> bool:
        if not response.url.endswith("/draft") or response.request.method != "PUT":
            return False
        saved = response.request.post_data_json["answers"].get(key, {}).get("relevance", {})
        return all(saved.get(t) == v for t, v in answered.items())

    if not any(holds(r) for r in worker.drafts):
        worker.page.wait_for_event("response", holds)
    worker.check_clean()


def bucket_q(bucket, n: int) -> str:
    return list(bucket["options"])[n]
