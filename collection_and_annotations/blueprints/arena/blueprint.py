"""The arena kind: each unit is one battle of a pair of bots, which the worker chats with at
once and votes on (docs/arena.md).

Quotas: one pool of `battles_per_pair` units per pair of bots, so the quota is persisted and
transactional as the chat kind's per spec is (a battle reserves its pair by holding a unit;
completed battles never outnumber the units), and a worker takes the pair they have met least,
then the one with the most battles left (`balanced_pools`). Each pair is a group (pairs.py),
so a worker never meets the same pair twice, in floor or adaptive battles, unless
`repeat_pairs`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select

from collection_and_annotations import PACKAGE_DIR
from collection_and_annotations.blueprints.arena.adaptive import next_pair
from collection_and_annotations.blueprints.arena.conf import (
    PAIRINGS,
    VOTE_CHOICES,
    VOTE_MODES,
    ArenaConf,
)
from collection_and_annotations.blueprints.arena.gold import GoldBattles
from collection_and_annotations.blueprints.arena.pairs import (
    met_pairs,
    pair_group,
    pair_name,
    pair_pool,
)
from collection_and_annotations.blueprints.arena.screening import ScreeningBattles
from collection_and_annotations.blueprints.base import (
    GOLD_POOL,
    SCREENING_POOL,
    AssignmentPlan,
    NoWork,
    ResumeUnit,
    SubmitRefused,
    SubmittedUnit,
    TaskBlueprint,
    WorkerContext,
)
from collection_and_annotations.blueprints.dialogue_collection.annotations import (
    ChatAnnotations,
    checked_submission,
    unit_layout,
)
from collection_and_annotations.blueprints.dialogue_collection.quotas import balanced_pools
from collection_and_annotations.blueprints.registry import register_blueprint
from collection_and_annotations.blueprints.static_annotation.export_rows import (
    ITEM_FIELDS,
    export_rows,
)
from collection_and_annotations.bots import Bot, BotContext, build_bots, load_model_opts
from collection_and_annotations.bots.build import check_built_bots
from collection_and_annotations.bots.model_opts import check_spec_problems
from collection_and_annotations.engine.arena import (
    PANES,
    ArenaRules,
)
from collection_and_annotations.engine.chat import (
    SPEAKERS,
    dialogue_id,
    full_layout,
    transcripts,
)
from collection_and_annotations.errors import UserError
from collection_and_annotations.quality.pools import BLOCKED
from collection_and_annotations.quality.qualifications import block_name
from collection_and_annotations.storage.models import BattleVote

if TYPE_CHECKING:
    from omegaconf import DictConfig

KEY = "mephisto.blueprint"
ADAPTIVE_POOL = "arena_adaptive"  # pairs: adaptive: battles whose pair is chosen at start
BATTLE = "battle"  # the dialogue key of a battle's two transcripts in its submission


@register_blueprint("arena")
class ArenaBlueprint(TaskBlueprint):
    conf = ArenaConf
    chats = True
    chat_server = "arena"

    def __init__(self, blueprint_cfg: DictConfig, task_name: str):
        if not blueprint_cfg.model_opt_path:
            raise UserError(f"{KEY}.model_opt_path is not set: name the model_opts.yaml that "
                            "declares the bots")
        self.model_opts = load_model_opts(str(blueprint_cfg.model_opt_path))
        self.bots = _chosen_bots(list(blueprint_cfg.bots or []), self.model_opts,
                                 str(blueprint_cfg.model_opt_path))
        check_spec_problems(self.model_opts, self.bots)
        _one_of("pairs", blueprint_cfg.pairs, PAIRINGS)
        self.adaptive_battles = int(blueprint_cfg.adaptive_battles)
        if blueprint_cfg.pairs == "adaptive" and not self.adaptive_battles:
            raise UserError(f"{KEY}.adaptive_battles: pairs: adaptive needs the battles to "
                            "give where the ranking is least certain, beyond battles_per_pair "
                            "for every pair (e.g. adaptive_battles: 100)")
        if blueprint_cfg.pairs == "balanced" and self.adaptive_battles:
            raise UserError(f"{KEY}.adaptive_battles is for pairs: adaptive; remove it or "
                            "set pairs: adaptive")
        _one_of("vote", blueprint_cfg.vote, VOTE_MODES)
        self.annotations = _battle_annotations(blueprint_cfg)
        self.gold = GoldBattles.from_conf(blueprint_cfg, list(self.model_opts))
        self.screening = ScreeningBattles.from_conf(blueprint_cfg, list(self.model_opts))
        self.task_name = task_name
        self.battles_per_pair = int(blueprint_cfg.battles_per_pair)
        self.repeat_pairs = bool(blueprint_cfg.repeat_pairs)
        self.pairs = list(itertools.combinations(sorted(self.bots), 2))
        self.pools = {pair_pool(pair): pair_name(pair) for pair in self.pairs}
        self.seed = blueprint_cfg.random_seed
        self.block = block_name(task_name, blueprint_cfg.block_qualification)
        self.rules = ArenaRules(
            int(blueprint_cfg.num_turns), int(blueprint_cfg.max_resp_time), "worker",
            vote=str(blueprint_cfg.vote), reveal_after_vote=bool(blueprint_cfg.reveal_after_vote),
            question=str(blueprint_cfg.vote_question),
            labels=_vote_labels(blueprint_cfg.vote_labels), annotations=self.annotations,
            choose_sides=self.adaptive_sides if self.adaptive_battles else None)
        task_dir = Path(str(blueprint_cfg._get_root().get("task_dir") or PACKAGE_DIR))
        self.bot_context = BotContext(project_root=PACKAGE_DIR.parent, task_dir=task_dir,
                                      max_concurrent_responses=
                                      blueprint_cfg.max_concurrent_responses)

    def make_bots(self) -> dict[str, Bot]:
        """The conf's bots, built in the process (and event loop) that runs their turns."""
        quality = [*(self.gold.bots() if self.gold else []),
                   *(self.screening.bots() if self.screening else [])]
        return build_bots(self.model_opts, list(dict.fromkeys([*self.bots, *quality])),
                          self.bot_context)

    def check_bots(self) -> list[str]:
        """At launch: build every bot and warn about any that looks unusable right now."""
        return check_built_bots(self.make_bots())

    def adaptive_sides(self, connection: Connection, unit_id: int, worker_id: int
                       ) -> list[str]:
        """An adaptive battle's bots as it starts: the least certain pair, sides drawn (seeded
        by random_seed and the unit)."""
        bots = list(next_pair(connection, unit_id, worker_id, self.bots, self.repeat_pairs))
        rng = random.Random() if self.seed is None else random.Random(f"{self.seed}:{unit_id}")
        rng.shuffle(bots)
        return bots

    def plan(self) -> list[AssignmentPlan]:
        adaptive = [AssignmentPlan(
            key=hashlib.sha256(b"arena:adaptive").hexdigest()[:32],
            annotators=self.adaptive_battles, groups=[], excluded_workers=[],
            data={"bots": []}, pool=ADAPTIVE_POOL, label="adaptive battles",
        )] if self.adaptive_battles else []
        quality = [*(self.screening.plans() if self.screening else []),
                   *(self.gold.plans() if self.gold else [])]
        return quality + adaptive + [AssignmentPlan(
            key=hashlib.sha256(f"arena:{'|'.join(pair)}".encode()).hexdigest()[:32],
            annotators=self.battles_per_pair,
            groups=[] if self.repeat_pairs else [pair_group(pair)],
            excluded_workers=[], data={"bots": list(pair)}, pool=pair_pool(pair),
            label=pair_name(pair)) for pair in self.pairs]

    def unit_layout(self, data: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        """The sides, drawn per unit (seeded by random_seed) and recorded: bots[0] is A (an
        adaptive battle draws them when it starts); and the offline questions' order, as the
        chat kind draws it."""
        return unit_layout(data["bots"], self.annotations, rng)

    def pools_for(self, connection: Connection, worker: WorkerContext) -> list[str]:
        if self.block in worker.qualifications:
            raise NoWork(BLOCKED)
        screening = self.screening.route(connection, worker) if self.screening else None
        if screening:
            return screening
        if GOLD_POOL in worker.open_units:  # one gold battle at a time, as for static golds
            raise ResumeUnit(worker.open_units[GOLD_POOL])
        floors = balanced_pools(connection, worker, self.pools)
        real = floors + [ADAPTIVE_POOL] if self._may_meet_a_pair(connection, worker) \
            else floors
        if self.gold and self.gold.due(worker.units_by_pool, list(self.pool_labels())):
            return [GOLD_POOL, *real]
        return real

    def _may_meet_a_pair(self, connection: Connection, worker: WorkerContext) -> bool:
        """Whether an adaptive battle could start for this worker: one is never handed to a
        worker who has met every pair."""
        return bool(self.adaptive_battles) and (self.repeat_pairs or len(met_pairs(
            connection, worker.task_id, worker.worker_id, self.pairs)) < len(self.pairs))

    def unit_kind(self, pool: str) -> str:
        return "arena"

    def unit_content(self, data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
        return {} if self.annotations is None else self.annotations.public()

    def unit_state(self, connection: Connection, unit_id: int, attempt: int,
                   data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
        """The battle as the database holds it (the page keeps no state)."""
        return {"chat": self.rules.state(connection, unit_id, attempt,
                                         full_layout(data, layout))}

    def describe(self) -> dict[str, Any]:
        buckets = {} if self.annotations is None else {
            name: bucket.public() for name, bucket in self.annotations.buckets.items()}
        return {"buckets": buckets,
                "arena": {"bots": self.bots, "pairs": [list(p) for p in self.pairs],
                          "battles_per_pair": self.battles_per_pair,
                          "num_turns": self.rules.num_turns, "vote": self.rules.vote}}

    def complete_answers(self, connection: Connection, unit: SubmittedUnit) -> dict[str, Any]:
        """The battle as stored with the submission, shaped like a chat's (`dialogues`, and
        `answers` keyed by dialogue): one dialogue `battle` with both transcripts (`turns`
        Model A's, `turns2` Model B's) and their bots, and the votes per turn naming the bot
        preferred; then each side's conversation with its bot, online labels and offline
        answers, as the chat kind stores them (`c0` Model A, `c1` Model B, `c0_c1` a
        comparison). Refused until every vote the battle asks for is in, and while the
        offline answers miss or break a bucket's rules."""
        votes = connection.execute(
            select(BattleVote.turn, BattleVote.choice, BattleVote.winner, BattleVote.preferred)
            .where(BattleVote.unit_id == unit.id, BattleVote.attempt == unit.attempt)
            .order_by(BattleVote.turn)).all()
        if len(votes) < self.rules.votes_needed():
            raise SubmitRefused("vote on the replies before submitting", 409)
        chats = transcripts(connection, unit.id, unit.attempt)
        sides = checked_submission(self.task_name, chats, full_layout(unit.data, unit.layout),
                                   unit.answers, self.annotations,
                                   "an arena battle asks no questions besides the vote: "
                                   "submit 'answers': {}")
        a, b = chats
        battle = {"key": BATTLE, "dialogue_id": dialogue_id(self.task_name, a.conversation_id,
                                                             b.conversation_id),
                  "conversation_ids": [a.conversation_id, b.conversation_id],
                  "bot": a.bot, "bot2": b.bot,
                  "turns": [[SPEAKERS[m.role], m.text] for m in a.messages],
                  "turns2": [[SPEAKERS[m.role], m.text] for m in b.messages]}
        return {"dialogues": [battle, *sides["dialogues"]],
                "answers": {BATTLE: {"vote": {str(v.turn): {
                    "choice": v.choice, "winner": v.winner, "bot": v.preferred}
                    for v in votes}}, **sides["answers"]}}

    def after_submit(self, connection: Connection, unit: SubmittedUnit
                     ) -> dict[str, Any] | None:
        """A gold battle is scored (and its worker blocked past max_incorrect_golds); a
        screening battle too, and the worker told the outcome."""
        if unit.pool == GOLD_POOL and self.gold is not None:
            self.gold.score(connection, unit, self.block, list(self.pool_labels()))
        if unit.pool == SCREENING_POOL and self.screening is not None:
            return self.screening.score(connection, unit, self.block)
        return None

    def max_incorrect_golds(self) -> int:
        return self.gold.max_incorrect if self.gold else 0

    def pool_labels(self) -> dict[str, str]:
        adaptive = {ADAPTIVE_POOL: "adaptive battles"} if self.adaptive_battles else {}
        return {**self.pools, **adaptive}

    @staticmethod
    def exported_answers(stored: dict[str, Any], dialogues: list[dict[str, Any]]
                         ) -> tuple[list[dict[str, Any]], Any]:
        """A battle stores its own dialogue (both transcripts) with the votes."""
        return stored["dialogues"], stored["answers"]

    @staticmethod
    def export_rows(record: dict[str, Any], definitions: dict[str, Any]
                    ) -> Iterator[dict[str, Any]]:
        """One row per vote: the bots of both sides (`bot` is Model A), the winner in Chatbot
        Arena's words and the bot preferred (`chosen`; empty for a tie); then the labels and
        offline answers as the chat kind's rows, each naming its side's bot."""
        battle = record["dialogues"][0]
        for turn, vote in record["answers"][BATTLE]["vote"].items():
            yield {**dict.fromkeys(ITEM_FIELDS),
                   "task": record["task"], "run_id": record["run_id"],
                   "unit_id": record["unit_id"], "worker": record["worker"],
                   "dialogue_id": battle["dialogue_id"], "group_id": battle["dialogue_id"],
                   "conversation_id": battle["conversation_ids"][0], "bot": battle["bot"],
                   "bot2": battle["bot2"], "dialogue_key": BATTLE, "turn_index": int(turn),
                   "bucket": "vote", "question": "vote", "answer": vote["winner"],
                   "left": "model_a", "chosen": vote["bot"],
                   "submitted_at": record["submitted_at"]}
        annotated = {key: value for key, value in record["answers"].items() if key != BATTLE}
        yield from export_rows({**record, "answers": annotated}, definitions)


def _battle_annotations(blueprint_cfg: DictConfig) -> ChatAnnotations | None:
    """The chat kind's annotations over the two sides; one offline list is asked about each
    side's conversation."""
    annotations = ChatAnnotations.from_conf(blueprint_cfg, len(PANES))
    if annotations is not None and len(annotations.offline) == 1:
        return dataclasses.replace(annotations, offline=annotations.offline * 2)
    return annotations


def _one_of(key: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise UserError(f"{KEY}.{key} '{value}' is not one of {', '.join(allowed)}")


def _chosen_bots(named: list[str], specs: dict[str, Any], path: str) -> list[str]:
    """The conf's bots (default: every bot of the file), at least two, each declared once."""
    bots = [str(n) for n in named] or list(specs)
    unknown = [bot for bot in bots if bot not in specs]
    if unknown:
        raise UserError(f"{KEY}.bots: {', '.join(unknown)} not in {path} (declared: "
                        f"{', '.join(specs) or 'none'})")
    repeated = sorted({bot for bot in bots if bots.count(bot) > 1})
    if repeated:
        raise UserError(f"{KEY}.bots: {', '.join(repeated)} named more than once")
    if len(bots) < 2:
        raise UserError(f"{KEY}.bots: an arena needs at least two bots (found "
                        f"{len(bots)} in {', '.join(bots) or path})")
    return bots


def _vote_labels(labels: Any) -> dict[str, str]:
    """The vote's wording, one label per choice, in the order the page offers them."""
    from omegaconf import DictConfig, OmegaConf  # read from a composed conf only

    given = OmegaConf.to_container(labels) if isinstance(labels, DictConfig) else dict(labels)
    unknown = sorted(set(given) - set(VOTE_CHOICES))
    if unknown:
        raise UserError(f"{KEY}.vote_labels: {', '.join(unknown)} is not a choice; the "
                        f"choices are {', '.join(VOTE_CHOICES)}")
    missing = [c for c in VOTE_CHOICES if not str(given.get(c) or "").strip()]
    if missing:
        raise UserError(f"{KEY}.vote_labels: give the words for {', '.join(missing)}")
    return {choice: str(given[choice]) for choice in VOTE_CHOICES}
