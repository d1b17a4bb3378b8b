"""Which dialogue a comparative answer chose.

The original buckets' convention: `options[0]` is the dialogue shown on the left ("Dialogue 1
(left)"), `options[1]` the one on the right, any further option means no preference. Since the
sides are randomised per unit, the option text alone does not say which dialogue won; the stored
value adds it:

    {"option": "Dialogue 1 (left)", "side": "left", "dialogue": "turns2"}

(`side` and `dialogue` are null for a no-preference option). The worker sends only the option
text; the server derives the rest from the unit's layout, so a retried submit maps to the same
stored value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collection_and_annotations.blueprints.static_annotation.buckets import Bucket
from collection_and_annotations.blueprints.static_annotation.layout import ShownDialogue

SIDE_NAMES = ("left", "right")


def stored_choice(option: str, options: list[str], shown: ShownDialogue) -> dict[str, Any]:
    """The stored value of one comparative answer (`option` is one of `options`)."""
    place = options.index(option)
    side = SIDE_NAMES[place] if place < len(SIDE_NAMES) else None
    dialogue = {"left": shown.left or "turns", "right": shown.right}.get(side) if side else None
    return {"option": option, "side": side, "dialogue": dialogue}


def with_choices(
    answers: Any, shown: list[ShownDialogue], buckets: Mapping[str, Bucket]
) -> Any:
    """The submitted answers with each comparative option replaced by its stored value (the
    answers were checked before, anything unexpected is kept as sent)."""
    if not isinstance(answers, dict):
        return answers
    by_key = {d.item["key"]: d for d in shown}
    stored: dict[str, Any] = {}
    for key, given in answers.items():
        dialogue = by_key.get(key)
        if dialogue is None or not isinstance(given, dict):
            stored[key] = given
            continue
        stored[key] = {}
        for name, targets in given.items():
            bucket = buckets.get(name)
            if bucket is None or bucket.config != "comparative" or not isinstance(targets, dict):
                stored[key][name] = targets
                continue
            stored[key][name] = {
                target: stored_choice(value, bucket.options, dialogue)
                if isinstance(value, str) and value in bucket.options else value
                for target, value in targets.items()
            }
    return stored


BARE_CHOICES = ("turns", "turns2")  # options[0] names the data's turns, options[1] its turns2


def choice_parts(value: Any, options: Any = ()) -> tuple[Any, str | None]:
    """(option text, chosen dialogue) of a stored comparative value. Submissions stored before
    sides were recorded hold the bare option text, and then showed `turns` on the left: the
    first option names `turns`, the second `turns2`, any other no preference."""
    if isinstance(value, dict):
        dialogue = value.get("dialogue")
        return value.get("option"), dialogue if isinstance(dialogue, str) else None
    if isinstance(options, list) and value in options[:2]:
        return value, BARE_CHOICES[options.index(value)]
    return value, None
