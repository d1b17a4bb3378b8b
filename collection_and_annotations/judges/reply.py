"""The JSON in a model's reply: models that cannot be held to a schema wrap it in a code fence
or a sentence; the object is taken from between its first `{` and its last `}`."""

from __future__ import annotations

import json
from typing import Any

from collection_and_annotations.judges.forms import FormError


def reply_json(text: str) -> Any:
    """The reply's JSON object (FormError, with what was wrong, when there is none)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise FormError("the reply holds no JSON object")
    try:
        return json.loads(text[start:end + 1])
    except ValueError as exc:
        raise FormError(f"the reply is not valid JSON ({exc})") from None
