"""The dashboard's live arena leaderboard (docs/arena.md): `GET /api/requester/arena`, the
same figures as `analyze` gives (analysis/arena.py) over the battles submitted so far."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import func, select
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.server.requester_api import PREFIX, requester
from collection_and_annotations.server.web import JSON, abort
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import BattleVote

# Bootstrap resamples of the live view: enough for its intervals, fast enough to poll.
LIVE_RESAMPLES = 200


@requester
def arena(request: Request, task: ServedTask) -> Response:
    if task.blueprint.chat_server != "arena":
        raise abort(404, "this task is not an arena; its results are under /api/requester/results")
    with task.db.snapshot() as connection:
        count, newest = connection.execute(
            select(func.count(BattleVote.id), func.coalesce(func.max(BattleVote.id), 0))).one()
    return JSON(_leaderboard(task.db, task.task_name, task.task_id, count, newest))


@lru_cache(maxsize=1)  # only the newest answer is worth keeping
def _leaderboard(db: Database, task_name: str, task_id: int, votes: int,
                 newest: int) -> dict[str, Any]:
    """The answer for the task's votes as they are (`votes` of them, the newest `newest`)."""
    from collection_and_annotations.analysis.arena import stored_leaderboard
    from collection_and_annotations.export.writers import json_safe

    board = stored_leaderboard(db, [task_name], LIVE_RESAMPLES)
    return {"resamples": LIVE_RESAMPLES, "leaderboard": json_safe(board)}


ROUTES = [Route(f"{PREFIX}/arena", arena, methods=["GET"])]
