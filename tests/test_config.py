"""Confs: the original project's confs load with their task_config files; bad keys are named."""

from __future__ import annotations

import warnings

import pytest

from collection_and_annotations.blueprints import build_blueprint, check_supported
from collection_and_annotations.config import load_run_config
from collection_and_annotations.config.loader import DeprecatedKeyWarning
from collection_and_annotations.errors import NotSupportedYet, UserError

FIXTURE_CONFS = ["consistency", "knowledge", "transitions", "likert", "likert_turn", "comparative"]


@pytest.mark.parametrize("name", FIXTURE_CONFS)
def test_original_annotation_confs_load_with_their_files(cep_fixtures, name):
    conf = cep_fixtures / "hydra_configs" / "conf" / f"{name}.yaml"
    cfg = load_run_config(str(conf), [f"task_dir={cep_fixtures}"]).config
    assert cfg.mephisto.task.task_name == name
    assert isinstance(cfg.mephisto.architect.port, int)
    blueprint = build_blueprint(cfg)
    plans = blueprint.plan()
    data_lines = (cep_fixtures / "task_config" / "task_data" / f"{name}.jsonl").read_text()
    assert len(plans) == len(data_lines.strip().splitlines())
    assert all(p.annotators >= 1 and p.groups for p in plans)


def test_collect_dialogues_conf_loads_with_deprecation_warning(cep_fixtures):
    conf = cep_fixtures / "hydra_configs" / "conf" / "collect_dialogues.yaml"
    with pytest.warns(DeprecatedKeyWarning, match="units_per_assignment"):
        cfg = load_run_config(str(conf), [f"task_dir={cep_fixtures}"]).config
    assert build_blueprint(cfg) is None  # model_opts and conversations_needed checked
    with pytest.raises(NotSupportedYet, match="dialogue collection"):
        check_supported(cfg)


def test_screening_conf_is_refused_until_supported(cep_fixtures):
    conf = cep_fixtures / "hydra_configs" / "conf" / "consistency.yaml"
    cfg = load_run_config(str(conf), [f"task_dir={cep_fixtures}"]).config
    with pytest.raises(NotSupportedYet, match="use_screening_task"):
        check_supported(cfg)
    cfg = load_run_config(str(conf), [f"task_dir={cep_fixtures}",
                                      "mephisto.blueprint.use_screening_task=false"]).config
    check_supported(cfg)


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


def test_demo_conf_needs_nothing_else():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = load_run_config("demo").config
    blueprint = build_blueprint(cfg)
    check_supported(cfg)
    assert len(blueprint.plan()) == 4
    assert set(blueprint.instructions) == {"relevance", "overall_quality", "preference"}


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
