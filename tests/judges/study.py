"""A small static study for the judge tests: dialogues of three bots whose bot turns carry
their truth as markers (`#off_topic`, `#quality=4`, see fake_judge.py), people who annotate
it through the worker API with their own mistakes, and the `judge` command in a subprocess."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from chat_helpers import auth
from helpers import BUCKETS as BUCKETS_FILE
from helpers import cli, http_client, write_task

from collection_and_annotations.blueprints import build_blueprint
from collection_and_annotations.cli.run import open_task
from collection_and_annotations.config.loader import load_run_config
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.storage.database import Database

LABELS = ["off_topic", "repetitive", "rude"]
BOTS = {"alpha": {"off_topic": 0.1, "repetitive": 0.3, "rude": 0.05},
        "beta": {"off_topic": 0.4, "repetitive": 0.1, "rude": 0.2},
        "gamma": {"off_topic": 0.25, "repetitive": 0.2, "rude": 0.1}}
QUALITY = {"alpha": 4, "beta": 2, "gamma": 3}
BUCKETS = {"config": {
    "labels": {"config": "multiselect", "indices": "system",
               "question": "Which labels apply to SPEAKER_X's reply?",
               "options": [{"value": v, "label": v.replace("_", " ")} for v in LABELS]},
    "quality": {"config": "likert-5-dialogue", "require": {"level": "dialogue"},
                "options": [{"label": "Quality", "question": "How good a partner was SPEAKER_X?"}]},
    "preference": {"config": "comparative", "require": {"level": "dialogue"},
                   "question": "Which partner was better?",
                   "options": ["Dialogue 1 (left)", "Dialogue 2 (right)", "No difference"]},
}}
KEY_ENV = "JUDGE_TEST_KEY"
KEY = "sk-test-9f8e7d6c5b4a-never-stored"


def _turns(bot: str, rng: random.Random, index: int) -> list[list[str]]:
    turns = []
    for turn in range(3):
        turns.append(["user", f"Question {turn} of dialogue {index}?"])
        marks = [f"#{label}" for label in LABELS if rng.random() < BOTS[bot][label]]
        turns.append(["system", f"Reply {turn} from {bot} in dialogue {index}. "
                                + " ".join(marks)])
    quality = min(5, max(1, QUALITY[bot] + rng.choice((-1, 0, 0, 1))))
    turns[-1][1] += f" #Quality={quality}"
    return turns


def write_study(folder: Path, dialogues: int, judge_url: str, annotators: int = 3,
                pairs: int = 0, seed: int = 1, **task: Any) -> Path:
    """The conf of a study of `dialogues` dialogues (one a unit, bots in turn) and `pairs`
    comparisons, with a model_opts.yaml naming the fake judge `gpt` (and `cmd`, a command
    judge)."""
    rng = random.Random(seed)
    lines = []
    bots = list(BOTS)
    for i in range(dialogues):
        bot = bots[i % len(bots)]
        lines.append({"data": [{"dialogue_id": f"d{i}", "group_id": f"g{i}", "bot": bot,
                                "annotation_tasks": ["labels", "quality"],
                                "turns": _turns(bot, rng, i)}]})
    for i in range(pairs):
        first, second = bots[i % 3], bots[(i + 1) % 3]
        left, right = _turns(first, rng, 1000 + i), _turns(second, rng, 2000 + i)
        better = left if QUALITY[first] > QUALITY[second] else right
        better[-1][1] += " #better"
        lines.append({"data": [{"dialogue_id": f"p{i}", "group_id": f"gp{i}", "bot": first,
                                "bot2": second, "annotation_tasks": ["preference"],
                                "turns": left, "turns2": right}]})
    units = {line["data"][0]["group_id"]: annotators for line in lines}
    conf = write_task(folder, lines, units, task=task)
    buckets = folder / "buckets.json"
    buckets.write_text(json.dumps(BUCKETS))
    opts = folder / "model_opts.yaml"
    opts.write_text(textwrap.dedent(f"""\
        gpt:
          type: openai
          base_url: {judge_url}
          model: fake-judge-1
          api_key_env: {KEY_ENV}
          params: {{temperature: 0}}
          retries: 3
          backoff: 0.01
        cmd:
          type: command
          command: [{sys.executable}, {Path(__file__).with_name('command_judge.py')}]
        parrot:
          type: demo
          name: parrot
        """))
    text = conf.read_text().replace(f"annotations_config_path: {BUCKETS_FILE}",
                                    f"annotations_config_path: {buckets}\n"
                                    f"    model_opt_path: {opts}")
    conf.write_text(text)
    return conf


def open_study(conf: Path, database_url: str, tmp_path: Path) -> ServedTask:
    """The conf's run, as `welcome.py` opens it (the `open_conf` fixture, for a module's
    study); dispose of its database when done."""
    loaded = load_run_config(str(conf), [f"database_url={database_url}",
                                         f"data_dir={tmp_path / 'data'}"])
    return open_task(loaded.config, str(loaded.path), Database(database_url),
                     build_blueprint(loaded.config))


def truth_of(text: str) -> list[str]:
    return [label for label in LABELS if f"#{label}" in text]


def annotate(base: str, workers: int, mistakes: float, seed: int = 7) -> int:
    """`workers` people each take every unit they may and answer with the truth, each label
    and rating wrong with probability `mistakes`; returns the units submitted."""
    rng = random.Random(seed)
    submitted = 0
    with http_client(base_url=base, timeout=30) as client:
        for w in range(workers):
            visit = 0
            while True:
                visit += 1
                claimed = client.post("/api/claim", json={"worker_id": f"person{w}",
                                                          "assignment_id": f"v{visit}"})
                if claimed.status_code != 200:
                    break
                unit_id, headers = claimed.json()["unit_id"], auth(claimed.json()["token"])
                unit = client.get(f"/api/units/{unit_id}", headers=headers).json()
                answers = {d["key"]: _answers(d, unit["buckets"], rng, mistakes)
                           for d in unit["dialogues"]}
                reply = client.post(f"/api/units/{unit_id}/submit", headers=headers,
                                    json={"answers": answers})
                assert reply.status_code == 200, reply.text
                submitted += 1
    return submitted


def _answers(dialogue: dict[str, Any], buckets: dict[str, Any], rng: random.Random,
             mistakes: float) -> dict[str, Any]:
    found: dict[str, Any] = {}
    turns = dialogue["turns"]
    for name in dialogue["annotation_tasks"]:
        if name == "labels":
            found[name] = {
                str(t): [v for v in LABELS if (v in truth_of(turns[t]["text"]))
                         != (rng.random() < mistakes)]
                for t in buckets[name]["targets"][dialogue["key"]]}
        elif name == "quality":
            marked = int(turns[-1]["text"].split("#Quality=")[1][0])
            if rng.random() < mistakes:
                marked = marked + 1 if marked < 5 else marked - 1
            found[name] = {"dialogue": {"Quality": marked}}
        else:
            left = "#better" in " ".join(t["text"] for t in turns)
            options = buckets[name]["options"]
            found[name] = {"dialogue": options[0] if left != (rng.random() < mistakes)
                           else options[1]}
    return found


def judge_command(database_url: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "collection_and_annotations", "judge", "--task", "t",
            "--database-url", database_url, *args]


def judge_env() -> dict[str, str]:
    return {**os.environ, KEY_ENV: KEY}


def run_judge(tmp_path: Path, database_url: str, *args: str,
              key: bool = True) -> subprocess.CompletedProcess[str]:
    """The `judge` command on task `t` in this process, the key in the environment or not."""
    return cli("judge", "--task", "t", "--database-url", database_url, *args, cwd=tmp_path,
               env={KEY_ENV: KEY if key else None})
