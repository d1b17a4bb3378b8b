"""Typed schema of a run conf; keys and defaults follow the original project's confs.

Hydra validates every conf against these dataclasses, so an unknown key fails with its name and
a wrong type fails with the expected one. The task, architect and database keys are declared
here. Each task kind and provider declares its own keys: a dataclass subclassing
`BlueprintConf` or `ProviderConf`, set as its class's `conf`. `mephisto.blueprint` and
`mephisto.provider` hold the keys of every registered kind and provider, so a conf may switch
either with `_blueprint_type` / `_provider_type` (even on the command line); each option of the
`mephisto/blueprint` and `mephisto/provider` groups is named after one and has its defaults.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from dataclasses import dataclass, field
from typing import Any

from collection_and_annotations import PACKAGE_DIR
from collection_and_annotations.config.keys import TEN_YEARS, ranged, unused

# Keys of the original blueprint and of Mephisto 1.x (TaskRunArgs, ArchitectArgs and its
# local/heroku/ec2 kinds, ProviderArgs and its mturk/prolific/inhouse kinds) load, so their confs
# run unchanged; those this version does not use default to None and warn when set.
NO_QUALIFICATIONS = "Mephisto qualifications are not built"
BUILT_IN_PAGE = "the worker page is built in; task text comes from task_description and " \
                "instructions_dir"
LOCAL_LINKS = "workers come through local links"
_SERVER = "this version serves the task itself (architect 'local')"
_A_RUN_LASTS = "a run lasts until stopped or completed"

# Mephisto 1.x's architects: all compose; config/checks.py says which are served.
ARCHITECT_TYPES = ("local", "mock", "heroku", "ec2")
# Mephisto 1.x's providers not built here: they compose, so checks can refuse them by name.
MEPHISTO_ONLY_PROVIDERS = ("inhouse",)
# What a conf without a blueprint or provider in its defaults list runs, as Mephisto did.
DEFAULT_BLUEPRINT, DEFAULT_PROVIDER = "behavior_analysis_blueprint", "mock"


@dataclass
class BlueprintConf:
    """Keys every task kind has (the launcher reads them); a kind's conf subclasses it."""

    _blueprint_type: str = DEFAULT_BLUEPRINT
    random_seed: int | None = None  # seeds each unit's presentation order (reproducible)
    block_qualification: str | None = None
    worker_blocklist_paths: str | None = None
    # qualifications a worker must hold to get any unit (e.g. another task's screening's)
    required_qualifications: list[str] = field(default_factory=list)
    # LLM judges (docs/judges.md): nicknames of model_opt_path answering while served
    judges: list[str] = field(default_factory=list)
    judge_prompt_path: str | None = None  # the judges' prompt template (default: built in)
    # accepted, not used: Mephisto's onboarding and page options
    onboarding_qualification: str | None = unused(NO_QUALIFICATIONS)
    onboard_task_data_path: str | None = unused("onboarding is screening here: "
                                                "use_screening_task and screen_json")
    max_onboard_time: int | None = unused("onboarding is screening here")
    task_config_path: str | None = unused("paths are written in full, e.g. with ${task_dir}")
    left_pane_text_path: str | None = unused(BUILT_IN_PAGE)
    custom_source_dir: str | None = unused(BUILT_IN_PAGE)
    custom_source_bundle: str | None = unused(BUILT_IN_PAGE)
    preview_source: str | None = unused(BUILT_IN_PAGE)
    task_description_file: str | None = unused(BUILT_IN_PAGE)
    task_source_review: str | None = unused(BUILT_IN_PAGE)
    extra_source_dir: str | None = unused(BUILT_IN_PAGE)
    tips_location: str | None = unused("worker tips are not built")


@dataclass
class ProviderConf:
    """Keys every provider has; a provider's conf subclasses it."""

    _provider_type: str = DEFAULT_PROVIDER
    requester_name: str | None = unused(f"{LOCAL_LINKS}: no requester account is needed")
    ui_base_url: str | None = unused(f"{LOCAL_LINKS}; links use mephisto.architect.hostname")


@dataclass
class TaskConfig:
    task_name: str = "???"
    task_title: str = ""
    task_description: str = ""
    task_reward: float = 0.0
    task_tags: str = ""
    # defaults as Mephisto's TaskRunArgs; 0 is no limit
    allowed_concurrent: int = ranged(0, 0, zero_means="no limit")
    assignment_duration_in_seconds: int = ranged(1800, 0, TEN_YEARS, "no limit")
    max_num_concurrent_units: int = ranged(0, 0, zero_means="no limit")
    maximum_units_per_worker: int = ranged(0, 0, zero_means="no limit")
    # accepted, not used
    task_lifetime_in_seconds: int | None = unused(_A_RUN_LASTS)
    no_submission_patience: int | None = unused(_A_RUN_LASTS)
    submission_timeout: int | None = unused("a unit is done when its submission is stored")
    post_install_script: str | None = unused(BUILT_IN_PAGE)
    force_rebuild: bool | None = unused(BUILT_IN_PAGE)
    resume_incomplete_run: bool | None = unused("a run with the same task_name always "
                                                "continues")
    # a rejected unit's work goes back to the pool as a new unit (docs/providers.md)
    return_rejected_units: bool = False


@dataclass
class ArchitectConfig:
    _architect_type: str = "local"
    hostname: str = "localhost"
    port: int = ranged(3000, 1, 65535)
    server_processes: int = ranged(1, 1, 64)
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
    # seconds a request waits for a row lock another holds; then 503 with Retry-After
    # (PostgreSQL's lock_timeout)
    lock_timeout_s: int = ranged(5, 1, 600)
    # requests per server process whose database work runs at once (a thread each); more wait
    # their turn without holding a thread or a connection
    database_threads: int = ranged(4, 1, 64)
    # accepted, not used: Mephisto's server kinds and its heroku/ec2 architects
    server_type: str | None = unused(_SERVER)
    server_source_path: str | None = unused(_SERVER)
    should_run_server: bool | None = unused(_SERVER)
    use_hobby: bool | None = unused(f"{_SERVER}; heroku is not supported")
    heroku_team: str | None = unused(f"{_SERVER}; heroku is not supported")
    heroku_app_name: str | None = unused(f"{_SERVER}; heroku is not supported")
    heroku_config_args: dict[str, str] | None = unused(f"{_SERVER}; heroku is not supported")
    instance_type: str | None = unused(f"{_SERVER}; ec2 is not supported")
    subdomain: str | None = unused(f"{_SERVER}; ec2 is not supported")
    profile_name: str | None = unused(f"{_SERVER}; ec2 is not supported")
    _deploy_type: str | None = unused(f"{_SERVER}; ec2 is not supported")


@dataclass
class DatabaseConfig:
    _database_type: str | None = unused("the database is set with database_url (SQLite under "
                                        "data_dir by default)")


def blueprint_option(name: str) -> BlueprintConf:
    """The `mephisto/blueprint` option `name`: every kind's keys, with that kind's defaults."""
    from collection_and_annotations.blueprints.registry import BLUEPRINTS

    return _option(_blueprint_keys(), BLUEPRINTS.get(name).conf, _blueprint_type=name)


def provider_option(name: str) -> ProviderConf:
    """The `mephisto/provider` option `name`: every provider's keys, with its defaults."""
    from collection_and_annotations.providers import PROVIDERS

    conf = ProviderConf if name in MEPHISTO_ONLY_PROVIDERS else PROVIDERS.get(name).conf
    return _option(_provider_keys(), conf, _provider_type=name)


@functools.cache
def _blueprint_keys() -> type[BlueprintConf]:
    from collection_and_annotations.blueprints.registry import BLUEPRINTS

    return _every_key(BlueprintConf, {name: BLUEPRINTS.get(name).conf
                                      for name in BLUEPRINTS.names()})


@functools.cache
def _provider_keys() -> type[ProviderConf]:
    from collection_and_annotations.providers import PROVIDERS

    return _every_key(ProviderConf, {name: PROVIDERS.get(name).conf
                                     for name in PROVIDERS.names()})


def _every_key(base: type, confs: dict[str, type]) -> type:
    """One dataclass holding the keys of all `confs` (subclasses of `base`); a key that two
    of them declare must have one type in both."""
    keys: dict[str, tuple[Any, dataclasses.Field, str]] = {}
    for owner, conf in confs.items():
        hints = typing.get_type_hints(conf)
        for key in dataclasses.fields(conf):
            hint, _, first = keys.setdefault(key.name, (hints[key.name], key, owner))
            if hint != hints[key.name]:
                from collection_and_annotations.plugins import PluginError

                raise PluginError(f"'{key.name}' is {hint} for '{first}' but "
                                  f"{hints[key.name]} for '{owner}': the same key must have "
                                  "one type; rename one of them")
    return dataclasses.make_dataclass(
        f"Every{base.__name__}", bases=(base,),
        fields=[(name, hint, field(default=key.default, default_factory=key.default_factory,
                                   metadata=key.metadata))
                for name, (hint, key, _) in keys.items()])


def _option(every: type, conf: type, **values: Any) -> Any:
    defaults = conf()
    return every(**{**{key.name: getattr(defaults, key.name)
                       for key in dataclasses.fields(conf)}, **values})


@dataclass
class MephistoConfig:
    blueprint: BlueprintConf = field(
        default_factory=lambda: blueprint_option(DEFAULT_BLUEPRINT))
    task: TaskConfig = field(default_factory=TaskConfig)
    architect: ArchitectConfig = field(default_factory=ArchitectConfig)
    provider: ProviderConf = field(default_factory=lambda: provider_option(DEFAULT_PROVIDER))
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
    monitoring_log_rate: int = ranged(300, 1)
    # stop the server once every unit is completed (scripts); by default it stays up for the
    # dashboard until Ctrl-C
    exit_when_complete: bool = False


def register_configs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Make the group options the original confs name in their defaults list resolvable: every
    registered task kind and provider (plug-ins too), and Mephisto's other kinds. Returns the
    kinds' and providers' names, which a composed conf depends on."""
    from collection_and_annotations.blueprints.registry import BLUEPRINTS
    from collection_and_annotations.providers import PROVIDERS

    registered = tuple(BLUEPRINTS.names()), tuple(PROVIDERS.names())
    _register(*registered)
    return registered


@functools.cache
def _register(blueprints: tuple[str, ...], providers: tuple[str, ...]) -> None:
    """Store these kinds' options in Hydra's ConfigStore, once a process: storing converts each
    dataclass again, over a third of a conf's loading (a kind registered later stores anew)."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    store.store(name="cep_run_config", node=RunConfig)
    for name in blueprints:
        store.store(group="mephisto/blueprint", name=name, node=blueprint_option(name))
    for name in ARCHITECT_TYPES:
        store.store(group="mephisto/architect", name=name,
                    node=ArchitectConfig(_architect_type=name))
    for name in (*providers, *MEPHISTO_ONLY_PROVIDERS):
        store.store(group="mephisto/provider", name=name, node=provider_option(name))
