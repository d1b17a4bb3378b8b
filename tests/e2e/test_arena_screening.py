"""Arena screening in Chromium: a new worker's link gives screening battles first, each looking
like a real one; a passed one says how many are left, the last one says the training is
passed, and the same link goes on to real battles."""

from __future__ import annotations

import pytest
from arena_helpers import write_arena_conf
from playwright.sync_api import Page, expect
from sqlalchemy import create_engine, select

from collection_and_annotations.storage.models import Unit

from .test_arena import _both_replied, _database

pytestmark = pytest.mark.browser

DEMO = "parrot: {type: demo, name: parrot}\nchatter: {type: demo, name: chatter}\n"
SCREENING = ("    use_screening_task: true\n    passed_qualification_name: arena_ok\n"
             "    screening_pairs: ['parrot>chatter']\n    screening_battles: 2\n")


def _open_battle(server) -> tuple[str, list[str]]:
    """The pool and sides (A, B) of the battle the worker holds."""
    engine = create_engine(_database(server))
    with engine.connect() as connection:
        pool, layout = connection.execute(select(Unit.pool, Unit.layout)
                                          .where(Unit.status == "assigned")).one()
    engine.dispose()
    return pool, layout["bots"]


def _vote_for_parrot(page: Page, server) -> str:
    box = page.get_by_role("textbox", name="Your message")
    box.fill("Hello there")
    box.press("Enter")
    _both_replied(page, 1)
    pool, bots = _open_battle(server)
    page.get_by_role("button", name=f"{'AB'[bots.index('parrot')]} is better").click()
    return pool


def test_screening_battles_come_first_then_the_same_link_goes_on(serve, new_worker, tmp_path):
    server = serve(write_arena_conf(tmp_path / "conf", DEMO, extra=SCREENING))
    worker = new_worker()
    page = worker.page
    page.goto(server.link("worker_1", "1"))

    assert _vote_for_parrot(page, server) == "screening"
    expect(page.get_by_role("heading", name="Passed")).to_be_visible()
    expect(page.get_by_text("1 more before the task")).to_be_visible()
    page.get_by_role("button", name="Continue").click()

    assert _vote_for_parrot(page, server) == "screening"
    expect(page.get_by_role("heading", name="Training passed")).to_be_visible()
    page.get_by_role("button", name="Continue to the task").click()

    expect(page.get_by_role("textbox", name="Your message")).to_be_visible()
    assert _open_battle(server)[0].startswith("arena_")  # a real battle now
    assert not worker.errors, worker.errors
