"""A seeded fuzz of the worker, chat and requester APIs through the real server, on SQLite and
PostgreSQL: thousands of right, wrong and hostile requests, and not one 5xx.

`CEP_FUZZ_SEED=<n>` runs other seeds (`CEP_FUZZ_REQUESTS` other counts); a failure names the
seed and each request that failed, to replay it."""

from __future__ import annotations

import os

from api_fuzz import Fuzzer
from chat_helpers import ChatServer, ScriptedBot, write_chat_conf
from helpers import dialogue, live_server, write_task

SEED = int(os.environ.get("CEP_FUZZ_SEED", "25"))
REQUESTS = int(os.environ.get("CEP_FUZZ_REQUESTS", "2000"))


def _fuzzed(base: str, secret: str, chat: bool) -> None:
    fuzzer = Fuzzer(base, secret, SEED, chat=chat)
    try:
        failures = fuzzer.run(REQUESTS)
    finally:
        fuzzer.close()
    assert not failures, (f"seed {SEED}: {len(failures)} of {REQUESTS} requests failed:\n"
                          + "\n".join(failures[:40]))


def test_fuzz_of_a_static_task(tmp_path, database_url, open_conf):
    buckets = ["relevance", "issues", "overall_quality"]
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", buckets)]} for i in range(12)]
    served = open_conf(str(write_task(tmp_path, lines, {f"g{i}": 3 for i in range(12)})),
                       database_url)
    with live_server(served) as base:
        _fuzzed(base, served.secret, chat=False)


def test_fuzz_of_a_chat_task(tmp_path, database_url):
    conf = write_chat_conf(tmp_path, "alpha:20,beta:20", ["alpha", "beta"], num_turns=2,
                           extra="    do_interactive_offline_annotations: [[overall_quality]]\n")
    bots = {"alpha": ScriptedBot("alpha", delay=0.001), "beta": ScriptedBot("beta", delay=0.001)}
    server = ChatServer(tmp_path, conf, bots, database_url)
    try:
        _fuzzed(server.base, server.served.secret, chat=True)
    finally:
        server.stop()
