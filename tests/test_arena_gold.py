"""Gold battles: a pair with a known better bot, served among real battles on a schedule and
looking like them; a worker who votes against the known better bot too often is blocked and
their battles flagged; gold battles stay out of the battles export."""

from __future__ import annotations

from arena_helpers import play, pool_of, sides, write_arena_conf
from chat_helpers import ChatServer, ScriptedBot, auth
from sqlalchemy import select

from collection_and_annotations.export.battles import battles
from collection_and_annotations.storage.models import Submission, UnitScore

GOLD = ("    gold_pairs: ['alpha>dud']\n    min_golds: 1\n    gold_every_n_units: 1\n"
        "    max_incorrect_golds: 0\n")


def _vote_for(server: ChatServer, unit: str, token: str, bot: str | None) -> None:
    """Play the battle, voting for `bot`'s side (a tie when None), and submit it."""
    server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
    shown = sides(server, unit)
    choice = "tie" if bot is None else "ab"[shown.index(bot)] if bot in shown else "a"
    play(server, unit, token, ["hello"], [choice])
    assert server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                              json={"answers": {}}).status_code == 200


def test_gold_battles_are_served_scored_and_kept_out_of_the_battles(tmp_path):
    bots = {name: ScriptedBot(f"voice{n}", delay=0.0)
            for n, name in enumerate(("alpha", "beta", "dud"))}
    conf = write_arena_conf(tmp_path, ["alpha", "beta", "dud"], battles_per_pair=5,
                            extra="    bots: [alpha, beta]\n" + GOLD,
                            task="    allowed_concurrent: 0\n")
    server = ChatServer(tmp_path, conf, bots)
    try:
        # a careful worker: the gold battle first (it looks like any other), then real work
        unit, token = server.claim("careful", "1")
        assert pool_of(server, unit) == "gold"
        view = server.client.get(f"/api/units/{unit}", headers=auth(token)).text
        assert "gold" not in view and "dud" not in view, view
        _vote_for(server, unit, token, "alpha")
        unit, token = server.claim("careful", "2")
        assert pool_of(server, unit).startswith("arena_")
        _vote_for(server, unit, token, None)
        unit, token = server.claim("careful", "3")
        assert pool_of(server, unit) == "gold"  # one gold after each real battle

        # a careless worker votes for the known worse bot: blocked, no more work
        unit, token = server.claim("careless", "1")
        assert pool_of(server, unit) == "gold"
        _vote_for(server, unit, token, "dud")
        refused = server.client.post("/api/claim", json={"worker_id": "careless",
                                                          "assignment_id": "2"})
        assert refused.status_code == 403, refused.text

        with server.db.snapshot() as connection:
            scores = connection.execute(select(UnitScore.passed, UnitScore.mistakes)
                                        .order_by(UnitScore.scored_at)).all()
            flagged = connection.execute(select(Submission.flagged_for_review)).scalars().all()
        assert [tuple(s) for s in scores] == [(True, 0), (False, 1)]
        assert not any(flagged)  # the careless worker had no real battle to flag
        exported = list(battles(server.db, "arena"))
    finally:
        server.stop()
    assert [(b["model_a"], b["model_b"]) in (("alpha", "beta"), ("beta", "alpha"))
            for b in exported] == [True]  # the real battle only
