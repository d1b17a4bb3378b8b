"""Load harness for the arena: C simulated workers battle at once over real HTTP.

The server is the real `welcome.py` in a subprocess (SQLite and one process by default) with
an arena of two built-in `counter` demo bots, each answering after `--bot-delay` seconds in 20
pieces 50 ms apart. Each worker claims a battle, opens the event stream, starts it, then sends
`--turns` messages, each after `--think` seconds; both replies stream at once, and the worker
votes after each pair of replies (`vote: per_turn`), then submits.

The platform's overhead per bot turn is, for each message and each side: the time from sending
it to the first piece of that side's reply reaching the worker, minus the bot's own time to its
first piece. At the end every battle, message and vote is looked up in the database. The HTTP
client is chat_load.py's.

    .venv/bin/python bench/arena_load.py --clients 500
    .venv/bin/python bench/arena_load.py --clients 500 --db postgres --processes 2
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from chat_load import (  # noqa: E402
    Connection,
    claim_and_listen,
    latencies,
    launched,
    load_arguments,
    machine,
    measured,
)
from sqlalchemy import create_engine, func, select  # noqa: E402

from collection_and_annotations.storage.models import BattleVote, Message, Unit  # noqa: E402

CHOICES = ("a", "b", "tie", "bothbad")


def write_task(folder: Path, clients: int, turns: int, bot_delay: float, port: int) -> Path:
    opts = folder / "model_opts.yaml"
    opts.write_text("".join(f"{name}: {{type: demo, name: counter, think: {bot_delay}, "
                            "delay: 0.05}\n" for name in ("left", "right")))
    conf = folder / "arena_bench.yaml"
    conf.write_text(
        "#@package _global_\n"
        "defaults:\n  - /mephisto/blueprint: arena\n"
        f"mephisto:\n  architect:\n    hostname: 127.0.0.1\n    port: {port}\n"
        f"  blueprint:\n    model_opt_path: {opts}\n    battles_per_pair: {clients}\n"
        f"    num_turns: {turns}\n    vote: per_turn\n    max_resp_time: 600\n"
        "    max_concurrent_responses: 100000\n"
        "  task:\n    task_name: arena_bench\n    allowed_concurrent: 1\n"
        "    assignment_duration_in_seconds: 3600\n"
        "monitoring_log_rate: 3600\n")
    return conf


class Results:
    def __init__(self) -> None:
        self.overheads: dict[int, list[float]] = {0: [], 1: []}  # per side
        self.posts: list[float] = []  # the message request's round trip
        self.errors: list[str] = []
        self.battles = 0


async def worker(n: int, port: int, args: argparse.Namespace, results: Results,
                 start_at: float) -> None:
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    requests, stream = Connection(port), Connection(port)
    try:
        unit, token, events = await claim_and_listen(n, requests, stream)
        await _next(events, {"state"})
        await requests.must("POST", f"/api/chat/{unit}/start", {}, token)
        for turn in range(args.turns):
            await asyncio.sleep(args.think * random.uniform(0.5, 1.5))
            sent = time.monotonic()
            await requests.must("POST", f"/api/chat/{unit}/messages", {
                "text": f"message {turn} of worker {n}", "client_message_id": f"{n}-{turn}"},
                token, 202)
            results.posts.append(time.monotonic() - sent)
            first: set[int] = set()
            replied: set[int] = set()
            while replied != {0, 1}:
                event, data = await _next(events, {"piece", "message"})
                side = data["position"]
                if event == "piece" and side not in first:
                    first.add(side)
                    results.overheads[side].append(time.monotonic() - sent - args.bot_delay)
                elif event == "message" and data["role"] == "bot":
                    replied.add(side)
            await requests.must("POST", f"/api/chat/{unit}/vote",
                                {"choice": random.choice(CHOICES)}, token)
        await requests.must("POST", f"/api/units/{unit}/submit", {"answers": {}}, token)
        results.battles += 1
    except Exception as exc:  # noqa: BLE001 - counted and reported
        results.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        for connection in (requests, stream):
            if hasattr(connection, "writer"):
                connection.close()


async def _next(events, wanted: set[str]) -> tuple[str, dict]:
    async for event, data in events:
        if event == "error":
            raise RuntimeError(f"bot error: {data}")
        if event in wanted:
            return event, data
    raise RuntimeError(f"the stream ended before a {'/'.join(sorted(wanted))} event")


async def drive(port: int, args: argparse.Namespace, server_pid: int) -> tuple[Results, dict]:
    results = Results()
    figures = await measured(server_pid, args.clients, args.ramp,
                             lambda n, start_at: worker(n, port, args, results, start_at))
    return results, figures


def check_database(url: str, clients: int, turns: int) -> str:
    engine = create_engine(url)
    with engine.connect() as connection:
        completed = connection.scalar(select(func.count()).select_from(Unit)
                                      .where(Unit.status == "completed"))
        messages = connection.scalar(select(func.count()).select_from(Message))
        votes = connection.scalar(select(func.count()).select_from(BattleVote))
    engine.dispose()
    expected = (clients, clients * turns * 4, clients * turns)
    ok = (completed, messages, votes) == expected
    return (f"{'OK' if ok else 'MISMATCH'}: {completed} battles completed, {messages} messages "
            f"and {votes} votes stored (expected {' / '.join(map(str, expected))})")


def main() -> int:
    args = load_arguments(__doc__.split("\n\n")[0], clients=500, turns=2)
    with launched("arena_bench_", args, write_task) as (port, pid, url):
        results, figures = asyncio.run(drive(port, args, pid))
        check = check_database(url, args.clients, args.turns)
    print(machine(args))
    print(f"C={args.clients} battles at once, {args.turns} messages each, think {args.think} s, "
          f"both bots: first piece after {args.bot_delay} s, 20 pieces 50 ms apart")
    print(f"battles completed: {results.battles}/{args.clients}; errors: {len(results.errors)}"
          + (f" (first: {results.errors[0]})" if results.errors else ""))
    for side, name in ((0, "A"), (1, "B")):
        if results.overheads[side]:
            print(latencies(f"overhead per bot turn, side {name}", results.overheads[side]))
    if results.posts:
        print(latencies("  of which the message request (stored, 202)", results.posts))
    print(f"server CPU {figures['server_cpu_s']:.1f} s over {figures['elapsed_s']:.1f} s; "
          f"peak memory {figures['server_peak_rss_mb']:.0f} MB; client loop lag p99 "
          f"{figures['client_lag_p99_ms']:.1f} ms")
    print(f"database: {check}")
    return 0 if not results.errors and check.startswith("OK") else 1


if __name__ == "__main__":
    raise SystemExit(main())
