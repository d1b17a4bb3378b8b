"""`pairs: adaptive`: the pair of an adaptive battle is chosen when the worker starts it, as the
pair whose comparison is least certain now (docs/arena.md, "Pairs and quotas").

Rule: fit the leaderboard of the task's votes so far (analysis/arena.py, a small bootstrap);
of the pairs of bots adjacent in its ranking, take the one whose score intervals overlap most
(the most negative gap counts as the least overlap), fewest battles first on a tie. Pairs the
worker has met, in floor or adaptive battles (pairs.py), are skipped unless `repeat_pairs`;
before any vote, or when every adjacent pair is met, the pair with the fewest battles that the
worker may take.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from sqlalchemy import Connection, select

from collection_and_annotations.blueprints.arena.pairs import meet, met_pairs
from collection_and_annotations.blueprints.base import QUALITY_POOLS
from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.storage.models import Assignment, BattleVote, Unit, Worker

RESAMPLES = 100  # enough to order the pairs by overlap; fast enough for a battle's start
_boards: dict[tuple[int, int, int], dict[str, Any]] = {}  # (task, votes, newest) -> board
_lock = threading.Lock()


def _task_votes(connection: Connection, task_id: int) -> Any:
    return (select(BattleVote.id, BattleVote.model_a, BattleVote.model_b, BattleVote.winner)
            .join(Unit, Unit.id == BattleVote.unit_id)
            .join(Assignment, Assignment.id == Unit.assignment_id)
            .where(Assignment.task_id == task_id, Unit.pool.not_in(QUALITY_POOLS)))


def _board(connection: Connection, task_id: int) -> dict[str, Any]:
    """The task's leaderboard now, fitted again only when votes were added."""
    from collection_and_annotations.analysis.arena import leaderboard

    votes = connection.execute(_task_votes(connection, task_id)).all()
    key = (task_id, len(votes), max((v.id for v in votes), default=0))
    with _lock:
        found = _boards.get(key)
    if found is None:
        found = leaderboard([v._mapping for v in votes], RESAMPLES, seed=len(votes))
        with _lock:
            _boards.clear()
            _boards[key] = found
    return found


def next_pair(connection: Connection, unit_id: int, worker_id: int, bots: list[str],
              repeat_pairs: bool) -> tuple[str, str]:
    """The pair of bots (by name order) an adaptive battle of this worker's is to have, noted
    as met (pairs.py) unless `repeat_pairs`."""
    task_id = connection.execute(select(Assignment.task_id).join(
        Unit, Unit.assignment_id == Assignment.id).where(Unit.id == unit_id)).scalar_one()
    pairs = [(a, b) for i, a in enumerate(sorted(bots)) for b in sorted(bots)[i + 1:]]
    met: set[tuple[str, str]] = set()
    if not repeat_pairs:  # the worker's row locked first, as a claim locks it: one at a time
        connection.execute(select(Worker.id).where(Worker.id == worker_id).with_for_update())
        met = met_pairs(connection, task_id, worker_id, pairs)
    allowed = [pair for pair in pairs if pair not in met]
    if not allowed:
        raise WorkRefused("you have compared every pair of models already; thank you!", 409)
    board = _board(connection, task_id)
    played = Counter({(p["bot_a"], p["bot_b"]): p["battles"] for p in board["pairs"]})
    ranking = board["ranking"]
    adjacent = []
    for upper, lower in zip(ranking, ranking[1:], strict=False):
        pair = tuple(sorted((upper["bot"], lower["bot"])))
        if pair in allowed and None not in (upper["ci_low"], lower["ci_high"]):
            overlap = min(upper["ci_high"], lower["ci_high"]) - max(upper["ci_low"],
                                                                   lower["ci_low"])
            adjacent.append((-overlap, played[pair], pair))
    chosen = min(adjacent)[2] if adjacent else min(allowed, key=lambda p: (played[p], p))
    if not repeat_pairs:
        meet(connection, task_id, worker_id, unit_id, chosen)
    return chosen
