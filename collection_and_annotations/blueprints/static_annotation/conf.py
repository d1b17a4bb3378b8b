"""The conf keys of static annotation (`mephisto.blueprint.*`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from collection_and_annotations.config.keys import TEN_YEARS, ranged, unused
from collection_and_annotations.config.schema import BlueprintConf
from collection_and_annotations.quality.conf import QualityConf


@dataclass
class StaticAnnotationConf(BlueprintConf, QualityConf):
    data_jsonl: str | None = None
    units_path: str | None = None
    annotations_config_path: str = "${task_dir}/task_config/annotation_buckets.json"
    instructions_dir: str | None = None
    annotation_duration_in_seconds: int = ranged(3600, 0, TEN_YEARS)
    speaker_names: dict[str, str] = field(
        default_factory=lambda: {"SPEAKER_X": "Bot", "SPEAKER_Y": "User"}
    )
    include_persona: bool = False  # show a dialogue's bot_persona
    # a submit must answer at least one question of each dialogue (require rules aside)
    allow_unanswered_dialogues: bool = False
    # accepted, not used
    data_json: str | None = unused("task data is read from data_jsonl")
    data_csv: str | None = unused("task data is read from data_jsonl")
