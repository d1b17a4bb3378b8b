"""The conf keys of the arena kind (`mephisto.blueprint.*`, docs/arena.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collection_and_annotations.config.keys import ranged
from collection_and_annotations.config.schema import BlueprintConf

PAIRINGS = ("balanced", "adaptive")
VOTE_MODES = ("per_turn", "end")
# The vote's options as the page offers them, keyed by what is stored: the side preferred
# (`a`, `b`), a tie, or both bad. Their wording is `vote_labels`.
VOTE_CHOICES = ("a", "b", "tie", "bothbad")


def _default_labels() -> dict[str, str]:
    return {"a": "A is better", "b": "B is better", "tie": "Tie", "bothbad": "Both are bad"}


@dataclass
class ArenaConf(BlueprintConf):
    model_opt_path: str | None = None
    bots: list[str] = field(default_factory=list)  # nicknames; empty: every bot of the file
    pairs: str = "balanced"
    battles_per_pair: int = ranged(10, 1)  # battles of each pair (the quota; adaptive: floor)
    adaptive_battles: int = ranged(0, 0)  # pairs: adaptive: battles beyond the floors
    repeat_pairs: bool = False  # a worker may meet the same pair of bots again
    num_turns: int = ranged(1, 1)  # the worker's messages in each battle
    vote: str = "end"  # per_turn: after each pair of replies; end: once, after the last
    reveal_after_vote: bool = False  # name the bots to the worker once the battle is voted
    vote_question: str = "Which reply is better?"
    vote_labels: dict[str, str] = field(default_factory=_default_labels)
    max_resp_time: int = ranged(3600, 1)
    max_concurrent_responses: int = ranged(1, 1)  # bots generating at once, per process
    gold_pairs: list[str] = field(default_factory=list)  # "better>worse": gold battles
    min_golds: int = ranged(0, 0)  # gold battles before real ones
    gold_every_n_units: int = ranged(4, 1)  # then one more gold after this many real battles
    max_incorrect_golds: int = ranged(0, 0)  # failed gold battles allowed before a block
    use_screening_task: bool = False  # screening battles before real ones (screening.py)
    passed_qualification_name: str | None = None  # granted when screening is passed
    screening_pairs: list[str] = field(default_factory=list)  # "better>worse"
    screening_battles: int = ranged(1, 1)  # passed in a row to qualify
    screening_attempts: int = ranged(1, 1)  # series a worker may fail before a block
    # labels per reply and questions after the battle, as the chat kind's (docs/chat.md)
    annotations_config_path: str = "${task_dir}/task_config/annotation_buckets.json"
    instructions_dir: str | None = None
    do_interactive_online_annotations: Any = ""
    do_interactive_offline_annotations: Any = field(default_factory=list)
    allow_unanswered_dialogues: bool = False
