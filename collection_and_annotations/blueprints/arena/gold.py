"""Gold battles: pairs with a known better bot (`gold_pairs: ["good>bad", ...]`), served among
the real battles on the static kind's schedule (`min_golds` up front, then one more after each
`gold_every_n_units` real battles) and looking exactly like them.

A gold battle is passed when every vote in it prefers the known better bot. A worker with more
than `max_incorrect_golds` failed gold battles gets the task's block qualification, and their
battles since their last passed gold are flagged for review. Gold battles are quality units
(pool `gold`): never in the leaderboard, the battles export or a pair's quota.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from sqlalchemy import Connection, select

from collection_and_annotations.blueprints.base import GOLD_POOL, AssignmentPlan, SubmittedUnit
from collection_and_annotations.errors import UserError
from collection_and_annotations.quality import qualifications, score_sql
from collection_and_annotations.quality.pools import flag_since_last_passed_gold
from collection_and_annotations.quality.settings import DEFAULT_SUPPLY
from collection_and_annotations.storage.models import BattleVote, utcnow


def known_better_pairs(texts: Sequence[Any] | None, key: str, known: Sequence[str]
                       ) -> list[tuple[str, str]]:
    """`["better>worse", ...]` of conf key `key` as (better, worse) pairs of declared bots."""
    pairs = []
    for text in texts or []:
        better, _, worse = str(text).partition(">")
        better, worse = better.strip(), worse.strip()
        if not better or not worse or better == worse:
            raise UserError(f"mephisto.blueprint.{key}: '{text}' is not 'better>worse' (two "
                            "different nicknames)")
        unknown = [bot for bot in (better, worse) if bot not in known]
        if unknown:
            raise UserError(f"mephisto.blueprint.{key}: {', '.join(unknown)} not in "
                            f"model_opt_path (declared: {', '.join(known)})")
        pairs.append((better, worse))
    return pairs


def wrong_votes(connection: Connection, unit: SubmittedUnit) -> int:
    """The votes of a battle with a known better bot (`data.better`) that did not prefer it."""
    preferred = connection.execute(
        select(BattleVote.preferred).where(BattleVote.unit_id == unit.id,
                                           BattleVote.attempt == unit.attempt)).scalars()
    return sum(1 for bot in preferred if bot != unit.data["better"])


@dataclass(frozen=True)
class KnownBetterBattles:
    """Battles of pairs with a known better bot, served from the quality pool `POOL`."""

    POOL: ClassVar[str]
    pairs: list[tuple[str, str]]  # (better, worse)

    def bots(self) -> list[str]:
        return [bot for pair in self.pairs for bot in pair]

    def plans(self) -> list[AssignmentPlan]:
        """A per-run supply of units per pair (the sides drawn per unit)."""
        return [AssignmentPlan(
            key=hashlib.sha256(f"arena-{self.POOL}:{better}>{worse}".encode()).hexdigest()[:32],
            annotators=DEFAULT_SUPPLY, groups=[], excluded_workers=[],
            data={"bots": [better, worse], "better": better}, pool=self.POOL,
            label=f"{self.POOL} {better} > {worse}", per_run=True)
            for better, worse in self.pairs]


@dataclass(frozen=True)
class GoldBattles(KnownBetterBattles):
    POOL = GOLD_POOL
    min_golds: int
    every: int
    max_incorrect: int

    @classmethod
    def from_conf(cls, cfg: Any, known: Sequence[str]) -> GoldBattles | None:
        """The conf's gold battles (None without `gold_pairs`), each bot declared."""
        pairs = known_better_pairs(cfg.gold_pairs, "gold_pairs", known)
        if not pairs:
            return None
        return cls(pairs, int(cfg.min_golds), int(cfg.gold_every_n_units),
                   int(cfg.max_incorrect_golds))

    def due(self, units_by_pool: Mapping[str, int], real_pools: Sequence[str]) -> bool:
        """Whether the worker's next battle is a gold one."""
        real = sum(units_by_pool.get(pool, 0) for pool in real_pools)
        return units_by_pool.get(GOLD_POOL, 0) < self.min_golds + real // self.every

    def score(self, connection: Connection, unit: SubmittedUnit, block: str,
              real_pools: Sequence[str]) -> None:
        """Score a submitted gold battle; past `max_incorrect_golds` failed ones, block the
        worker and flag their battles since their last passed gold."""
        wrong = wrong_votes(connection, unit)
        task_id = connection.execute(score_sql.TASK_OF_RUN,
                                     {"run_id": unit.task_run_id}).scalar_one()
        connection.execute(score_sql.SAVE_SCORE, {
            "unit_id": unit.id, "attempt": unit.attempt, "worker_id": unit.worker_id,
            "task_id": task_id, "pool": GOLD_POOL, "checks": {}, "mistakes": wrong,
            "passed": wrong == 0, "scored_at": utcnow()})
        failed = connection.execute(score_sql.FAILED_GOLDS, {
            "worker_id": unit.worker_id, "task_id": task_id, "failed": False}).scalar_one()
        if failed > self.max_incorrect:
            qualifications.grant(connection, unit.worker_id, block)
            flag_since_last_passed_gold(connection, unit.worker_id, task_id, real_pools)
