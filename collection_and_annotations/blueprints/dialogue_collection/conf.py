"""The conf keys of dialogue collection (`mephisto.blueprint.*`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collection_and_annotations.config.keys import ranged, unused
from collection_and_annotations.config.schema import BlueprintConf

_LIVE_CHAT = "live dialogue collection is not built yet"


@dataclass
class DialogueCollectionConf(BlueprintConf):
    model_opt_path: str | None = None
    conversations_needed_string: str | None = None
    num_bots: int = 1
    num_turns: int = 6
    max_resp_time: int = 3600
    task_model_parallel: bool = True
    check_acceptability: bool = False
    include_persona: bool = False
    conversation_start_mode: str = "hi"
    annotations_config_path: str = "${task_dir}/task_config/annotation_buckets.json"
    instructions_dir: str | None = None
    do_interactive_online_annotations: Any = ""
    do_interactive_offline_annotations: Any = field(default_factory=list)
    allow_unanswered_dialogues: bool = False
    max_concurrent_responses: int = ranged(1, 1)  # bots generating at once (live chat)
    offensive_words_path: str | None = None  # check_acceptability: a word list (one per line)
    block_on_unacceptable: bool = False  # check_acceptability: block a worker who violates
    # the original's confs set it for every mode; here it warns (the chats are the data)
    data_jsonl: str | None = None
    # accepted, not used
    chat_startup_instructions_path: str | None = unused(_LIVE_CHAT)
    final_rating_question: str | None = unused(_LIVE_CHAT)
    override_opt: dict[str, Any] | None = unused(f"{_LIVE_CHAT} (ParlAI context generator "
                                                 "options)")
    num_conversations: int | None = unused("derived from conversations_needed_string")
    world_file: str | None = unused(f"{_LIVE_CHAT} (ParlAI worlds)")
    context_csv: str | None = unused(f"{_LIVE_CHAT} (ParlAI contexts)")
    context_jsonl: str | None = unused(f"{_LIVE_CHAT} (ParlAI contexts)")
