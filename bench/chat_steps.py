"""CPU per chat of the chat's database steps alone, in this process: no HTTP, no bot, no
threads, so the figure hardly moves with other load on the machine.

Each chat is what `chat_load.py` does to the database: the stream's first read, start (the
opener), the bot's reply, three messages each with the bot's reply, end and submit (claims are
made before and not counted). SQLite, like `chat_load.py`.

    .venv/bin/python bench/chat_steps.py --chats 300
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from chat_load import write_task  # noqa: E402

from collection_and_annotations.blueprints import build_blueprint  # noqa: E402
from collection_and_annotations.cli.run import open_task  # noqa: E402
from collection_and_annotations.config.loader import load_run_config  # noqa: E402
from collection_and_annotations.engine import chat  # noqa: E402
from collection_and_annotations.engine.allocation import claim_unit  # noqa: E402
from collection_and_annotations.engine.work import submit  # noqa: E402
from collection_and_annotations.storage.database import Database  # noqa: E402

STEPS = ("read", "start", "reply", "message", "end", "submit")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="chat_steps_") as tmp:
        folder = Path(tmp)
        conf = write_task(folder, args.chats, 3, 2.0, 1)
        cfg = load_run_config(str(conf), [f"data_dir={folder}"]).config
        blueprint = build_blueprint(cfg)
        db = Database(f"sqlite:///{folder / 'cep.sqlite3'}")
        served = open_task(cfg, str(conf), db, blueprint)
        rules = blueprint.rules
        spent = dict.fromkeys(STEPS, 0.0)

        def timed(step: str, function: Callable[..., Any], *args: Any) -> Any:
            started = time.process_time()
            result = function(*args)
            spent[step] += time.process_time() - started
            return result

        claims = [claim_unit(db, served.task_id, served.run_id, served.provider.name,
                             f"worker_{n}", None, served.limits, served.blocked_workers,
                             blueprint.pools_for) for n in range(args.chats)]
        for claimed in claims:
            unit, worker = claimed.unit_public_id, claimed.worker_id
            timed("read", chat.read_chat, db, unit, worker, rules, lambda _id: None)
            [job], _ = timed("start", chat.start, db, unit, worker, rules, lambda _id: None)
            for turn in range(4):
                if turn:
                    _, [job] = timed("message", chat.send, db, chat.MessageStep.checked(
                        unit, worker, f"message {turn}", f"c{turn}", rules), rules)
                timed("reply", chat.store_reply, db, chat.ReplyStep(
                    job, "one two three " * 6, {"type": "demo"}, 10, 2000), rules)
            timed("end", chat.end, db, unit, worker, rules, lambda _id: None)
            timed("submit", submit, db, blueprint, unit, worker, {}, {}, None, {})
        db.dispose()
    total = sum(spent.values())
    print(f"CPU per chat of its database steps ({args.chats} chats, SQLite): "
          f"{1000 * total / args.chats:.2f} ms: " + ", ".join(
              f"{step} {1000 * seconds / args.chats:.2f}" for step, seconds in spent.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
