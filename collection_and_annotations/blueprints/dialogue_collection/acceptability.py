"""`check_acceptability`: the checks of ParlAI's crowdsourcing acceptability checker that need
no download, on the worker's messages of each conversation (the "Hi!" opener not counted).

- `under_min_length`: the worker's messages have fewer than 3 words on average;
- `too_much_all_caps`: two or more messages in capitals (or the only message);
- `copies_partner`: a message is an exact copy of one of the bot's (case, punctuation,
  articles and spacing ignored, as ParlAI normalises);
- `offensive:<n>`: message n holds a word or phrase of the conf's offensive-word list.

A unit with a violation is flagged for review and, with `block_on_unacceptable`, its worker
gets the task's block qualification. Violations never refuse the submission.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from collection_and_annotations.json_files import read_text

MIN_AVERAGE_WORDS = 3
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = re.compile(r"[!\"#$%&()*+,\-./:;<=>?@\[\]\\^`{|}~_']")
_WORDS = re.compile(r"[\w']+")


def normalized(text: str) -> str:
    """Lower case, punctuation and articles dropped, spaces collapsed (ParlAI's way)."""
    return " ".join(_ARTICLES.sub(" ", _PUNCTUATION.sub(" ", text.lower())).split())


def load_offensive_words(path: str | None) -> frozenset[str]:
    """One word or phrase per line; `#` starts a comment."""
    if not path:
        return frozenset()
    text = read_text(path, "offensive-word list (mephisto.blueprint.offensive_words_path)")
    lines = (line.split("#", 1)[0].strip().lower() for line in text.splitlines())
    return frozenset(line for line in lines if line)


def violations(worker: list[str], bot: Iterable[str],
               offensive: frozenset[str] = frozenset()) -> list[str]:
    """The violations of one conversation: `worker` are the worker's messages, `bot` the
    bot's."""
    if not worker:
        return []
    found = []
    if sum(len(text.split()) for text in worker) / len(worker) < MIN_AVERAGE_WORDS:
        found.append("under_min_length")
    capitals = sum(1 for text in worker if text == text.upper() and text != text.lower())
    if capitals >= 2 or (capitals == 1 and len(worker) == 1):
        found.append("too_much_all_caps")
    partner = {normalized(text) for text in bot} - {""}
    if any(normalized(text) in partner for text in worker):
        found.append("copies_partner")
    for n, text in enumerate(worker, start=1):
        words = " " + " ".join(_WORDS.findall(text.lower())) + " "
        if any(f" {phrase} " in words for phrase in offensive):
            found.append(f"offensive:{n}")
    return found
