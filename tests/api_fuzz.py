"""A seeded fuzzer of the HTTP API: requests to every worker, chat and requester endpoint with
ids, queries, bodies and credentials that are right, wrong, malformed or hostile, mixed so that
the server's state moves on (units claimed, drafted, submitted, reviewed, chats started).

It asserts nothing itself: `Fuzzer.run` returns every answer with a 5xx status (or no answer at
all), each with what was sent, so a test can require there are none and show how to replay.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from helpers import http_client

from collection_and_annotations.server.auth import requester_token

JUNK_TEXT = ("", " ", "x", "\x00", "a\x00b", "\ud800", "💥", "<script>alert(1)</script>",
             "'; DROP TABLE units; --", "../../etc/passwd", "%00", "%ff", "null", "-1", "0",
             "1e999", "NaN", "9" * 30, "y" * 201, "z" * 5000, "u_" + "0" * 24, "w_deadbeef",
             "SPEAKER_X", "$x^2$", "=cmd|' /C calc'!A0", "\u202e", "\n", "a b")
JUNK_NUMBERS = (0, 1, -1, 2, 5, 6, 0.5, -0.0, 1e-300, 1e308, -1e308, 2**31, 2**53 - 1,
                -(2**53 - 1), 2**53, 10**20, 10**400)
JUNK_PATH = ("", "x", "%00", "a%00b", "..%2F..%2Fetc%2Fpasswd", "%ff", "%C0%AE", "💥",
             "y" * 201, "u_" + "0" * 24, "-1", "0", "99999999999999999999", "%20", "a/b",
             "null", ".", "..")
CONTENT_TYPES = ("application/json", "application/json; charset=utf-8", "text/plain",
                 "application/x-www-form-urlencoded", None)
RAW_BODIES = (b"", b"{", b"[]", b"null", b"1", b'"x"', b"\xff\xfe", b'{"a": NaN}',
              b'{"a": 1e999}', b'{"a": ' + b"9" * 5001 + b"}", b"[" * 5000 + b"]" * 5000,
              b'{"a": "\\ud800"}', b'{"a": "\\u0000"}', b"{}" * 3, b'{"a":1,"a":2}',
              b"\x00" * 10, b"{" + b" " * 70_000 + b"}")


def valid_answers() -> dict[str, Any]:
    """A complete, right answer to one dialogue of the test task (4 turns; relevance, issues,
    overall_quality of the package's annotation_buckets.json)."""
    return {"relevance": {str(t): {
        "Does SPEAKER_X's reply follow from what SPEAKER_Y just said?": {
            "Yes, it responds to it directly.": {}},
        "Which problems does the reply have?": {}} for t in (1, 3)},
        "issues": {"1": ["off_topic"]},
        "overall_quality": {"dialogue": {"Overall": 2}}}


@dataclass
class Known:
    """What the fuzzer learned of the server, to aim some requests at real things."""

    visits: list[tuple[str, str]] = field(default_factory=list)  # (worker token, unit)
    units: list[str] = field(default_factory=list)
    keys: dict[str, list[str]] = field(default_factory=dict)  # unit -> its dialogues' keys
    pseudonyms: list[str] = field(default_factory=list)
    csrf: str | None = None
    session_cookie: str | None = None


@dataclass(frozen=True)
class Sent:
    method: str
    path: str
    headers: dict[str, str | bytes]
    body: bytes | None

    def __str__(self) -> str:
        body = (self.body or b"")[:300]
        return f"{self.method} {self.path[:200]} {self.headers} {body!r}"


class Fuzzer:
    """Requests to one served task at `base` (`chat`: its chat routes too)."""

    def __init__(self, base: str, secret: str, seed: int, chat: bool = False):
        self.rng = random.Random(seed)
        self.client = http_client(base_url=base, timeout=httpx.Timeout(20, read=20))
        self.requester = requester_token(secret)
        self.chat = chat
        self.known = Known()
        self.visit: tuple[str, str] | None = None  # the one this request is mostly about
        self.follow_ups: list[Sent] = []  # what a worker or requester does next, sent first
        self.endpoints = self._endpoints()

    def close(self) -> None:
        self.client.close()

    # -- values ---------------------------------------------------------------------------

    def value(self, depth: int = 0) -> Any:
        """A random JSON value (deep or large now and then)."""
        rng = self.rng
        kind = rng.randrange(9 if depth < 3 else 5)
        if kind == 0:
            return rng.choice((None, True, False))
        if kind in (1, 2):
            return rng.choice(JUNK_NUMBERS)
        if kind in (3, 4):
            return rng.choice(JUNK_TEXT)
        if kind in (5, 6):
            return [self.value(depth + 1) for _ in range(rng.randrange(4))]
        if kind == 7:
            return {rng.choice(JUNK_TEXT): self.value(depth + 1) for _ in range(rng.randrange(4))}
        nested: Any = rng.choice(JUNK_TEXT)
        for _ in range(rng.choice((5, 31, 40))):
            nested = [nested] if rng.random() < 0.5 else {"k": nested}
        return nested

    def pick(self, known: list[str], junk: tuple[str, ...] = JUNK_PATH) -> str:
        return self.rng.choice(known) if known and self.rng.random() < 0.7 \
            else self.rng.choice(junk)

    def unit(self) -> str:
        """Mostly the unit of this request's visit; else another one, or junk."""
        if self.visit is not None and self.rng.random() < 0.7:
            return self.visit[1]
        return self.pick(self.known.units)

    def key(self) -> str:
        """A dialogue key of this request's visit's unit, mostly."""
        keys = self.known.keys.get(self.visit[1], []) if self.visit else []
        return self.pick(keys)

    def answers(self) -> dict[str, Any]:
        """Answers shaped like the test task's (tests/test_api_fuzz.py), for a dialogue key
        of the visit's unit: right half of the time, else wrong somewhere."""
        key, rng = self.key(), self.rng
        if rng.random() < 0.5:
            return {key: valid_answers()}
        overall = rng.choice((1, 3, 5, 0, 6, "3", None, 2.5))
        tree = {"Does SPEAKER_X's reply follow from what SPEAKER_Y just said?": {
            rng.choice(("Yes, it responds to it directly.", "Maybe", "")): {}},
            "Which problems does the reply have?": rng.choice(({}, [], None))}
        buckets = {"overall_quality": {"dialogue": {"Overall": overall}},
                   "relevance": {rng.choice(("1", "3", "2", "x")): tree},
                   "issues": {"1": rng.choice((["off_topic"], ["nope"], "off_topic", []))}}
        if rng.random() < 0.3:
            buckets = {k: v for k, v in buckets.items() if rng.random() < 0.5}
        return {key: buckets}

    def mutated(self, body: dict[str, Any]) -> Any:
        """`body` as is, or with a field dropped, replaced or added, or something else."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.4:
            return body
        if roll < 0.55 and body:
            return {k: v for k, v in body.items() if k != rng.choice(list(body))}
        if roll < 0.8 and body:
            return {**body, rng.choice(list(body)): self.value()}
        if roll < 0.9:
            return {**body, rng.choice(JUNK_TEXT): self.value()}
        return self.value()

    # -- endpoints --------------------------------------------------------------------------

    def _endpoints(self) -> list[tuple[str, Callable[[], tuple[str, Any]], str]]:
        """(method, () -> (path, JSON body or None), whose credentials it wants)."""
        k, p = self.known, self.pick
        r = self.rng
        unit = self.unit
        worker = lambda: p(k.pseudonyms)  # noqa: E731
        endpoints: list[tuple[str, Callable[[], tuple[str, Any]], str]] = [
            ("POST", lambda: ("/api/claim", {
                "worker_id": r.choice((*(f"w{n}" for n in range(12)), *JUNK_TEXT[:8])),
                "assignment_id": r.choice(("a1", "a2", "a3", "a4", *JUNK_TEXT[:8])),
                "sig": r.choice((None, "0" * 16, 5))}), "none"),
            ("GET", lambda: ("/api/next", None), "worker"),
            ("GET", lambda: (f"/api/enter?PROLIFIC_PID={p([], JUNK_PATH)}"
                             f"&SESSION_ID={p([], JUNK_PATH)}", None), "none"),
            ("GET", lambda: (f"/api/units/{unit()}", None), "worker"),
            ("PUT", lambda: (f"/api/units/{unit()}/draft", {
                "answers": self.answers(), "position": {"step": r.randrange(5)}}), "worker"),
            ("POST", lambda: (f"/api/units/{unit()}/submit", {
                "answers": self.answers(), "timings": {"ms": r.randrange(9)},
                "client_id": r.choice(("c1", "c2", None, 7))}), "worker"),
            ("POST", lambda: (f"/api/units/{unit()}/dialogues/{self.key()}/check",
                              {"answers": self.answers()}), "worker"),
            ("GET", lambda: ("/api/health", None), "none"),
            ("GET", lambda: (r.choice(("/", "/dashboard", f"/assets/{p([], JUNK_PATH)}",
                                       f"/{p([], JUNK_PATH)}")), None), "none"),
            ("POST", lambda: ("/api/requester/session", {
                "token": r.choice((self.requester, "guess", "", 5))}), "none"),
            ("GET", lambda: ("/api/requester/session", None), "cookie"),
            ("DELETE", lambda: ("/api/requester/session", None), "cookie"),
            ("GET", lambda: ("/api/requester/progress", None), "requester"),
            ("GET", lambda: ("/api/requester/submissions?format=" + r.choice(
                ("json", "jsonl", "items-jsonl", "csv", "x", "%00")) + "&exclude=" + r.choice(
                ("", "quality", "x")), None), "requester"),
            ("GET", lambda: (f"/api/requester/links?worker_id={p([], JUNK_PATH)}&n="
                             + r.choice(("1", "3", "0", "101", "x", "%00")), None), "requester"),
            ("GET", lambda: ("/api/requester/overview", None), "requester"),
            ("GET", lambda: ("/api/requester/workers", None), "requester"),
            ("POST", lambda: (f"/api/requester/workers/{worker()}/qualifications/"
                              + r.choice(("grant", "revoke")), {
                                  "name": r.choice(("q1", "t_block", *JUNK_TEXT[:6])),
                                  "value": r.choice((1, 2, 0, -5, 2**31))}), "requester"),
            ("GET", lambda: ("/api/requester/review?" + "&".join(
                f"{name}={p([], ('', 'x', '%00', 'approve', 'completed', 'main', 'gold', '5'))}"
                for name in r.sample(("worker", "status", "decision", "bucket", "flag", "pool",
                                      "offset", "limit"), r.randrange(4))), None), "requester"),
            ("GET", lambda: (f"/api/requester/units/{unit()}", None), "requester"),
            ("POST", lambda: ("/api/requester/units/bulk-review", {
                "unit_ids": [unit() for _ in range(r.randrange(4))],
                "decision": r.choice(("approve", "reject", "soft_reject", "x")),
                "reason": r.choice(("", "bad work"))}), "requester"),
            ("GET", lambda: ("/api/requester/sync-failures", None), "requester"),
            ("POST", lambda: ("/api/requester/sync-failures/retry", {}), "requester"),
            ("POST", lambda: (f"/api/requester/bonuses/{r.choice(('1', '2', '0', 'x'))}/resolve",
                              {"paid": r.choice((True, False, None))}), "requester"),
            ("GET", lambda: ("/api/requester/results", None), "requester"),
            ("POST", lambda: (f"/api/requester/units/{unit()}/review", {
                "decision": r.choice(("approve", "reject", "soft_reject", "x")),
                "reason": r.choice(("", "bad work")),
                "rejection_category": r.choice((None, "LOW_EFFORT", "x"))}), "requester"),
            ("POST", lambda: (f"/api/requester/units/{unit()}/bonus", {
                "amount": r.choice((0.5, 1, 0, -1, 10**6, "1")), "reason": "thanks"}),
             "requester"),
            ("POST", lambda: (f"/api/requester/workers/{worker()}/"
                              + r.choice(("block", "unblock")), {"reason": "spam"}), "requester"),
            ("GET", lambda: ("/api/requester/workers/identities?format="
                             + r.choice(("json", "csv", "x")), None), "requester"),
            ("GET", lambda: (f"/api/requester/qualifications?name={p([], JUNK_PATH)}"
                             f"&worker={p([], JUNK_PATH)}", None), "requester"),
            ("POST", lambda: ("/api/requester/qualifications/" + r.choice(
                ("grant", "revoke", "block", "unblock")), {
                    "worker": r.choice(("w1", "w2", *JUNK_TEXT[:10])),
                    "provider": r.choice(("local", "prolific", "x" * 40)),
                    "name": r.choice(("q1", "q2", *JUNK_TEXT[:10])),
                    "value": r.choice((1, 3, -2, 2**40))}), "requester"),
        ]
        if self.chat:
            endpoints += [
                ("POST", lambda: (f"/api/chat/{unit()}/start", {}), "worker"),
                ("POST", lambda: (f"/api/chat/{unit()}/messages", {
                    "text": r.choice(("hello", "how are you?", *JUNK_TEXT)),
                    "client_message_id": r.choice((None, "m1", "m2", 3))}), "worker"),
                ("POST", lambda: (f"/api/chat/{unit()}/end", {}), "worker"),
                ("POST", lambda: (f"/api/chat/{unit()}/retry", {}), "worker"),
                ("GET", lambda: (f"/api/chat/{unit()}/events", None), "worker"),
                ("POST", lambda: (f"/api/chat/{unit()}/{p([], JUNK_PATH)}", {}), "worker"),
            ]
        return endpoints

    def credentials(self, wanted: str) -> dict[str, str | bytes]:
        """Mostly the ones the endpoint wants; now and then others, wrong ones or none."""
        rng, known = self.rng, self.known
        roll = rng.random()
        if roll < 0.1:
            return {}
        if roll < 0.15:
            return {"Authorization": rng.choice(("Bearer", "Bearer x", "Basic abc",
                                                 "Bearer 1.deadbeef", b"Bearer \xc3\xa9"))}
        if roll < 0.2:
            wanted = rng.choice(("worker", "requester", "cookie"))
        if wanted == "worker" and known.visits:
            token = self.visit[0] if self.visit and rng.random() < 0.9 \
                else rng.choice(known.visits)[0]
            return {"Authorization": f"Bearer {token}"}
        if wanted == "cookie" or (wanted == "requester" and rng.random() < 0.3):
            if known.session_cookie is None:
                return {}
            headers = {"Cookie": f"cep_requester={known.session_cookie}"}
            if known.csrf and rng.random() < 0.8:
                headers["X-CSRF-Token"] = known.csrf
            return headers
        if wanted == "requester":
            return {"Authorization": f"Bearer {self.requester}"}
        return {}

    # -- running ----------------------------------------------------------------------------

    def request(self) -> Sent:
        if self.follow_ups:
            return self.follow_ups.pop()
        visits = self.known.visits
        self.visit = visits[-1 - int(self.rng.expovariate(0.5)) % len(visits)] if visits else None
        method, make, wanted = self.rng.choice(self.endpoints)
        path, body = make()
        headers = self.credentials(wanted)
        raw: bytes | None = None
        if body is not None or self.rng.random() < 0.05:
            roll = self.rng.random()
            if roll < 0.8:
                raw = json.dumps(self.mutated(body or {})).encode()
            else:
                raw = self.rng.choice(RAW_BODIES)
            content_type = self.rng.choice(CONTENT_TYPES) if self.rng.random() < 0.15 \
                else "application/json"
            if content_type is not None:
                headers["Content-Type"] = content_type
        return Sent(method, path, headers, raw)

    def send(self, sent: Sent) -> httpx.Response:
        request = self.client.build_request(sent.method, sent.path, headers=sent.headers,
                                            content=sent.body)
        try:
            reply = self.client.send(request, stream=True)
            try:
                if not sent.path.endswith("/events") or reply.status_code != 200:
                    reply.read()
            finally:
                reply.close()
        finally:
            self.client.cookies.clear()  # credentials are chosen per request
        return reply

    def learn(self, sent: Sent, reply: httpx.Response) -> None:
        """Keep the tokens, units, keys, pseudonyms and sessions that answers reveal."""
        if reply.status_code != 200 or not reply.headers.get("content-type", "").startswith(
                "application/json"):
            return
        body = reply.json()
        known, worker = self.known, {k: v for k, v in sent.headers.items()
                                     if k == "Authorization"}
        if sent.path == "/api/claim":
            if (body["token"], body["unit_id"]) not in known.visits:
                known.visits.append((body["token"], body["unit_id"]))
                known.units.append(body["unit_id"])
            self._then("GET", f"/api/units/{body['unit_id']}",
                       {"Authorization": f"Bearer {body['token']}"})
        elif sent.path.startswith("/api/units/") and sent.method == "GET":
            keys = known.keys[body["unit_id"]] = [d["key"] for d in body.get("dialogues", [])]
            if keys and body["status"] == "assigned":  # the worker answers
                self._then("POST", f"/api/units/{body['unit_id']}/submit", worker, {
                    "answers": {key: valid_answers() for key in keys}})
            elif body.get("kind") == "chat" and self.chat:  # or chats
                self._then("POST", f"/api/chat/{body['unit_id']}/start", worker, {})
        elif sent.path.startswith("/api/chat/") and sent.method == "POST" and \
                sent.path.endswith(("/start", "/messages", "/end")):  # chats on
            unit = sent.path.split("/")[3]
            self._then("POST", f"/api/chat/{unit}/end", worker, {})
            self._then("POST", f"/api/chat/{unit}/messages", worker,
                       {"text": f"hello {self.rng.randrange(100)}"})
        elif sent.path.endswith("/submit"):  # the requester reviews and pays
            unit = sent.path.split("/")[3]
            requester = {"Authorization": f"Bearer {self.requester}"}
            self._then("POST", f"/api/requester/units/{unit}/review", requester, {
                "decision": self.rng.choice(("approve", "reject", "soft_reject")),
                "reason": "checked"})
            self._then("POST", f"/api/requester/units/{unit}/bonus", requester,
                       {"amount": 0.5, "reason": "thanks"})
        elif sent.path == "/api/requester/workers":
            known.pseudonyms = [w["pseudonym"] for w in body["workers"]]
        elif sent.path == "/api/requester/session" and sent.method == "POST":
            known.session_cookie = reply.cookies.get("cep_requester")
            known.csrf = body["csrf_token"]

    def _then(self, method: str, path: str, headers: dict[str, str | bytes],
              body: dict[str, Any] | None = None) -> None:
        """Send this next, now and then (so half-done work stays around too)."""
        if self.rng.random() < 0.6:
            raw = None if body is None else json.dumps(body).encode()
            if raw is not None:
                headers = {**headers, "Content-Type": "application/json"}
            self.follow_ups.append(Sent(method, path, headers, raw))

    def run(self, count: int) -> list[str]:
        """`count` requests; every one answered 5xx, or not at all, as text."""
        failures = []
        for _ in range(count):
            sent = self.request()
            try:
                reply = self.send(sent)
            except httpx.HTTPError as exc:
                failures.append(f"{type(exc).__name__}: {exc} <- {sent}")
                continue
            if reply.status_code >= 500:
                failures.append(f"{reply.status_code} {reply.text[:300]} <- {sent}")
            self.learn(sent, reply)
        return failures
