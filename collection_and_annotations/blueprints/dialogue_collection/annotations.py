"""Annotating while and after chatting (docs/chat-api.md, "Annotations during and after chats").

Online: every bot message gets the online bucket's questions; its answer is checked like a
static answer for that one turn and stored with the message. Offline: after the chat at
position i the buckets of list i are asked about that conversation; comparative buckets of list
i compare conversation i-1 (`turns`) with conversation i (`turns2`), sides drawn per unit.
Within each list the original's grouping is kept (other buckets first, then comparative ones),
each group shuffled per unit; the order and the sides are recorded in the unit's layout.

The stored submission is shaped like a static one (`dialogues` + `answers` keyed by dialogue
key, comparisons as `{option, side, dialogue}`), so exports and the analysis read chat
annotations as they read static ones.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collection_and_annotations.blueprints.base import SubmitRefused
from collection_and_annotations.blueprints.static_annotation.answers import (
    DialogueView,
    Problem,
    check_answers,
    check_bucket,
)
from collection_and_annotations.blueprints.static_annotation.buckets import Bucket, load_buckets
from collection_and_annotations.blueprints.static_annotation.comparisons import with_choices
from collection_and_annotations.blueprints.static_annotation.instructions import (
    load_instructions,
)
from collection_and_annotations.blueprints.static_annotation.layout import SIDES, ShownDialogue
from collection_and_annotations.engine.chat import SPEAKERS, Transcript, dialogue_id
from collection_and_annotations.errors import UserError

if TYPE_CHECKING:
    from omegaconf import DictConfig

SPEAKER_NAMES = {"user": "You", "system": "Partner"}
# In a comparison `turns` is the earlier conversation and `turns2` the later one.


def conversation_key(position: int) -> str:
    return f"c{position}"


def comparison_key(position: int) -> str:
    return f"c{position - 1}_c{position}"


@dataclasses.dataclass(frozen=True)
class ChatAnnotations:
    buckets: dict[str, Bucket]
    online: str | None
    offline: list[list[str]]  # bucket names per chat position, as the conf lists them
    instructions: dict[str, str]
    answer_each_dialogue: bool = True  # not `allow_unanswered_dialogues`

    @classmethod
    def from_conf(cls, blueprint_cfg: DictConfig, bots: int) -> ChatAnnotations | None:
        online = str(blueprint_cfg.do_interactive_online_annotations or "").strip() or None
        offline = _offline_lists(blueprint_cfg.do_interactive_offline_annotations)
        if online is None and not any(offline):
            return None
        path = Path(blueprint_cfg.annotations_config_path)
        buckets = load_buckets(path)
        used = ([online] if online else []) + [name for names in offline for name in names]
        for name in used:
            if name not in buckets:
                raise UserError(f"annotation bucket '{name}' (do_interactive_*_annotations) is "
                                f"not in {path} (known: {', '.join(sorted(buckets))})")
        if online and buckets[online].level != "turn":
            raise UserError(f"do_interactive_online_annotations: '{online}' is a "
                            f"{buckets[online].config} bucket; online labels are per bot "
                            "message, so name a turn-level bucket")
        if online and buckets[online].explain is not None:
            raise UserError(f"do_interactive_online_annotations: '{online}' has \"explain\": "
                            "true, which labels while chatting do not offer yet; ask for the "
                            "explanation after the chat (do_interactive_offline_annotations)")
        if len(offline) > bots:
            raise UserError(f"do_interactive_offline_annotations has {len(offline)} lists but "
                            f"a unit has {bots} conversation(s) (a chat unit's num_bots, an "
                            "arena's two sides); one list per conversation")
        if offline and any(buckets[n].config == "comparative" for n in offline[0]):
            raise UserError("do_interactive_offline_annotations: a comparative bucket compares "
                            "a conversation with the one before it, so it cannot be in the first "
                            "list (an arena compares its sides with two lists: [[...], [..., "
                            "<comparative bucket>]])")
        instructions_dir = Path(blueprint_cfg.instructions_dir or path.parent / "instructions")
        unique = list(dict.fromkeys(used))
        return cls({n: buckets[n] for n in unique}, online, offline,
                   load_instructions(instructions_dir, unique),
                   not blueprint_cfg.allow_unanswered_dialogues)

    @property
    def online_required(self) -> bool:
        return self.online is not None and self.buckets[self.online].require_level is not None

    def asks_offline(self) -> bool:
        """Whether any chat is followed by questions: then every unit stores its plan of
        them (`layout`), a single bucket included."""
        return any(self.offline)

    def layout(self, rng: random.Random) -> dict[str, Any]:
        """Per unit: each list's order (other buckets, then comparative ones, each shuffled)
        and, per comparison, which conversation is on the left."""
        orders, left = [], {}
        for position, names in enumerate(self.offline):
            first = [n for n in names if self.buckets[n].config != "comparative"]
            then = self._comparisons(names)
            rng.shuffle(first)
            rng.shuffle(then)
            orders.append(first + then)
            if then:
                left[comparison_key(position)] = rng.choice(SIDES)
        return {"offline": orders, "left": left}

    def _comparisons(self, names: Sequence[str]) -> list[str]:
        return [n for n in names if self.buckets[n].config == "comparative"]

    def public(self) -> dict[str, Any]:
        """What a chat unit carries for the annotation page (as static units carry it)."""
        return {
            "buckets": {name: {**bucket.public(), "instructions_html":
                               self.instructions.get(name), "targets": {}}
                        for name, bucket in self.buckets.items()},
            "speaker_names": SPEAKER_NAMES,
        }

    # -- the plan the page follows -----------------------------------------------------------

    def plan(self, layout: Mapping[str, Any], transcripts: Mapping[int, list[list[str]]],
             ended: set[int]) -> dict[str, Any]:
        """The `annotations` of the chat object. `transcripts`: per conversation position its
        messages as `[speaker, text]`; `ended`: positions the worker has ended."""
        offline = []
        for position, names in enumerate(layout.get("offline", [])):
            dialogues = []
            own = [n for n in names if self.buckets[n].config != "comparative"]
            if own:
                dialogues.append({
                    "key": conversation_key(position), "conversation": position,
                    "annotation_tasks": own,
                    "targets": self._targets(own, transcripts.get(position), position in ended)})
            compared = self._comparisons(names)
            if compared:
                key = comparison_key(position)
                left = position - 1 if layout["left"][key] == "turns" else position
                dialogues.append({
                    "key": key, "conversation": None, "left": left,
                    "right": position if left == position - 1 else position - 1,
                    "annotation_tasks": compared,
                    "targets": {name: [] for name in compared} if position in ended else None})
            offline.append({"after": position, "dialogues": dialogues})
        online = ({"bucket": self.online, "required": self.online_required}
                  if self.online else None)
        return {"online": online, "offline": offline}

    def _targets(self, names: list[str], turns: list[list[str]] | None,
                 ended: bool) -> dict[str, list[int]] | None:
        if not ended or turns is None:
            return None
        return {name: self.buckets[name].target_turns(turns) for name in names}

    # -- checks --------------------------------------------------------------------------------

    def check_label(self, speakers: list[str], index: int, value: Any) -> list[Problem]:
        """Problems of the online answer for the bot message at `index` (None: not given)."""
        bucket = dataclasses.replace(self.buckets[str(self.online)],
                                     indices={"speaker": "system"})
        # Only the labelled message is a target: every other turn reads as the worker's.
        shown = ["user"] * len(speakers)
        shown[index] = "system"
        given = {} if value is None else {str(index): value}
        check = check_bucket(DialogueView(f"message {index}", shown, [bucket.name]), bucket,
                             given)
        return check.invalid + check.missing

    def check_offline(self, layout: Mapping[str, Any], transcripts: Mapping[int, list[list[str]]],
                      answers: Any) -> list[Problem]:
        views = []
        for entry in self.plan(layout, transcripts, set(transcripts))["offline"]:
            for dialogue in entry["dialogues"]:
                position = dialogue["conversation"]
                speakers = [t[0] for t in transcripts[position]] if position is not None else []
                views.append(DialogueView(dialogue["key"], speakers,
                                          dialogue["annotation_tasks"]))
        return check_answers(answers, views, self.buckets, self.answer_each_dialogue)


def _offline_lists(value: Any) -> list[list[str]]:
    """`[[a, b], [c]]` as the conf gives it; a flat list is one list for the first chat."""
    from omegaconf import ListConfig, OmegaConf  # read from a composed conf only

    if isinstance(value, ListConfig):
        value = OmegaConf.to_container(value)
    if not value:
        return []
    if not isinstance(value, list) or not all(isinstance(v, list | str) for v in value):
        raise UserError("do_interactive_offline_annotations must be a list of bucket-name lists, "
                        "one per chat: [[a, b], [c, d]]")
    if all(isinstance(v, str) for v in value):
        return [[str(v) for v in value]]
    if not all(isinstance(v, list) for v in value):
        raise UserError("do_interactive_offline_annotations mixes names and lists; write one "
                        "list of bucket names per chat: [[a, b], [c, d]]")
    return [[str(name) for name in names] for names in value]


def stored_answers(answers: Any, layout: Mapping[str, Any], buckets: Mapping[str, Bucket]) -> Any:
    """Offline answers with each comparison's choice completed like a static one's (which
    conversation, `turns` or `turns2`, the chosen side showed) and with the bot it preferred
    (`layout` as `full_layout` gives it)."""
    shown = [ShownDialogue(0, {"key": key}, [], left)
             for key, left in layout.get("left", {}).items()]
    stored = with_choices(answers, shown, buckets)
    for key in layout.get("left", {}):
        later = int(key.rsplit("_c", 1)[1])
        bots = {SIDES[0]: layout["bots"][later - 1], SIDES[1]: layout["bots"][later]}
        for targets in stored.get(key, {}).values():
            for value in targets.values():
                if isinstance(value, dict) and "dialogue" in value:
                    value["bot"] = bots.get(value["dialogue"])
    return stored


def unit_layout(bots: Sequence[str], annotations: ChatAnnotations | None,
                rng: random.Random) -> dict[str, Any] | None:
    """Per unit, drawn and recorded: the order of its bots when it has several (a paired
    chat's order, a battle's sides: A first), and the order of the offline buckets and the
    sides of comparisons."""
    layout: dict[str, Any] = {}
    if len(bots) > 1:
        drawn = list(bots)
        rng.shuffle(drawn)
        layout["bots"] = drawn
    if annotations is not None and annotations.asks_offline():
        layout.update(annotations.layout(rng))
    return layout or None


def chat_submission(task_name: str, chats: list[Transcript], layout: Mapping[str, Any],
                    answers: dict[str, Any], annotations: ChatAnnotations | None
                    ) -> dict[str, Any]:
    """A chat unit's stored submission: its dialogues as static exports list them (one per
    conversation, one per comparison, with `bot`/`bot2` in `source_fields`) and the answers
    keyed by dialogue key, the online labels under their conversation's key."""
    online = annotations.online if annotations is not None else None
    orders: list[list[str]] = list(layout.get("offline", []))
    stored = {key: dict(value) for key, value in answers.items()}
    dialogues: list[dict[str, Any]] = []

    def offline_of(position: int, comparative: bool) -> list[str]:
        names = orders[position] if position < len(orders) else []
        return [n for n in names
                if (annotations.buckets[n].config == "comparative") == comparative]

    for chat in chats:
        key = conversation_key(chat.position)
        own_id = dialogue_id(task_name, chat.conversation_id)
        dialogues.append({
            "key": key, "dialogue_id": own_id, "group_id": own_id,
            "conversation_id": chat.conversation_id,
            "speakers": [SPEAKERS[m.role] for m in chat.messages],
            "position": len(dialogues) + 1,
            "tasks": ([online] if online else []) + offline_of(chat.position, False),
            "left": None, "source_fields": {"bot": chat.bot}})
        labels = {str(m.index): m.labels[online] for m in chat.messages
                  if online and m.labels and online in m.labels}
        if labels:
            stored.setdefault(key, {})[online] = labels
    for earlier, later in zip(chats, chats[1:], strict=False):
        compared = offline_of(later.position, True)
        if not compared:
            continue
        key = comparison_key(later.position)
        both_id = dialogue_id(task_name, earlier.conversation_id, later.conversation_id)
        dialogues.append({
            "key": key, "dialogue_id": both_id, "group_id": both_id,
            "conversation_id": None, "speakers": [], "position": len(dialogues) + 1,
            "tasks": compared, "left": layout["left"][key],
            "source_fields": {"bot": earlier.bot, "bot2": later.bot}})
    return {"dialogues": dialogues, "answers": stored}


def checked_submission(task_name: str, chats: list[Transcript], layout: Mapping[str, Any],
                       answers: Any, annotations: ChatAnnotations | None, no_questions: str
                       ) -> dict[str, Any]:
    """The offline answers checked against the conversations the worker had (refused naming
    the first problem, or with `no_questions` when none are asked) and stored with them, as
    `chat_submission` shapes them (`layout` as `full_layout` gives it)."""
    if annotations is None:
        if answers not in ({}, None):
            raise SubmitRefused(no_questions, 422)
        return chat_submission(task_name, chats, layout, {}, None)
    turns = {c.position: [[SPEAKERS[m.role], m.text] for m in c.messages] for c in chats}
    problems = annotations.check_offline(layout, turns, answers)
    if problems:
        details = [{**p.as_dict(), "where": p.dialogue} for p in problems]
        raise SubmitRefused(problems[0].message, 422, details)
    return chat_submission(task_name, chats, layout,
                           stored_answers(answers, layout, annotations.buckets), annotations)
