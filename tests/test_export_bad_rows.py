"""Rows stored before input was checked (NaN, lone surrogates) never break an export."""

from __future__ import annotations

import csv
import io
import json

from helpers import app_client, cli, dialogue, write_task
from sqlalchemy import text
from test_export import _submit_one

from collection_and_annotations.server.app import create_app
from collection_and_annotations.server.auth import requester_token


def _strict(line: str):
    return json.loads(line, parse_constant=lambda name: (_ for _ in ()).throw(
        AssertionError(f"{name} written: {line}")))


def _store_bad_row(served, database_url: str) -> None:
    """A second submission whose answers hold a lone surrogate (and NaN where SQLite allows)."""
    _submit_one(served, "alice")
    _submit_one(served, "bob")
    nan = "NaN" if database_url.startswith("sqlite") else "1"  # PostgreSQL's json refuses NaN
    with served.db.engine.begin() as connection:
        answers = connection.execute(text("SELECT answers FROM submissions ORDER BY id DESC"
                                          " LIMIT 1")).scalar_one()
        raw = answers if isinstance(answers, str) else json.dumps(answers)
        raw = raw.replace('"off_topic"', '"off_topic \\ud800"')
        connection.execute(text(
            "UPDATE submissions SET answers = :answers, timings = :timings WHERE id = "
            "(SELECT max(id) FROM submissions)"),
            {"answers": raw, "timings": '{"client": {"ms": ' + nan + '}, "server": {}}'})


def test_cli_and_api_exports_survive_bad_rows(tmp_path, database_url, open_conf):
    tasks = ["relevance", "issues", "overall_quality"]
    conf = write_task(tmp_path, [{"data": [dialogue("d1", "g1", tasks)]}], {"g1": 2})
    served = open_conf(str(conf), database_url)
    _store_bad_row(served, database_url)

    outputs = {}
    for fmt in ("csv", "jsonl", "submissions"):
        result = cli("export", "--task", "t", "--database-url", database_url, "--format", fmt,
                     "-o", str(tmp_path / fmt))
        assert result.returncode == 0, result.stderr
        outputs[fmt] = (tmp_path / fmt).read_text(encoding="utf-8")

    client = app_client(create_app(served))
    auth = {"Authorization": f"Bearer {requester_token(served.secret)}"}
    for fmt in ("csv", "jsonl", "items-jsonl", "json"):
        reply = client.get(f"/api/requester/submissions?format={fmt}", headers=auth)
        assert reply.status_code == 200, reply.text
        outputs[f"api-{fmt}"] = reply.content.decode("utf-8")

    for name in ("jsonl", "submissions", "api-jsonl", "api-items-jsonl"):
        records = [_strict(line) for line in outputs[name].splitlines()]
        assert len(records) >= 2, name
        assert "off_topic \ufffd" in json.dumps(records, ensure_ascii=False), name
    whole = [_strict(line) for line in outputs["submissions"].splitlines()]
    assert whole[-1]["timings"]["client"]["ms"] in (None, 1)
    _strict(outputs["api-json"])
    for name in ("csv", "api-csv"):
        rows = list(csv.DictReader(io.StringIO(outputs[name])))
        assert any("off_topic \ufffd" in row["answer"] for row in rows), name
