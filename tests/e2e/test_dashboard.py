"""The requester dashboard in Chromium, against `welcome.py conf=demo`: the requester signs in
with the token, watches the progress change while a worker submits in another browser context,
opens that submission, rejects it with a reason, blocks the worker, whose next visit gets no
work. The page is checked at 375 px (no sideways scrolling of the page) and the token never
appears in an address."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import Page, expect

from .worker_page import SCREENSHOTS

pytestmark = pytest.mark.browser

TABS = ("Overview", "Workers", "Review", "Results")
UPDATED = re.compile(r"^Updated \d\d:\d\d:\d\d$")


class Requester:
    """The dashboard in its own browser context; records addresses, script errors, dialogs."""

    def __init__(self, page: Page, dashboard: str):
        self.page, self.dashboard = page, dashboard
        self.urls: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.urls.append(r.url))
        page.on("framenavigated", lambda f: self.urls.append(f.url))
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on("console", self._console)
        page.on("dialog", lambda d: (self.errors.append(f"dialog: {d.message}"), d.dismiss()))

    def _console(self, message) -> None:
        # The first `GET /api/requester/session` answers 401 before signing in: Chromium logs it.
        if message.type == "error" and "401" not in message.text:
            self.errors.append(message.text)

    def sign_in(self, token: str) -> None:
        self.page.goto(self.dashboard)  # the address the launcher printed
        field = self.page.get_by_label("Requester token")
        expect(field).to_be_focused()
        assert field.get_attribute("type") == "password"
        field.fill(token)
        with self.page.expect_response(lambda r: r.url.endswith("/api/requester/session")
                                       and r.request.method == "POST") as reply:
            self.page.get_by_role("button", name="Sign in").click()
        assert reply.value.status == 200, reply.value.text()
        expect(self.page.get_by_role("heading", name="Overview", level=2)).to_be_visible()

    def tab(self, name: str) -> None:
        self.page.get_by_role("tab", name=name).click()
        expect(self.page.get_by_role("tab", name=name)).to_have_attribute("aria-selected", "true")
        expect(self.page.get_by_role("heading", name=name, level=2)).to_be_visible()
        expect(self.page.get_by_test_id("updated")).to_have_text(UPDATED)

    def overflow(self) -> int:
        """How far the page is wider than the window (0: no sideways scrolling)."""
        return self.page.evaluate(
            "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
            " - window.innerWidth")

    def screenshot(self, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=SCREENSHOTS / f"dashboard-{name}.png", full_page=True)


def _api(server, path: str):
    reply = httpx.get(f"{server.base}/api/requester/{path}",
                      headers={"Authorization": f"Bearer {server.token}"}, timeout=10)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_requester_reviews_rejects_and_blocks(serve, browser, new_worker):
    server = serve("demo")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    try:
        assert server.dashboard == f"{server.base}/dashboard"
        requester = Requester(context.new_page(), server.dashboard)
        requester.sign_in(server.token)
        progress = requester.page.get_by_test_id("progress")
        total = _api(server, "overview")["progress"]["total"]
        expect(progress).to_have_text(f"0 of {total} units done")

        worker = new_worker()
        worker.open(server.link("worker_1", "1"))
        worker.complete()
        # the page polls every 5 s: the submission shows up without a reload
        expect(progress).to_have_text(f"1 of {total} units done", timeout=15_000)
        requester.screenshot("overview")

        unit_id = worker.unit_id
        (item,) = [i for i in _api(server, "review")["items"] if i["unit_id"] == unit_id]
        pseudonym = item["worker"]
        requester.tab("Review")
        requester.page.get_by_role("button", name=f"Open {unit_id}").click()
        heading = requester.page.get_by_role("heading", name=f"Submission {unit_id}")
        expect(heading).to_be_focused()
        first_turn = worker.unit["dialogues"][0]["turns"][0]["text"]
        expect(requester.page.get_by_text(first_turn, exact=True).first).to_be_visible()
        requester.screenshot("submission")

        decision = requester.page.get_by_role("region", name="Decision")
        decision.get_by_role("button", name="Reject", exact=True).click()
        expect(decision.get_by_role("alert")).to_contain_text("Give a reason")
        reason = "The answers do not match the dialogue."
        decision.get_by_label("Reason (required to reject)").fill(reason)
        with requester.page.expect_response(lambda r: r.url.endswith(f"/units/{unit_id}/review")) \
                as reply:
            decision.get_by_role("button", name="Reject", exact=True).click()
        assert reply.value.status == 200, reply.value.text()
        assert reply.value.request.header_value("x-csrf-token")
        expect(decision).to_contain_text("Rejected")
        expect(decision).to_contain_text(f"Reason: {reason}")
        stored = _api(server, f"units/{unit_id}")["decision"]
        assert (stored["decision"], stored["reason"]) == ("reject", reason)

        requester.tab("Workers")
        row = requester.page.get_by_role("row").filter(has_text=pseudonym)
        requester.page.get_by_role("button", name=f"Manage {pseudonym}").click()
        requester.page.get_by_role("form", name=f"Block {pseudonym}") \
            .get_by_role("button", name="Block", exact=True).click()
        expect(row.first).to_contain_text("Blocked")
        assert "blocked" in next(w for w in _api(server, "workers")["workers"]
                                 if w["pseudonym"] == pseudonym)["flags"]

        # the blocked worker's next visit gets no work
        worker.page.goto(server.link("worker_1", "2"))
        expect(worker.page.get_by_role("heading", name="Thank you for taking part")).to_be_visible()
        expect(worker.page.get_by_text("not eligible")).to_be_visible()

        # 375 px: nothing wider than the window, in every view
        requester.page.set_viewport_size({"width": 375, "height": 800})
        for name in TABS:
            requester.tab(name)
            assert requester.overflow() <= 0, f"{name} is wider than 375 px"
            requester.screenshot(f"{name.lower()}-375")
        requester.page.get_by_role("tab", name="Review").click()
        requester.page.get_by_role("button", name=f"Open {unit_id}").click()
        expect(requester.page.get_by_role("heading", name=f"Submission {unit_id}")).to_be_visible()
        assert requester.overflow() <= 0, "the submission is wider than 375 px"

        # sign out: the login form again, and the session is gone
        requester.page.get_by_role("button", name="Sign out").click()
        expect(requester.page.get_by_label("Requester token")).to_be_visible()
        requester.page.reload()
        expect(requester.page.get_by_label("Requester token")).to_be_visible()

        assert not requester.errors, requester.errors
        assert all(server.token not in url for url in requester.urls + worker.requests)
        assert all(url.startswith(server.base + "/") for url in requester.urls
                   if url.startswith("http")), requester.urls
    finally:
        context.close()
