"""Dialogue collection: plan, route and check chat units (the chat itself is engine/chat.py)."""

from __future__ import annotations

import hashlib
import random
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, update

from collection_and_annotations import PACKAGE_DIR
from collection_and_annotations.blueprints.base import (
    AssignmentPlan,
    NoWork,
    SubmitRefused,
    SubmittedUnit,
    TaskBlueprint,
    WorkerContext,
)
from collection_and_annotations.blueprints.dialogue_collection.acceptability import (
    load_offensive_words,
    violations,
)
from collection_and_annotations.blueprints.dialogue_collection.annotations import (
    ChatAnnotations,
    checked_submission,
    unit_layout,
)
from collection_and_annotations.blueprints.dialogue_collection.conf import DialogueCollectionConf
from collection_and_annotations.blueprints.dialogue_collection.quotas import (
    balanced_pools,
    pool_of,
    spec_name,
)
from collection_and_annotations.blueprints.registry import register_blueprint
from collection_and_annotations.blueprints.static_annotation.export_rows import export_rows
from collection_and_annotations.bots import (
    Bot,
    BotContext,
    build_bots,
    load_model_opts,
    nicknames_in,
    parse_conversations_needed,
)
from collection_and_annotations.bots.build import check_built_bots
from collection_and_annotations.bots.model_opts import check_spec_problems
from collection_and_annotations.config.accepted import DeprecatedKeyWarning
from collection_and_annotations.engine.chat import (
    START_MODES,
    ChatRules,
    Transcript,
    full_layout,
    transcripts,
)
from collection_and_annotations.errors import UserError
from collection_and_annotations.quality.pools import BLOCKED
from collection_and_annotations.quality.qualifications import block_name, grant
from collection_and_annotations.storage.models import Submission

if TYPE_CHECKING:
    from omegaconf import DictConfig


@register_blueprint("dialogue_collection")
class DialogueCollectionBlueprint(TaskBlueprint):
    conf = DialogueCollectionConf
    chats = True

    def __init__(self, blueprint_cfg: DictConfig, task_name: str):
        if not blueprint_cfg.model_opt_path:
            raise UserError("mephisto.blueprint.model_opt_path is not set: name the "
                            "model_opts.yaml that declares the bots")
        if not blueprint_cfg.conversations_needed_string:
            raise UserError("mephisto.blueprint.conversations_needed_string is not set: say "
                            "which bots to chat with and how often ('bot:20' or 'botA|botB:20')")
        if blueprint_cfg.data_jsonl:
            warnings.warn("mephisto.blueprint.data_jsonl is accepted but not used (deprecated "
                          "when collecting dialogues: the chats are the data); remove it",
                          DeprecatedKeyWarning, stacklevel=2)
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
        self.task_name = task_name
        self.annotations = ChatAnnotations.from_conf(blueprint_cfg, blueprint_cfg.num_bots)
        self.check_acceptability = bool(blueprint_cfg.check_acceptability)
        self.offensive = (load_offensive_words(blueprint_cfg.offensive_words_path)
                          if self.check_acceptability else frozenset())
        self.block = block_name(task_name, blueprint_cfg.block_qualification)
        self.block_on_unacceptable = bool(blueprint_cfg.block_on_unacceptable)
        self.rules = ChatRules(blueprint_cfg.num_turns, blueprint_cfg.max_resp_time,
                               blueprint_cfg.conversation_start_mode,
                               annotations=self.annotations)
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
        return check_built_bots(self.make_bots())

    def plan(self) -> list[AssignmentPlan]:
        return [AssignmentPlan(
            key=hashlib.sha256(f"chat:{spec_name(bots)}".encode()).hexdigest()[:32],
            annotators=count, groups=[], excluded_workers=[],
            data={"bots": list(bots)}, pool=pool_of(bots), label=spec_name(bots),
        ) for bots, count in self.needed.items()]

    def unit_layout(self, data: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        return unit_layout(data["bots"], self.annotations, rng)

    def pools_for(self, connection: Connection, worker: WorkerContext) -> list[str]:
        if self.block in worker.qualifications:
            raise NoWork(BLOCKED)
        return balanced_pools(connection, worker, self.pools)

    def unit_kind(self, pool: str) -> str:
        return "chat"

    def unit_content(self, data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
        return {} if self.annotations is None else self.annotations.public()

    def unit_state(self, connection: Connection, unit_id: int, attempt: int,
                   data: dict[str, Any], layout: dict[str, Any] | None) -> dict[str, Any]:
        """The worker's chats as the database holds them (the page keeps no state)."""
        return {"chat": self.rules.state(connection, unit_id, attempt,
                                         full_layout(data, layout))}

    def describe(self) -> dict[str, Any]:
        buckets = {} if self.annotations is None else {
            name: bucket.public() for name, bucket in self.annotations.buckets.items()}
        return {"buckets": buckets,
                "chat": {"specs": {spec_name(b): n for b, n in self.needed.items()},
                         "num_turns": self.rules.num_turns,
                         "max_resp_time": self.rules.max_resp_time,
                         "conversation_start_mode": self.rules.start_mode}}

    def complete_answers(self, connection: Connection, unit: SubmittedUnit) -> dict[str, Any]:
        """Check the offline answers against the conversations the worker had and store them
        with those conversations (ids, bots, online labels), shaped like a static submission:
        `dialogues` (as static exports list them) and `answers` keyed by dialogue key."""
        layout = full_layout(unit.data, unit.layout)
        chats = transcripts(connection, unit.id, unit.attempt)
        if len(chats) != len(layout["bots"]) or any(c.status != "ended" for c in chats):
            raise SubmitRefused("finish every chat (End chat) before submitting", 409)
        stored = checked_submission(self.task_name, chats, layout, unit.answers,
                                    self.annotations,
                                    "this chat task asks no questions: submit 'answers': {}")
        if self.check_acceptability:
            found = self._violations(chats)
            for dialogue in stored["dialogues"]:
                if dialogue["conversation_id"] is not None:
                    dialogue["acceptability"] = found[dialogue["conversation_id"]]
        return stored

    def _violations(self, chats: list[Transcript]) -> dict[int, list[str]]:
        return {chat.conversation_id: violations(
            [m.text for m in chat.messages if m.role == "worker" and m.index > 0],
            [m.text for m in chat.messages if m.role == "bot"], self.offensive)
            for chat in chats}

    def after_submit(self, connection: Connection, unit: SubmittedUnit) -> None:
        """check_acceptability: a unit whose worker broke a rule (as `complete_answers`
        recorded per conversation) is flagged for review (and its worker blocked, with
        block_on_unacceptable); never refused."""
        if not any(d.get("acceptability") for d in unit.stored["dialogues"]):
            return
        connection.execute(update(Submission).where(Submission.unit_id == unit.id)
                           .values(flagged_for_review=True))
        if self.block_on_unacceptable:
            grant(connection, unit.worker_id, self.block)

    def pool_labels(self) -> dict[str, str]:
        return dict(self.pools)

    @staticmethod
    def exported_answers(stored: dict[str, Any], dialogues: list[dict[str, Any]]
                         ) -> tuple[list[dict[str, Any]], Any]:
        """A chat submission stores its own dialogues (the conversations) with the answers."""
        return stored["dialogues"], stored["answers"]

    export_rows = staticmethod(export_rows)
