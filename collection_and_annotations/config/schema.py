"""Typed schema of a run conf; keys and defaults follow the original project's confs.

Hydra validates every conf against these dataclasses, so an unknown key fails with its name and
a wrong type fails with the expected one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore

from collection_and_annotations import PACKAGE_DIR

# Keys the original project accepted but never used: they load with a warning.
DEPRECATED_BLUEPRINT_KEYS = ("context_seed", "units_per_assignment")


@dataclass
class BlueprintConfig:
    _blueprint_type: str = "behavior_analysis_blueprint"
    # static annotation
    do_external_annotations: bool = True
    data_jsonl: str | None = None
    units_path: str | None = None
    annotations_config_path: str = "${task_dir}/task_config/annotation_buckets.json"
    instructions_dir: str | None = None
    annotation_duration_in_seconds: int = 3600
    random_seed: int | None = None  # seeds each unit's presentation order (reproducible)
    speaker_names: dict[str, str] = field(
        default_factory=lambda: {"SPEAKER_X": "Bot", "SPEAKER_Y": "User"}
    )
    # quality control
    block_qualification: str | None = None
    worker_blocklist_paths: str | None = None
    use_screening_task: bool = False
    passed_qualification_name: str | None = None
    max_screening_units: int = 0
    screen_json: str | None = None
    use_golds: bool = False
    gold_qualification_base: str | None = None
    gold_jsonl: str | None = None
    min_golds: int = 0
    max_incorrect_golds: int = 0
    allowed_gold_mistakes: int = 0
    # dialogue collection with bots
    do_collect_dialogue: bool = False
    model_opt_path: str | None = None
    conversations_needed_string: str | None = None
    num_bots: int = 1
    num_turns: int = 6
    max_resp_time: int = 3600
    task_model_parallel: bool = True
    check_acceptability: bool = False
    include_persona: bool = False
    conversation_start_mode: str = "hi"
    do_interactive_online_annotations: Any = ""
    do_interactive_offline_annotations: Any = field(default_factory=list)
    # deprecated: accepted, never used
    context_seed: Any = None
    units_per_assignment: Any = None


@dataclass
class TaskConfig:
    task_name: str = "???"
    task_title: str = ""
    task_description: str = ""
    task_reward: float = 0.0
    task_tags: str = ""
    allowed_concurrent: int = 1
    assignment_duration_in_seconds: int = 3600
    max_num_concurrent_units: int = 0
    maximum_units_per_worker: int = 0


@dataclass
class ArchitectConfig:
    _architect_type: str = "local"
    hostname: str = "localhost"
    port: int = 3000
    server_processes: int = 1


@dataclass
class ProviderConfig:
    _provider_type: str = "mock"


@dataclass
class MephistoConfig:
    blueprint: BlueprintConfig = field(default_factory=BlueprintConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    architect: ArchitectConfig = field(default_factory=ArchitectConfig)
    provider: ProviderConfig = field(default_factory=ProviderConfig)
    log_level: str = "info"


@dataclass
class MturkConfig:
    worker_blocklist_paths: str | None = None


@dataclass
class MetricsConfig:
    """Automatic metrics over the task's logs (`evaluate --conf`)."""

    names: list[str] = field(default_factory=list)
    perf_metric: str | None = None
    perf_by_tag: list[str] = field(default_factory=list)


@dataclass
class RunConfig:
    mephisto: MephistoConfig = field(default_factory=MephistoConfig)
    mturk: MturkConfig = field(default_factory=MturkConfig)
    metrics: MetricsConfig = field(default_factory=MetricsConfig)
    task_dir: str = str(PACKAGE_DIR)
    data_dir: str = "./data"
    database_url: str | None = None
    monitoring_log_rate: int = 300


def register_configs() -> None:
    """Make the group options the original confs name in their defaults list resolvable."""
    store = ConfigStore.instance()
    store.store(name="cep_run_config", node=RunConfig)
    store.store(group="mephisto/blueprint", name="behavior_analysis_blueprint",
                node=BlueprintConfig)
    store.store(group="mephisto/blueprint", name="static_annotation", node=BlueprintConfig)
    store.store(group="mephisto/architect", name="local", node=ArchitectConfig)
    store.store(group="mephisto/provider", name="mock", node=ProviderConfig)
    store.store(group="mephisto/provider", name="local", node=ProviderConfig)
