"""Arena battles in tests: a conf of scripted bots, and a battle played through the API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chat_helpers import ChatServer, auth, event_stream, write_model_opts
from helpers import free_port
from sqlalchemy import select

from collection_and_annotations.storage.models import Unit


def write_arena_conf(folder: Path, bots: list[str] | str, *, battles_per_pair: int = 2,
                     num_turns: int = 1, vote: str = "end", extra: str = "",
                     task: str = "", reveal: bool = False) -> Path:
    """An arena conf in `folder`; `bots` are nicknames of scripted bots (given to ChatServer),
    or the text of a model_opts.yaml for a server started with welcome.py."""
    opts = write_model_opts(folder, bots)
    conf = folder / "arena.yaml"
    conf.write_text(
        "#@package _global_\n"
        "defaults:\n  - /mephisto/blueprint: arena\n"
        f"mephisto:\n  architect:\n    hostname: 127.0.0.1\n    port: {free_port()}\n"
        f"  blueprint:\n    model_opt_path: {opts}\n"
        f"    battles_per_pair: {battles_per_pair}\n    num_turns: {num_turns}\n"
        f"    vote: {vote}\n    reveal_after_vote: {str(reveal).lower()}\n{extra}"
        "  task:\n    task_name: arena\n    task_title: Arena\n"
        f"    assignment_duration_in_seconds: 600\n{task}"
    )
    return conf


def play(server: ChatServer, unit: str, token: str, messages: list[str],
         choices: list[str]) -> None:
    """Start the battle, send each message, wait for both replies and vote as `choices`
    (one per message for per-turn votes, one at the end otherwise)."""
    with event_stream(server.base, unit, token) as stream:
        stream.next("state")
        assert server.client.post(f"/api/chat/{unit}/start", json={},
                                  headers=auth(token)).status_code == 200
        for n, text in enumerate(messages):
            send_to_both(server, unit, token, stream, {"text": text, "client_message_id": f"m{n}"})
            if len(choices) == len(messages) or n == len(messages) - 1:
                voted = server.client.post(f"/api/chat/{unit}/vote", headers=auth(token),
                                           json={"choice": choices[min(n, len(choices) - 1)]})
                assert voted.status_code == 200, voted.text


def sides(server: ChatServer, unit: str) -> list[str]:
    """The bots of a battle as its sides show them (A, B), from its recorded layout."""
    return _unit_column(server, unit, Unit.layout)["bots"]


def pool_of(server: ChatServer, unit: str) -> str:
    """The pool a battle was served from (a pair's, `gold` or `screening`)."""
    return _unit_column(server, unit, Unit.pool)


def _unit_column(server: ChatServer, unit: str, column: Any) -> Any:
    with server.db.snapshot() as connection:
        return connection.execute(select(column).where(Unit.public_id == unit)).scalar()


def send_to_both(server: ChatServer, unit: str, token: str, stream: Any,
                 body: dict[str, Any]) -> None:
    """One message (`body` as the page posts it) to both sides, answered by both bots."""
    sent = server.client.post(f"/api/chat/{unit}/messages", headers=auth(token), json=body)
    assert sent.status_code == 202, sent.text
    replied = set()
    while replied != {0, 1}:
        _event, data = stream.next("message")
        if data["role"] == "bot":
            replied.add(data["position"])
