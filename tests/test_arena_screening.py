"""Screening battles: a worker without the passed qualification first gets screening battles
(one at a time, looking like real ones); enough passed grant the qualification and real
battles follow, a failed one uses an attempt and the last blocks; the requester's screening
figures count attempts; screening battles stay out of the battles export."""

from __future__ import annotations

from arena_helpers import play, pool_of, sides, write_arena_conf
from chat_helpers import ChatServer, ScriptedBot, auth

from collection_and_annotations.export.battles import battles
from collection_and_annotations.quality import qualifications
from collection_and_annotations.quality.stats import task_outcomes

SCREENING = ("    use_screening_task: true\n    passed_qualification_name: arena_ok\n"
             "    screening_pairs: ['alpha>dud']\n    screening_battles: 2\n"
             "    screening_attempts: 2\n    bots: [alpha, beta]\n")


def _claim(server: ChatServer, worker: str, visit: str):
    return server.client.post("/api/claim", json={"worker_id": worker, "assignment_id": visit})


def _battle(server: ChatServer, worker: str, visit: str, bot: str) -> tuple[str, dict]:
    """Claim, play voting for `bot`'s side and submit; the pool and the submit's answer."""
    claimed = _claim(server, worker, visit)
    assert claimed.status_code == 200, claimed.text
    unit, token = claimed.json()["unit_id"], claimed.json()["token"]
    server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
    shown = sides(server, unit)
    play(server, unit, token, ["hello"], ["ab"[shown.index(bot)] if bot in shown else "a"])
    done = server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                              json={"answers": {}})
    assert done.status_code == 200, done.text
    return pool_of(server, unit), done.json()


def test_screening_battles_come_first_and_qualify_or_block(tmp_path, database_url):
    bots = {name: ScriptedBot(f"voice{n}", delay=0.0)
            for n, name in enumerate(("alpha", "beta", "dud"))}
    conf = write_arena_conf(tmp_path, ["alpha", "beta", "dud"], battles_per_pair=5,
                            extra=SCREENING)
    server = ChatServer(tmp_path, conf, bots, database_url)
    try:
        # a careful worker: a screening battle that looks like any other, resumed if open
        claimed = _claim(server, "careful", "1").json()
        assert pool_of(server, claimed["unit_id"]) == "screening"
        view = server.client.get(f"/api/units/{claimed['unit_id']}",
                                 headers=auth(claimed["token"]))
        assert view.json()["kind"] == "arena" and "dud" not in view.text
        assert _claim(server, "careful", "2").json()["unit_id"] == claimed["unit_id"]
        pool, answer = _battle(server, "careful", "1", "alpha")
        assert pool == "screening"
        assert answer["screening"]["passed"] is True and answer["screening"]["battles_left"] == 1
        pool, answer = _battle(server, "careful", "1", "alpha")  # the same visit goes on
        assert pool == "screening" and answer["screening"] == {"passed": True, "message": None}
        pool, _answer = _battle(server, "careful", "1", "alpha")
        assert pool.startswith("arena_")  # qualified: real battles

        # a careless worker fails a screening battle, tries again, fails again: blocked
        pool, answer = _battle(server, "careless", "1", "dud")
        assert pool == "screening" and answer["screening"]["passed"] is False
        assert "try again 1 more time" in answer["screening"]["message"]
        _pool_again, answer = _battle(server, "careless", "2", "dud")
        assert "not eligible" in answer["screening"]["message"]
        refused = _claim(server, "careless", "3")
        assert refused.status_code == 403 and "not eligible" in refused.json()["error"]

        with server.db.transaction() as connection:
            held = {g.provider_worker_id: g.qualification
                    for g in qualifications.grants(connection)}
        assert held == {"careful": "arena_ok", "careless": "arena_block"}
        with server.db.read() as session:
            outcomes = task_outcomes(session, server.served.task_id)
        assert (outcomes.screening_passed, outcomes.screening_failed) == (1, 2)  # attempts
        exported = list(battles(server.db, "arena"))
    finally:
        server.stop()
    assert [{b["model_a"], b["model_b"]} for b in exported] == [{"alpha", "beta"}]
