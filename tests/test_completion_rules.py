"""Completion only for work done, through the real server on SQLite and PostgreSQL: a unit
retired by a data change gives its holder no code or redirect, a unit needs an answer for
each dialogue (unless `allow_unanswered_dialogues`), and the external provider binds a visit
to the platform's session parameter, so a worker's id alone takes over nothing. The task is
opened as `welcome.py` opens it and served by the launcher's HTTP stack in this process: these
are answers of the server, not of its process."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx
from helpers import dialogue, http_client, served_run, write_task

from collection_and_annotations.providers.external import visit_code

COMPLETION_URL = "https://crowd.example/done?c={code}&w={worker_id}&s={session_id}"
EXTERNAL = ("mephisto.provider._provider_type=external",
            f"mephisto.provider.completion_url='{COMPLETION_URL}'")


def _lines(text: str = "turn") -> list[dict]:
    lines = []
    for i in range(3):
        record = dialogue(f"d{i}", f"g{i}", ["issues"])
        record["turns"] = [[s, f"{text} {i}.{n}"] for n, s in
                           enumerate(("user", "system", "user", "system"))]
        lines.append({"data": [record]})
    return lines


class Server:
    """The task of `conf` on `database_url` (a run of its own), served over HTTP."""

    def __init__(self, open_conf: Callable, conf: Path, database_url: str, *overrides: str):
        self.served = open_conf(str(conf), database_url, *overrides)
        self._serving = ExitStack()
        base = self._serving.enter_context(served_run(self.served))
        self.client = self._serving.enter_context(http_client(base_url=base, timeout=20))

    def enter(self, **params: str) -> httpx.Response:
        return self.client.get("/api/enter", params=params)

    def claim_entered(self, **params: str) -> tuple[str, str]:
        """Come in from the platform (`/api/enter`), then claim with the signed link."""
        entered = self.enter(**params)
        assert entered.status_code == 302, entered.text
        claim = dict(parse_qsl(urlsplit(entered.headers["location"]).query))
        return self.claim(claim)

    def claim(self, body: dict[str, str]) -> tuple[str, str]:
        claimed = self.client.post("/api/claim", json=body)
        assert claimed.status_code == 200, claimed.text
        return claimed.json()["unit_id"], claimed.json()["token"]

    def unit(self, unit: str, token: str) -> dict:
        return self.client.get(f"/api/units/{unit}", headers=_auth(token)).json()

    def submit(self, unit: str, token: str, answers: dict) -> httpx.Response:
        return self.client.post(f"/api/units/{unit}/submit", headers=_auth(token),
                                json={"answers": answers})

    def draft(self, unit: str, token: str, answers: dict) -> None:
        saved = self.client.put(f"/api/units/{unit}/draft", headers=_auth(token),
                                json={"answers": answers, "position": {"step": 1}})
        assert saved.status_code == 200, saved.text

    def stop(self) -> None:
        """As Ctrl-C stops `welcome.py`: the server, then its run."""
        self._serving.close()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _answered(server: Server, unit: str, token: str) -> dict:
    """An answer for every dialogue of the unit: nothing applies to its first bot turn."""
    return {d["key"]: {"issues": {"1": []}} for d in server.unit(unit, token)["dialogues"]}


def test_a_retired_units_holder_gets_no_completion_code_or_redirect(open_conf, tmp_path,
                                                                    database_url):
    conf = write_task(tmp_path, _lines(), {"g0": 1, "g1": 1, "g2": 1})
    server = Server(open_conf, conf, database_url, *EXTERNAL)
    held = server.claim_entered(worker_id="alice", assignment_id="visit-a")
    done = server.claim_entered(worker_id="bob", assignment_id="visit-b")
    submitted = server.submit(*done, _answered(server, *done)).json()
    assert submitted["completion_code"] == visit_code(server.served.secret, "bob", "visit-b")
    server.stop()
    write_task(tmp_path, _lines("edited"), {"g0": 1, "g1": 1, "g2": 1})  # every line changed
    server = Server(open_conf, conf, database_url, *EXTERNAL)
    try:
        retired = server.unit(*held)
        assert retired["status"] == "retired"
        assert retired["completion_code"] is None and "redirect_url" not in retired
        kept = server.unit(*done)  # work done keeps its completion
        assert kept["status"] == "completed"
        assert kept["completion_code"] == submitted["completion_code"]
        assert kept["redirect_url"] == submitted["redirect_url"]
    finally:
        server.stop()


def test_a_unit_needs_an_answer_for_each_dialogue(open_conf, tmp_path, database_url):
    """`issues` has no `require`: still, a submit that answers nothing of a dialogue is
    refused, naming the dialogue, until the conf allows it."""
    conf = write_task(tmp_path, [{"data": [dialogue("d0", "g0", ["issues"]),
                                           dialogue("d1", "g0", ["issues", "reply_scores"])]}],
                      {"g0": 2})
    server = Server(open_conf, conf, database_url)
    try:
        unit, token = server.claim({"worker_id": "w1", "assignment_id": "a"})
        by_buckets = {len(d["annotation_tasks"]): d["key"]  # in any order the unit shows
                      for d in server.unit(unit, token)["dialogues"]}
        one, two = by_buckets[1], by_buckets[2]
        for answers in ({}, {one: {"issues": {}}, two: {"reply_scores": {"1": {}}}},
                        {one: {"issues": {"1": []}}}):
            refused = server.submit(unit, token, answers)
            assert refused.status_code == 422, refused.text
            assert any(p["message"] == "answer at least one question about this dialogue"
                       for p in refused.json()["problems"])
            assert server.unit(unit, token)["status"] == "assigned"
        partly = {one: {"issues": {"1": []}}, two: {"reply_scores": {"1": {"clarity": 4}}}}
        accepted = server.submit(unit, token, partly)
        assert accepted.status_code == 200 and accepted.json()["status"] == "completed"
    finally:
        server.stop()
    allowed = Server(open_conf, conf, database_url,
                     "mephisto.blueprint.allow_unanswered_dialogues=true")
    try:
        unit, token = allowed.claim({"worker_id": "w2", "assignment_id": "a"})
        assert allowed.submit(unit, token, {}).json()["status"] == "completed"
    finally:
        allowed.stop()


def test_an_external_visit_is_bound_to_the_platforms_session(open_conf, tmp_path,
                                                             database_url):
    conf = write_task(tmp_path, _lines(), {"g0": 2, "g1": 2, "g2": 2})
    server = Server(open_conf, conf, database_url, *EXTERNAL)
    try:
        no_session = server.enter(worker_id="alice")
        assert no_session.status_code == 400
        assert "'assignment_id'" in no_session.json()["error"]
        alice = server.claim_entered(worker_id="alice", assignment_id="s-7f3a")
        draft = {server.unit(*alice)["dialogues"][0]["key"]: {"issues": {"1": ["off_topic"]}}}
        server.draft(*alice, draft)
        # Someone who knows alice's id, not her session, gets a visit of their own...
        other = server.claim_entered(worker_id="alice", assignment_id="s-guess")
        assert other[0] != alice[0] and server.unit(*other)["draft"] is None
        # ...and its code is not hers.
        code = server.submit(*other, _answered(server, *other)).json()["completion_code"]
        mine = server.submit(*alice, _answered(server, *alice)).json()
        assert mine["completion_code"] != code
        assert mine["redirect_url"] == COMPLETION_URL.format(
            code=mine["completion_code"], worker_id="alice", session_id="s-7f3a")
        # The claim itself takes only what the server signed.
        forged = server.client.post("/api/claim", json={"worker_id": "alice",
                                                        "assignment_id": "s-7f3a"})
        assert forged.status_code == 403
    finally:
        server.stop()
