"""Plug-ins outside the package: a distribution installed beside the platform adds a task
kind, a provider, a bot kind and a metric through entry points, and the launcher and the CLI
use them as built-ins; a plug-in that fails to load or takes a built-in's name is named."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from helpers import REPO, Running, free_port, http_get, http_post

PLUGIN = Path(__file__).parent / "plugin_package"


def install(site: Path, project: Path = PLUGIN, name: str | None = None,
            entry_points: dict[str, dict[str, str]] | None = None) -> None:
    """Install the plug-in distribution of `project` into `site` as pip would (its modules and
    a .dist-info with its entry points), under another `name` and entry points if given."""
    metadata = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    name = name or metadata["name"]
    if not (site / "cep_test_plugin").exists():
        shutil.copytree(project / "cep_test_plugin", site / "cep_test_plugin")
    info = site / f"{name.replace('-', '_')}-{metadata['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\n"
                                   f"Version: {metadata['version']}\n")
    groups = entry_points or metadata["entry-points"]
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items())
        for group, points in groups.items()))


@pytest.fixture
def plugin_site(tmp_path, monkeypatch) -> Path:
    """The plug-in installed in a folder of its own, on the path of every subprocess."""
    site = tmp_path / "site"
    install(site)
    monkeypatch.setenv("PYTHONPATH", str(site))
    return site


def test_a_plugin_task_kind_with_a_plugin_provider_serves_its_units(tmp_path, plugin_site):
    conf = tmp_path / "questions.yaml"
    conf.write_text(
        "#@package _global_\n"
        "defaults:\n  - /mephisto/blueprint: questions\n  - /mephisto/architect: local\n"
        "  - /mephisto/provider: thanks\n"
        "mephisto:\n  architect:\n    hostname: 127.0.0.1\n"
        "  blueprint:\n    questions: ['Is the sky blue?', 'Is water wet?']\n    annotators: 2\n"
        "  task:\n    task_name: questions\n")
    port = free_port()
    run = Running(tmp_path, port, str(conf), "mephisto.provider.thanks_code=FROM-THE-CLI")
    try:
        run.wait_for(r"progress: 0/4 units completed")
        token = run.wait_for(r"token: ([0-9a-f]+)").group(1)
        base = f"http://127.0.0.1:{port}"
        claim = http_post(f"{base}/api/claim", json={"worker_id": "ann",
                                                      "assignment_id": "1"}).json()
        headers = {"Authorization": f"Bearer {claim['token']}"}
        unit = http_get(f"{base}/api/units/{claim['unit_id']}", headers=headers).json()
        assert unit["kind"] == "annotation"
        assert unit["question"] in ("Is the sky blue?", "Is water wet?")
        submit = f"{base}/api/units/{claim['unit_id']}/submit"
        refused = http_post(submit, headers=headers, json={"answers": {"answer": "maybe"}})
        assert refused.status_code == 422 and "say yes or no" in refused.text
        done = http_post(submit, headers=headers, json={"answers": {"answer": "yes"}})
        assert done.status_code == 200, done.text
        assert done.json() == {"status": "completed", "completion_code": "FROM-THE-CLI"}
        run.wait_for(r"progress: 1/4 units completed")
        items = http_get(f"{base}/api/requester/submissions?format=items-jsonl",
                         headers={"Authorization": f"Bearer {token}"})
        (item,) = [json.loads(line) for line in items.text.splitlines()]
        assert (item["task"], item["question"], item["answer"]) == ("questions", "answer", "yes")
    finally:
        run.process.send_signal(signal.SIGINT)
        run.process.wait(30)


def test_a_plugin_kinds_keys_are_checked_like_the_built_in_ones(tmp_path, plugin_site):
    conf = tmp_path / "questions.yaml"
    conf.write_text("#@package _global_\ndefaults:\n  - /mephisto/blueprint: questions\n"
                    "mephisto:\n  blueprint:\n    questions: [Q]\n    anotators: 2\n"
                    "  task:\n    task_name: q\n")
    without_plugin = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    refused = _welcome(tmp_path, conf, env=without_plugin)
    assert refused.returncode == 2
    assert (f"{conf}:3: unknown mephisto/blueprint 'questions' in the defaults list (available: "
            "arena, behavior_analysis_blueprint, dialogue_collection, static_annotation); a "
            "plug-in's is there once its distribution is installed") in refused.stderr
    refused = _welcome(tmp_path, conf)
    assert refused.returncode == 2
    assert f"{conf}:7: unknown key 'mephisto.blueprint.anotators'" in refused.stderr
    conf.write_text(conf.read_text().replace("anotators", "annotators"))
    refused = _welcome(tmp_path, conf, "mephisto.blueprint.annotators=two")
    assert refused.returncode == 2
    assert "'mephisto.blueprint.annotators' must be a whole number, got 'two'" in refused.stderr


def test_a_plugin_metric_is_listed_and_computed(tmp_path, plugin_site):
    listed = _cli(tmp_path, "evaluate", "--list-metrics")
    assert listed.returncode == 0, listed.stderr
    assert any(line.startswith("exclamations ") and "Exclamation marks per response." in line
               for line in listed.stdout.splitlines())
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"hypothesis": text, "tags": {"bot": bot}}) + "\n"
                                   for text, bot in (("Hi!", "a"), ("Wow!!!", "b"), ("ok", "b"))))
    out = tmp_path / "results.json"
    done = _cli(tmp_path, "evaluate", "--input", str(predictions), "--metrics",
                "exclamations", "--output", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())["metrics"]["exclamations"]
    assert result["value"] == pytest.approx(4 / 3)
    assert result["by_tag"]["bot"]["groups"]["b"]["value"] == pytest.approx(1.5)


def test_a_model_opts_naming_a_plugin_bot_kind_builds_it_and_it_chats(tmp_path, plugin_site):
    opts = tmp_path / "model_opts.yaml"
    opts.write_text("loud: {type: shout, suffix: '!!'}\n")
    conf = tmp_path / "chat.yaml"
    conf.write_text(
        "#@package _global_\ndefaults:\n  - /mephisto/blueprint: dialogue_collection\n"
        f"mephisto:\n  architect:\n    hostname: 127.0.0.1\n"
        f"  blueprint:\n    model_opt_path: {opts}\n    conversations_needed_string: 'loud:1'\n"
        "    num_turns: 1\n  task:\n    task_name: chat\n")
    port = free_port()
    run = Running(tmp_path, port, str(conf))
    try:
        run.wait_for(r"progress: 0/1 units completed")
        base = f"http://127.0.0.1:{port}"
        claim = http_post(f"{base}/api/claim", json={"worker_id": "w",
                                                      "assignment_id": "1"}).json()
        headers = {"Authorization": f"Bearer {claim['token']}"}
        started = http_post(f"{base}/api/chat/{claim['unit_id']}/start", json={},
                            headers=headers)
        assert started.status_code == 200, started.text
        deadline = time.monotonic() + 20
        while True:
            unit = http_get(f"{base}/api/units/{claim['unit_id']}", headers=headers).json()
            messages = unit["chat"]["conversations"][0]["messages"]
            if any(m["role"] == "bot" for m in messages) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert [(m["role"], m["text"]) for m in messages] == [("worker", "Hi!"),
                                                               ("bot", "HI!!!")]
    finally:
        run.process.send_signal(signal.SIGINT)
        run.process.wait(30)


def test_a_plugin_that_fails_to_load_or_takes_a_built_in_name_is_named(tmp_path, plugin_site):
    install(plugin_site, name="cep-broken-plugin", entry_points={
        "collection_and_annotations.providers": {"gone": "cep_test_plugin.missing:Provider"}})
    refused = _welcome(tmp_path, "demo")
    assert refused.returncode == 2
    assert ("error: provider plug-in 'gone = cep_test_plugin.missing:Provider' (distribution "
            "cep-broken-plugin) failed to load: ModuleNotFoundError: No module named "
            "'cep_test_plugin.missing'") in refused.stderr

    shutil.rmtree(plugin_site / "cep_broken_plugin-0.1.dist-info")
    install(plugin_site, name="cep-clashing-plugin", entry_points={
        "collection_and_annotations.task_kinds": {"static_annotation":
                                                  "cep_test_plugin.kind:Questions"}})
    refused = _welcome(tmp_path, "demo")
    assert refused.returncode == 2
    assert ("error: task kind 'static_annotation' is already registered (built in); give the "
            "one of plug-in 'static_annotation = cep_test_plugin.kind:Questions' (distribution "
            "cep-clashing-plugin) another name") in refused.stderr
    assert not (tmp_path / "data").exists()


def _welcome(tmp_path: Path, conf: str | Path, *overrides: str,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "welcome.py"), f"conf={conf}", f"data_dir={tmp_path / 'data'}",
         f"mephisto.architect.port={free_port()}", *overrides],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "collection_and_annotations", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
