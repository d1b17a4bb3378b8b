"""Launching a chat task: what a user sees for bots that are down or misnamed."""

from __future__ import annotations

import signal

from chat_helpers import write_chat_conf
from helpers import Running, free_port, welcome


def test_an_endpoint_that_is_down_at_launch_is_a_warning_not_a_refusal(tmp_path):
    down = free_port()  # nothing listens there
    opts = (f"remote: {{type: openai, base_url: 'http://127.0.0.1:{down}/v1', model: m, "
            "timeout: 2}\n")
    conf = write_chat_conf(tmp_path, "remote:2", opts)
    server = Running(tmp_path, free_port(), str(conf), "mephisto.architect.hostname=127.0.0.1")
    try:
        server.wait_for("press Ctrl-C to stop", timeout=60)
        warning = next(line for line in server.lines if "bot 'remote'" in line)
        assert warning.startswith("warning:") and "unreachable" in warning
    finally:
        server.process.send_signal(signal.SIGINT)
        server.process.wait(30)


def test_an_unknown_nickname_fails_before_anything_is_written(tmp_path):
    conf = write_chat_conf(tmp_path, "parrot:2,parot:1", "parrot: {type: demo, name: parrot}\n")
    done = welcome(f"conf={conf}", f"data_dir={tmp_path / 'data'}",
                   f"mephisto.architect.port={free_port()}", cwd=tmp_path)
    assert done.returncode == 2
    assert "'parot'" in done.stderr and "parrot" in done.stderr
    assert not (tmp_path / "data" / "cep.sqlite3").exists()
