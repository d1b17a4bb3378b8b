"""Qualification rows and the `quals` command, on SQLite and PostgreSQL; a block given with
the command is honoured at the next claim."""

from __future__ import annotations

from click.testing import CliRunner
from helpers import app_client

from collection_and_annotations.cli import main
from collection_and_annotations.quality import qualifications
from collection_and_annotations.storage.database import Database


def _quals(database_url: str, *args: str):
    return CliRunner().invoke(main, ["quals", *args, "--database-url", database_url])


def test_grant_list_revoke_block_unblock(database_url):
    Database(database_url).migrate()
    assert _quals(database_url, "grant", "consistency_screen", "w1").exit_code == 0
    assert _quals(database_url, "grant", "consistency_screen", "w1", "--value", "3"
                  ).exit_code == 0  # a re-grant updates the value, no duplicate row
    listed = _quals(database_url, "list")
    assert "consistency_screen\tlocal:w1\t3\t" in listed.output
    assert _quals(database_url, "block", "w2", "--name", "consistency_block").exit_code == 0
    assert "consistency_block\tlocal:w2" in _quals(database_url, "list", "--worker", "w2").output
    assert _quals(database_url, "unblock", "w2", "--name", "consistency_block").exit_code == 0
    assert "w2" not in _quals(database_url, "list").output
    assert _quals(database_url, "revoke", "consistency_screen", "w1").exit_code == 0
    missing = _quals(database_url, "revoke", "consistency_screen", "w1")
    assert missing.exit_code != 0 and "does not hold" in missing.output
    neither = _quals(database_url, "block", "w3")
    assert neither.exit_code != 0 and "--task" in neither.output


def test_block_by_task_is_honoured_at_claim(cep_fixtures, open_conf, database_url):
    from collection_and_annotations.providers.local import link_signature
    from collection_and_annotations.server.app import create_app

    conf = cep_fixtures / "hydra_configs" / "conf" / "consistency.yaml"
    served = open_conf(str(conf), database_url, f"task_dir={cep_fixtures}")
    client = app_client(create_app(served))
    result = _quals(database_url, "block", "blocked_one", "--task", "consistency")
    assert result.exit_code == 0 and "consistency_block" in result.output
    reply = client.post("/api/claim", json={
        "worker_id": "blocked_one", "assignment_id": "a",
        "sig": link_signature(served.secret, "blocked_one", "a")})
    assert reply.status_code == 403 and "not eligible" in reply.json()["error"]
    with served.db.transaction() as connection:  # shared by name, across tasks
        assert [g.qualification for g in qualifications.grants(
            connection, provider_worker_id="blocked_one")] == ["consistency_block"]
