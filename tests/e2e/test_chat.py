"""Live chat in Chromium with the built-in demo bots (`conf=demo_chat`): single and paired chats
to the end, streamed replies, reload mid-chat, text shown as text, and what the database holds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO
from playwright.sync_api import Page, expect
from sqlalchemy import create_engine, select

from collection_and_annotations.storage.models import Conversation, Message, Submission, Unit

pytestmark = pytest.mark.browser


def _log(page: Page, partner: str):
    return page.get_by_role("log", name=f"Conversation with {partner}")


def _wait_for_reply(page: Page) -> None:
    """The bot has answered: the text box takes input again (or the chat can end)."""
    box = page.get_by_role("textbox", name="Your message")
    end = page.get_by_role("button", name="End chat")
    expect(box.or_(end).first).to_be_visible()
    page.wait_for_function(
        "() => { const b = document.querySelector('textarea');"
        " return !document.querySelector('[aria-busy=\"true\"]') && b"
        " && (b.getAttribute('aria-disabled') !== 'true'"
        " || [...document.querySelectorAll('button')].some(x => x.textContent === 'End chat')) }")


def _chat(page: Page, partner: str, messages: list[str]) -> None:
    log = _log(page, partner)
    expect(log).to_be_visible()
    expect(log.get_by_text("Hi!")).to_be_visible()  # the opener, sent for the worker
    _wait_for_reply(page)
    expect(page.get_by_text("Turn 0 of 3")).to_be_visible()
    box = page.get_by_role("textbox", name="Your message")
    for n, text in enumerate(messages, start=1):
        expect(page.get_by_role("button", name="End chat")).to_have_count(0)
        box.fill(text)
        box.press("Enter")
        expect(log.get_by_text(text, exact=True)).to_be_visible()
        _wait_for_reply(page)
        expect(page.get_by_text(f"Turn {n} of 3")).to_be_visible()
        expect(box).to_be_focused()
    expect(log.locator("b")).to_have_count(0)  # markup in a message is shown as text
    page.get_by_role("button", name="End chat").click()


def _data_dir(server) -> str:
    return next(a for a in server.run.process.args if a.startswith("data_dir=")).split("=", 1)[1]


def test_paired_chat_to_the_end_streams_replies_and_stores_every_message(serve, worker):
    server = serve("demo_chat")
    page = worker.page
    streamed: list[str] = []
    page.on("response", lambda r: "/events" in r.url and streamed.append(r.url))
    page.goto(server.link("worker_1", "1"))
    expect(page.get_by_role("heading", name=re.compile("Chat 1 of 2"))).to_be_visible()
    _chat(page, "Partner A", ["I love cooking <b>pizza</b>", "Do you like music?",
                              "I play the guitar"])
    expect(page.get_by_text("Chat 1 of 2 is done.")).to_be_visible()
    page.get_by_role("button", name="Start the next chat").click()
    expect(page.get_by_role("heading", name=re.compile("Chat 2 of 2"))).to_be_visible()
    _chat(page, "Partner B", ["Hello there", "My dog is called Rex", "Bye now"])
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert streamed, "the page never opened the event stream"
    assert not worker.errors, worker.errors

    engine = create_engine(f"sqlite:///{_data_dir(server)}/cep.sqlite3")
    with engine.connect() as connection:
        conversations = connection.execute(
            select(Conversation.id, Conversation.bot, Conversation.status, Unit.layout)
            .join(Unit, Unit.id == Conversation.unit_id).order_by(Conversation.position)).all()
        assert [c.status for c in conversations] == ["ended", "ended"]
        assert [c.bot for c in conversations] == conversations[0].layout["bots"]
        for conversation in conversations:
            rows = connection.execute(
                select(Message.role, Message.text, Message.bot).where(
                    Message.conversation_id == conversation.id).order_by(Message.index)).all()
            assert [r.role for r in rows] == ["worker", "bot"] * 4
            assert all(r.bot == conversation.bot for r in rows if r.role == "bot")
        worker_texts = connection.execute(select(Message.text).where(
            Message.role == "worker", Message.opener.is_(False)).order_by(Message.id)).scalars()
        assert list(worker_texts) == ["I love cooking <b>pizza</b>", "Do you like music?",
                                      "I play the guitar", "Hello there",
                                      "My dog is called Rex", "Bye now"]
        assert connection.scalar(select(Submission.id)) is not None
    engine.dispose()

    # the collected chats export as task data
    out = Path(_data_dir(server)) / "collected.jsonl"
    exported = subprocess.run(
        [sys.executable, "-m", "collection_and_annotations", "export", "--task", "demo_chat",
         "--format", "dialogues", "--output", str(out), "--annotation-tasks", "overall_quality",
         "--data-dir", _data_dir(server)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert exported.returncode == 0, exported.stderr
    assert "exported 2 dialogues" in exported.stderr
    lines = [json.loads(line)["data"][0] for line in out.read_text().splitlines()]
    assert [d["turns"][2][1] for d in lines] == ["I love cooking <b>pizza</b>", "Hello there"]
    assert json.loads((out.parent / "collected_units.json").read_text()) == {
        d["group_id"]: 1 for d in lines}


def test_single_chat_on_a_phone_survives_a_reload(serve, new_worker):
    server = serve("demo_chat", "mephisto.blueprint.conversations_needed_string=chatter:2",
                   "mephisto.blueprint.num_bots=1")
    worker = new_worker(viewport=(375, 740), mobile=True)
    page = worker.page
    page.goto(server.link("worker_2", "1"))
    log = _log(page, "Partner")
    expect(log).to_be_visible()
    _wait_for_reply(page)
    box = page.get_by_role("textbox", name="Your message")
    box.fill("Tell me about travel")
    box.press("Enter")
    _wait_for_reply(page)
    page.reload()  # the server's state, not the browser's, brings the chat back
    expect(log.get_by_text("Tell me about travel", exact=True)).to_be_visible()
    expect(page.get_by_text("Turn 1 of 3")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    for text in ("What about food?", "And sports?"):
        box.fill(text)
        page.get_by_role("button", name="Send").click()
        _wait_for_reply(page)
    page.get_by_role("button", name="End chat").click()
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert not worker.errors, worker.errors
