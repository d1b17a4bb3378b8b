"""Conversation quotas: one pool of units per bot spec of `conversations_needed_string`.

A spec's count is its number of units, so the quota is persisted with the task (a rerun
continues it and never re-collects a full one) and transactional by construction: a chat
reserves its spec by holding a unit, a chat abandoned or timed out gives the unit back, and
completed chats can never outnumber the units.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from sqlalchemy import Connection, text

from collection_and_annotations.blueprints.base import WorkerContext

_FREE_UNITS = text("SELECT pool, count(*) FROM units WHERE task_run_id = :run_id "
                   "AND status = 'launched' GROUP BY pool")


def spec_name(bots: tuple[str, ...]) -> str:
    return "|".join(bots)


def pool_of(bots: tuple[str, ...]) -> str:
    """A short, stable pool name for a spec (the pool column is 16 characters)."""
    return "chat_" + hashlib.sha1(spec_name(bots).encode()).hexdigest()[:10]


def balanced_pools(connection: Connection, worker: WorkerContext,
                   pools: Mapping[str, str]) -> list[str]:
    """`pools` (pool -> spec) in the order this worker should take them: the spec they have
    done least first, then the one furthest from its quota (most units left)."""
    free = dict(connection.execute(_FREE_UNITS, {"run_id": worker.run_id}).all())
    return sorted((pool for pool in pools if free.get(pool)),
                  key=lambda pool: (worker.units_by_pool.get(pool, 0), -free[pool], pool))
