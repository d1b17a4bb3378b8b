"""Python agents in the original's layout: found beside the task folder or in the project root,
one agent per conversation, acts in threads bounded by max_concurrent_responses."""

from __future__ import annotations

import asyncio
import sys
import textwrap
import time
from pathlib import Path

import pytest

from collection_and_annotations.bots import BotUnavailable, Turn, build_bots
from collection_and_annotations.errors import UserError

from .conftest import reply, write_opts

pytestmark = pytest.mark.anyio

STATEFUL = """\
import threading
import time

LOCK = threading.Lock()
STATS = {"running": 0, "most": 0, "made": 0, "loaded": 0}


class StatefulAgent:
    def __init__(self, opt):
        self.opt, self.seen = opt, []
        with LOCK:
            STATS["made"] += 1

    def observe(self, message):
        assert message["id"] == "Worker" and message["episode_done"] is False
        self.seen.append(message["text"])

    def act(self):
        with LOCK:
            STATS["running"] += 1
            STATS["most"] = max(STATS["most"], STATS["running"])
        time.sleep(self.opt.get("sleep", 0))
        with LOCK:
            STATS["running"] -= 1
        if self.seen[-1] == "raise":
            raise RuntimeError("the agent broke")
        if self.seen[-1] == "silent":
            return {"text": ""}
        return {"text": f"{self.opt['greeting']} #{len(self.seen)}: " + " | ".join(self.seen)}
"""


def _agent(root: Path, name: str, source: str) -> None:
    folder = root / "parlai_internal" / "agents" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(source))


def _bot(tmp_path, context, spec: str):
    _, specs = write_opts(tmp_path, f"bot: {spec}\n")
    return build_bots(specs, ["bot"], context)["bot"]


def _module(bot):
    return sys.modules[bot._agent_class.__module__]


async def test_original_layout_and_state_per_conversation(tmp_path, context):
    _agent(context.task_dir.parent, "stateful", STATEFUL)
    bot = _bot(tmp_path, context, "--model internal:stateful --greeting hi")
    assert bot.settings() == {"type": "python", "agent": "stateful",
                              "opt": {"model": "internal:stateful", "greeting": "hi"}}
    one, two = bot.session("c1"), bot.session("c2")
    assert await reply(one, "a") == ["hi #1: a"]
    assert await reply(two, "x") == ["hi #1: x"]
    assert await reply(one, "a", "hi #1: a", "b") == ["hi #2: a | b"]
    await one.close()
    await bot.aclose()


async def test_project_root_comes_before_the_task_folder(tmp_path, context):
    _agent(context.task_dir.parent, "twin", "class TwinAgent:\n    pass\n")
    _agent(context.project_root, "twin", """\
        class TwinAgent:
            def observe(self, message):
                pass

            def act(self):
                return {"text": "from the project root"}
        """)
    bot = _bot(tmp_path, context, "--model twin")  # no `internal:`, still found: a Python agent
    assert await reply(bot.session("c"), "hi") == ["from the project root"]  # Cls() fallback
    await bot.aclose()


async def test_a_restarted_conversation_gets_its_history(tmp_path, context):
    _agent(context.task_dir.parent, "stateful", STATEFUL)
    bot = _bot(tmp_path, context, "--model internal:stateful --greeting hi")
    assert await reply(bot.session("c"), "a", "b", "c") == ["hi #1: a\nb\nc"]
    await bot.aclose()


async def test_max_concurrent_responses_bounds_acts_and_the_loop_runs(tmp_path, context):
    _agent(context.task_dir.parent, "stateful", STATEFUL)
    bot = _bot(tmp_path, context, "--model internal:stateful --greeting hi --sleep 0.2")
    ticks = 0

    async def tick():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    started = time.monotonic()
    replies = await asyncio.gather(*(reply(bot.session(f"c{i}"), f"m{i}") for i in range(6)))
    elapsed = time.monotonic() - started
    ticker.cancel()
    assert replies == [[f"hi #1: m{i}"] for i in range(6)]
    assert _module(bot).STATS["most"] == 2  # context.max_concurrent_responses
    assert elapsed >= 0.55 and ticks > 20  # three rounds of two; the loop kept running
    await bot.aclose()


async def test_act_raising_propagates_and_no_text_is_unavailable(tmp_path, context):
    _agent(context.task_dir.parent, "stateful", STATEFUL)
    bot = _bot(tmp_path, context, "--model internal:stateful --greeting hi")
    with pytest.raises(RuntimeError, match="the agent broke"):
        await reply(bot.session("c1"), "raise")
    with pytest.raises(BotUnavailable):
        await reply(bot.session("c2"), "silent")
    await bot.aclose()


async def test_streaming_agent_and_shared_state_loaded_once(tmp_path, context):
    _agent(context.project_root, "streamer", """\
        LOADS = []

        class StreamerAgent:
            def __init__(self, opt, shared=None):
                if shared is None:
                    LOADS.append("weights")
                    self.weights = "W"
                else:
                    self.weights = shared["weights"]

            def share(self):
                return {"weights": self.weights}

            def observe(self, message):
                self.text = message["text"]

            def act_stream(self):
                for word in self.text.split():
                    yield word.upper() + " "
        """)
    bot = _bot(tmp_path, context, "--model internal:streamer")
    assert await bot.check() is None  # loads the shared state at launch
    assert await reply(bot.session("a"), "one two") == ["ONE ", "TWO "]
    assert await reply(bot.session("b"), "three") == ["THREE "]
    assert _module(bot).LOADS == ["weights"]
    await bot.aclose()
    # The server builds its bots again after the launch check: the weights are not reloaded.
    again = _bot(tmp_path, context, "--model internal:streamer")
    assert again is not bot
    assert await reply(again.session("c"), "four") == ["FOUR "]
    assert _module(again).LOADS == ["weights"]
    other = _bot(tmp_path, context, "--model internal:streamer --temperature 0.5")
    assert await reply(other.session("d"), "five") == ["FIVE "]
    assert _module(other).LOADS == ["weights", "weights"]  # other options: its own load
    await again.aclose()
    await other.aclose()


@pytest.mark.parametrize(("source", "reason"), [
    (None, "agent module parlai_internal/agents/gone/gone.py not found"),
    ("class Other:\n    pass\n", "has no class GoneAgent"),
    ("import parlai.core.agents\n", "imports ParlAI, which is not installed: pip install "
                                    "'.[parlai]'"),
    ("def broken(:\n", "syntax error in its agent"),
])
def test_agent_loading_errors(tmp_path, context, source, reason):
    if source is not None:
        _agent(context.task_dir.parent, "gone", source)
    with pytest.raises(UserError) as error:
        _bot(tmp_path, context, "--model internal:gone")
    assert "bot 'bot'" in str(error.value) and reason in str(error.value)


def test_class_name_in_another_case_is_accepted(tmp_path, context):
    _agent(context.task_dir.parent, "dukenet", "class DukeNetAgent:\n    pass\n")
    assert _bot(tmp_path, context, "--model internal:dukenet")._agent_class.__name__ == \
        "DukeNetAgent"


async def test_history_turns_are_plain_turns(tmp_path, context):
    _agent(context.task_dir.parent, "stateful", STATEFUL)
    bot = _bot(tmp_path, context, "--model internal:stateful --greeting hi")
    session = bot.session("c")
    history = [Turn("worker", "a")]
    assert [p async for p in session.reply(history)] == ["hi #1: a"]
    history += [Turn("bot", "hi #1: a"), Turn("worker", "b"), Turn("worker", "c")]
    assert [p async for p in session.reply(history)] == ["hi #2: a | b\nc"]
    await bot.aclose()
