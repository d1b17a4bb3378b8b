"""The dashboard's live arena leaderboard (docs/arena.md): `GET /api/requester/arena`, the
same figures as `analyze` gives (analysis/arena.py) over the battles submitted so far."""

from __future__ import annotations

import threading

from sqlalchemy import func, select
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.server.requester_api import PREFIX, requester
from collection_and_annotations.server.web import JSON, abort
from collection_and_annotations.storage.models import BattleVote

# Bootstrap resamples of the live view: enough for its intervals, fast enough to poll.
LIVE_RESAMPLES = 200
_cache: dict[tuple[int, int, int], dict] = {}  # (task, votes, newest vote) -> the answer
_cache_lock = threading.Lock()


@requester
def arena(request: Request, task: ServedTask) -> Response:
    if task.blueprint.chat_server != "arena":
        raise abort(404, "this task is not an arena; its results are under /api/requester/results")
    with task.db.snapshot() as connection:
        count, newest = connection.execute(
            select(func.count(BattleVote.id), func.coalesce(func.max(BattleVote.id), 0))).one()
    key = (task.task_id, count, newest)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is None:
        from collection_and_annotations.analysis.arena import stored_leaderboard
        from collection_and_annotations.export.writers import json_safe

        board = stored_leaderboard(task.db, [task.task_name], LIVE_RESAMPLES)
        cached = {"resamples": LIVE_RESAMPLES, "leaderboard": json_safe(board)}
        with _cache_lock:
            _cache.clear()  # only the newest answer is worth keeping
            _cache[key] = cached
    return JSON(cached)


ROUTES = [Route(f"{PREFIX}/arena", arena, methods=["GET"])]
