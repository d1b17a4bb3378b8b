"""A fake OpenAI-compatible judge on 127.0.0.1: `POST /v1/chat/completions` (not streamed)
answered by a rule read off the prompt, with a planted error rate per label. It honours and
records `response_format`, reports usage, and can be told to answer malformed JSON, 429 or
500, to refuse `response_format`, or to take its time.

The rule: a dialogue's turns carry their truth as markers in their text. A multiselect label
`v` applies to a turn that holds `#v`; a rating `k` is N where the turn (or, for the whole
dialogue, any turn) holds `#k=N`, else 3; a comparison chooses the side holding `#better`;
a question tree answers each unconditional question with its first answer (or none).
`errors[label]`: the share of the label's answers flipped (or, for a rating, moved by one),
picked by a hash of the turn, so a test computes the same answers (`expected_labels`).

Run alone (`python tests/judges/fake_judge.py --port P --latency 0.05`) it serves in its own
process, as the benchmark uses it.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, also when run alone
from bots.fake_openai import FakeOpenAI, Served  # noqa: E402

__all__ = ["FakeJudge", "Served", "expected_labels", "expected_rating", "rule_answer"]

TURN = re.compile(r"^Turn (\d+) \(([^)]*)\): (.*)$")
SIDE_TITLES = ("Dialogue 1 (left)", "Dialogue 2 (right)")
SCHEMA_LINE = "It follows this JSON schema:\n"


def flipped(label: str, target: str, text: str, rate: float) -> bool:
    """Whether the rule plants an error on this answer (a fixed hash, not a draw)."""
    if rate <= 0:
        return False
    digest = hashlib.sha256(f"{label}|{target}|{text}".encode()).digest()
    return int.from_bytes(digest[:8]) / 2 ** 64 < rate


def expected_labels(values: list[str], target: str, text: str,
                    errors: dict[str, float]) -> list[str]:
    """The labels the rule gives a turn: its markers, with the planted errors."""
    return [v for v in values if (f"#{v}" in text) != flipped(v, target, text,
                                                              errors.get(v, 0.0))]


def expected_rating(key: str, target: str, text: str, errors: dict[str, float]) -> int:
    found = re.search(rf"#{re.escape(key)}=(\d)", text)
    rating = int(found.group(1)) if found else 3
    if flipped(key, target, text, errors.get(key, 0.0)):
        rating = rating + 1 if rating < 5 else rating - 1
    return rating


def _sides(prompt: str) -> list[dict[int, str]]:
    """Each shown dialogue's turns (number -> text)."""
    sides: list[dict[int, str]] = [{}]
    for line in prompt.splitlines():
        if line.strip() == SIDE_TITLES[1]:
            sides.append({})
        elif found := TURN.match(line):
            sides[-1][int(found.group(1))] = found.group(3)
    return sides


def rule_answer(schema: dict[str, Any], prompt: str, errors: dict[str, float]) -> dict[str, Any]:
    sides = _sides(prompt)
    answer: dict[str, Any] = {}
    for target, shape in schema["properties"].items():
        text = (sides[0][int(target.split()[1])] if target.startswith("turn ")
                else " ".join(sides[0].values()))
        if shape.get("type") == "array":
            answer[target] = expected_labels(shape["items"]["enum"], target, text, errors)
        elif shape.get("type") == "string":
            better = [i for i, side in enumerate(sides) if "#better" in " ".join(side.values())]
            answer[target] = shape["enum"][better[0] if better else -1]
        elif all(p.get("type") == "integer" for p in shape["properties"].values()):
            answer[target] = {key: expected_rating(key, target, text, errors)
                              for key in shape["properties"]}
        else:  # a question tree
            answer[target] = {qid: None if "anyOf" in q else
                              ([] if q["type"] == "array" else q["enum"][0])
                              for qid, q in shape["properties"].items()}
    return answer


@dataclass
class FakeJudge(FakeOpenAI):
    """The chat fake's port, statuses to fail with (`failures`) and recorded `requests`, with
    whole JSON answers by the rule."""

    errors: dict[str, float] = field(default_factory=dict)  # label -> planted error rate
    scripted: list[str] = field(default_factory=list)  # replies sent before the rule's
    refuse_schema: bool = False  # 400 for a request with response_format
    latency: float = 0.0  # seconds per call
    cost: float | None = None  # usage.cost per call
    record: bool = True
    calls: int = 0  # chat completions answered 200

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        request = await _json_body(receive)
        headers = {name.decode(): value.decode() for name, value in scope["headers"]}
        if self.record:
            self.requests.append({"path": scope["path"], "headers": headers, "body": request})
        if scope["path"] == "/v1/models":
            await _answer(send, 200, {"data": []})
            return
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.failures:
            status = self.failures.pop(0)
            await _answer(send, status, {"error": f"status {status}; key was "
                                                  f"{headers.get('authorization', '')}"},
                          [(b"retry-after", b"0")] if status == 429 else [])
            return
        if self.refuse_schema and "response_format" in request:
            await _answer(send, 400, {"error": {"message": "response_format is not supported"}})
            return
        prompt = next(m["content"] for m in request["messages"] if m["role"] == "user")
        if self.scripted:
            content = self.scripted.pop(0)
        else:
            schema = (request["response_format"]["json_schema"]["schema"]
                      if "response_format" in request else
                      json.loads(prompt.split(SCHEMA_LINE, 1)[1].splitlines()[0]))
            content = json.dumps(rule_answer(schema, prompt, self.errors))
        usage: dict[str, Any] = {"prompt_tokens": sum(len(m["content"]) for m in
                                                      request["messages"]) // 4,
                                 "completion_tokens": len(content) // 4}
        if self.cost is not None:
            usage["cost"] = self.cost
        self.calls += 1
        await _answer(send, 200, {"choices": [{"message": {"role": "assistant",
                                                           "content": content}}],
                                  "usage": usage})


async def _json_body(receive) -> Any:
    chunks, more = [], True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return json.loads(b"".join(chunks) or b"null")


async def _answer(send, status: int, body: Any, headers: list | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *(headers or [])]})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    judge = FakeJudge(latency=args.latency, record=False, port=args.port)
    uvicorn.run(judge, host="127.0.0.1", port=args.port, log_level="critical", lifespan="off",
                backlog=4096)


if __name__ == "__main__":
    main()
