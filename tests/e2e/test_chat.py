"""Live chat in Chromium with the built-in demo bots (`conf=demo_chat`): single and paired chats
to the end, streamed replies, reload mid-chat, text shown as text, and what the database holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from chat_helpers import write_chat_conf
from helpers import cli
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


def _start(page: Page) -> None:
    """From the chat's "Before you start" screen to the first chat: nothing is sent before."""
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    expect(page.get_by_role("textbox", name="Your message")).to_have_count(0)
    page.get_by_role("button", name="Start the chat").click()


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


def _stored_messages(server) -> int:
    engine = create_engine(f"sqlite:///{_data_dir(server)}/cep.sqlite3")
    with engine.connect() as connection:
        return len(connection.execute(select(Message.id)).all())


NO_ANNOTATIONS = ("mephisto.blueprint.do_interactive_online_annotations=''",
                  "mephisto.blueprint.do_interactive_offline_annotations=[]")


def test_paired_chat_to_the_end_streams_replies_and_stores_every_message(serve, worker):
    server = serve("demo_chat", *NO_ANNOTATIONS)
    page = worker.page
    streamed: list[str] = []
    page.on("response", lambda r: "/events" in r.url and streamed.append(r.url))
    page.goto(server.link("worker_1", "1"))
    _start(page)
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
    exported = cli("export", "--task", "demo_chat", "--format", "dialogues", "--output",
                   str(out), "--annotation-tasks", "overall_quality", "--data-dir",
                   _data_dir(server))
    assert exported.returncode == 0, exported.stderr
    assert "exported 2 dialogues" in exported.stderr
    lines = [json.loads(line)["data"][0] for line in out.read_text().splitlines()]
    assert [d["turns"][2][1] for d in lines] == ["I love cooking <b>pizza</b>", "Hello there"]
    assert json.loads((out.parent / "collected_units.json").read_text()) == {
        d["group_id"]: 1 for d in lines}


def test_single_chat_on_a_phone_survives_a_reload(serve, new_worker):
    server = serve("demo_chat", "mephisto.blueprint.conversations_needed_string=chatter:2",
                   "mephisto.blueprint.num_bots=1", *NO_ANNOTATIONS)
    worker = new_worker(viewport=(375, 740), mobile=True)
    page = worker.page
    page.goto(server.link("worker_2", "1"))
    _start(page)
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


def _rate_latest(page: Page, partner: str, clicked: dict[int, int], rating: int) -> None:
    """Label the partner's latest message (the only one with questions) with `rating`."""
    group = page.get_by_role("group", name=re.compile(f"Your rating of {partner}'s message"))
    expect(group).to_have_count(1)
    index = int(group.get_attribute("data-message-index"))
    # The partner's messages are counted on their own; it answers each of the worker's, who
    # opened with "Hi!" (index 0).
    expect(group).to_have_accessible_name(f"Your rating of {partner}'s message {(index + 1) // 2}")
    group.get_by_role("radio", name=str(rating), exact=True).click()
    clicked[index] = rating


def _offline_steps(page: Page, seen: list[tuple[str, str]], chosen: dict[str, object]) -> None:
    """Answer every offline step shown after a chat: the 3rd point of each 1-5 scale, the
    first option of a comparison; `seen` gets (context line, heading) per step in order."""
    while True:
        heading = page.get_by_role("main").get_by_role("heading", level=2)
        expect(heading).to_be_visible()
        context = page.get_by_role("main").get_by_role("paragraph").first.inner_text()
        seen.append((context, heading.inner_text()))
        comparison = page.get_by_role("region", name="Comparison question")
        if comparison.count():
            option = comparison.get_by_role("radio").first
            option.click()
            chosen[heading.inner_text()] = option.get_attribute("value") or "first"
        else:
            region = page.get_by_role("region", name="Questions about the dialogue")
            for group in region.get_by_role("group").all():
                group.get_by_role("radio", name="3", exact=True).click()
        footer = page.get_by_role("contentinfo")
        last = footer.get_by_role("button", name=re.compile("^(Next|Continue|Submit)$")).last
        name = last.inner_text()
        expect(last).to_be_enabled()
        last.click()
        if name != "Next":
            return


def test_paired_chat_with_online_labels_offline_ratings_and_a_comparison(serve, worker):
    server = serve("demo_chat")
    page = worker.page
    page.goto(server.link("worker_3", "1"))
    # The task and its instructions come before the first message, and stay one click away.
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    expect(page.get_by_text(re.compile("You will chat with two partners, one after the other"))
           ).to_be_visible()
    expect(page.get_by_role("heading", name="Rating a reply")).to_be_visible()  # turn_quality.md
    expect(page.get_by_text("You will chat with 2 partners, one after the other, and write 3 "
                            "messages to each.")).to_be_visible()
    assert _stored_messages(server) == 0
    page.get_by_role("button", name="Start the chat").click()
    page.get_by_role("button", name="Task instructions").click()
    dialog = page.get_by_role("dialog", name="Task instructions")
    expect(dialog.get_by_role("heading", name="Scoring the whole conversation")).to_be_visible()
    dialog.get_by_role("button", name="Close").click()
    clicked: dict[str, dict[int, int]] = {}
    seen: list[tuple[str, str]] = []
    chosen: dict[str, object] = {}
    for number, partner in ((1, "Partner A"), (2, "Partner B")):
        expect(page.get_by_role("heading", name=re.compile(f"Chat {number} of 2"))).to_be_visible()
        labels = clicked.setdefault(partner, {})
        box = page.get_by_role("textbox", name="Your message")
        send = page.get_by_role("button", name="Send")
        for n, text in enumerate(["I love cooking pizza", "Do you like music?", "Bye now"]):
            _wait_for_reply(page)
            box.fill(text)
            expect(send).to_be_disabled()  # the partner's message is not rated yet
            expect(page.get_by_text("Still to do before you go on:")).to_be_visible()
            _rate_latest(page, partner, labels, n % 5 + 1)
            box.press("Enter")
            expect(_log(page, partner).get_by_text(text, exact=True)).to_be_visible()
            if (number, n) == (1, 1):  # a reload shows the stored ratings as ratings
                _wait_for_reply(page)
                page.reload()
                stored = _log(page, partner).locator("p", has_text="Your rating:")
                expect(stored).to_have_count(2)
                expect(stored.first).to_have_text(f"Your rating: Quality: {labels[1]}")
                expect(_log(page, partner).get_by_text("no answer")).to_have_count(0)
        _wait_for_reply(page)
        _rate_latest(page, partner, labels, 5)
        page.get_by_role("button", name="End chat").click()
        _offline_steps(page, seen, chosen)
        if number == 1:
            expect(page.get_by_text("Chat 1 of 2 is done.")).to_be_visible()
            page.get_by_role("button", name="Start the next chat").click()
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert not worker.errors, worker.errors

    out = Path(_data_dir(server)) / "submissions.jsonl"
    exported = cli("export", "--task", "demo_chat", "--format", "submissions", "--output",
                   str(out), "--data-dir", _data_dir(server))
    assert exported.returncode == 0, exported.stderr
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    dialogues = {d["key"]: d for d in record["dialogues"]}
    answers = record["answers"]
    bots = record["layout"]["bots"]
    # online labels: every bot message, as clicked, stored with the conversation's bot
    for position, partner in enumerate(("Partner A", "Partner B")):
        key = f"c{position}"
        assert dialogues[key]["source_fields"]["bot"] == bots[position]
        stored = {int(i): v["Quality"] for i, v in answers[key]["turn_quality"].items()}
        assert stored == clicked[partner]
        assert answers[key]["overall_quality"]["dialogue"] == {"Overall": 3}
    # the bucket order shown is the order recorded (others first, then the comparison)
    recorded = [*record["layout"]["offline"][0], *record["layout"]["offline"][1]]
    shown = [name.replace("_", " ").capitalize() for name in recorded]  # as the page titles
    assert [heading for _, heading in seen] == shown, seen
    assert recorded[-1] == "preference"
    # the sides: the page named which partner was on the left, and the export agrees
    comparison_context = seen[-1][0]
    left = record["layout"]["left"]["c0_c1"]
    earlier_left = comparison_context.index("Partner A") < comparison_context.index("Partner B")
    assert (left == "turns") == earlier_left
    choice = answers["c0_c1"]["preference"]["dialogue"]
    assert choice["side"] == "left" and choice["dialogue"] == left
    assert dialogues["c0_c1"]["source_fields"] == {"bot": bots[0], "bot2": bots[1]}


def test_a_reply_cut_at_its_limit_offers_try_again(serve, worker, tmp_path):
    """Every reply of this bot grows past its max_reply_chars: the page drops what streamed,
    tells the worker why, keeps the message box shut and asks again on Try again."""
    conf = write_chat_conf(tmp_path / "task", "counter:1",
                           "counter: {type: demo, name: counter, delay: 0.1, "
                           "max_reply_chars: 20}\n")
    server = serve(conf)
    page = worker.page
    page.goto(server.link("worker_1", "1"))
    _start(page)
    alert = page.get_by_role("alert").filter(has_text="reply was too long")
    expect(alert).to_be_visible()
    log = _log(page, "Partner")
    expect(log.get_by_text("1 2 3", exact=False)).to_have_count(0)  # the cut reply is gone
    box = page.get_by_role("textbox", name="Your message")
    expect(box).to_have_attribute("aria-disabled", "true")
    page.get_by_role("button", name="Try again").click()
    expect(alert).to_have_count(0)  # asked again...
    expect(alert).to_be_visible()  # ...and cut again
    assert not worker.errors, worker.errors
