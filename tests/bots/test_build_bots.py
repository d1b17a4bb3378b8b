"""build_bots: only the bots the conf uses are built, and what a user must fix fails at launch
with the nickname, model_opts.yaml:LINE and the fix; check_bots only warns."""

from __future__ import annotations

import importlib.util

import pytest
from helpers import REPO, free_port

from collection_and_annotations import PACKAGE_DIR
from collection_and_annotations.bots import BotContext, build_bots, check_bots, load_model_opts
from collection_and_annotations.errors import UserError

from .conftest import line_of, reply, write_opts


def _fails(specs, nicknames, context) -> str:
    with pytest.raises(UserError) as error:
        build_bots(specs, nicknames, context)
    return str(error.value)


def test_unused_broken_specs_are_not_built(tmp_path, context):
    _, specs = write_opts(tmp_path, """\
        parrot: {type: demo, name: parrot}
        broken: {type: nosuch}
        typo: -model-file zoo:x
        """)
    with pytest.warns(UserWarning, match="typo"):
        bots = build_bots(specs, ["parrot"], context)
    assert list(bots) == ["parrot"]


@pytest.mark.parametrize(("spec", "key", "reason"), [
    ("{type: nosuch}", "type", "unknown type 'nosuch' (known: command, demo, openai, parlai, "
                               "python)"),
    ("{type: demo, name: parrot, colour: red}", "colour", "unknown key 'colour' for type "
                                                          "'demo'"),
    ("{type: demo}", None, "type 'demo' needs 'name'"),
    ("{type: demo, name: nosuch}", "name",
     "no demo bot 'nosuch' (demo bots: parrot, chatter, counter)"),
    ("{type: openai, base_url: http://h/v1, model: m, api_key_env: CEP_TEST_NO_SUCH_KEY}",
     "api_key_env", "'CEP_TEST_NO_SUCH_KEY' named by 'api_key_env' is not set"),
    ("{type: openai, base_url: h, model: m}", "base_url", "must start with http://"),
    ("{type: openai, base_url: http://h, model: m, params: {stream: false}}", "params",
     "may not set stream"),
    ("{type: command, command: [no-such-program-here]}", "command",
     "command 'no-such-program-here' not found"),
    ("{type: python}", "type", "declared with its opt string"),
    ("{type: command, command: [python3], concurrent_requests: 0}", "concurrent_requests",
     "'concurrent_requests' is how many requests the process is given at once"),
    ("-model-file zoo:x", None, "did you mean --model-file?"),
])
def test_launch_errors_name_bot_file_and_line(tmp_path, context, spec, key, reason):
    path, specs = write_opts(tmp_path, f"other: {{type: demo, name: parrot}}\nbot:\n  {spec}\n")
    message = _fails(specs, ["bot"], context)
    line = 2 if key is None or not spec.startswith("{") else 3
    assert message.startswith(f"{path}:{line}: bot 'bot': "), message
    assert reason in message


def test_mapping_key_errors_point_at_the_key(tmp_path, context):
    path, specs = write_opts(tmp_path, """\
        bot:
          type: demo
          name: parrot
          colour: red
        """)
    assert _fails(specs, ["bot"], context).startswith(f"{path}:4: bot 'bot': unknown key")


def test_unknown_nickname(tmp_path, context):
    _, specs = write_opts(tmp_path, "a: {type: demo, name: parrot}\n")
    assert "bot 'b' is not in model_opts (known: a)" in _fails(specs, ["b"], context)


@pytest.mark.skipif(importlib.util.find_spec("parlai") is not None, reason="ParlAI installed")
def test_parlai_model_without_the_extra(tmp_path, context):
    path, specs = write_opts(tmp_path, """\
        demo: {type: demo, name: parrot}
        blender_90M: >
            --model-file zoo:blender/blender_90M/model --inference topk
        """)
    message = _fails(specs, ["demo", "blender_90M"], context)
    assert message.startswith(f"{path}:{line_of(path, 'blender_90M')}: bot 'blender_90M': ")
    assert "needs ParlAI, which is not installed: pip install '.[parlai]'" in message


async def _check(bots):
    try:
        return await check_bots(bots)
    finally:
        for bot in bots.values():
            await bot.aclose()


@pytest.mark.anyio
async def test_check_bots_warns_for_an_endpoint_that_is_down(tmp_path, context):
    port = free_port()
    _, specs = write_opts(tmp_path, f"""\
        down: {{type: openai, base_url: "http://127.0.0.1:{port}/v1", model: m, timeout: 1}}
        parrot: {{type: demo, name: parrot}}
        """)
    warnings = await _check(build_bots(specs, ["down", "parrot"], context))
    assert len(warnings) == 1
    assert warnings[0].startswith(f"bot 'down': http://127.0.0.1:{port}/v1 is unreachable")


@pytest.mark.anyio
async def test_shipped_demo_bots_build_and_chat(tmp_path):
    specs = load_model_opts(PACKAGE_DIR / "task_config" / "demo_model_opts.yaml")
    context = BotContext(project_root=REPO, task_dir=tmp_path)
    bots = build_bots(specs, specs, context)
    assert {n: b.settings()["type"] for n, b in bots.items()} == {
        "parrot": "demo", "chatter": "demo", "recall": "python"}
    session = bots["recall"].session("c1")
    assert "Ann" in "".join(await reply(session, "Hello, my name is Ann."))
    await session.close()
    assert await _check(bots) == []
