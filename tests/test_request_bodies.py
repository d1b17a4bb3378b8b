"""Bodies up to the documented 2 MB are read whole however they arrive (one write, a long last
read, chunked transfer in pieces of any size), and a refused request is never stored: over real
sockets to the real server, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import random
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from chat_helpers import auth
from helpers import dialogue, http_client, live_server, write_task
from sqlalchemy import func, select

from collection_and_annotations.storage.models import Draft, Submission

LIMIT = 2_000_000  # docs/worker-api.md
SIZES = (70_000, 300_000, 900_000, 1_900_000)
DRAFT_SIZES = tuple(size for size in SIZES if size < 1_000_000)  # drafts: 1 MB (413 past it)
MODES = ("whole", "long-last-read", "chunked")


@pytest.fixture
def task(tmp_path, database_url, open_conf):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["overall_quality"])]} for i in range(20)]
    served = open_conf(str(write_task(tmp_path, lines, {f"g{i}": 1 for i in range(20)})),
                       database_url)
    with live_server(served) as base, http_client(base_url=base, timeout=20) as client:
        yield served, client, int(base.rsplit(":", 1)[1])


def _pieces(body: bytes, mode: str, rng: random.Random) -> Iterator[bytes]:
    """The body as the client writes it: whole; a little, a pause, then the rest at once (the
    server's last read is then far over 64 KB); or chunked in pieces of 1 byte to 300 KB."""
    if mode == "whole":
        yield body
    elif mode == "long-last-read":
        yield body[:1000]
        yield body[1000:]
    else:
        at = 0
        while at < len(body):
            size = rng.choice((1, 7, 4096, 65_537, 300_000))
            yield b"%x\r\n%s\r\n" % (len(body[at:at + size]), body[at:at + size])
            at += size
        yield b"0\r\n\r\n"


def _send(port: int, method: str, path: str, token: str, body: bytes, mode: str,
          rng: random.Random) -> tuple[int, bytes]:
    """One request over a raw socket, written as `mode` says: (status, response body)."""
    framing = (b"Transfer-Encoding: chunked" if mode == "chunked"
               else b"Content-Length: %d" % len(body))
    head = (b"%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
            b"Content-Type: application/json\r\nConnection: close\r\n%s\r\n\r\n"
            % (method.encode(), path.encode(), port, token.encode(), framing))
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head)
        for piece in _pieces(body, mode, rng):
            sock.sendall(piece)
            time.sleep(0.02 if rng.random() < 0.1 or mode == "long-last-read" else 0)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def _unit(client: httpx.Client, worker: str) -> tuple[str, str, str]:
    claimed = client.post("/api/claim", json={"worker_id": worker, "assignment_id": "a"}).json()
    key = client.get(f"/api/units/{claimed['unit_id']}", headers=auth(claimed["token"])) \
        .json()["dialogues"][0]["key"]
    return claimed["unit_id"], claimed["token"], key


def _sized(answers: dict, field: str, size: int) -> bytes:
    """`{"answers": answers, field: {"pad": "xx..."}}` as JSON of `size` bytes."""
    bare = len(json.dumps({"answers": answers, field: {"pad": ""}}).encode())
    return json.dumps({"answers": answers, field: {"pad": "x" * (size - bare)}}).encode()


def test_drafts_and_submits_up_to_the_limit_are_read_whole(task):
    served, client, port = task
    rng = random.Random(25)
    workers = iter(range(100))
    for size in SIZES:
        for mode in MODES:
            unit_id, token, key = _unit(client, f"w{next(workers)}")
            answers = {key: {"overall_quality": {"dialogue": {"Overall": 4}}}}
            if size in DRAFT_SIZES:
                body = _sized(answers, "position", size)
                status, reply = _send(port, "PUT", f"/api/units/{unit_id}/draft", token, body,
                                      mode, rng)
                assert status == 200, (size, mode, reply[:300])
                draft = client.get(f"/api/units/{unit_id}", headers=auth(token)) \
                    .json()["draft"]
                assert draft["position"] == json.loads(body)["position"], (size, mode)
            body = _sized(answers, "timings", size)
            status, reply = _send(port, "POST", f"/api/units/{unit_id}/submit", token, body,
                                  mode, rng)
            assert status == 200, (size, mode, reply[:300])
            assert json.loads(reply)["status"] == "completed"
    with served.db.session() as session:
        stored = session.scalars(select(Submission.timings)).all()
    assert len(stored) == len(SIZES) * len(MODES)
    assert sorted(len(t["client"]["pad"]) // 10_000 for t in stored) == sorted(
        size // 10_000 - 1 for size in SIZES for _ in MODES)


def test_a_refused_body_is_never_stored(task):
    served, client, port = task
    rng = random.Random(26)
    for mode in MODES:
        unit_id, token, key = _unit(client, f"big-{mode}")
        answers = {key: {"overall_quality": {"dialogue": {"Overall": 4}}}}
        body = _sized(answers, "timings", LIMIT + 10_000)
        try:
            status, _ = _send(port, "POST", f"/api/units/{unit_id}/submit", token, body, mode,
                              rng)
        except (ConnectionResetError, BrokenPipeError):
            status = 413  # the server answered and closed before the body was all written
        assert status == 413, mode
        state = client.get(f"/api/units/{unit_id}", headers=auth(token)).json()
        assert state["status"] == "assigned", mode
    with served.db.session() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 0
        assert session.scalar(select(func.count()).select_from(Draft)) == 0
