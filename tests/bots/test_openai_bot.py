"""OpenAI-compatible endpoints against a fake server on 127.0.0.1: the request, the key,
streaming, retries before the first piece, and the key kept out of everything else."""

from __future__ import annotations

import logging

import pytest

from collection_and_annotations.bots import BotUnavailable, build_bots

from .conftest import reply, write_opts
from .fake_openai import FakeOpenAI, Served

pytestmark = pytest.mark.anyio
KEY = "sk-test-very-secret"


@pytest.fixture
def fake():
    app = FakeOpenAI()
    served = Served(app)
    yield app
    served.stop()


@pytest.fixture
def make_bot(tmp_path, context, monkeypatch):
    monkeypatch.setenv("CEP_TEST_KEY", KEY)
    built = []

    def _make(base_url: str, extra: str = ""):
        _, specs = write_opts(tmp_path, f"""\
            bot:
              type: openai
              base_url: {base_url}
              model: tiny-chat
              api_key_env: CEP_TEST_KEY
              system_prompt: Be brief.
              params: {{temperature: 0.7, max_tokens: 40}}
              backoff: 0.01
            {extra}""")
        built.append(build_bots(specs, ["bot"], context)["bot"])
        return built[-1]

    yield _make
    for bot in built:
        assert KEY not in repr(bot) and KEY not in str(bot.settings())


async def test_streams_with_the_request_and_key(fake, make_bot):
    bot = make_bot(fake.base_url)
    assert await reply(bot.session("c"), "Hi", "Hello!", "How are you?") == \
        ["Hel", "lo", " there"]
    [request] = fake.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == f"Bearer {KEY}"
    assert request["body"] == {
        "model": "tiny-chat", "stream": True, "temperature": 0.7, "max_tokens": 40,
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Hi"},
                     {"role": "assistant", "content": "Hello!"},
                     {"role": "user", "content": "How are you?"}]}
    settings = bot.settings()
    assert settings["model"] == "tiny-chat" and settings["params"] == {"temperature": 0.7,
                                                                       "max_tokens": 40}
    assert len(settings["system_prompt_sha256"]) == 64
    assert fake.base_url not in str(settings)
    assert await bot.check() is None
    await bot.aclose()


async def test_non_streaming_answer_is_one_piece(fake, make_bot):
    fake.mode = "json"
    bot = make_bot(fake.base_url)
    assert await reply(bot.session("c"), "Hi") == ["Hello there"]
    await bot.aclose()


async def test_retries_503_and_429_then_succeeds(fake, make_bot):
    fake.failures = [503, 429]
    bot = make_bot(fake.base_url)
    assert "".join(await reply(bot.session("c"), "Hi")) == "Hello there"
    assert len(fake.requests) == 3
    await bot.aclose()


async def test_stays_down_is_unavailable_without_secrets(fake, make_bot, caplog):
    fake.failures = [503] * 10
    bot = make_bot(fake.base_url, "  retries: 2\n")
    with caplog.at_level(logging.INFO), pytest.raises(BotUnavailable) as error:
        await reply(bot.session("c"), "Hi")
    assert len(fake.requests) == 3
    for text in (str(error.value), caplog.text):
        assert KEY not in text
    assert "127.0.0.1" not in str(error.value) and "tiny-chat" not in str(error.value)
    await bot.aclose()


async def test_client_error_is_not_retried_and_the_key_is_not_logged(fake, make_bot, caplog):
    fake.failures = [401]
    bot = make_bot(fake.base_url)
    with caplog.at_level(logging.INFO), pytest.raises(BotUnavailable):
        await reply(bot.session("c"), "Hi")
    assert len(fake.requests) == 1
    assert "HTTP 401" in caplog.text and "Bearer ***" in caplog.text and KEY not in caplog.text


async def test_broken_stream_after_a_piece_is_unavailable_and_not_retried(fake, make_bot):
    fake.mode = "break"
    bot = make_bot(fake.base_url)
    pieces = []
    with pytest.raises(BotUnavailable):
        async for piece in bot.session("c").reply([]):
            pieces.append(piece)
    assert pieces == ["Hel"] and len(fake.requests) == 1
    await bot.aclose()


async def test_timeout_bounds_the_gap_between_pieces(fake, make_bot):
    fake.mode = "stall"
    bot = make_bot(fake.base_url, "  timeout: 0.3\n")
    with pytest.raises(BotUnavailable, match="too long"):
        await reply(bot.session("c"), "Hi")
    await bot.aclose()


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_a_launch_check_refused_with_any_4xx_warns_with_status_and_body(fake, make_bot,
                                                                             status):
    fake.models_status = status  # LiteLLM's proxy answers a wrong key with 400
    bot = make_bot(fake.base_url)
    warning = await bot.check()
    assert f"{fake.base_url}/models answered HTTP {status}" in warning
    assert "Invalid proxy server token passed" in warning  # the server's own words
    assert "Bearer ***" in warning and KEY not in warning
    await bot.aclose()


async def test_nothing_listening_retries_then_unavailable_and_check_warns(make_bot):
    from helpers import free_port

    bot = make_bot(f"http://127.0.0.1:{free_port()}/v1", "  retries: 1\n")
    with pytest.raises(BotUnavailable):
        await reply(bot.session("c"), "Hi")
    warning = await bot.check()
    assert "unreachable" in warning and KEY not in warning
    await bot.aclose()
