"""Screening (training) units in Chromium, on the unchanged fixture conf `consistency`: a worker
who labels the training dialogues as the screening file expects passes and reaches real work in
the same visit; one who makes too many mistakes on the graded dialogue sees the not-eligible
page, now and on every later claim. The expected answers are read from the fixture file in the
test, never from the page."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from .worker_page import training_answers

pytestmark = pytest.mark.browser

SCREENING_FILE = "consistency.json"


def _conf(cep_fixtures):
    return cep_fixtures / "hydra_configs" / "conf" / "consistency.yaml"


def _explanations(cep_fixtures) -> list[dict[int, str]]:
    path = cep_fixtures / "task_config" / "onboarding_data" / SCREENING_FILE
    return [{i: t[3] for i, t in enumerate(d["turns"]) if len(t) > 3}
            for d in json.loads(path.read_text()).values()]


def test_pass_training_then_real_work_in_the_same_visit(cep_fixtures, serve, new_worker):
    server = serve(_conf(cep_fixtures), f"task_dir={cep_fixtures}")
    worker = new_worker(viewport=(375, 800), mobile=True)
    unit = worker.open(server.links[0])
    assert unit["kind"] == "screening"
    expected = training_answers(cep_fixtures, SCREENING_FILE)
    graded = unit["screening"]["graded"][0]
    # one mistake on every dialogue, corrected; the graded one stays within its allowance
    wrong = {i: 1 for i in range(len(expected))}
    wrong[graded["position"] - 1] = graded["allowed_mistakes"]
    outcome = worker.train(expected, wrong, _explanations(cep_fixtures))
    assert outcome["screening"] == {"passed": True, "message": None}
    no_overflow = worker.page.evaluate("document.documentElement.scrollWidth <= 375")
    assert no_overflow
    real = worker.continue_to_task()
    assert real["kind"] == "annotation" and "screening" not in real
    worker.complete()
    assert server.stored_answers(worker.unit_id) == worker.expected


def test_fail_training_shows_not_eligible(cep_fixtures, serve, new_worker):
    server = serve(_conf(cep_fixtures), f"task_dir={cep_fixtures}")
    worker = new_worker()
    unit = worker.open(server.links[0])
    expected = training_answers(cep_fixtures, SCREENING_FILE)
    graded = unit["screening"]["graded"][0]
    outcome = worker.train(expected, {graded["position"] - 1: graded["allowed_mistakes"] + 1})
    assert outcome["screening"]["passed"] is False
    heading = worker.page.get_by_role("heading", name="Thank you for taking part")
    expect(heading).to_be_focused()
    expect(worker.page.get_by_role("alert")).to_contain_text("not eligible")
    worker.screenshot("not-eligible")
    # the same page on any later claim (a reload of the link, or a new link)
    worker.page.reload()
    expect(heading).to_be_visible()
    name = re.search(r"worker_id=([^&]+)", server.links[0]).group(1)
    worker.page.goto(server.link(name, "again"))
    expect(heading).to_be_visible()
    # the browser logs the refused claims (403) as failed loads; nothing else went wrong
    worker.errors = [e for e in worker.errors if "status of 403" not in e]
    worker.check_clean()


def test_full_training_says_try_later(cep_fixtures, serve, new_worker):
    server = serve(_conf(cep_fixtures), f"task_dir={cep_fixtures}",
                   "mephisto.blueprint.max_screening_units=1")
    first = new_worker()
    first.open(server.links[0])
    second = new_worker()
    second.page.goto(server.links[1])
    expect(second.page.get_by_role("heading", name="Training is full for now")).to_be_visible()
    expect(second.page.get_by_role("button", name="Try again")).to_be_visible()
