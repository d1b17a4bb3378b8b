"""Load harness for the worker API: C simulated annotators over real HTTP.

Each annotator claims a unit, reads it, saves a draft and submits. The server is the real
`welcome.py` in a subprocess; the database is SQLite (default) or a fresh PostgreSQL database.
At the end every acknowledged submission is looked up in the database.

    .venv/bin/python bench/worker_api_load.py --clients 100 --db sqlite
    .venv/bin/python bench/worker_api_load.py --clients 1000 --db postgres --processes 2
    .venv/bin/python bench/worker_api_load.py --clients 1000 --before 57f0866 --repeat 2
    .venv/bin/python bench/worker_api_load.py --clients 1000 --think 5 --screening
    .venv/bin/python bench/worker_api_load.py --clients 1000 --parity --repeat 6
    .venv/bin/python bench/worker_api_load.py --clients 1000 --db postgres --processes 2 \
        --set mephisto.architect.database_threads=8

With `--before REV` an earlier revision is checked out beside this one (git worktree) and both
run alternately in the same session, so before and after see the same machine.

With `--parity` SQLite (one server process) and PostgreSQL (one and two) run alternately,
round after round, and each round reports PostgreSQL's submissions/s against SQLite's.

With `--screening` the same task runs twice, alternately: once plain, once with a screening
(training) unit of 3 generated dialogues that each annotator does first (checking every
dialogue with the right answers, then submitting) before its real unit; the ratio of the two
runs' p99 latencies is the cost of screening.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import resource
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import psycopg
from sqlalchemy import create_engine, func, select
from sqlalchemy.engine import make_url

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from baseline import checkout, python_for  # noqa: E402
from procstats import (  # noqa: E402
    busy_cpu_seconds,
    cpu_seconds,
    postgres_cpu_seconds,
    tree_cpu_seconds,
)

from collection_and_annotations.storage.models import Submission, Unit  # noqa: E402

BUCKETS = REPO / "collection_and_annotations" / "task_config" / "annotation_buckets.json"
POSTGRES_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


TRAINING = 3  # dialogues in the generated screening unit
# What a perfect annotator answers on a training dialogue: turn 1 is off topic, turn 3 is fine.
TRAINING_ANSWERS = {"issues": {"1": ["off_topic"], "3": []}}


def write_screening(folder: Path) -> Path:
    """A screening file in the original's format: flat expected answers, explanations."""
    turns = [["user", "Do you like rain?"],
             ["system", "My favourite car is red.", {"issues_labels": ["off_topic"]},
              "The reply ignores the question."],
             ["user", "Rain, I asked about rain."],
             ["system", "Sorry! Yes, I like rain.", {}, "A direct answer: nothing to label."]]
    path = folder / "screening.json"
    path.write_text(json.dumps({
        f"training_{i}": {"dialogue_id": f"training_{i}", "annotation_tasks": ["issues"],
                          "turns": turns, "pass_criteria": 0}
        for i in range(TRAINING)}))
    return path


def write_task(folder: Path, units: int, screening: bool = False) -> Path:
    """`units` one-annotator dialogues rated with a dialogue-level Likert scale; with
    `screening`, a training unit first for every annotator."""
    with (folder / "load.jsonl").open("w") as data:
        for i in range(units):
            turns = [["user", f"Hello number {i}"], ["system", "Hi! How can I help?"],
                     ["user", "Just testing."], ["system", "Happy to be tested."]]
            data.write(json.dumps({"data": [{"dialogue_id": f"load-{i}", "group_id": f"g{i}",
                                             "annotation_tasks": ["overall_quality"],
                                             "turns": turns}]}) + "\n")
    conf = folder / "load.yaml"
    conf.write_text(
        "#@package _global_\n"
        "mephisto:\n  architect:\n    hostname: 127.0.0.1\n"
        f"  blueprint:\n    data_jsonl: {folder / 'load.jsonl'}\n"
        f"    annotations_config_path: {BUCKETS}\n"
        + (f"    use_screening_task: true\n    screen_json: {write_screening(folder)}\n"
           f"    passed_qualification_name: load_screen\n    max_screening_units: {units}\n"
           if screening else "")
        + "  task:\n    task_name: load\n    allowed_concurrent: 1\n"
    )
    return conf


def postgres_database(synchronous_commit: str = "on") -> tuple[str, str]:
    """A fresh database; `synchronous_commit=off` gives PostgreSQL the durability SQLite's
    WAL + synchronous=NORMAL has (nothing lost on a crash of the server, the last commits
    possibly on power loss)."""
    name = f"cep_bench_{secrets.token_hex(4)}"
    admin = make_url(POSTGRES_ADMIN)
    with psycopg.connect(host=admin.host, port=admin.port, user=admin.username,
                         dbname=admin.database, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
        connection.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = '
                           f'{"off" if synchronous_commit == "off" else "on"}')
    return admin.set(database=name).render_as_string(hide_password=False), name


def drop_postgres(name: str) -> None:
    admin = make_url(POSTGRES_ADMIN)
    with psycopg.connect(host=admin.host, port=admin.port, user=admin.username,
                         dbname=admin.database, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Connection:
    """One annotator's keep-alive HTTP/1.1 connection: a few lines of asyncio instead of a
    client library, so the harness spends its CPU time on the server, not on itself."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: object = None,
                      token: str | None = None) -> tuple[int, dict]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        payload = json.dumps(body).encode() if body is not None else b""
        head = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}",
                f"Content-Length: {len(payload)}", "Content-Type: application/json"]
        if token:
            head.append(f"Authorization: Bearer {token}")
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        await self.writer.drain()
        status_line, *header_lines = (
            (await self.reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
        )
        headers = {name.lower(): value for name, value in
                   (line.split(": ", 1) for line in header_lines if ": " in line)}
        length = int(headers.get("content-length", "0"))
        content = await self.reader.readexactly(length) if length else b"{}"
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return int(status_line.split()[1]), json.loads(content)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


class Recorder:
    def __init__(self) -> None:
        self.latencies: dict[str, list[float]] = {}
        self.errors: list[str] = []
        self.acknowledged: list[str] = []
        self.trained: list[str] = []  # passed screening units (--screening)

    async def call(self, name: str, request) -> dict | None:  # noqa: ANN001
        start = time.perf_counter()
        try:
            status, body = await request
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            self.errors.append(f"{name}: {type(exc).__name__} {exc}")
            return None
        self.latencies.setdefault(name, []).append(time.perf_counter() - start)
        if status != 200:
            self.errors.append(f"{name}: HTTP {status} {str(body)[:200]}")
            return None
        return body


async def training(connection: Connection, n: int, record: Recorder, think: float) -> bool:
    """The screening unit: claim, read, check each dialogue (right answers), submit."""
    claim = await record.call("s-claim", connection.request(
        "POST", "/api/claim", {"worker_id": f"load-worker-{n}", "assignment_id": "1"}))
    if claim is None:
        return False
    token, unit_id = claim["token"], claim["unit_id"]
    await asyncio.sleep(random.uniform(0, think))
    unit = await record.call("s-unit", connection.request("GET", f"/api/units/{unit_id}",
                                                          token=token))
    if unit is None or unit.get("kind") != "screening":
        record.errors.append(f"s-unit: expected a screening unit, got {str(unit)[:100]}")
        return False
    for shown in unit["dialogues"]:
        await asyncio.sleep(random.uniform(0, think))
        checked = await record.call("check", connection.request(
            "POST", f"/api/units/{unit_id}/dialogues/{shown['key']}/check",
            {"answers": TRAINING_ANSWERS}, token))
        if checked is None or not checked.get("corrected"):
            record.errors.append(f"check: not correct: {str(checked)[:100]}")
            return False
    await asyncio.sleep(random.uniform(0, think))
    done = await record.call("s-submit", connection.request(
        "POST", f"/api/units/{unit_id}/submit",
        {"answers": {d["key"]: TRAINING_ANSWERS for d in unit["dialogues"]}}, token))
    if done is None or not done.get("screening", {}).get("passed"):
        record.errors.append(f"s-submit: not passed: {str(done)[:100]}")
        return False
    record.trained.append(unit_id)
    return True


async def annotator(port: int, n: int, record: Recorder, think: float,
                    screening: bool = False) -> None:
    await asyncio.sleep(random.uniform(0, think))
    connection = Connection("127.0.0.1", port)
    try:
        if screening and not await training(connection, n, record, think):
            return
        if screening:
            await asyncio.sleep(random.uniform(0, think))
        claim = await record.call("claim", connection.request(
            "POST", "/api/claim", {"worker_id": f"load-worker-{n}", "assignment_id": "1"}))
        if claim is None:
            return
        token, unit_id = claim["token"], claim["unit_id"]
        await asyncio.sleep(random.uniform(0, think))
        unit = await record.call("unit", connection.request("GET", f"/api/units/{unit_id}",
                                                            token=token))
        if unit is None:
            return
        key = unit["dialogues"][0]["key"]
        draft = {key: {"overall_quality": {"dialogue": {"Overall": 3}}}}
        await asyncio.sleep(random.uniform(0, think))
        if await record.call("draft", connection.request(
                "PUT", f"/api/units/{unit_id}/draft", {"answers": draft, "position": {"step": 1}},
                token)):
            final = {key: {"overall_quality": {"dialogue": {"Overall": 1 + n % 5}}}}
            await asyncio.sleep(random.uniform(0, think))
            if await record.call("submit", connection.request(
                    "POST", f"/api/units/{unit_id}/submit", {"answers": final}, token)):
                record.acknowledged.append(unit_id)
    finally:
        await connection.close()


async def run_clients(ports: list[int], clients: int, think: float, screening: bool = False
                      ) -> tuple[Recorder, float]:
    """The annotators, spread over the launchers' `ports` in turn."""
    record = Recorder()
    start = time.perf_counter()
    await asyncio.gather(*(annotator(ports[n % len(ports)], n, record, think, screening)
                           for n in range(clients)))
    return record, time.perf_counter() - start


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=1000, method="inclusive")[int(q * 10) - 1] \
        if len(values) > 1 else values[0]


def measure(checkout: Path, clients: int, db: str, processes: int,
            think: float, synchronous_commit: str = "on", screening: bool = False,
            launchers: int = 1, overrides: Sequence[str] = ()) -> dict[str, object]:
    """One load run against `welcome.py` of `checkout` (`launchers` of them serving one run,
    mephisto.architect.join: PostgreSQL only), with conf `overrides`; the figures as a
    dict."""
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        conf = write_task(folder, clients, screening)
        ports, pg_name = [free_port() for _ in range(launchers)], None
        url = f"sqlite:///{folder / 'data' / 'cep.sqlite3'}"
        if db == "postgres":
            url, pg_name = postgres_database(synchronous_commit)
        servers: list[subprocess.Popen] = []
        try:
            for port in ports:  # one after the other: the first starts the run
                servers.append(subprocess.Popen(
                    [str(python_for(checkout)), str(checkout / "welcome.py"), f"conf={conf}",
                     f"mephisto.architect.port={port}", f"data_dir={folder / 'data'}",
                     f"database_url={url}", f"mephisto.architect.server_processes={processes}",
                     *(["mephisto.architect.join=true"] if launchers > 1 else []),
                     *overrides],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
                wait_until_serving(servers[-1], f"http://127.0.0.1:{port}")
            cpu_before = sum(tree_cpu_seconds(server.pid) for server in servers)
            busy_before = busy_cpu_seconds()
            postgres_before, client_before = postgres_cpu_seconds(), cpu_seconds(os.getpid())
            record, wall = asyncio.run(run_clients(ports, clients, think, screening))
            cpu = sum(tree_cpu_seconds(server.pid) for server in servers) - cpu_before
            postgres_cpu = postgres_cpu_seconds() - postgres_before
            client_cpu = cpu_seconds(os.getpid()) - client_before
            busy = busy_cpu_seconds() - busy_before
            engine = create_engine(url)
            with engine.connect() as connection:
                stored = set(connection.scalars(
                    select(Unit.public_id).join(Submission, Submission.unit_id == Unit.id)))
                total = connection.scalar(select(func.count()).select_from(Submission))
            engine.dispose()
        finally:
            for server in servers:
                server.terminate()
            for server in servers:
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()
            if pg_name:
                drop_postgres(pg_name)
    every = [x for values in record.latencies.values() for x in values]
    return {
        "requests": len(every), "wall": wall, "cpu": cpu, "record": record,
        "postgres_cpu": postgres_cpu if db == "postgres" else 0.0, "client_cpu": client_cpu,
        "busy_cores": busy / wall,
        "submissions_per_s": len(record.acknowledged) / wall,
        "missing": [u for u in record.acknowledged + record.trained if u not in stored],
        "rows": total,
        "p50": 1000 * percentile(every, 50), "p99": 1000 * percentile(every, 99),
        "real_p99": 1000 * percentile([x for name in REAL_WORK
                                       for x in record.latencies.get(name, [])], 99),
        "max": 1000 * max(every),
    }


REAL_WORK = ("claim", "unit", "draft", "submit")  # the requests both modes make


def wait_until_serving(server: subprocess.Popen, base: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{base}/api/health", timeout=1).raise_for_status()
            return
        except httpx.HTTPError as exc:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("server did not start:\n" + server.stderr.read()) from exc
            time.sleep(0.2)



def report(figures: dict[str, object], clients: int) -> None:
    record: Recorder = figures["record"]
    every = figures["requests"]
    print(f"  requests: {every} in {figures['wall']:.2f} s -> {every / figures['wall']:.0f} "
          f"req/s, {figures['submissions_per_s']:.0f} submissions/s; annotators completed: "
          f"{len(record.acknowledged)}/{clients}")
    print(f"  server CPU: {figures['cpu']:.2f} s, "
          f"{1000 * figures['cpu'] / max(1, every):.2f} ms per request; per request also "
          f"PostgreSQL {1000 * figures['postgres_cpu'] / max(1, every):.2f} ms, this client "
          f"{1000 * figures['client_cpu'] / max(1, every):.2f} ms; machine busy "
          f"{figures['busy_cores']:.2f} cores")
    print(f"  latency all: p50 {figures['p50']:.1f} ms, p99 {figures['p99']:.1f} ms, "
          f"max {figures['max']:.1f} ms")
    for name, values in record.latencies.items():
        print(f"  {name:>6}: p50 {1000 * percentile(values, 50):.1f} ms, "
              f"p99 {1000 * percentile(values, 99):.1f} ms (n={len(values)})")
    print(f"  errors: {len(record.errors)}" + (f" (first: {record.errors[0]})"
                                                if record.errors else ""))
    acknowledged = len(record.acknowledged) + len(record.trained)
    if record.trained:
        print(f"  screening units passed: {len(record.trained)}/{clients}")
    print(f"  acknowledged submissions in the database: "
          f"{acknowledged - len(figures['missing'])}/{acknowledged} (rows: {figures['rows']})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", "-c", type=int, default=100)
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--launchers", type=int, default=1,
                        help="launchers serving one run (mephisto.architect.join; needs --db "
                             "postgres), each with --processes; annotators spread over them")
    parser.add_argument("--processes", type=int, default=1,
                        help="server processes (mephisto.architect.server_processes; "
                             "more than 1 needs --db postgres)")
    parser.add_argument("--think", type=float, default=0.0,
                        help="each annotator waits up to this many seconds (uniformly at random) "
                             "before each request; 0 = all annotators fire at once")
    parser.add_argument("--before", metavar="REV",
                        help="also run an earlier revision (e.g. 57f0866), alternating with "
                             "this checkout, and compare")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each revision")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a conf override for this checkout's server (not --before's), "
                             "e.g. mephisto.architect.database_threads=8; repeatable")
    parser.add_argument("--screening", action="store_true",
                        help="run the task plain and with a screening unit first, alternately, "
                             "and report the ratio of p99 latencies")
    parser.add_argument("--synchronous-commit", choices=["on", "off"], default="on",
                        help="PostgreSQL: off = the durability of SQLite's default setting")
    parser.add_argument("--parity", action="store_true",
                        help="run SQLite (1 process), PostgreSQL (1 process) and PostgreSQL "
                             "(2 processes) alternately, --repeat rounds, and report "
                             "PostgreSQL's submissions/s against SQLite's in each round")
    args = parser.parse_args()
    if args.launchers > 1 and args.db != "postgres":
        parser.error("several launchers serve one run through PostgreSQL: add --db postgres")
    if sum((args.screening, bool(args.before), args.parity)) > 1:
        parser.error("--screening, --before and --parity are separate comparisons; pick one")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * args.clients + 256)),
                                                hard))
    print(f"worker API load: C={args.clients} db={args.db} processes={args.processes} "
          f"synchronous_commit={args.synchronous_commit} "
          f"think<={args.think}s on {platform.node()} (python {platform.python_version()})"
          + (f"; this checkout with {' '.join(args.set)}" if args.set else ""))
    if args.parity:
        return parity(args)
    failed = False
    # (name, checkout, screening)
    modes = [("after", REPO, False)]
    if args.before:
        modes.insert(0, (f"before {args.before}", checkout(args.before), False))
    if args.screening:
        modes = [("without screening", REPO, False), ("with screening", REPO, True)]
    for run in range(args.repeat):
        results = []
        for name, directory, screening in modes:
            figures = measure(directory, args.clients, args.db, args.processes, args.think,
                              args.synchronous_commit, screening, args.launchers,
                              args.set if directory == REPO else ())
            print(f"{name} (run {run + 1}):")
            report(figures, args.clients)
            failed |= bool(figures["record"].errors or figures["missing"])
            results.append(figures)
        if args.screening:
            plain, screened = results
            errors = sum(len(f["record"].errors) for f in results)
            print(f"screening overhead (run {run + 1}): p99 all requests "
                  f"{screened['p99'] / plain['p99']:.2f}x, p99 of the real unit's requests "
                  f"{screened['real_p99'] / plain['real_p99']:.2f}x (target <= 1.5); "
                  f"errors: {errors}")
    return 1 if failed else 0


PARITY = (("SQLite, 1 process", "sqlite", 1), ("PostgreSQL, 1 process", "postgres", 1),
          ("PostgreSQL, 2 processes", "postgres", 2))


def parity(args: argparse.Namespace) -> int:
    """SQLite and PostgreSQL alternately, round by round: the machine's speed drifts over
    minutes, so only runs made back to back compare."""
    ratios: dict[str, list[float]] = {name: [] for name, _, _ in PARITY[1:]}
    failed = False
    for run in range(args.repeat):
        rates = {}
        for name, db, processes in PARITY:
            figures = measure(REPO, args.clients, db, processes, args.think,
                              args.synchronous_commit, overrides=args.set)
            print(f"{name} (round {run + 1}):")
            report(figures, args.clients)
            failed |= bool(figures["record"].errors or figures["missing"])
            rates[name] = figures["submissions_per_s"]
        sqlite = rates[PARITY[0][0]]
        for name in ratios:
            ratios[name].append(rates[name] / sqlite)
        print(f"round {run + 1}: " + ", ".join(
            f"{name} {rates[name]:.0f} submissions/s ({rates[name] / sqlite:.2f}x SQLite's "
            f"{sqlite:.0f})" for name in ratios))
    for name, values in ratios.items():
        print(f"{name} against SQLite over {len(values)} rounds: median "
              f"{statistics.median(values):.2f}x, range {min(values):.2f}-{max(values):.2f}x, "
              f"at least SQLite's in {sum(value >= 1 for value in values)} of {len(values)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
