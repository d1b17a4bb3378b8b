"""Display names per speaker, from the conf's `speaker_names`.

Original confs name the placeholders (`{SPEAKER_X: Bot, SPEAKER_Y: User}`, X being the bot);
what the page needs is a name per speaker, because `SPEAKER_X` means the speaker of the turn being
annotated (and the bot for dialogue-level texts), `SPEAKER_Y` the other one. The page substitutes
per turn; the server sends `{"system": ..., "user": ...}` and substitutes nothing itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULTS = {"system": "Bot", "user": "User"}
PLACEHOLDERS = {"SPEAKER_X": "system", "SPEAKER_Y": "user"}


def display_names(conf: Mapping[str, Any] | None) -> dict[str, str]:
    """`{"system": name, "user": name}` from placeholder keys or speaker keys (either works)."""
    names = dict(DEFAULTS)
    for key, value in (conf or {}).items():
        speaker = PLACEHOLDERS.get(str(key), str(key))
        if speaker in names and value is not None and str(value).strip():
            names[speaker] = str(value)
    return names
