"""Pairs of bots in an arena: each pair's pool and group, and the rule that a worker meets a
pair once (docs/arena.md, "Pairs and quotas").

A worker meets a pair in a floor battle (the claim notes the pair's group) or in an adaptive
battle (its group is noted when the battle starts and its pair is chosen). Either way the pair
is then one of the worker's `worker_groups`, so neither kind of battle gives it to them again
unless `repeat_pairs`. A battle that goes back to the pool (expired, abandoned) frees its
group, as for every task kind. Gold and screening battles have no group: they never count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from sqlalchemy import Connection, insert, select

from collection_and_annotations.storage.models import WorkerGroup

Pair = tuple[str, str]


def pair_name(pair: Pair) -> str:
    return f"{pair[0]} vs {pair[1]}"


def pair_pool(pair: Pair) -> str:
    """A short, stable pool name for a pair (the pool column is 16 characters)."""
    return "arena_" + hashlib.sha1("|".join(pair).encode()).hexdigest()[:10]


def pair_group(pair: Pair) -> str:
    """The group a worker holds once they meet the pair, in a floor or an adaptive battle."""
    return f"arena:{pair_pool(pair)}"


def met_pairs(connection: Connection, task_id: int, worker_id: int,
              pairs: Sequence[Pair]) -> set[Pair]:
    """The pairs of `pairs` the worker has met (or holds a battle of) in the task."""
    groups = {pair_group(pair): pair for pair in pairs}
    held = connection.execute(select(WorkerGroup.group_id).where(
        WorkerGroup.task_id == task_id, WorkerGroup.worker_id == worker_id,
        WorkerGroup.group_id.in_(list(groups)))).scalars()
    return {groups[group] for group in held}


def meet(connection: Connection, task_id: int, worker_id: int, unit_id: int,
         pair: Pair) -> None:
    """Note that the worker meets the pair in this unit (its group goes when the unit goes
    back to the pool, as a claimed unit's does)."""
    connection.execute(insert(WorkerGroup).values(task_id=task_id, worker_id=worker_id,
                                                  group_id=pair_group(pair), unit_id=unit_id))
