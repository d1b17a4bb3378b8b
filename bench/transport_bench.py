"""Chat transport benchmark: server-sent events + POST against WebSocket, on our serving stack.

A tiny ASGI app, without the chat logic or the database, is served by uvicorn configured like
ours (httptools, uvloop, 60 s keep-alive, 4096 connections at most, the WebSocket protocol that
uvicorn picks itself: `websockets-sansio` when `websockets` is installed) in one server
subprocess. Both transports are driven by the same server-side "bot": when a worker sends a
message it waits `--bot-delay` seconds (asyncio.sleep) and then sends 20 pieces 50 ms apart,
each the JSON `{"seq", "text", "sent"}` stamped with the server's send time.

- `sse`: `GET /sse?id=N` is a chunked text/event-stream (`event: piece\\ndata: {...}\\n\\n`);
  messages are `POST /msg?id=N` on a second keep-alive connection, as in our live chat.
- `ws`: `/ws?id=N`, one WebSocket; messages and pieces are text frames. The client does not
  offer compression.
- `ws-deflate`: the same, but the client offers `permessage-deflate` as browsers do, so
  uvicorn compresses every frame (its default, `ws_per_message_deflate=True`).

A client process (asyncio on uvloop, raw streams, a minimal WebSocket client of its own)
ramps C simulated workers over `--ramp` seconds; each sends `--messages` messages, each after
a think time of `--think` s ± 50 %, and reads the whole reply. Measured per run: the overhead
(time from sending a message to its first piece, minus the bot delay) p50/p99; the push delay
(the client's receive time minus the server's stamp, over every piece); errors; server CPU
seconds (/proc/<pid>/stat) per delivered piece, everything included (connects, handshakes,
POSTs); server RSS idle and peak, as MB per 1000 workers (an SSE worker holds 2 connections, a
WebSocket worker 1); the connect time of each worker (TCP + stream head or handshake); and the
client's own event-loop lag, which shows up in the overhead. The variants alternate (sse, ws,
ws-deflate, sse, ...) so each sees the same machine; each run has a fresh server. `load` is
the machine's 1-minute load average as the run starts.

    .venv/bin/python bench/transport_bench.py --clients 200 2000 --rounds 2
    .venv/bin/python bench/transport_bench.py --clients 200 --variants sse ws --rounds 1

Needs `websockets` (a dev dependency) in the server's environment; everything is on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import platform
import random
import resource
import signal
import socket
import statistics
import struct
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from procstats import cpu_seconds, loop_lag, rss_mb

PIECES = 20
PIECE_GAP = 0.05
VARIANTS = ("sse", "ws", "ws-deflate")
REPLY_TIMEOUT = 30.0


# -- server ---------------------------------------------------------------------------------


def piece(seq: int) -> str:
    return json.dumps({"seq": seq, "text": f"word{seq} ", "sent": time.time()})


class BenchApp:
    """The two transports and the bot, as one ASGI app."""

    def __init__(self, bot_delay: float) -> None:
        self.bot_delay = bot_delay
        self.streams: dict[str, asyncio.Queue[bytes | None]] = {}
        self.bots: set[asyncio.Task[None]] = set()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            await self.websocket(scope, receive, send)
        elif scope["type"] == "http" and scope["path"] == "/sse":
            await self.sse(scope, receive, send)
        elif scope["type"] == "http" and scope["path"] == "/msg":
            await self.message(scope, receive, send)
        elif scope["type"] == "http":
            await respond(send, 404, b'{"error": "no such path"}')

    def start_bot(self, push: Any) -> None:
        task = asyncio.ensure_future(self.bot(push))
        self.bots.add(task)
        task.add_done_callback(self.bots.discard)

    async def bot(self, push: Any) -> None:
        await asyncio.sleep(self.bot_delay)
        with contextlib.suppress(Exception):  # the worker left
            for seq in range(PIECES):
                if seq:
                    await asyncio.sleep(PIECE_GAP)
                await push(piece(seq))

    async def sse(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.streams[client_id(scope)] = queue
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store")]})

        async def watch() -> None:  # the only thing the client can send now is a disconnect
            while (await receive())["type"] != "http.disconnect":
                pass
            queue.put_nowait(None)

        watcher = asyncio.ensure_future(watch())
        try:
            while (chunk := await queue.get()) is not None:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            watcher.cancel()
            self.streams.pop(client_id(scope), None)

    async def message(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        queue = self.streams.get(client_id(scope))
        if queue is None:
            return await respond(send, 404, b'{"error": "no open stream"}')

        async def push(text: str) -> None:
            queue.put_nowait(f"event: piece\ndata: {text}\n\n".encode())

        self.start_bot(push)
        await respond(send, 202, b"{}")

    async def websocket(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def push(text: str) -> None:
            await send({"type": "websocket.send", "text": text})

        while True:
            event = await receive()
            if event["type"] == "websocket.connect":
                await send({"type": "websocket.accept"})
            elif event["type"] == "websocket.receive":
                self.start_bot(push)
            else:
                return


def client_id(scope: dict[str, Any]) -> str:
    return scope["query_string"].decode("latin-1").partition("id=")[2]


async def respond(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def raise_file_limit() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def serve(port: int, bot_delay: float) -> None:
    """The server subprocess: uvicorn as in collection_and_annotations/server/http.py."""
    import uvicorn

    raise_file_limit()
    config = uvicorn.Config(
        BenchApp(bot_delay), host="127.0.0.1", port=port, http="httptools", loop="uvloop",
        ws="auto", lifespan="off", interface="asgi3", access_log=False, log_config=None,
        log_level="warning", server_header=False, backlog=2048, timeout_keep_alive=60,
        limit_concurrency=4096)
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run()


# -- client ---------------------------------------------------------------------------------


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    status_line = await reader.readline()
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    if not status_line:
        raise ConnectionError("the server closed the connection")
    return int(status_line.split()[1]), headers


class SseClient:
    """An event-stream connection and a keep-alive connection for the messages."""

    async def open(self, port: int, n: int) -> None:
        self.port, self.n = port, n
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        self.writer.write(f"GET /sse?id={n} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                          "Accept: text/event-stream\r\n\r\n".encode())
        status, headers = await read_head(self.reader)
        if status != 200 or headers.get("transfer-encoding") != "chunked":
            raise RuntimeError(f"event stream answered {status} {headers}")
        self.post_reader, self.post_writer = await asyncio.open_connection("127.0.0.1", port)
        self.buffer = b""

    async def send(self, text: str) -> None:
        body = json.dumps({"text": text}).encode()
        self.post_writer.write(
            f"POST /msg?id={self.n} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body)
        status, headers = await read_head(self.post_reader)
        await self.post_reader.readexactly(int(headers.get("content-length", "0")))
        if status != 202:
            raise RuntimeError(f"message answered {status}")

    async def receive(self) -> str:
        """The data of the next event."""
        while b"\n\n" not in self.buffer:
            size = int((await self.reader.readline()).strip() or b"0", 16)
            if size == 0:
                raise ConnectionError("the event stream ended")
            self.buffer += (await self.reader.readexactly(size + 2))[:-2]
        block, self.buffer = self.buffer.split(b"\n\n", 1)
        return block.partition(b"\ndata: ")[2].decode()

    def close(self) -> None:
        for name in ("writer", "post_writer"):
            if hasattr(self, name):
                getattr(self, name).close()


class WsClient:
    """A minimal WebSocket client (RFC 6455): masked text frames out, whole frames in,
    answers pings, and inflates frames when permessage-deflate was agreed."""

    def __init__(self, deflate: bool) -> None:
        self.deflate = deflate
        self.inflater: Any = None

    async def open(self, port: int, n: int) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        offer = ("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
                 if self.deflate else "")
        self.writer.write(f"GET /ws?id={n} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                          "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                          f"{offer}\r\n".encode())
        status, headers = await read_head(self.reader)
        if status != 101:
            raise RuntimeError(f"handshake answered {status}")
        agreed = "permessage-deflate" in headers.get("sec-websocket-extensions", "")
        if self.deflate and not agreed:
            raise RuntimeError("the server did not agree to permessage-deflate")
        if agreed:
            self.inflater = zlib.decompressobj(-15)

    def _frame(self, opcode: int, payload: bytes) -> None:
        size = len(payload)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | size]) if size < 126
                                         else bytes([0x80 | 126]) + struct.pack("!H", size))
        mask = os.urandom(4)
        padded = (mask * (size // 4 + 1))[:size]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(padded, "big"))
        self.writer.write(head + mask + masked.to_bytes(size, "big"))

    async def send(self, text: str) -> None:
        self._frame(0x1, text.encode())

    async def receive(self) -> str:
        while True:
            first, second = await self.reader.readexactly(2)
            size = second & 0x7F
            if size >= 126:
                extra = await self.reader.readexactly(2 if size == 126 else 8)
                size = int.from_bytes(extra, "big")
            payload = await self.reader.readexactly(size)
            opcode = first & 0x0F
            if opcode == 0x9:
                self._frame(0xA, payload)
            elif opcode == 0x8:
                raise ConnectionError("the server closed the WebSocket")
            elif opcode == 0x1 and first & 0x80:
                if first & 0x40:
                    payload = self.inflater.decompress(payload + b"\x00\x00\xff\xff")
                return payload.decode()
            elif opcode != 0xA:
                raise RuntimeError(f"unexpected frame {first:#x}")

    def close(self) -> None:
        if hasattr(self, "writer"):
            self.writer.close()


@dataclass
class Run:
    """What one run of one variant measured."""

    overheads: list[float] = field(default_factory=list)
    pushes: list[float] = field(default_factory=list)
    connects: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lags: list[float] = field(default_factory=list)
    load: float = 0.0
    events: int = 0
    cpu_s: float = 0.0
    idle_mb: float = 0.0
    peak_mb: float = 0.0


async def worker(variant: str, n: int, port: int, args: argparse.Namespace, run: Run,
                 start_at: float) -> None:
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    client = SseClient() if variant == "sse" else WsClient(deflate=variant == "ws-deflate")
    try:
        began = time.monotonic()
        await client.open(port, n)
        run.connects.append(time.monotonic() - began)
        for turn in range(args.messages):
            await asyncio.sleep(args.think * random.uniform(0.5, 1.5))
            await asyncio.wait_for(one_turn(client, f"message {turn} of worker {n}", args, run),
                                   REPLY_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - counted and reported
        run.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        client.close()


async def one_turn(client: SseClient | WsClient, text: str, args: argparse.Namespace,
                   run: Run) -> None:
    sent = time.monotonic()
    await client.send(text)
    for seq in range(PIECES):
        data = json.loads(await client.receive())
        if seq == 0:
            run.overheads.append(time.monotonic() - sent - args.bot_delay)
        run.pushes.append(time.time() - data["sent"])
        run.events += 1


async def sample_peak(pid: int, stop: asyncio.Event, run: Run) -> None:
    while not stop.is_set():
        run.peak_mb = max(run.peak_mb, rss_mb(pid))
        await asyncio.sleep(0.25)


async def drive(variant: str, clients: int, port: int, pid: int,
                args: argparse.Namespace) -> Run:
    run, stop = Run(), asyncio.Event()
    run.idle_mb, run.load = rss_mb(pid), os.getloadavg()[0]
    helpers = [asyncio.ensure_future(loop_lag(stop, run.lags)),
               asyncio.ensure_future(sample_peak(pid, stop, run))]
    cpu_before, started = cpu_seconds(pid), time.monotonic()
    await asyncio.gather(*(worker(variant, n, port, args, run,
                                  started + args.ramp * n / clients) for n in range(clients)))
    run.cpu_s = cpu_seconds(pid) - cpu_before
    stop.set()
    await asyncio.gather(*helpers)
    return run


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int, bot_delay: float) -> subprocess.Popen[bytes]:
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port),
                               "--bot-delay", str(bot_delay)])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            time.sleep(0.5)  # let it settle before the idle memory is read
            return server
        time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def one_run(variant: str, clients: int, args: argparse.Namespace) -> Run:
    port = free_port()
    server = start_server(port, args.bot_delay)
    try:
        import uvloop

        return uvloop.run(drive(variant, clients, port, server.pid, args))
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


# -- report ---------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def figures(run: Run, clients: int) -> dict[str, float]:
    ms = 1000.0
    return {
        "overhead p50": ms * percentile(run.overheads, 0.5),
        "overhead p99": ms * percentile(run.overheads, 0.99),
        "push p50": ms * percentile(run.pushes, 0.5),
        "push p99": ms * percentile(run.pushes, 0.99),
        "CPU us/event": 1e6 * run.cpu_s / run.events if run.events else float("nan"),
        "MB/1000 workers": (run.peak_mb - run.idle_mb) * 1000 / clients,
        "idle MB": run.idle_mb,
        "peak MB": run.peak_mb,
        "connect p50": ms * percentile(run.connects, 0.5),
        "connect p99": ms * percentile(run.connects, 0.99),
        "client lag p99": ms * percentile(run.lags, 0.99),
        "events": run.events,
        "load": run.load,
        "errors": len(run.errors),
    }


COLUMNS = ("overhead p50", "overhead p99", "push p50", "push p99", "CPU us/event",
           "MB/1000 workers", "idle MB", "peak MB", "connect p50", "connect p99",
           "client lag p99", "load", "events", "errors")


def print_row(label: str, values: dict[str, float]) -> None:
    cells = [f"{values[c]:.0f}" if c in ("events", "errors") else f"{values[c]:.1f}"
             for c in COLUMNS]
    print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def print_table(clients: int, results: dict[str, list[dict[str, float]]]) -> None:
    print(f"\nC={clients}, median of {len(next(iter(results.values())))} rounds "
          "(overhead, push, connect and lag in ms):")
    print("| transport | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for variant, rounds in results.items():
        print_row(variant, {c: statistics.median(r[c] for r in rounds) for c in COLUMNS})


def bench(clients: int, args: argparse.Namespace) -> None:
    results: dict[str, list[dict[str, float]]] = {v: [] for v in args.variants}
    for round_no in range(1, args.rounds + 1):
        for variant in args.variants:
            run = one_run(variant, clients, args)
            results[variant].append(figures(run, clients))
            print_row(f"C={clients} round {round_no} {variant}", results[variant][-1])
            if run.errors:
                print(f"  first error: {run.errors[0]}", flush=True)
    print_table(clients, results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--messages", type=int, default=3, help="messages per worker")
    parser.add_argument("--think", type=float, default=3.0,
                        help="seconds before each message (±50%%)")
    parser.add_argument("--bot-delay", type=float, default=2.0)
    parser.add_argument("--ramp", type=float, default=10.0,
                        help="seconds over which the workers connect")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.bot_delay)
        return 0
    raise_file_limit()
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, {platform.machine()}, Python "
          f"{platform.python_version()}; one server process; bot: first piece after "
          f"{args.bot_delay} s, {PIECES} pieces {1000 * PIECE_GAP:.0f} ms apart; "
          f"{args.messages} messages per worker, think {args.think} s ± 50 %")
    print("| run | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for clients in args.clients:
        bench(clients, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
