"""An example agent in the original project's layout, without ParlAI: it remembers what the
worker says about themselves (name, likes, home) and brings it up later in the conversation.

Named in model_opts.yaml as `--model internal:recall`; one instance per conversation, so its
memory is that conversation's only.
"""

from __future__ import annotations

import re

FACTS = [
    ("name", re.compile(r"\bmy name is (\w+)|\bi'?m called (\w+)", re.I)),
    ("like", re.compile(r"\bi (?:really )?(?:like|love|enjoy) ([\w ]+?)(?:[.!?,]|$)", re.I)),
    ("home", re.compile(r"\bi(?:'m| am) from ([\w ]+?)(?:[.!?,]|$)|\bi live in ([\w ]+?)"
                        r"(?:[.!?,]|$)", re.I)),
]
QUESTIONS = {
    "name": "By the way, what is your name?",
    "like": "What do you like doing in your free time?",
    "home": "Where are you from?",
}


class RecallAgent:
    def __init__(self, opt: dict | None = None):
        self.opt = opt or {}
        self.facts: dict[str, str] = {}
        self.learned: list[str] = []
        self.turns = 0

    def observe(self, message: dict) -> None:
        """ParlAI's observe: the partner's message (`text`; a restarted conversation's
        earlier turns come newline-joined in one message)."""
        self.learned = []
        for key, pattern in FACTS:
            for match in pattern.finditer(message.get("text", "")):
                value = next(group for group in match.groups() if group).strip()
                if self.facts.get(key) != value:
                    self.facts[key] = value
                    self.learned.append(key)

    def act(self) -> dict:
        self.turns += 1
        parts = []
        if "name" in self.learned:
            parts.append(f"Nice to meet you, {self.facts['name']}!")
        if "like" in self.learned:
            parts.append(f"{self.facts['like'].capitalize()} sounds fun.")
        if "home" in self.learned:
            parts.append(f"I have heard good things about {self.facts['home']}.")
        if not parts and self.facts:
            key, value = sorted(self.facts.items())[self.turns % len(self.facts)]
            parts.append({"name": f"Tell me more, {value}.",
                          "like": f"Do you still get time for {value}?",
                          "home": f"What do you miss most about {value}?"}[key])
        missing = [key for key in QUESTIONS if key not in self.facts]
        parts.append(QUESTIONS[missing[0]] if missing else "What else is on your mind?")
        return {"id": "Recall", "text": " ".join(parts), "episode_done": False}
