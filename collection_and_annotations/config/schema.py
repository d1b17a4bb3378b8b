"""Typed schema of a run conf; keys and defaults follow the original project's confs.

Hydra validates every conf against these dataclasses, so an unknown key fails with its name and
a wrong type fails with the expected one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore

from collection_and_annotations import PACKAGE_DIR

# Keys of the original blueprint and of Mephisto 1.x (TaskRunArgs, ArchitectArgs and its
# local/heroku/ec2 kinds, ProviderArgs and its mturk/prolific/inhouse kinds) load, so their confs
# run unchanged; those this version does not use default to None and warn when set
# (config/accepted.py says why for each).

# Mephisto 1.x's kinds: all compose; config/checks.py says which are served.
ARCHITECT_TYPES = ("local", "mock", "heroku", "ec2")
PROVIDER_TYPES = ("mock", "local", "mturk", "mturk_sandbox", "prolific", "external", "inhouse")


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
    # a submit must answer at least one question of each dialogue (require rules aside)
    allow_unanswered_dialogues: bool = False
    # quality control
    block_qualification: str | None = None
    worker_blocklist_paths: str | None = None
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
    max_concurrent_responses: int = 1  # bots generating at once (live chat)
    offensive_words_path: str | None = None  # check_acceptability: a word list (one per line)
    block_on_unacceptable: bool = False  # check_acceptability: block a worker who violates
    # accepted, not used (config/accepted.py)
    context_seed: Any = None
    units_per_assignment: Any = None
    task_config_path: str | None = None
    left_pane_text_path: str | None = None
    chat_startup_instructions_path: str | None = None
    final_rating_question: str | None = None
    override_opt: dict[str, Any] | None = None
    custom_source_dir: str | None = None
    custom_source_bundle: str | None = None
    world_file: str | None = None
    preview_source: str | None = None
    task_description_file: str | None = None
    task_source_review: str | None = None
    extra_source_dir: str | None = None
    context_csv: str | None = None
    context_jsonl: str | None = None
    num_conversations: int | None = None
    onboarding_qualification: str | None = None
    onboard_task_data_path: str | None = None
    max_onboard_time: int | None = None
    tips_location: str | None = None
    data_json: str | None = None
    data_csv: str | None = None


@dataclass
class TaskConfig:
    task_name: str = "???"
    task_title: str = ""
    task_description: str = ""
    task_reward: float = 0.0
    task_tags: str = ""
    # defaults as Mephisto's TaskRunArgs; 0 is no limit
    allowed_concurrent: int = 0
    assignment_duration_in_seconds: int = 1800
    max_num_concurrent_units: int = 0
    maximum_units_per_worker: int = 0
    # accepted, not used
    task_lifetime_in_seconds: int | None = None
    no_submission_patience: int | None = None
    submission_timeout: int | None = None
    post_install_script: str | None = None
    force_rebuild: bool | None = None
    resume_incomplete_run: bool | None = None
    # a rejected unit's work goes back to the pool as a new unit (docs/providers.md)
    return_rejected_units: bool = False


@dataclass
class ArchitectConfig:
    _architect_type: str = "local"
    hostname: str = "localhost"
    port: int = 3000
    server_processes: int = 1
    # true: serve the run another launcher of this conf serves already (PostgreSQL only;
    # docs/several-machines.md); false: a second launcher of the task is refused
    join: bool = False
    # more host names the server answers to (e.g. a proxy's); `*`: any
    allowed_hosts: list[str] | None = None
    # where workers and requesters reach the server, e.g. https://eval.example.org behind a
    # TLS-terminating reverse proxy: printed links, redirects and cookies use it
    public_url: str | None = None
    # addresses of reverse proxies whose X-Forwarded-For/-Proto headers are believed
    trusted_proxies: list[str] | None = None
    # accepted, not used: Mephisto's server kinds and its heroku/ec2 architects
    server_type: str | None = None
    server_source_path: str | None = None
    should_run_server: bool | None = None
    use_hobby: bool | None = None
    heroku_team: str | None = None
    heroku_app_name: str | None = None
    heroku_config_args: dict[str, str] | None = None
    instance_type: str | None = None
    subdomain: str | None = None
    profile_name: str | None = None
    _deploy_type: str | None = None


@dataclass
class ProviderConfig:
    _provider_type: str = "mock"
    # external: the URL parameters naming the worker and the visit (docs/providers.md)
    worker_id_param: str = "worker_id"
    session_id_param: str = "assignment_id"
    # external, prolific: the code a worker takes back; unset: external derives one per
    # worker (HMAC), prolific one per task
    completion_code: str | None = None
    # external: where the worker goes on submit, `{code}` and `{worker_id}` filled in
    completion_url: str | None = None
    # mturk: days a HIT stays listed
    mturk_hit_lifetime_days: int = 7
    # accepted, not used: Mephisto's requester accounts, inhouse and prolific providers
    requester_name: str | None = None
    ui_base_url: str | None = None
    prolific_external_study_url: str | None = None
    prolific_id_option: str | None = None
    prolific_estimated_completion_time_in_minutes: int = 10
    prolific_eligibility_requirements: list[Any] | None = None
    prolific_workspace_name: str | None = None
    prolific_project_name: str | None = None
    prolific_allow_list_group_name: str | None = None
    prolific_block_list_group_name: str | None = None


@dataclass
class DatabaseConfig:
    _database_type: str | None = None  # accepted, not used: see database_url


@dataclass
class MephistoConfig:
    blueprint: BlueprintConfig = field(default_factory=BlueprintConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    architect: ArchitectConfig = field(default_factory=ArchitectConfig)
    provider: ProviderConfig = field(default_factory=ProviderConfig)
    database: DatabaseConfig = field(default_factory=DatabaseConfig)
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
    # stop the server once every unit is completed (scripts); by default it stays up for the
    # dashboard until Ctrl-C
    exit_when_complete: bool = False


def register_configs() -> None:
    """Make the group options the original confs name in their defaults list resolvable."""
    store = ConfigStore.instance()
    store.store(name="cep_run_config", node=RunConfig)
    store.store(group="mephisto/blueprint", name="behavior_analysis_blueprint",
                node=BlueprintConfig)
    store.store(group="mephisto/blueprint", name="static_annotation", node=BlueprintConfig)
    store.store(group="mephisto/blueprint", name="dialogue_collection",
                node=BlueprintConfig(_blueprint_type="dialogue_collection",
                                     do_collect_dialogue=True, do_external_annotations=False))
    # Mephisto's other kinds compose too, so `check_services_supported` can refuse them by name.
    for name in ARCHITECT_TYPES:
        store.store(group="mephisto/architect", name=name,
                    node=ArchitectConfig(_architect_type=name))
    for name in PROVIDER_TYPES:
        store.store(group="mephisto/provider", name=name,
                    node=ProviderConfig(_provider_type=name))
