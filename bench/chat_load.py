"""Load harness for live chat: C simulated workers chat at once over real HTTP.

The server is the real `welcome.py` in a subprocess (one server process, SQLite by default) and
the bot is the built-in `counter` demo bot: it answers after `--bot-delay` seconds (2 s) in 20
pieces. Each worker claims a unit, opens the event stream, starts the chat (the server sends
"Hi!" and the bot answers), then sends `--turns` messages, each after `--think` seconds, waits
for each reply to finish, ends the chat and submits.

The platform's overhead per bot turn is, for each message: the time from sending it to the
first piece of the reply reaching the worker, minus the bot's own time to its first piece (the
bot's configured delay). At the end every message of every chat is looked up in the database.

    .venv/bin/python bench/chat_load.py --clients 200
    .venv/bin/python bench/chat_load.py --clients 2000 --ramp 20
    .venv/bin/python bench/chat_load.py --clients 2000 --ramp 20 --db postgres --processes 2

With `--db postgres` the server uses a fresh PostgreSQL database (dropped at the end); with
`--processes N` it runs N server processes (`mephisto.architect.server_processes`), whose chat
events cross between processes through LISTEN/NOTIFY. CPU and memory are then the sums over
the launcher and all its processes.

The client is a small asyncio HTTP/1.1 client of its own (a keep-alive connection for requests
and one for the stream per worker), so it costs little CPU; its event-loop lag, which would
show as overhead, is measured and printed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from procstats import loop_lag, tree_cpu_seconds, tree_rss_mb  # noqa: E402
from sqlalchemy import create_engine, func, select  # noqa: E402
from worker_api_load import drop_postgres, postgres_database  # noqa: E402

from collection_and_annotations.storage.models import Conversation, Message, Unit  # noqa: E402


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write_task(folder: Path, clients: int, turns: int, bot_delay: float, port: int) -> Path:
    opts = folder / "model_opts.yaml"
    opts.write_text(f"slow: {{type: demo, name: counter, think: {bot_delay}, "
                    "delay: 0.05}\n")
    conf = folder / "chat_bench.yaml"
    conf.write_text(
        "#@package _global_\n"
        "defaults:\n  - /mephisto/blueprint: dialogue_collection\n"
        f"mephisto:\n  architect:\n    hostname: 127.0.0.1\n    port: {port}\n"
        f"  blueprint:\n    model_opt_path: {opts}\n"
        f"    conversations_needed_string: \"slow:{clients}\"\n    num_turns: {turns}\n"
        "    max_resp_time: 600\n    max_concurrent_responses: 100000\n"
        "  task:\n    task_name: chat_bench\n    allowed_concurrent: 1\n"
        "    assignment_duration_in_seconds: 3600\n"
        "monitoring_log_rate: 3600\n")
    return conf


class Connection:
    """One keep-alive HTTP/1.1 connection: JSON requests, or one event stream."""

    def __init__(self, port: int):
        self.port = port

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def request(self, method: str, path: str, body: dict | None = None,
                      token: str | None = None) -> tuple[int, dict]:
        payload = b"" if body is None else json.dumps(body).encode()
        head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}",
                f"Content-Length: {len(payload)}", "Content-Type: application/json"]
        if token:
            head.append(f"Authorization: Bearer {token}")
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        status, headers = await self._head()
        data = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return status, json.loads(data) if data else {}

    async def must(self, method: str, path: str, body: dict | None, token: str,
                   status: int = 200) -> dict:
        """A request that must answer `status` (else RuntimeError naming the step)."""
        got, answer = await self.request(method, path, body, token)
        if got != status:
            raise RuntimeError(f"{path.rsplit('/', 1)[-1]}: {got} {answer}")
        return answer

    async def _head(self) -> tuple[int, dict[str, str]]:
        status_line = await self.reader.readline()
        headers = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(status_line.split()[1]), headers

    async def stream(self, path: str, token: str) -> None:
        self.writer.write((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                           f"Authorization: Bearer {token}\r\n\r\n").encode())
        status, headers = await self._head()
        if status != 200:
            raise RuntimeError(f"event stream answered {status}")
        self.chunked = headers.get("transfer-encoding") == "chunked"

    async def events(self):
        """(event, data) as they arrive (chunked transfer decoded)."""
        buffer = b""
        while True:
            if self.chunked:
                size = int((await self.reader.readline()).strip() or b"0", 16)
                if size == 0:
                    return
                buffer += await self.reader.readexactly(size + 2)
                buffer = buffer[:-2] if buffer.endswith(b"\r\n") else buffer
            else:
                buffer += await self.reader.read(65536)
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                event, data = "", ""
                for line in block.decode().split("\n"):
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: "):
                        data = line[6:]
                if event:
                    yield event, json.loads(data)

    def close(self) -> None:
        self.writer.close()


class Results:
    def __init__(self) -> None:
        self.overheads: list[float] = []
        self.posts: list[float] = []  # the message request's round trip
        self.errors: list[str] = []
        self.chats = 0


async def claim_and_listen(n: int, requests: Connection, stream: Connection
                           ) -> tuple[str, str, AsyncIterator[tuple[str, dict]]]:
    """Worker n's unit claimed on `requests` and its event stream opened on `stream`: the
    unit, the worker's token and the stream's events."""
    await requests.open()
    status, claim = await requests.request("POST", "/api/claim", {
        "worker_id": f"bench_{n}", "assignment_id": "1"})
    if status != 200:
        raise RuntimeError(f"claim: {status} {claim}")
    unit, token = claim["unit_id"], claim["token"]
    await stream.open()
    await stream.stream(f"/api/chat/{unit}/events", token)
    return unit, token, stream.events()


async def worker(n: int, port: int, args: argparse.Namespace, results: Results,
                 start_at: float) -> None:
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    requests, stream = Connection(port), Connection(port)
    try:
        unit, token, events = await claim_and_listen(n, requests, stream)
        await _until(events, "state")
        await requests.request("POST", f"/api/chat/{unit}/start", {}, token)
        await _until(events, "message", role="bot")
        for turn in range(args.turns):
            await asyncio.sleep(args.think * random.uniform(0.5, 1.5))
            sent = time.monotonic()
            await requests.must("POST", f"/api/chat/{unit}/messages", {
                "text": f"message {turn} of worker {n}", "client_message_id": f"{n}-{turn}"},
                token, 202)
            results.posts.append(time.monotonic() - sent)
            await _until(events, "piece")
            results.overheads.append(time.monotonic() - sent - args.bot_delay)
            await _until(events, "message", role="bot")
        await requests.must("POST", f"/api/chat/{unit}/end", {}, token)
        await requests.must("POST", f"/api/units/{unit}/submit", {"answers": {}}, token)
        results.chats += 1
    except Exception as exc:  # noqa: BLE001 - counted and reported
        results.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        for connection in (requests, stream):
            if hasattr(connection, "writer"):
                connection.close()


async def _until(events, wanted: str, role: str | None = None) -> dict:
    async for event, data in events:
        if event == "error":
            raise RuntimeError(f"bot error: {data}")
        if event == wanted and (role is None or data.get("role") == role):
            return data
    raise RuntimeError(f"the stream ended before a '{wanted}' event")


async def measured(server_pid: int, clients: int, ramp: float,
                   worker: Callable[[int, float], Awaitable[None]]) -> dict[str, float]:
    """Run `worker(n, start_at)` for each of `clients`, arriving over `ramp` seconds, and
    measure the server's CPU and peak memory and this client's event-loop lag meanwhile."""
    stop, lags = asyncio.Event(), []
    lag_task = asyncio.create_task(loop_lag(stop, lags))
    peak = [0.0]

    async def sample_memory() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], tree_rss_mb(server_pid))
            await asyncio.sleep(0.5)

    memory_task = asyncio.create_task(sample_memory())
    cpu_before, started = tree_cpu_seconds(server_pid), time.monotonic()
    await asyncio.gather(*(worker(n, started + ramp * n / clients) for n in range(clients)))
    elapsed = time.monotonic() - started
    stop.set()
    await asyncio.gather(lag_task, memory_task)
    return {"elapsed_s": elapsed,
            "server_cpu_s": tree_cpu_seconds(server_pid) - cpu_before,
            "server_peak_rss_mb": peak[0],
            "client_lag_p99_ms": 1000 * percentile(lags, 0.99) if lags else 0.0}


async def drive(port: int, args: argparse.Namespace, server_pid: int) -> tuple[Results, dict]:
    results = Results()
    figures = await measured(server_pid, args.clients, args.ramp,
                             lambda n, start_at: worker(n, port, args, results, start_at))
    return results, figures


def machine(args: argparse.Namespace) -> str:
    """The machine and the server the run measured, as the first line of a report."""
    return (f"machine: {platform.node()} {os.cpu_count()} cores, Python "
            f"{platform.python_version()}; {args.processes} server process(es), "
            f"{'PostgreSQL' if args.db == 'postgres' else 'SQLite'}")


def latencies(label: str, seconds: list[float]) -> str:
    """`label (ms): p50, p99, max (n, mean)` of durations given in seconds."""
    ms = [1000 * s for s in seconds]
    return (f"{label} (ms): p50 {percentile(ms, 0.5):.1f}, p99 {percentile(ms, 0.99):.1f}, "
            f"max {max(ms):.1f} (n={len(ms)}, mean {statistics.fmean(ms):.1f})")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def check_database(url: str, clients: int, turns: int) -> str:
    engine = create_engine(url)
    with engine.connect() as connection:
        completed = connection.scalar(select(func.count()).select_from(Unit)
                                      .where(Unit.status == "completed"))
        conversations = connection.scalar(select(func.count()).select_from(Conversation)
                                          .where(Conversation.status == "ended"))
        messages = connection.scalar(select(func.count()).select_from(Message))
    engine.dispose()
    expected = clients * (2 + 2 * turns)
    ok = completed == clients and conversations == clients and messages == expected
    return (f"{'OK' if ok else 'MISMATCH'}: {completed} units completed, {conversations} chats "
            f"ended, {messages} messages stored (expected {clients} / {clients} / {expected})")


def load_arguments(description: str, clients: int, turns: int) -> argparse.Namespace:
    """The options of a live load harness (this one, arena_load.py)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--clients", type=int, default=clients)
    parser.add_argument("--turns", type=int, default=turns)
    parser.add_argument("--think", type=float, default=3.0,
                        help="seconds a worker takes to write a message (±50%%)")
    parser.add_argument("--bot-delay", type=float, default=2.0)
    parser.add_argument("--ramp", type=float, default=10.0,
                        help="seconds over which the workers arrive")
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--processes", type=int, default=1,
                        help="server processes (more than 1 needs --db postgres)")
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return args


@contextlib.contextmanager
def launched(prefix: str, args: argparse.Namespace,
             write: Callable[[Path, int, int, float, int], Path]
             ) -> Iterator[tuple[int, int, str]]:
    """`welcome.py` serving the task `write` makes, in a temporary folder and a fresh
    database: yields its port, its process id and the database URL; stopped after, and a
    PostgreSQL database dropped."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        folder = Path(tmp)
        port = free_port()
        conf = write(folder, args.clients, args.turns, args.bot_delay, port)
        url, pg_name = f"sqlite:///{folder / 'cep.sqlite3'}", None
        if args.db == "postgres":
            url, pg_name = postgres_database()
        server = subprocess.Popen(
            [sys.executable, str(REPO / "welcome.py"), f"conf={conf}", f"data_dir={folder}",
             f"database_url={url}", f"mephisto.architect.server_processes={args.processes}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO)
        try:
            for line in server.stdout:
                if "press Ctrl-C to stop" in line:
                    break
            else:
                raise SystemExit("the server did not start")
            yield port, server.pid, url
        finally:
            # SIGTERM, not SIGINT: a launcher started from a script's background job inherits
            # SIGINT ignored, and both stop it cleanly.
            server.terminate()
            server.wait(30)
            if pg_name:
                drop_postgres(pg_name)


def main() -> int:
    args = load_arguments(__doc__.split("\n\n")[0], clients=200, turns=3)
    with launched("chat_bench_", args, write_task) as (port, pid, url):
        idle_rss = tree_rss_mb(pid)
        results, figures = asyncio.run(drive(port, args, pid))
        check = check_database(url, args.clients, args.turns)
    print(machine(args))
    print(f"C={args.clients} workers, {args.turns} messages each (+ the opener), think "
          f"{args.think} s, bot: first piece after {args.bot_delay} s, 20 pieces 50 ms apart")
    print(f"chats completed: {results.chats}/{args.clients}; errors: {len(results.errors)}"
          + (f" (first: {results.errors[0]})" if results.errors else ""))
    if results.overheads:
        print(latencies("overhead per bot turn", results.overheads))
        print(latencies("  of which the message request (stored, 202)", results.posts))
    print(f"server memory: {idle_rss:.0f} MB idle, {figures['server_peak_rss_mb']:.0f} MB peak; "
          f"server CPU {figures['server_cpu_s']:.1f} s over {figures['elapsed_s']:.1f} s; "
          f"client loop lag p99 {figures['client_lag_p99_ms']:.1f} ms")
    print(f"database: {check}")
    return 0 if not results.errors and check.startswith("OK") else 1


if __name__ == "__main__":
    raise SystemExit(main())
