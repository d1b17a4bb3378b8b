"""Arena battles in Chromium against two fake OpenAI-compatible endpoints on 127.0.0.1: both
replies stream into their panes at the same time, the worker votes and finishes, nothing the
browser received names a bot or a model, and a phone's 375 px shows both replies."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from arena_helpers import write_arena_conf
from bots.fake_openai import FakeOpenAI, Served
from helpers import BUCKETS, REPO
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from sqlalchemy import create_engine, select

from collection_and_annotations.storage.models import BattleVote, Unit

pytestmark = pytest.mark.browser

# What each endpoint says, streamed in many small pieces (10 ms apart): never its name.
SAYS = {"alphabot": "sunny", "betabot": "rainy"}
SECRETS = ("alphabot", "betabot", "model-one-x", "model-two-x")
# Every body the page's fetch calls receive, event streams included, kept as it arrives.
RECORD_BODIES = """
window.__received = [];
const pageFetch = window.fetch;
window.fetch = async (...args) => {
  const response = await pageFetch(...args);
  const reader = response.clone().body?.getReader();
  if (reader) {
    const decoder = new TextDecoder();
    (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        window.__received.push(decoder.decode(value, { stream: true }));
      }
    })().catch(() => undefined);
  }
  return response;
};
"""


@pytest.fixture
def endpoints() -> Iterator[dict[str, FakeOpenAI]]:
    fakes = {name: FakeOpenAI(pieces=[f"{word} " for word in [said] * 60])
             for name, said in SAYS.items()}
    served = [Served(fake) for fake in fakes.values()]
    yield fakes
    for server in served:
        server.stop()


@pytest.fixture
def arena_conf(tmp_path, endpoints):
    opts = "".join(
        f"{name}: {{type: openai, base_url: '{fake.base_url}', model: {model}}}\n"
        for (name, fake), model in zip(endpoints.items(), ("model-one-x", "model-two-x"),
                                       strict=True))
    return write_arena_conf(tmp_path / "conf", opts, num_turns=2, vote="per_turn",
                            battles_per_pair=3)


def _pane(page: Page, side: str):
    return page.get_by_role("log", name=f"Model {side}")


def _say(page: Page, text: str) -> None:
    """The worker sends `text` to both models, as with the keyboard."""
    box = page.get_by_role("textbox", name="Your message")
    box.fill(text)
    box.press("Enter")


def _both_replied(page: Page, count: int) -> None:
    """Each pane holds `count` whole replies (the logs are no longer busy). Two replies of 60
    pieces each may take several seconds on a busy machine; on a timeout the panes as they
    are say what was missing."""
    try:
        page.wait_for_function(
            "n => [...document.querySelectorAll('[role=log]')].every(l =>"
            " l.querySelectorAll('.chat-message.is-bot').length === n"
            " && l.getAttribute('aria-busy') === 'false')", arg=count, timeout=30_000)
    except PlaywrightTimeoutError:
        panes = page.evaluate("[...document.querySelectorAll('[role=log]')].map(l => ({"
                              "busy: l.getAttribute('aria-busy'),"
                              " replies: l.querySelectorAll('.chat-message.is-bot').length,"
                              " end: l.innerText.slice(-120)}))")
        said = page.get_by_role("alert").all_inner_texts()
        raise AssertionError(f"not {count} whole replies in each pane: {panes}; alerts shown: "
                             f"{said}") from None


def test_a_battle_streams_both_replies_at_once_and_the_vote_is_stored(serve, new_worker,
                                                                      arena_conf):
    server = serve(arena_conf)
    worker = new_worker()
    page = worker.page
    page.add_init_script(RECORD_BODIES)
    page.goto(server.link("worker_1", "1"))
    expect(_pane(page, "A")).to_be_visible()
    expect(_pane(page, "B")).to_be_visible()
    box_a, box_b = _pane(page, "A").bounding_box(), _pane(page, "B").bounding_box()
    assert box_a["x"] + box_a["width"] <= box_b["x"]  # side by side on a wide screen
    assert abs(box_a["y"] - box_b["y"]) < 2

    _say(page, "What is the weather like?")
    # both replies in flight together: both logs busy with streamed text at one moment
    page.wait_for_function(
        "() => document.querySelectorAll('[role=log][aria-busy=\"true\"]').length === 2")
    _both_replied(page, 1)
    for side in "AB":
        expect(_pane(page, side).get_by_text("What is the weather like?")).to_be_visible()
    expect(page.get_by_role("heading", name="Which reply is better?")).to_be_visible()
    # the vote comes first
    expect(page.get_by_role("textbox", name="Your message")).to_have_count(0)
    page.get_by_role("button", name="B is better").click()

    _say(page, "And tomorrow?")
    _both_replied(page, 2)
    page.get_by_role("button", name="Tie").click()
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert not worker.errors, worker.errors

    received = "".join(page.evaluate("window.__received"))
    assert "sunny" in received and "rainy" in received  # the streams were recorded
    assert not [name for name in SECRETS if name in received]

    engine = create_engine(_database(server))
    with engine.connect() as connection:
        unit_id, layout = connection.execute(
            select(Unit.public_id, Unit.layout).where(Unit.worker_id.is_not(None))).one()
        votes = connection.execute(select(BattleVote.turn, BattleVote.choice,
                                          BattleVote.preferred).order_by(BattleVote.turn)).all()
    engine.dispose()
    assert [tuple(v) for v in votes] == [(1, "b", layout["bots"][1]), (2, "tie", None)]

    # the requester's dashboard shows the leaderboard of the battles so far
    requester = new_worker().page
    requester.goto(server.dashboard)
    requester.get_by_label("Requester token").fill(server.token)
    requester.get_by_role("button", name="Sign in").click()
    requester.get_by_role("tab", name="Leaderboard").click()
    expect(requester.get_by_role("heading", name="Arena leaderboard")).to_be_visible()
    ranking = requester.get_by_role("table", name="Ranking")
    for bot in ("alphabot", "betabot"):
        # the first fit loads numpy and scipy in the server: seconds on a busy machine
        expect(ranking.get_by_role("rowheader", name=bot)).to_be_visible(timeout=30_000)
    expect(requester.get_by_text("2 votes of submitted battles")).to_be_visible()

    # Review shows both transcripts side by side, named, with the votes naming the bots
    requester.get_by_role("tab", name="Review").click()
    requester.get_by_role("button", name=f"Open {unit_id}").click()
    a, b = (requester.get_by_role("region", name=f"Model {side}: {bot}")
            for side, bot in zip("AB", layout["bots"], strict=True))
    expect(a.get_by_text("What is the weather like?")).to_be_visible()
    expect(b.get_by_text("And tomorrow?")).to_be_visible()
    assert a.bounding_box()["x"] + a.bounding_box()["width"] <= b.bounding_box()["x"]
    expect(requester.get_by_text(f"After message 1: Model B ({layout['bots'][1]})")).to_be_visible()
    expect(requester.get_by_text("After message 2: tie")).to_be_visible()


def _database(server) -> str:
    data_dir = next(a for a in server.run.process.args if a.startswith("data_dir="))
    return f"sqlite:///{data_dir.split('=', 1)[1]}/cep.sqlite3"


def test_a_phone_shows_both_replies_stacked(serve, new_worker, arena_conf):
    server = serve(arena_conf)
    worker = new_worker(viewport=(375, 740), mobile=True)
    page = worker.page
    page.goto(server.link("worker_2", "1"))
    _say(page, "Hello phone")
    _both_replied(page, 1)
    a, b = _pane(page, "A"), _pane(page, "B")
    for pane in (a, b):
        expect(pane.locator(".chat-message.is-bot")).to_be_visible()
        shape = pane.bounding_box()
        assert shape["x"] >= 0 and shape["x"] + shape["width"] <= 375
    assert a.bounding_box()["y"] + a.bounding_box()["height"] <= b.bounding_box()["y"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    b.locator(".chat-message.is-bot").scroll_into_view_if_needed()
    expect(b.locator(".chat-message.is-bot")).to_be_in_viewport()
    expect(page.get_by_role("button", name="A is better")).to_be_visible()
    assert not worker.errors, worker.errors


def test_one_side_failing_shows_try_again_in_its_pane_only(serve, new_worker, endpoints,
                                                            tmp_path):
    endpoints["betabot"].failures = [503]  # its first turn fails (no retries configured)
    opts = (f"alphabot: {{type: openai, base_url: '{endpoints['alphabot'].base_url}', "
            "model: model-one-x}\n"
            f"betabot: {{type: openai, base_url: '{endpoints['betabot'].base_url}', "
            "model: model-two-x, retries: 0}\n")
    server = serve(write_arena_conf(tmp_path / "failing", opts, reveal=True))
    worker = new_worker()
    page = worker.page
    page.goto(server.link("worker_3", "1"))
    _say(page, "Are you there?")
    engine = create_engine(_database(server))
    with engine.connect() as connection:
        held = connection.execute(
            select(Unit.layout).where(Unit.worker_id.is_not(None))).scalar_one()
    failing_side = "AB"[held["bots"].index("betabot")]
    engine.dispose()
    working_side = "B" if failing_side == "A" else "A"
    failing = page.locator(".arena-pane").filter(has=_pane(page, failing_side))
    expect(failing.get_by_role("alert")).to_contain_text("Model")
    expect(_pane(page, working_side).locator(".chat-message.is-bot")).to_contain_text("sunny")
    expect(page.locator(".arena-pane").filter(has=_pane(page, working_side))
           .get_by_role("button", name="Try again")).to_have_count(0)
    expect(page.get_by_role("button", name="A is better")).to_have_count(0)  # no vote yet
    failing.get_by_role("button", name="Try again").click()
    _both_replied(page, 1)
    expect(_pane(page, failing_side).locator(".chat-message.is-bot")).to_contain_text("rainy")
    page.get_by_role("button", name="Both are bad").click()
    # revealed once the vote is stored, before the worker finishes
    expect(page.get_by_text(f"Model {failing_side} was betabot")).to_be_visible()
    page.get_by_role("button", name="Finish").click()
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert not worker.errors, worker.errors


def test_a_reload_mid_stream_resumes_the_battle(serve, new_worker, arena_conf):
    server = serve(arena_conf)
    worker = new_worker()
    page = worker.page
    page.goto(server.link("worker_4", "1"))
    _say(page, "Tell me a story")
    page.wait_for_function(
        "() => document.querySelectorAll('[role=log][aria-busy=\"true\"]').length === 2")
    page.reload()
    _both_replied(page, 1)  # the replies streamed on while the page was away
    for side in "AB":
        expect(_pane(page, side).get_by_text("Tell me a story")).to_be_visible()
    page.get_by_role("button", name="A is better").click()
    _say(page, "Another one")
    _both_replied(page, 2)
    page.get_by_role("button", name="B is better").click()
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert not worker.errors, worker.errors


def _rate(page: Page, side: str, number: int, rating: int) -> None:
    """Label Model `side`'s reply `number` (counted on its own) with `rating`."""
    group = _pane(page, side).get_by_role(
        "group", name=f"Your rating of Model {side}'s message {number}")
    group.get_by_role("radio", name=str(rating), exact=True).click()


def test_a_worker_labels_both_panes_votes_and_rates_each_side_after(serve, new_worker,
                                                                    tmp_path, endpoints):
    opts = "".join(f"{name}: {{type: openai, base_url: '{fake.base_url}', model: m{n}}}\n"
                   for n, (name, fake) in enumerate(endpoints.items()))
    conf = write_arena_conf(tmp_path / "conf", opts, num_turns=2, vote="per_turn", extra=(
        f"    annotations_config_path: {BUCKETS}\n"
        "    do_interactive_online_annotations: turn_quality\n"
        "    do_interactive_offline_annotations: [[overall_quality]]\n"))
    server = serve(conf)
    worker = new_worker()
    page = worker.page
    page.goto(server.link("worker_1", "1"))
    box = page.get_by_role("textbox", name="Your message")
    clicked = {"A": [4, 2], "B": [1, 5]}
    for turn, text in enumerate(["What is the weather like?", "And tomorrow?"]):
        box.fill(text)
        box.press("Enter")
        _both_replied(page, turn + 1)
        vote = page.get_by_role("button", name="B is better" if turn == 0 else "Tie")
        expect(vote).to_be_disabled()  # both replies are to be rated first
        _rate(page, "A", turn + 1, clicked["A"][turn])
        expect(vote).to_be_disabled()
        expect(page.get_by_text(f"Model B's message {turn + 1}: rate")).to_be_visible()
        _rate(page, "B", turn + 1, clicked["B"][turn])
        vote.click()
    # after the last vote, the offline bucket about each side (named as its pane), one screen each
    overall = {"Model A": 5, "Model B": 1}
    for step, side in enumerate(overall):
        expect(page.get_by_role("heading", name="Overall quality")).to_be_visible()
        expect(page.get_by_text(f"Your chat with {side}")).to_be_visible()
        expect(page.get_by_text(f"Overall, how good a conversation partner was {side}?",
                                exact=True)).to_be_visible()
        questions = page.get_by_role("region", name="Questions about the dialogue")
        questions.get_by_role("radio", name=str(overall[side]), exact=True).first.click()
        page.get_by_role("contentinfo").get_by_role(
            "button", name="Submit" if step else "Continue").click()
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert not worker.errors, worker.errors

    data_dir = _database(server).removeprefix("sqlite:///").rsplit("/", 1)[0]
    out = tmp_path / "items.jsonl"
    exported = subprocess.run(
        [sys.executable, "-m", "collection_and_annotations", "export", "--task", "arena",
         "--format", "jsonl", "--output", str(out), "--data-dir", data_dir],
        cwd=REPO, capture_output=True, text=True, timeout=60)
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    engine = create_engine(_database(server))
    with engine.connect() as connection:
        layout = connection.execute(
            select(Unit.layout).where(Unit.worker_id.is_not(None))).scalar_one()
    engine.dispose()
    bot_a, bot_b = layout["bots"]
    labels = sorted((r["bot"], r["answer"]) for r in rows if r["bucket"] == "turn_quality")
    assert labels == sorted([(bot_a, 4), (bot_a, 2), (bot_b, 1), (bot_b, 5)])
    rated = {r["bot"]: r["answer"] for r in rows if r["bucket"] == "overall_quality"}
    assert rated == {bot_a: 5, bot_b: 1}
    assert [r["chosen"] for r in rows if r["bucket"] == "vote"] == [bot_b, None]

    # the review shows the labels under the replies and the answers about each side
    requester = new_worker().page
    requester.goto(server.dashboard)
    requester.get_by_label("Requester token").fill(server.token)
    requester.get_by_role("button", name="Sign in").click()
    requester.get_by_role("tab", name="Review").click()
    requester.get_by_role("button", name=re.compile("^Open ")).click()
    side_a = requester.get_by_role("region", name=f"Model A: {bot_a}")
    expect(side_a.get_by_text("Turn quality")).to_have_count(2)
    for side, rating in overall.items():
        about = requester.get_by_role("region", name=f"Answers about {side}")
        expect(about).to_contain_text("Overall quality")
        expect(about).to_contain_text(str(rating))
        expect(about).not_to_contain_text("Turn quality")  # shown under the replies


def test_the_bots_are_named_only_after_the_questions_about_each_side(serve, new_worker,
                                                                      tmp_path, endpoints):
    opts = "".join(f"{name}: {{type: openai, base_url: '{fake.base_url}', model: m{n}}}\n"
                   for n, (name, fake) in enumerate(endpoints.items()))
    conf = write_arena_conf(tmp_path / "conf", opts, reveal=True, extra=(
        f"    annotations_config_path: {BUCKETS}\n"
        "    do_interactive_offline_annotations: [[overall_quality]]\n"))
    server = serve(conf)
    worker = new_worker()
    page = worker.page
    page.goto(server.link("worker_1", "1"))
    _say(page, "Hello")
    _both_replied(page, 1)
    page.get_by_role("button", name="A is better").click()
    expect(page.get_by_text("Your chat with Model A")).to_be_visible()
    page.get_by_role("region", name="Questions about the dialogue").get_by_role(
        "radio", name="4", exact=True).first.click()
    page.reload()  # the answer so far is kept (the unit's draft)
    expect(page.get_by_text("Your chat with Model A")).to_be_visible()
    expect(page.get_by_role("radio", name="4", exact=True).first).to_be_checked()
    page.get_by_role("contentinfo").get_by_role("button", name="Continue").click()
    expect(page.get_by_text("Your chat with Model B")).to_be_visible()
    page.get_by_role("region", name="Questions about the dialogue").get_by_role(
        "radio", name="2", exact=True).first.click()
    assert not [name for name in SAYS if page.get_by_text(name).count()]
    page.get_by_role("contentinfo").get_by_role("button", name="Continue").click()
    expect(page.get_by_text(re.compile("Model A was (alphabot|betabot)"))).to_be_visible()
    page.get_by_role("button", name="Finish").click()
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert not worker.errors, worker.errors
