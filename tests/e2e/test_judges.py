"""LLM judges in Chromium: `welcome.py` serves a study whose conf names a judge (a fake
OpenAI-compatible endpoint), people annotate it, and the requester sees the judge apart in
the dashboard's Review (its own panel, its answers under a person's submission, never a row
of the people's list) and a Judges section in the analysis report."""

from __future__ import annotations

import httpx
import pytest
from judges.fake_judge import FakeJudge, Served
from judges.study import KEY, KEY_ENV, annotate, write_study
from playwright.sync_api import expect

from .test_dashboard import Requester

pytestmark = pytest.mark.browser


def test_judges_apart_in_review_and_in_the_report(serve, browser, tmp_path, monkeypatch):
    fake = FakeJudge(errors={"rude": 0.3})
    judge = Served(fake)
    try:
        conf = write_study(tmp_path / "study", 6, fake.base_url, annotators=2)
        monkeypatch.setenv(KEY_ENV, KEY)
        server = serve(conf, "mephisto.blueprint.judges=[gpt]")
        server.run.wait_for(r"judge 'gpt': 6 units answered now", timeout=60)
        assert annotate(server.base, workers=2, mistakes=0.1) == 12
    finally:
        judge.stop()
    judged = {s["unit_id"] for s in httpx.get(
        f"{server.base}/api/requester/submissions?include=judges",
        headers={"Authorization": f"Bearer {server.token}"}, timeout=10).json()["submissions"]
        if s.get("judge") == "gpt"}
    assert len(judged) == 6

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    requester = Requester(context.new_page(), server.dashboard)
    page = requester.page
    requester.sign_in(server.token)
    requester.tab("Review")
    panel = page.get_by_role("region", name="LLM judges")
    expect(panel).to_contain_text("fake-judge-1")
    expect(panel.get_by_role("row", name="gpt")).to_contain_text("6")
    expect(page.get_by_role("heading", name="Submissions 1–12 of 12")).to_be_visible()
    for unit_id in judged:  # the judge's units are no rows of the people's list
        expect(page.get_by_role("button", name=f"Open {unit_id}")).to_have_count(0)
    page.get_by_role("button", name="Open u_").first.click()
    answers = page.get_by_role("region", name="Judge gpt")
    expect(answers).to_contain_text("Dialogue 1")
    expect(answers).to_contain_text("Quality")
    expect(page.get_by_role("heading", name="What the LLM judges answered")).to_be_visible()

    report = context.request.get(f"{server.base}/api/requester/report", timeout=120_000)
    assert report.ok, report.text()
    page.set_content(report.text())
    expect(page.get_by_role("heading", name="Judges", level=2)).to_be_visible()
    agreement = page.locator("h3:has-text('Agreement with people') + table")
    expect(agreement).to_contain_text("rude")
    expect(agreement.get_by_role("row").filter(has_text="off_topic")).to_contain_text("gpt")
    expect(page.get_by_role("heading", name="Cost and time")).to_be_visible()
    assert requester.errors == []
    context.close()
