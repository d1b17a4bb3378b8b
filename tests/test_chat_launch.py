"""Launching a chat task: what a user sees for bots that are down or misnamed."""

from __future__ import annotations

import signal
import subprocess
import sys

from helpers import REPO, Running, free_port


def _conf(folder, opts: str, needed: str):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model_opts.yaml").write_text(opts)
    conf = folder / "chat.yaml"
    conf.write_text(
        "#@package _global_\n"
        "defaults:\n  - /mephisto/blueprint: dialogue_collection\n"
        "mephisto:\n  architect:\n    hostname: 127.0.0.1\n"
        f"  blueprint:\n    model_opt_path: {folder / 'model_opts.yaml'}\n"
        f"    conversations_needed_string: \"{needed}\"\n"
        "  task:\n    task_name: chat\n")
    return conf


def test_an_endpoint_that_is_down_at_launch_is_a_warning_not_a_refusal(tmp_path):
    down = free_port()  # nothing listens there
    conf = _conf(tmp_path, f"remote: {{type: openai, base_url: 'http://127.0.0.1:{down}/v1', "
                           "model: m, timeout: 2}\n", "remote:2")
    server = Running(tmp_path, free_port(), str(conf), "mephisto.architect.hostname=127.0.0.1")
    try:
        server.wait_for("press Ctrl-C to stop", timeout=60)
        warning = next(line for line in server.lines if "bot 'remote'" in line)
        assert warning.startswith("warning:") and "unreachable" in warning
    finally:
        server.process.send_signal(signal.SIGINT)
        server.process.wait(30)


def test_an_unknown_nickname_fails_before_anything_is_written(tmp_path):
    conf = _conf(tmp_path, "parrot: {type: demo, name: parrot}\n", "parrot:2,parot:1")
    done = subprocess.run(
        [sys.executable, str(REPO / "welcome.py"), f"conf={conf}",
         f"data_dir={tmp_path / 'data'}", f"mephisto.architect.port={free_port()}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "'parot'" in done.stderr and "parrot" in done.stderr
    assert not (tmp_path / "data" / "cep.sqlite3").exists()
