"""The conf's screening and gold settings, read once, with their files parsed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from collection_and_annotations.blueprints.static_annotation.buckets import Bucket
from collection_and_annotations.errors import UserError
from collection_and_annotations.quality.files import AnnotatedDialogue, read_gold, read_screening
from collection_and_annotations.quality.qualifications import block_name

if TYPE_CHECKING:
    from omegaconf import DictConfig

# Units created per run when the conf sets no cap (max_screening_units / max_gold_units: 0).
DEFAULT_SUPPLY = 1000


@dataclass(frozen=True)
class QualitySettings:
    block: str
    screening: bool = False
    passed: str = ""
    max_screening_units: int = 0
    screening_attempts: int = 1  # training units a worker may see feedback on
    training: list[AnnotatedDialogue] = field(default_factory=list)
    graded: list[int] = field(default_factory=list)
    golds: bool = False
    gold_dialogues: list[AnnotatedDialogue] = field(default_factory=list)
    min_golds: int = 0
    gold_every: int = 4  # the original's default: one more gold after 4 real units
    allowed_gold_mistakes: int = 0
    max_incorrect_golds: int = 0
    max_gold_units: int = 0
    flag_for_review: bool = True  # flag a disqualified worker's work since their last good gold


def read_settings(cfg: DictConfig, task_name: str, buckets: Mapping[str, Bucket]
                  ) -> QualitySettings:
    """Parse the named files whether or not they are used (a broken file is found now)."""
    training, graded = read_screening(cfg.screen_json, buckets) if cfg.screen_json else ([], [])
    golds = read_gold(cfg.gold_jsonl, buckets) if cfg.gold_jsonl else []
    if cfg.use_screening_task and not training:
        raise UserError("use_screening_task is on but mephisto.blueprint.screen_json is not set")
    if cfg.use_screening_task and not cfg.passed_qualification_name:
        raise UserError("use_screening_task is on but mephisto.blueprint."
                        "passed_qualification_name is not set")
    if cfg.use_golds and not golds:
        raise UserError("use_golds is on but mephisto.blueprint.gold_jsonl is not set")
    every = cfg.get("gold_every_n_units", 4)
    if not isinstance(every, int) or every < 1:
        raise UserError("mephisto.blueprint.gold_every_n_units must be 1 or more")
    attempts = cfg.get("screening_attempts", 1)
    if not isinstance(attempts, int) or attempts < 1:
        raise UserError("mephisto.blueprint.screening_attempts must be 1 or more (the "
                        "training units a worker may try)")
    return QualitySettings(
        block=block_name(task_name, cfg.block_qualification),
        screening=bool(cfg.use_screening_task), passed=cfg.passed_qualification_name or "",
        max_screening_units=int(cfg.max_screening_units or 0),
        screening_attempts=attempts, training=training,
        graded=graded, golds=bool(cfg.use_golds), gold_dialogues=golds,
        min_golds=int(cfg.min_golds or 0), gold_every=every,
        allowed_gold_mistakes=int(cfg.allowed_gold_mistakes or 0),
        max_incorrect_golds=int(cfg.max_incorrect_golds or 0),
        max_gold_units=int(cfg.get("max_gold_units") or 0),
        flag_for_review=bool(cfg.get("flag_for_review_on_gold_block", True)),
    )
