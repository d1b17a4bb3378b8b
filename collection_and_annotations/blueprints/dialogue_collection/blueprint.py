"""Dialogue collection: plan, route and check chat units (the chat itself is engine/chat.py)."""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from sqlalchemy import Connection

from collection_and_annotations import PACKAGE_DIR
from collection_and_annotations.blueprints.base import (
    AssignmentPlan,
    SubmitRefused,
    SubmittedUnit,
    WorkerContext,
)
from collection_and_annotations.blueprints.dialogue_collection.quotas import (
    balanced_pools,
    pool_of,
    spec_name,
)
from collection_and_annotations.blueprints.registry import register_blueprint
from collection_and_annotations.bots import (
    Bot,
    BotContext,
    build_bots,
    check_bots,
    load_model_opts,
    nicknames_in,
    parse_conversations_needed,
)
from collection_and_annotations.bots.model_opts import check_spec_problems
from collection_and_annotations.engine.chat import (
    START_MODES,
    ChatRules,
    chat_state,
    chats_finished,
    unit_bots,
)
from collection_and_annotations.errors import UserError


@register_blueprint("dialogue_collection")
class DialogueCollectionBlueprint:
    name = "dialogue_collection"

    def __init__(self, blueprint_cfg: DictConfig, task_name: str):
        if not blueprint_cfg.model_opt_path:
            raise UserError("mephisto.blueprint.model_opt_path is not set: name the "
                            "model_opts.yaml that declares the bots")
        if not blueprint_cfg.conversations_needed_string:
            raise UserError("mephisto.blueprint.conversations_needed_string is not set: say "
                            "which bots to chat with and how often ('bot:20' or 'botA|botB:20')")
        self.model_opts_path = str(blueprint_cfg.model_opt_path)
        self.model_opts = load_model_opts(self.model_opts_path)
        self.needed = parse_conversations_needed(blueprint_cfg.conversations_needed_string,
                                                 self.model_opts)
        check_spec_problems(self.model_opts, nicknames_in(self.needed))  # e.g. typos
        for bots in self.needed:
            if len(bots) != blueprint_cfg.num_bots:
                raise UserError(
                    f"conversations_needed_string: '{spec_name(bots)}' has {len(bots)} bot(s) "
                    f"but mephisto.blueprint.num_bots is {blueprint_cfg.num_bots}; write "
                    f"{blueprint_cfg.num_bots} nicknames joined by '|' or set num_bots")
        if blueprint_cfg.conversation_start_mode not in START_MODES:
            raise UserError(f"mephisto.blueprint.conversation_start_mode "
                            f"'{blueprint_cfg.conversation_start_mode}' is not one of "
                            f"{', '.join(START_MODES)}")
        if blueprint_cfg.num_turns < 1:
            raise UserError("mephisto.blueprint.num_turns must be 1 or more")
        self.rules = ChatRules(blueprint_cfg.num_turns, blueprint_cfg.max_resp_time,
                               blueprint_cfg.conversation_start_mode)
        self.pools = {pool_of(bots): spec_name(bots) for bots in self.needed}
        # task_dir is a top-level key: the agents of the original's layout sit beside it
        task_dir = Path(str(blueprint_cfg._get_root().get("task_dir") or PACKAGE_DIR))
        self.bot_context = BotContext(project_root=PACKAGE_DIR.parent, task_dir=task_dir,
                                      max_concurrent_responses=
                                      blueprint_cfg.max_concurrent_responses)

    def make_bots(self) -> dict[str, Bot]:
        """The conf's bots, built in the process (and event loop) that runs their turns."""
        return build_bots(self.model_opts, nicknames_in(self.needed), self.bot_context)

    def check_bots(self) -> list[str]:
        """At launch: build every bot (a missing agent, ParlAI or API key fails here, naming
        the nickname) and warn about any that looks unusable right now (an endpoint down)."""
        bots = self.make_bots()

        async def check() -> list[str]:
            try:
                return await check_bots(bots)
            finally:
                for bot in bots.values():
                    await bot.aclose()

        return asyncio.run(check())

    def plan(self) -> list[AssignmentPlan]:
        return [AssignmentPlan(
            key=hashlib.sha256(f"chat:{spec_name(bots)}".encode()).hexdigest()[:32],
            annotators=count, groups=[], excluded_workers=[],
            data={"bots": list(bots)}, pool=pool_of(bots), label=spec_name(bots),
        ) for bots, count in self.needed.items()]

    def unit_layout(self, data: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        """Paired chats: the order of the bots, drawn per unit and recorded."""
        if len(data["bots"]) < 2:
            return None
        bots = list(data["bots"])
        rng.shuffle(bots)
        return {"bots": bots}

    def pools_for(self, connection: Connection, worker: WorkerContext) -> list[str]:
        return balanced_pools(connection, worker, self.pools)

    def unit_kind(self, pool: str) -> str:
        return "chat"

    def unit_content(self, data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
        return {}

    def unit_state(self, connection: Connection, unit_id: int, attempt: int,
                   data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
        """The worker's chats as the database holds them (the page keeps no state)."""
        return {"chat": chat_state(connection, unit_id, attempt, unit_bots(data, layout),
                                   self.rules)}

    def describe(self) -> dict[str, Any]:
        return {"chat": {"specs": {spec_name(b): n for b, n in self.needed.items()},
                         "num_turns": self.rules.num_turns,
                         "max_resp_time": self.rules.max_resp_time,
                         "conversation_start_mode": self.rules.start_mode}}

    def stored_answers(self, data: dict[str, Any], layout: dict[str, Any] | None,
                       answers: Any) -> Any:
        return answers

    def check_submission(self, data: dict[str, Any], layout: dict[str, Any] | None,
                         answers: Any) -> list[dict[str, Any]]:
        if not isinstance(answers, dict):
            return [{"message": "'answers' must be an object"}]
        return []

    def after_submit(self, connection: Connection, unit: SubmittedUnit) -> None:
        bots = unit_bots(unit.data, unit.layout)
        if not chats_finished(connection, unit.id, unit.attempt, len(bots)):
            raise SubmitRefused("finish every chat (End chat) before submitting", 409)

    @staticmethod
    def export_dialogues(data: dict[str, Any], layout: dict[str, Any] | None
                         ) -> list[dict[str, Any]]:
        return [{"position": i, "bot": bot} for i, bot in enumerate(unit_bots(data, layout))]

    @staticmethod
    def export_rows(record: dict[str, Any], definitions: dict[str, Any]
                    ) -> Iterator[dict[str, Any]]:
        return iter(())
