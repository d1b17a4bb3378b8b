"""`required_qualifications`: a study runs the static kind's screening task first and gates
its arena task on the qualification that screening grants (rows shared by name)."""

from __future__ import annotations

from arena_helpers import write_arena_conf
from chat_helpers import ChatServer, ScriptedBot
from helpers import app_client
from quality_helpers import pool_of

from collection_and_annotations.providers.local import link_signature
from collection_and_annotations.quality import qualifications
from collection_and_annotations.server.app import create_app


def test_the_arena_waits_for_the_screening_task_s_qualification(tmp_path, cep_fixtures,
                                                                open_conf):
    url = f"sqlite:///{tmp_path / 'cep.sqlite3'}"
    screening = open_conf(str(cep_fixtures / "hydra_configs" / "conf" / "consistency.yaml"),
                          url, f"task_dir={cep_fixtures}")
    passed = screening.blueprint.quality.passed  # consistency_screen
    bots = {name: ScriptedBot(name, delay=0.0) for name in ("alpha", "beta")}
    arena = ChatServer(tmp_path / "arena", write_arena_conf(
        tmp_path, ["alpha", "beta"], extra=f"    required_qualifications: [{passed}]\n"),
        bots, database_url=url)
    try:
        refused = arena.client.post("/api/claim", json={"worker_id": "new",
                                                         "assignment_id": "1"})
        assert refused.status_code == 403, refused.text
        said = refused.json()["error"]
        assert f"'{passed}'" in said and "screening task" in said and "finish" in said
        # the same worker in the screening task gets its training unit, passes, and the
        # arena's link now gives a battle
        client = app_client(create_app(screening))
        claimed = client.post("/api/claim", json={
            "worker_id": "new", "assignment_id": "s1",
            "sig": link_signature(screening.secret, "new", "s1")})
        assert pool_of(screening, claimed.json()["unit_id"]) == "screening"
        with screening.db.transaction() as connection:
            qualifications.grant(connection, qualifications.worker_id(connection, "local",
                                                                      "new"), passed)
        unit, _token = arena.claim("new", "2")
        assert pool_of(arena.served, unit).startswith("arena_")
        # a worker who never qualified still gets nothing, on every later visit
        assert arena.client.post("/api/claim", json={"worker_id": "other",
                                                      "assignment_id": "3"}).status_code == 403
    finally:
        arena.stop()
