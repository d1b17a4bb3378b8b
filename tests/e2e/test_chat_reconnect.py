"""The chat page in Chromium when the server ends its event stream (an idle stream's lifetime,
shortened here): it opens a new one by itself, without showing the connection as lost, and the
chat goes on over it."""

from __future__ import annotations

import time

import pytest
from chat_helpers import ChatServer, ScriptedBot, write_chat_conf
from playwright.sync_api import expect

from collection_and_annotations.server.chat import stream

from .test_chat import _log, _wait_for_reply

pytestmark = pytest.mark.browser
IDLE = 2.0


def test_the_page_reopens_a_stream_the_server_ended(tmp_path, worker, monkeypatch):
    monkeypatch.setattr(stream, "IDLE_SECONDS", IDLE)
    server = ChatServer(tmp_path, write_chat_conf(tmp_path, "alpha:1", ["alpha"]),
                        {"alpha": ScriptedBot("alpha")})
    try:
        page = worker.page
        opened: list[float] = []
        page.on("request", lambda r: r.url.endswith("/events") and opened.append(time.monotonic()))
        lost: list[str] = []
        page.expose_function("noteLost", lambda text: lost.append(text))
        page.goto(f"{server.base}/?worker_id=w1&assignment_id=1")
        page.get_by_role("button", name="Start the chat").click()
        expect(_log(page, "Partner")).to_be_visible()
        _wait_for_reply(page)
        page.evaluate("""() => new MutationObserver(() => {
            const s = [...document.querySelectorAll('[role=status]')].map(e => e.textContent);
            if (s.some(t => t.includes('Connection lost'))) window.noteLost(s.join(' '));
        }).observe(document.body, {subtree: true, childList: true, characterData: true})""")
        deadline = time.monotonic() + 3 * IDLE + 5
        while len(opened) < 2:  # idle: ended by the server, reopened by the page
            assert time.monotonic() < deadline, f"the page opened {len(opened)} streams"
            page.wait_for_timeout(100)
        box = page.get_by_role("textbox", name="Your message")
        box.fill("are you still there?")
        box.press("Enter")
        expect(_log(page, "Partner").get_by_text("alpha heard: are you still there?")) \
            .to_be_visible()
        assert not lost, lost
        assert not worker.errors, worker.errors
    finally:
        server.stop()
