"""A judge behind a command (the JSON-lines protocol of docs/bots.md): it answers the prompt
(the worker's first message) by the fake judge's rule."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fake_judge import SCHEMA_LINE, rule_answer  # noqa: E402

for line in sys.stdin:
    request = json.loads(line)
    if request.get("type") == "end":
        continue
    prompt = request["history"][0]["text"]
    schema = json.loads(prompt.split(SCHEMA_LINE, 1)[1].splitlines()[0])
    print(json.dumps({"id": request["id"], "text": json.dumps(rule_answer(schema, prompt, {}))}),
          flush=True)
