"""Confs: the original project's confs load with their task_config files; bad keys are named."""

from __future__ import annotations

import warnings

import pytest

from collection_and_annotations.blueprints import build_blueprint
from collection_and_annotations.config.loader import (
    CONF_DIR,
    DeprecatedKeyWarning,
    load_run_config,
)
from collection_and_annotations.errors import NotSupportedYet, UserError

FIXTURE_CONFS = ["consistency", "knowledge", "transitions", "likert", "likert_turn", "comparative"]


@pytest.mark.parametrize("name", FIXTURE_CONFS)
def test_original_annotation_confs_load_with_their_files(cep_fixtures, name):
    conf = cep_fixtures / "hydra_configs" / "conf" / f"{name}.yaml"
    cfg = load_run_config(str(conf), [f"task_dir={cep_fixtures}"]).config
    assert cfg.mephisto.task.task_name == name
    assert isinstance(cfg.mephisto.architect.port, int)
    blueprint = build_blueprint(cfg)
    plans = [p for p in blueprint.plan() if p.pool == "main"]
    data_lines = (cep_fixtures / "task_config" / "task_data" / f"{name}.jsonl").read_text()
    assert len(plans) == len(data_lines.strip().splitlines())
    assert all(p.annotators >= 1 and p.groups for p in plans)
    screening = [p for p in blueprint.plan() if p.pool == "screening"]
    assert len(screening) == (1 if cfg.mephisto.blueprint.use_screening_task else 0)


def test_the_originals_dialogues_in_several_groups_load_without_a_word(cep_fixtures):
    """likert_turn.jsonl has each dialogue in eight groups, each asking another bucket: the
    original allowed it and meant it, so it loads without a warning."""
    conf = cep_fixtures / "hydra_configs" / "conf" / "likert_turn.yaml"
    cfg = load_run_config(str(conf), [f"task_dir={cep_fixtures}"]).config
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plans = build_blueprint(cfg).plan()
    assert not [w for w in caught if "dialogue" in str(w.message)]
    ids = [d["source"]["dialogue_id"] for p in plans for d in p.data["dialogues"]]
    assert len(ids) == 40 and len(set(ids)) == 5


def test_collect_dialogues_conf_loads_with_deprecation_warning(cep_fixtures):
    conf = cep_fixtures / "hydra_configs" / "conf" / "collect_dialogues.yaml"
    with pytest.warns(DeprecatedKeyWarning, match="units_per_assignment"):
        cfg = load_run_config(str(conf), [f"task_dir={cep_fixtures}"]).config
    plans = build_blueprint(cfg).plan()  # model_opts and conversations_needed checked
    assert sorted((p.data["bots"], p.annotators) for p in plans) == [
        (["rerank_blender", "bart_fid_rag_bcb"], 20), (["rerank_blender", "blender2_3B"], 20)]


def test_screening_and_gold_confs_are_supported(cep_fixtures):
    conf = cep_fixtures / "hydra_configs" / "conf" / "consistency.yaml"
    cfg = load_run_config(str(conf), [f"task_dir={cep_fixtures}",
                                      "mephisto.blueprint.use_golds=true"]).config
    pools = [p.pool for p in build_blueprint(cfg).plan()]
    assert pools.count("screening") == 1 and pools.count("gold") == 2


def test_unknown_key_in_file_is_named_with_file_and_line(tmp_path, cep_fixtures):
    source = (cep_fixtures / "hydra_configs" / "conf" / "likert.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(source.replace("    num_turns: 2\n", "    num_turns: 2\n    num_trns: 3\n"))
    with pytest.raises(UserError) as error:
        load_run_config(str(bad), [f"task_dir={cep_fixtures}"])
    line = bad.read_text().splitlines().index("    num_trns: 3") + 1
    assert str(error.value).startswith(f"{bad}:{line}: unknown key 'mephisto.blueprint.num_trns'")


def test_override_from_command_line_and_bad_value():
    cfg = load_run_config("demo", ["mephisto.architect.port=3005"]).config
    assert cfg.mephisto.architect.port == 3005
    with pytest.raises(UserError, match="mephisto.architect.port.*command line"):
        load_run_config("demo", ["mephisto.architect.port=abc"])
    with pytest.raises(UserError, match="group of settings.*mephisto.architect.port=3005"):
        load_run_config("demo", ["mephisto=1"])


def test_confs_loaded_in_one_process_share_nothing():
    """A process may load several confs (a launch, the dashboard, tests): each load starts
    from the schema's defaults and the file, and leaves the ones loaded before as they were."""
    first = load_run_config("demo", ["exit_when_complete=true",
                                      "mephisto.architect.port=3005"]).config
    first.monitoring_log_rate = 5
    again = load_run_config("demo").config
    assert (again.exit_when_complete, again.monitoring_log_rate) == (False, 300)
    assert again.mephisto.architect.port != 3005
    assert (first.exit_when_complete, first.monitoring_log_rate) == (True, 5)
    assert first.mephisto.architect.port == 3005


def test_a_conf_loaded_again_takes_every_kind_of_override(tmp_path):
    """Loading a conf again in one process (the dashboard, tests) answers each kind of
    command-line override as the first load did: a value, a list or an interpolation set, a
    group option chosen, a key added or removed, a bad one refused with its reason; a file
    changed in between is read again."""
    conf = tmp_path / "task.yaml"
    conf.write_text((CONF_DIR / "demo.yaml").read_text())

    def load(*overrides: str):
        return load_run_config(str(conf), list(overrides)).config

    for _ in range(2):
        assert load().mephisto.architect.port == 3000
        assert load("mephisto.architect.port=3005").mephisto.architect.port == 3005
        assert list(load("metrics.names=[bleu,chrf]").metrics.names) == ["bleu", "chrf"]
        assert load("task_dir=/elsewhere").mephisto.blueprint.data_jsonl == (
            "/elsewhere/task_config/task_data/demo.jsonl")
        assert load("mephisto/provider=prolific").mephisto.provider._provider_type == "prolific"
        added = load("+mephisto.blueprint.speaker_names.SPEAKER_Z=Other")
        assert added.mephisto.blueprint.speaker_names.SPEAKER_Z == "Other"
        assert list(load("~metrics").metrics.names) == []
        with pytest.raises(UserError, match=r"'mephisto.architect.port' must be a whole "
                                            r"number, got 'abc' \(set on the command line\)"):
            load("mephisto.architect.port=abc")
        with pytest.raises(UserError, match="unknown key 'mephisto.architect.nope'"):
            load("mephisto.architect.nope=1")
        with pytest.raises(UserError, match="has no key 'SPEAKER_Z'.* a leading '[+]'"):
            load("mephisto.blueprint.speaker_names.SPEAKER_Z=Other")
    conf.write_text(conf.read_text().replace("port: 3000", "port: 3007"))
    assert load().mephisto.architect.port == 3007


def test_demo_conf_needs_nothing_else():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = load_run_config("demo").config
    blueprint = build_blueprint(cfg)
    assert len(blueprint.plan()) == 4
    assert set(blueprint.instructions) == {"relevance", "issues", "overall_quality", "preference"}


def test_unknown_conf_name_lists_builtin_confs():
    with pytest.raises(UserError, match="built-in confs: demo"):
        load_run_config("no_such_conf")


def test_conf_selects_metrics_checked_at_launch_and_used_by_evaluate(tmp_path):
    import json

    from click.testing import CliRunner

    from collection_and_annotations.cli import main
    from collection_and_annotations.config.loader import CONF_DIR

    cfg = load_run_config("demo", ["metrics.names=[richness,blue]"]).config
    with pytest.raises(UserError, match="unknown metric 'blue'"):
        build_blueprint(cfg)
    cfg = load_run_config("demo", ["metrics.perf_metric=bleu"]).config
    with pytest.raises(UserError, match="must be one of metrics.names"):
        build_blueprint(cfg)

    data = CONF_DIR.parents[1] / "task_config" / "task_data" / "demo.jsonl"
    out = tmp_path / "results.json"
    result = CliRunner().invoke(main, ["evaluate", "--input", str(data), "--conf", "demo",
                                       "--output", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    results = json.loads(out.read_text())
    assert list(results["metrics"]) == ["richness"] and results["by"] == ["dialogue_id"]
    assert results["perf_metric"] == "richness.msttr"
    assert set(results["metrics"]["richness"]["by_tag"]["dialogue_id"]["groups"]) == {
        "demo-garden", "demo-trip", "demo-cooking", "demo-books-pair"}


# Keys of the original blueprint and of Mephisto 1.x's task, architect and provider arguments,
# with a value of their type: every one loads.
MEPHISTO_KEYS = {
    "blueprint": {
        "random_seed": 42, "task_config_path": "/x/task_config", "max_concurrent_responses": 2,
        "left_pane_text_path": "/x/left_pane_text.html", "onboarding_qualification": "q",
        "world_file": "/x/worlds.py", "chat_startup_instructions_path": "/x/c.html",
        "final_rating_question": "Rate", "custom_source_dir": "/x/frontend",
        "override_opt": {"a": 1}, "max_onboard_time": 300, "onboard_task_data_path": "/x/o.json",
        "context_seed": 1, "units_per_assignment": 1, "block_qualification": "b",
        "custom_source_bundle": "/x/b.js", "preview_source": "/x/p.html",
        "task_description_file": "/x/d.html", "task_source_review": "", "extra_source_dir": "/x",
        "context_csv": "/x/c.csv", "context_jsonl": "/x/c.jsonl", "num_conversations": 3,
        "tips_location": "/x/tips.csv", "data_json": "/x/d.json", "data_csv": "/x/d.csv",
        "max_gold_units": 5, "passed_qualification_name": "p", "max_screening_units": 3,
        "gold_qualification_base": "g", "min_golds": 1, "max_incorrect_golds": 0,
        "allowed_gold_mistakes": 0, "num_turns": 6, "max_resp_time": 180,
        "check_acceptability": False, "include_persona": False,
        "conversation_start_mode": "hi", "task_model_parallel": True,
    },
    "task": {
        "task_name": "t", "task_title": "T", "task_description": "D", "task_reward": 0.3,
        "task_tags": "a,b", "assignment_duration_in_seconds": 600, "allowed_concurrent": 2,
        "maximum_units_per_worker": 3, "max_num_concurrent_units": 4,
        "submission_timeout": 600, "no_submission_patience": 43200,
        "task_lifetime_in_seconds": 2678400, "post_install_script": "",
        "force_rebuild": False, "resume_incomplete_run": True,
    },
    "architect": {
        "hostname": "localhost", "port": 3001, "server_type": "node",
        "server_source_path": "/x", "should_run_server": True, "use_hobby": False,
        "heroku_team": "team", "heroku_app_name": "app", "heroku_config_args": {"A": "b"},
        "instance_type": "t2.micro", "subdomain": "s", "profile_name": "p",
        "_deploy_type": "standard", "allowed_hosts": ["cep.example.org"],
    },
    "provider": {
        "requester_name": "MOCK_REQUESTER", "ui_base_url": "http://x",
        "prolific_external_study_url": "http://x", "prolific_id_option": "url_parameters",
        "prolific_estimated_completion_time_in_minutes": 5,
        "prolific_eligibility_requirements": [{"name": "x"}], "prolific_workspace_name": "w",
        "prolific_project_name": "p", "prolific_allow_list_group_name": "a",
        "prolific_block_list_group_name": "b",
    },
}


def _conf_with(tmp_path, sections):
    import yaml

    conf = tmp_path / "all.yaml"
    document = {"mephisto": {**sections, "database": {"_database_type": "singleton"}}}
    conf.write_text("#@package _global_\n" + yaml.safe_dump(document))
    return conf


def test_every_original_and_mephisto_key_loads_with_one_warning_per_unused_key(tmp_path):
    from collection_and_annotations.config.accepted import UnusedKeyWarning, unused_keys

    conf = _conf_with(tmp_path, MEPHISTO_KEYS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = load_run_config(str(conf)).config
    for section, keys in MEPHISTO_KEYS.items():
        for key, value in keys.items():
            assert cfg.mephisto[section][key] == value, (section, key)
    warned = [str(w.message) for w in caught if issubclass(w.category, UnusedKeyWarning)]
    set_keys = {f"mephisto.{s}.{k}" for s, keys in MEPHISTO_KEYS.items() for k in keys}
    set_keys.add("mephisto.database._database_type")
    expected = sorted(set_keys & set(unused_keys()))
    assert len(warned) == len(expected) == len(set(warned))
    for key in expected:
        (message,) = [m for m in warned if f" {key} is accepted but not used (" in m]
        line = conf.read_text().splitlines()
        assert message.startswith(f"{conf}:"), message
        number = int(message[len(f"{conf}:"):].split(":", 1)[0])
        assert line[number - 1].strip().startswith(key.rsplit(".", 1)[1] + ":")
    for used in ("random_seed", "max_concurrent_responses", "allowed_hosts", "task_reward",
                 "passed_qualification_name", "num_turns"):
        assert not any(f".{used} is accepted" in m for m in warned), used


def test_typed_keys_refuse_wrong_types(tmp_path):
    for override, wanted in (("mephisto.blueprint.random_seed=abc", "a whole number"),
                             ("mephisto.blueprint.max_concurrent_responses=x", "a whole number"),
                             ("mephisto.architect.use_hobby=maybe", "true or false")):
        with pytest.raises(UserError, match=wanted):
            load_run_config("demo", [override])
    cfg = load_run_config("demo", ["mephisto.blueprint.random_seed=7"]).config
    assert cfg.mephisto.blueprint.random_seed == 7


def test_defaults_follow_mephisto(tmp_path):
    conf = _conf_with(tmp_path, {"task": {"task_name": "t"}})
    task = load_run_config(str(conf)).config.mephisto.task
    assert task.allowed_concurrent == 0 and task.assignment_duration_in_seconds == 1800


@pytest.mark.parametrize(("group", "name", "key"), [
    ("provider", "inhouse", "_provider_type"),
    ("architect", "heroku", "_architect_type"), ("architect", "ec2", "_architect_type"),
])
def test_other_providers_and_architects_are_refused(tmp_path, group, name, key):
    from collection_and_annotations.config.checks import check_services_supported

    demo = load_run_config("demo")
    conf = tmp_path / "other.yaml"
    conf.write_text(demo.path.read_text().replace(f"/mephisto/{group}: local",
                                                  f"/mephisto/{group}: {name}"))
    cfg = load_run_config(str(conf))
    with pytest.raises(NotSupportedYet, match=f"mephisto.{group}.{key}='{name}' is not "
                                              "supported yet"):
        check_services_supported(cfg.config)
    check_services_supported(demo.config)


@pytest.mark.parametrize("name", ["mturk", "mturk_sandbox", "prolific", "external"])
def test_built_providers_are_accepted(tmp_path, name):
    from collection_and_annotations.config.checks import check_services_supported

    demo = load_run_config("demo")
    conf = tmp_path / "other.yaml"
    conf.write_text(demo.path.read_text().replace("/mephisto/provider: local",
                                                  f"/mephisto/provider: {name}"))
    check_services_supported(load_run_config(str(conf)).config)
