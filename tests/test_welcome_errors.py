"""`python welcome.py` refuses bad input with file, line and reason, exit 2, and writes nothing."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from chat_helpers import write_chat_conf
from helpers import BUCKETS, REPO, Running, dialogue, free_port, welcome, write_task
from sqlalchemy import create_engine, text

LINES = [{"data": [dialogue("d1", "g1", ["relevance"])]},
         {"data": [dialogue("d2", "g2", ["overall_quality"])]}]


def _fails(conf: Path, tmp_path: Path, *extra: str) -> str:
    """Exit 2 without a traceback, and nothing left behind: no data directory or database
    file created; returns stderr."""
    data, database = tmp_path / "data", tmp_path / "data" / "cep.sqlite3"
    existed = data.exists(), database.exists()
    defaults = {"data_dir": tmp_path / "data", "mephisto.architect.port": free_port()}
    given = {arg.split("=", 1)[0] for arg in extra}
    result = welcome(f"conf={conf}", *(f"{k}={v}" for k, v in defaults.items() if k not in given),
                     *extra, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert existed[0] or not data.exists(), result.stderr
    assert existed[1] or not database.exists(), result.stderr
    return result.stderr


def test_malformed_json_line_names_its_line(tmp_path):
    raw = [json.dumps(LINES[0]), json.dumps(LINES[1]), '{"data": [ {"dialogue_id": "x",']
    conf = write_task(tmp_path, [], {"g1": 1, "g2": 1}, raw_lines=raw)
    error = _fails(conf, tmp_path)
    assert f"{tmp_path / 't.jsonl'}:3: malformed JSON" in error


def test_unknown_bucket(tmp_path):
    line = {"data": [dialogue("d1", "g1", ["relevanse"])]}
    conf = write_task(tmp_path, [line], {"g1": 1})
    column = json.dumps(line).index('"relevanse"') + 1
    assert f"{tmp_path / 't.jsonl'}:1: column {column}: dialogue 'd1': unknown bucket " \
           "'relevanse'" in _fails(conf, tmp_path)


def test_group_missing_from_units_file(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1})
    error = _fails(conf, tmp_path)
    assert "t_units.json" in error and "group 'g2' (line 2 of t.jsonl) is missing" in error


def test_missing_data_file(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1, "g2": 1})
    (tmp_path / "t.jsonl").unlink()
    assert "t.jsonl: task data file (mephisto.blueprint.data_jsonl) not found" in _fails(
        conf, tmp_path)


def test_unknown_conf_key_is_named(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1, "g2": 1}, task={"task_nmae": "x"})
    assert "unknown key 'mephisto.task.task_nmae'" in _fails(conf, tmp_path)


def test_port_in_use(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1, "g2": 1})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        error = _fails(conf, tmp_path, f"mephisto.architect.port={port}")
    assert f"port {port} on 127.0.0.1 is not free" in error


def test_unreachable_database(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1, "g2": 1})
    error = _fails(conf, tmp_path,
                   "database_url=postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert "cannot reach the database" in error


def test_bad_screening_file_fails_before_launch(cep_fixtures, tmp_path):
    conf = cep_fixtures / "hydra_configs" / "conf" / "consistency.yaml"
    bad = tmp_path / "screen.json"
    bad.write_text('{"t": {"annotation_tasks": ["consistency_label"], "pass_criteria": 1,\n'
                   ' "turns": [["user", "hi"], ["system", "x", {"nope_labels": []}, "e"]]}}')
    error = _fails(conf, tmp_path, f"task_dir={cep_fixtures}",
                   f"mephisto.blueprint.screen_json={bad}")
    assert f"{bad}:1: training dialogue 't': turns[1]: 'nope_labels' is not a question" in error


@pytest.mark.parametrize("argv", [[], ["conf=a", "conf=b"]])
def test_usage(tmp_path, argv):
    result = welcome(*argv, cwd=tmp_path)
    assert result.returncode == 2 and "usage: python welcome.py conf=" in result.stderr


def test_the_process_exits_2_with_the_reason_on_stderr(tmp_path):
    """The tests above run the launch in this process; the real one exits the same way."""
    conf = write_task(tmp_path, LINES, {"g1": 1})
    result = subprocess.run([sys.executable, str(REPO / "welcome.py"), f"conf={conf}",
                             f"data_dir={tmp_path / 'data'}"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: ") and "group 'g2'" in result.stderr, result.stderr
    assert not (tmp_path / "data").exists()


def test_server_refuses_to_start_without_the_built_page(tmp_path):
    from collection_and_annotations.errors import UserError
    from collection_and_annotations.server.app import check_frontend_built

    with pytest.raises(UserError, match="the worker page is not built .* run ./setup.sh"):
        check_frontend_built(tmp_path)


def test_several_server_processes_need_postgres(tmp_path):
    conf = write_task(tmp_path, LINES, {"g1": 1, "g2": 1})
    error = _fails(conf, tmp_path, "mephisto.architect.server_processes=2")
    assert "several server processes" in error and "need PostgreSQL" in error


def _task(tmp_path: Path, **kwargs) -> Path:
    return write_task(tmp_path, LINES, {"g1": 1, "g2": 1}, **kwargs)


def _not_utf8_data(tmp_path: Path) -> tuple[Path, list[str], str]:
    conf = _task(tmp_path)
    data = tmp_path / "t.jsonl"
    data.write_bytes(data.read_bytes().replace(b'"d2"', b'"d\xe92"'))
    return conf, [], f"{data}:2: not UTF-8: byte 0xe9 at column"


def _not_utf8_buckets(tmp_path: Path) -> tuple[Path, list[str], str]:
    buckets = tmp_path / "buckets.json"
    buckets.write_bytes(BUCKETS.read_bytes().replace(b"{", b"{\n\xff", 1))
    return _task(tmp_path), [f"mephisto.blueprint.annotations_config_path={buckets}"], \
        f"{buckets}:2: not UTF-8: byte 0xff at column 1"


def _not_utf8_units(tmp_path: Path) -> tuple[Path, list[str], str]:
    conf = _task(tmp_path)
    (tmp_path / "t_units.json").write_bytes(b'{"g1": 1,\n "g2\xc3": 1}')
    return conf, [], f"{tmp_path / 't_units.json'}:2: not UTF-8"


def _not_utf8_blocklist(tmp_path: Path) -> tuple[Path, list[str], str]:
    blocked = tmp_path / "blocked.txt"
    blocked.write_bytes(b"w1\nw\xff2\n")
    return _task(tmp_path), [f"mephisto.blueprint.worker_blocklist_paths={blocked}"], \
        f"{blocked}:2: not UTF-8"


def _not_utf8_model_opts(tmp_path: Path) -> tuple[Path, list[str], str]:
    conf = write_chat_conf(tmp_path, "parrot:1", "# the bots\nparrot: {type: demo, name: parrot}\n")
    opts = tmp_path / "model_opts.yaml"
    opts.write_bytes(opts.read_bytes().replace(b"parrot:", b"parr\xf6t:"))
    return conf, [], f"{opts}:2: not UTF-8: byte 0xf6 at column 5"


def _not_utf8_offensive_words(tmp_path: Path) -> tuple[Path, list[str], str]:
    conf = write_chat_conf(tmp_path, "parrot:1", "parrot: {type: demo, name: parrot}\n")
    words = tmp_path / "offensive.txt"
    words.write_bytes(b"darn\nd\xe4mn\n")
    return conf, ["mephisto.blueprint.check_acceptability=true",
                  f"mephisto.blueprint.offensive_words_path={words}"], f"{words}:2: not UTF-8"


def _not_utf8_instructions(tmp_path: Path) -> tuple[Path, list[str], str]:
    folder = tmp_path / "instructions"
    folder.mkdir()
    (folder / "relevance.md").write_bytes(b"# Relevance\n\nIs it on topic\xa0?\n")
    return _task(tmp_path), [f"mephisto.blueprint.instructions_dir={folder}"], \
        f"{folder / 'relevance.md'}:3: not UTF-8"


def _completion_url_in_file(tmp_path: Path) -> tuple[Path, list[str], str]:
    conf = _task(tmp_path)
    text = conf.read_text().replace("  task:\n", "  provider:\n    _provider_type: external\n"
                                    "    completion_url: https://x.org/{cc}\n  task:\n")
    conf.write_text(text)
    line = text.splitlines().index("    completion_url: https://x.org/{cc}") + 1
    return conf, [], f"{conf}:{line}: mephisto.provider.completion_url='https://x.org/{{cc}}' " \
                     "has the placeholder {cc}"


def _speaker_names_list_in_file(tmp_path: Path) -> tuple[Path, list[str], str]:
    conf = _task(tmp_path)
    text = conf.read_text().replace("  blueprint:\n", "  blueprint:\n    speaker_names: [a, b]\n")
    conf.write_text(text)
    return conf, [], (f"{conf}:{text.splitlines().index('    speaker_names: [a, b]') + 1}: "
                      "'mephisto.blueprint.speaker_names' must be a mapping such as "
                      "{SPEAKER_X: Bot, SPEAKER_Y: User}, not a list")


def _one_id_two_dialogues(tmp_path: Path) -> tuple[Path, list[str], str]:
    other = dialogue("d1", "g2", ["overall_quality"])
    other["turns"][0][1] = "another first turn"
    conf = write_task(tmp_path, [LINES[0], {"data": [other]}], {"g1": 1, "g2": 1})
    return conf, [], (f"{tmp_path / 't.jsonl'}:2: dialogue 'd1' is not the dialogue of the same "
                      "id on line 1: one dialogue_id must name one dialogue")


def _corrupt_sqlite(tmp_path: Path) -> tuple[Path, list[str], str]:
    (tmp_path / "data").mkdir()
    database = tmp_path / "data" / "cep.sqlite3"
    database.write_bytes(os.urandom(8192))
    return _task(tmp_path), [], f"{database}: this is not an SQLite database"


def _no_task_name(tmp_path: Path) -> tuple[Path, list[str], str]:
    conf = _task(tmp_path)
    conf.write_text(conf.read_text().replace('    task_name: "t"\n', ""))
    return conf, [], f"{conf}: 'mephisto.task.task_name' is required"


def _wrong_type_in_file(tmp_path: Path) -> tuple[Path, list[str], str]:
    conf = _task(tmp_path, task={"allowed_concurrent": "abc"})
    line = conf.read_text().splitlines().index('    allowed_concurrent: "abc"') + 1
    return conf, [], (f"{conf}:{line}: 'mephisto.task.allowed_concurrent' must be a whole "
                      "number, got 'abc'")


def _data_dir_is_a_file(tmp_path: Path) -> tuple[Path, list[str], str]:
    (tmp_path / "file").write_text("")
    return _task(tmp_path), [f"data_dir={tmp_path / 'file'}"], \
        f"{tmp_path / 'file'}: cannot create the data directory"


def _data_dir_under_a_file(tmp_path: Path) -> tuple[Path, list[str], str]:
    (tmp_path / "file").write_text("")
    return _task(tmp_path), [f"data_dir={tmp_path / 'file' / 'data'}"], \
        "cannot create the data directory (Not a directory); set data_dir to a writable"


def _too_many_annotators(tmp_path: Path) -> tuple[Path, list[str], str]:
    conf = write_task(tmp_path, LINES, {"g1": 1_000_000, "g2": 1})
    return conf, [], "group 'g1' asks for 1,000,000 annotators; at most 10,000 per group"


def _too_many_units(tmp_path: Path) -> tuple[Path, list[str], str]:
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", ["relevance"])]} for i in range(101)]
    conf = write_task(tmp_path, lines, {f"g{i}": 10_000 for i in range(101)})
    return conf, [], "the task would have 1,010,000 units (data lines x annotators); at most " \
                     "1,000,000"


def _cli(*args: str, expected: str):
    return lambda tmp_path: (_task(tmp_path), list(args), expected)


_PORT_RANGE = "is out of range: it must be from 1 to 65535 (set on the command line)"
_NO_LIMIT = "is out of range: it must be 0 (no limit) or more"
_DURATION = "is out of range: it must be from 0 (no limit) to 315360000"
CASES = {
    "data-not-utf8": _not_utf8_data,
    "buckets-not-utf8": _not_utf8_buckets,
    "units-not-utf8": _not_utf8_units,
    "blocklist-not-utf8": _not_utf8_blocklist,
    "model-opts-not-utf8": _not_utf8_model_opts,
    "offensive-words-not-utf8": _not_utf8_offensive_words,
    "instructions-not-utf8": _not_utf8_instructions,
    "corrupt-sqlite": _corrupt_sqlite,
    "one-id-two-dialogues": _one_id_two_dialogues,
    "completion-url-in-file": _completion_url_in_file,
    "speaker-names-list-in-file": _speaker_names_list_in_file,
    "speaker-names-list": _cli("mephisto.blueprint.speaker_names=[a, b]", expected=(
        "'mephisto.blueprint.speaker_names' must be a mapping such as {SPEAKER_X: Bot, "
        "SPEAKER_Y: User}, not a list (set on the command line)")),
    "speaker-names-new-key": _cli("mephisto.blueprint.speaker_names={user: Worker}", expected=(
        "'mephisto.blueprint.speaker_names' has no key 'user' in this conf (it has SPEAKER_X, "
        "SPEAKER_Y); on the command line a new key of a mapping takes a leading '+': "
        "+mephisto.blueprint.speaker_names.user=<value>")),
    "completion-url-unquoted": _cli(
        "mephisto.provider._provider_type=external",
        "mephisto.provider.completion_url=https://x.org/done?c={code}", expected=(
            "cannot read the command-line override 'mephisto.provider.completion_url=https://"
            "x.org/done?c={code}' (mismatched input '=' expecting <EOF>): in a value, Hydra "
            "reads { } [ ] , = and spaces as structure, so put the value in quotes, and the "
            "whole argument in quotes again for the shell: 'mephisto.provider.completion_url="
            "\"https://x.org/done?c={code}\"'")),
    "comma-in-a-value": _cli("mephisto.task.task_title=Rate, then relax", expected=(
        "a ',' in a value makes a list or a sweep")),
    "allowed-hosts-not-a-list": _cli("mephisto.architect.allowed_hosts=eval.lan", expected=(
        "'mephisto.architect.allowed_hosts' must be a list such as [a, b], not a single "
        "value (set on the command line)")),
    "no-task-name": _no_task_name,
    "wrong-type-in-file": _wrong_type_in_file,
    "data-dir-is-a-file": _data_dir_is_a_file,
    "data-dir-under-a-file": _data_dir_under_a_file,
    "too-many-annotators": _too_many_annotators,
    "too-many-units": _too_many_units,
    **{f"port={port}": _cli(f"mephisto.architect.port={port}",
                            expected=f"mephisto.architect.port={port} {_PORT_RANGE}")
       for port in (70000, 0, -1)},
    "port=abc": _cli("mephisto.architect.port=abc", expected=(
        "'mephisto.architect.port' must be a whole number, got 'abc' (set on the command line)")),
    "allowed_concurrent=abc": _cli("mephisto.task.allowed_concurrent=abc", expected=(
        "'mephisto.task.allowed_concurrent' must be a whole number, got 'abc'")),
    **{f"{key}={value}": _cli(f"mephisto.task.{key}={value}",
                              expected=f"mephisto.task.{key}={value} {valid}")
       for key, value, valid in (("allowed_concurrent", -1, _NO_LIMIT),
                                 ("maximum_units_per_worker", -5, _NO_LIMIT),
                                 ("max_num_concurrent_units", -1, _NO_LIMIT),
                                 ("assignment_duration_in_seconds", -1, _DURATION))},
    "unknown-hostname": _cli("mephisto.architect.hostname=no.such.host.invalid", expected=(
        "cannot resolve hostname 'no.such.host.invalid'")),
    "provider-prolific-no-token": _cli("mephisto.provider._provider_type=prolific", expected=(
        "the prolific provider needs an API token: set PROLIFIC_TOKEN")),
    "provider-mturk-no-credentials": _cli("mephisto.provider._provider_type=mturk", expected=(
        "the mturk provider needs AWS credentials")),
    "public-url-no-scheme": _cli("mephisto.architect.public_url=eval.example.org", expected=(
        "mephisto.architect.public_url='eval.example.org' is not a web address")),
    "public-url-with-path": _cli("mephisto.architect.public_url=https://example.org/eval",
                                 expected="has a path, query or fragment: the server is served "
                                          "at the root of its host"),
    "trusted-proxy-not-an-address": _cli("mephisto.architect.trusted_proxies=[proxy.lan]",
                                         expected="'proxy.lan' is not an IP address or network"),
    **{f"completion-url-{name}": _cli(
        "mephisto.provider._provider_type=external",
        f"mephisto.provider.completion_url='{url}'",
        expected=f"mephisto.provider.completion_url={url!r} {reason}")
       for name, url, reason in (
           ("unknown-placeholder", "https://x.org/done?c={code}&p={participant}",
            "has the placeholder {participant}, which is not one of {code}, {worker_id}, "
            "{session_id}"),
           ("stray-brace", "https://x.org/done?c={code", "has a '{' or '}' that opens or "
                                                          "closes no placeholder"),
           ("format-spec", "https://x.org/done?c={code:>20}", "has the placeholder {code:>20}"),
           ("not-a-web-address", "crowd.example/done?c={code}", "must be a web address"))},
    "architect-heroku": _cli("mephisto.architect._architect_type=heroku", expected=(
        "mephisto.architect._architect_type='heroku' is not supported yet")),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_input_exits_2_with_where_and_what(tmp_path, case):
    conf, extra, expected = CASES[case](tmp_path)
    error = _fails(conf, tmp_path, *extra)
    assert expected in error, error


def _foreign_units_table(connection) -> str:
    connection.execute(text("CREATE TABLE units (sku TEXT, price INTEGER)"))
    return "is not ours: it holds tables named units"


def _newer_revision(connection) -> str:
    connection.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
    connection.execute(text("INSERT INTO alembic_version VALUES ('9999_from_the_future')"))
    return "was migrated by a newer version of this software (schema revision " \
           "9999_from_the_future is unknown here): upgrade the software"


@pytest.mark.parametrize("prepare", [_foreign_units_table, _newer_revision])
def test_database_that_is_not_ours_or_newer(tmp_path, empty_database_url, prepare):
    engine = create_engine(empty_database_url)
    with engine.begin() as connection:
        expected = prepare(connection)
        before = sorted(r[0] for r in connection.execute(text(
            "SELECT name FROM sqlite_master WHERE type='table'" if empty_database_url.startswith(
                "sqlite") else "SELECT tablename FROM pg_tables WHERE schemaname='public'")))
    error = _fails(_task(tmp_path), tmp_path, f"database_url={empty_database_url}")
    assert expected in error and "use another database" in error, error
    with engine.connect() as connection:  # nothing was added
        after = sorted(r[0] for r in connection.execute(text(
            "SELECT name FROM sqlite_master WHERE type='table'" if empty_database_url.startswith(
                "sqlite") else "SELECT tablename FROM pg_tables WHERE schemaname='public'")))
    engine.dispose()
    assert after == before


def test_a_dialogue_asked_one_bucket_in_two_groups_is_served_with_a_warning(tmp_path):
    """The original allowed one dialogue in several groups (its likert_turn data asks another
    bucket in each); asking the same bucket in two groups is warned about, and served."""
    lines = [{"data": [dialogue("d1", "g1", ["relevance", "overall_quality"])]},
             {"data": [dialogue("d1", "g2", ["overall_quality"])]},
             {"data": [dialogue("d1", "g3", ["facts"])]}]
    conf = write_task(tmp_path, lines, {"g1": 1, "g2": 1, "g3": 1})
    server = Running(tmp_path, free_port(), str(conf))
    try:
        server.wait_for("press Ctrl-C to stop")
        warned = [line for line in server.lines if "is asked" in line]
        assert warned == [f"warning: {tmp_path / 't.jsonl'}:2: dialogue 'd1' is asked "
                          "'overall_quality' in group 'g2' and, on line 1, in group 'g1': a "
                          "worker may be given it in each group and answer it twice; ask each "
                          "bucket of a dialogue in one group\n"]
        assert any("3 units" in line for line in server.lines)
    finally:
        server.process.send_signal(signal.SIGINT)
        server.process.wait(30)


def test_missing_units_file_is_a_warning_naming_where_it_looked(tmp_path):
    conf = write_task(tmp_path, LINES, None)
    with socket.socket() as taken:  # stop the launch right after the files are read
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        error = _fails(conf, tmp_path, "mephisto.task.task_name=other",
                       f"mephisto.architect.port={taken.getsockname()[1]}")
    assert (f"warning: no units file for {tmp_path / 't.jsonl'} (looked for "
            f"{tmp_path / 'other_units.json'} and {tmp_path / 't_units.json'}): every group "
            "gets one annotator") in error, error
    assert error.count("warning: no units file") == 1
