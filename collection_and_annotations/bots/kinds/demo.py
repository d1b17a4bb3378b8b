"""Built-in demo bots: rule-based, no network, no weights, so a demo chat runs anywhere.

`{type: demo, name: parrot}` reflects the worker's message back as a question;
`{type: demo, name: chatter}` picks up a topic from keywords and asks a follow-up;
`{type: demo, name: counter}` counts to twenty (a steady load for benchmarks). Replies stream
word by word (`delay` seconds apart) after `think` seconds (default 0), so the page shows
streaming, and depend only on the conversation id and the history.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from collection_and_annotations.bots.base import BotContext, Turn
from collection_and_annotations.bots.kinds import BOT_KINDS
from collection_and_annotations.bots.model_opts import BotSpec

DEFAULT_DELAY = 0.03

_REFLECTIONS = {"i": "you", "me": "you", "my": "your", "mine": "yours", "am": "are",
                "i'm": "you're", "myself": "yourself", "you": "I", "your": "my",
                "yours": "mine", "you're": "I'm", "we": "you", "our": "your"}
_PARROT_FRAMES = ["So {0}? Tell me more about that.", "Why do you say {0}?",
                  "How do you feel now that {0}?", "Interesting: {0}. What happened next?"]
_PARROT_EMPTY = ["Hello! What would you like to talk about?", "I'm listening. Go on."]

_TOPICS: dict[str, tuple[tuple[str, ...], list[str]]] = {
    "food": (("food", "eat", "cook", "pizza", "dinner", "lunch", "breakfast", "restaurant"),
             ["I love trying new recipes.", "Food is one of life's great pleasures."]),
    "music": (("music", "song", "band", "concert", "guitar", "piano", "sing"),
              ["Music makes every day better.", "I have been listening to a lot of jazz."]),
    "travel": (("travel", "trip", "vacation", "holiday", "beach", "flight", "country"),
               ["Travelling opens the mind.", "I would love to see the mountains someday."]),
    "sports": (("sport", "football", "soccer", "basketball", "tennis", "run", "gym", "game"),
               ["Staying active is great.", "I enjoy watching a close match."]),
    "pets": (("dog", "cat", "pet", "puppy", "kitten", "animal"),
             ["Pets are wonderful company.", "I have always wanted a dog."]),
    "work": (("work", "job", "office", "boss", "study", "school", "class", "exam"),
             ["Work can be a lot sometimes.", "Learning new things keeps me going."]),
}
_FOLLOW_UPS = {
    "food": ["What is your favourite dish?", "Do you cook at home often?"],
    "music": ["Who is your favourite artist?", "Do you play an instrument?"],
    "travel": ["Where would you go next?", "What was your best trip so far?"],
    "sports": ["Do you play or mostly watch?", "Which team do you follow?"],
    "pets": ["Do you have any pets?", "What is your pet's name?"],
    "work": ["What do you do?", "What do you enjoy most about it?"],
}
_SMALL_TALK = ["What do you like to do on weekends?", "Have you read anything good lately?",
               "What made you smile today?", "Is there a place you would love to visit?"]


def parrot(message: str, rng: random.Random) -> str:
    words = re.findall(r"[\w']+", message.lower())
    if not words:
        return rng.choice(_PARROT_EMPTY)
    reflected = " ".join(_REFLECTIONS.get(word, word) for word in words[:20])
    return rng.choice(_PARROT_FRAMES).format(reflected)


def chatter(message: str, rng: random.Random) -> str:
    words = set(re.findall(r"[a-z']+", message.lower()))
    for topic, (keywords, remarks) in _TOPICS.items():
        if any(word.startswith(keyword) for word in words for keyword in keywords):
            return f"{rng.choice(remarks)} {rng.choice(_FOLLOW_UPS[topic])}"
    if words & {"hi", "hello", "hey"}:
        return f"Hi there! {rng.choice(_SMALL_TALK)}"
    return f"I see. {rng.choice(_SMALL_TALK)}"


def counter(message: str, rng: random.Random) -> str:
    return " ".join(str(n) for n in range(1, 21))


DEMO_BOTS: dict[str, Callable[[str, random.Random], str]] = {
    "parrot": parrot, "chatter": chatter, "counter": counter}


class DemoSession:
    def __init__(self, respond: Callable[[str, random.Random], str], conversation_id: str,
                 delay: float, think: float):
        self._respond, self._conversation_id, self._delay = respond, conversation_id, delay
        self._think = think

    async def reply(self, history: list[Turn]) -> AsyncIterator[str]:
        last = next((t.text for t in reversed(history) if t.role == "worker"), "")
        rng = random.Random(f"{self._conversation_id}:{len(history)}")
        words = self._respond(last, rng).split(" ")
        if self._think:
            await asyncio.sleep(self._think)
        for i, word in enumerate(words):
            if i:
                await asyncio.sleep(self._delay)
            yield word if i == len(words) - 1 else word + " "

    async def close(self) -> None:
        return None


@BOT_KINDS.register("demo")
class DemoBot:
    keys = frozenset({"name", "delay", "think"})
    required = frozenset({"name"})

    def __init__(self, nickname: str, name: str, delay: float, think: float = 0.0):
        self.nickname, self._name, self._delay, self._think = nickname, name, delay, think

    @classmethod
    def from_spec(cls, spec: BotSpec, context: BotContext) -> DemoBot:
        name = spec.options["name"]
        if name not in DEMO_BOTS:
            raise spec.error(f"no demo bot '{name}' (demo bots: {', '.join(DEMO_BOTS)})", "name")
        delay = _seconds(spec, "delay", DEFAULT_DELAY, "between streamed words")
        think = _seconds(spec, "think", 0.0, "before the first word")
        return cls(spec.nickname, name, delay, think)

    def settings(self) -> dict[str, Any]:
        return {"type": "demo", "name": self._name}

    def session(self, conversation_id: str) -> DemoSession:
        return DemoSession(DEMO_BOTS[self._name], conversation_id, self._delay, self._think)

    async def check(self) -> str | None:
        return None

    async def aclose(self) -> None:
        return None


def _seconds(spec: BotSpec, key: str, default: float, what: str) -> float:
    value = spec.options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 60:
        raise spec.error(f"'{key}' is the seconds {what} (0 to 60)", key)
    return float(value)
