"""The built-in demo bots: word-by-word streaming with a delay, deterministic per conversation."""

from __future__ import annotations

import time

import pytest

from collection_and_annotations.bots import build_bots

from .conftest import reply, write_opts

pytestmark = pytest.mark.anyio


@pytest.fixture
def bots(tmp_path, context):
    _, specs = write_opts(tmp_path, """\
        parrot: {type: demo, name: parrot, delay: 0.02}
        chatter: {type: demo, name: chatter, delay: 0}
        """)
    return build_bots(specs, ["parrot", "chatter"], context)


async def test_parrot_streams_word_by_word_with_its_delay(bots):
    started = time.monotonic()
    pieces = await reply(bots["parrot"].session("c1"), "I like my garden")
    elapsed = time.monotonic() - started
    text = "".join(pieces)
    assert "you like your garden" in text
    assert len(pieces) == len(text.split(" ")) > 3 and pieces[0].endswith(" ")
    assert elapsed >= 0.02 * (len(pieces) - 1) * 0.9
    assert bots["parrot"].settings() == {"type": "demo", "name": "parrot"}


async def test_replies_depend_on_conversation_and_history_only(bots):
    history = ("Hello", "Hi there! What made you smile today?", "I cooked pizza for dinner")
    for bot in bots.values():
        same = [await reply(bot.session("c1"), *history) for _ in range(2)]
        assert same[0] == same[1]
    others = {"".join(await reply(bots["parrot"].session(f"c{i}"), "we went out"))
              for i in range(12)}
    assert len(others) > 1


async def test_chatter_follows_the_topic(bots):
    food = "".join(await reply(bots["chatter"].session("c"), "I cooked pizza for dinner"))
    assert any(q in food for q in ("favourite dish", "cook at home"))
    pets = "".join(await reply(bots["chatter"].session("c"), "my dog is sleeping"))
    assert any(q in pets for q in ("any pets", "pet's name"))
    assert "".join(await reply(bots["parrot"].session("c"), "")).strip()


async def test_counter_thinks_before_its_twenty_pieces(tmp_path, context):
    _, specs = write_opts(tmp_path, "slow: {type: demo, name: counter, think: 0.3, delay: 0}\n")
    session = build_bots(specs, ["slow"], context)["slow"].session("c1")
    started = time.monotonic()
    stream = session.reply([])
    first = await anext(stream)
    assert time.monotonic() - started >= 0.3
    rest = [piece async for piece in stream]
    assert [first, *rest] == [f"{n} " for n in range(1, 20)] + ["20"]
