"""The conf keys of screening and gold units, for the task kinds that serve them
(`quality/settings.py` reads them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class QualityConf:
    use_screening_task: bool = False
    passed_qualification_name: str | None = None
    max_screening_units: int = 0
    # training units a worker may start and see feedback on (an expired one counts)
    screening_attempts: int = 1
    screen_json: str | None = None
    use_golds: bool = False
    gold_qualification_base: str | None = None
    gold_jsonl: str | None = None
    min_golds: int = 0
    max_incorrect_golds: int = 0
    allowed_gold_mistakes: int = 0
    max_gold_units: int | None = None  # gold units created per run; 0 or unset: a default
    # after min_golds, one more gold unit per this many real units (the original: 4)
    gold_every_n_units: int = 4
    # a worker disqualified by failed golds: flag their real work since their last passed gold
    # for review (exports carry `flagged_for_review`)
    flag_for_review_on_gold_block: bool = True
