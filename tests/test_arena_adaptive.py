"""`pairs: adaptive`: after every pair's floor, the battles go to the pair whose comparison is
least certain; on a simulated study with known strengths that is the closest pair."""

from __future__ import annotations

import math
import random
from collections import Counter
from datetime import timedelta

from arena_helpers import play, sides, write_arena_conf
from chat_helpers import ChatServer, ScriptedBot, auth
from sqlalchemy import select, update

from collection_and_annotations.engine.allocation import expire_overdue
from collection_and_annotations.storage.models import Unit, Worker, utcnow

STRENGTH = {"a": 2.0, "b": 0.15, "c": 0.0, "d": -2.0}  # b and c are hard to tell apart
FLOOR, ADAPTIVE = 3, 24


def test_adaptive_battles_go_to_the_closest_pair_after_every_floor(tmp_path):
    bots = {name: ScriptedBot(f"voice{n}", delay=0.0) for n, name in enumerate(STRENGTH)}
    conf = write_arena_conf(tmp_path, list(STRENGTH), battles_per_pair=FLOOR,
                            extra=f"    pairs: adaptive\n    adaptive_battles: {ADAPTIVE}\n"
                                  "    random_seed: 1\n")
    server = ChatServer(tmp_path, conf, bots)
    rng = random.Random(11)
    try:
        for n in range(6 * FLOOR + ADAPTIVE):
            unit, token = server.claim(f"w{n}")
            server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
            a, b = sides(server, unit)
            p_a = 1 / (1 + math.exp(STRENGTH[b] - STRENGTH[a]))
            play(server, unit, token, ["which is better?"], ["a" if rng.random() < p_a else "b"])
            assert server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                      json={"answers": {}}).status_code == 200
        assert server.client.post("/api/claim", json={"worker_id": "late",
                                                       "assignment_id": "1"}).status_code == 409
        with server.db.snapshot() as connection:
            units = connection.execute(select(Unit.pool, Unit.layout)).all()
    finally:
        server.stop()
    floors = Counter(tuple(sorted(u.layout["bots"])) for u in units if u.pool != "arena_adaptive")
    adaptive = Counter(tuple(sorted(u.layout["bots"])) for u in units
                       if u.pool == "arena_adaptive")
    assert sorted(floors.values()) == [FLOOR] * 6  # every pair's floor
    assert sum(adaptive.values()) == ADAPTIVE
    assert adaptive.most_common(1)[0][0] == ("b", "c"), adaptive
    assert adaptive[("b", "c")] > ADAPTIVE / 2, adaptive


def _battle(server: ChatServer, worker: str, visit: str) -> tuple[str, tuple[str, ...]] | None:
    """Claim, play and submit one battle, voting for bot a (gold: a>b); its pool and pair
    (None when no work is left)."""
    claimed = server.client.post("/api/claim", json={"worker_id": worker,
                                                     "assignment_id": visit})
    if claimed.status_code == 409:
        return None
    assert claimed.status_code == 200, claimed.text
    unit, token = claimed.json()["unit_id"], claimed.json()["token"]
    assert server.client.post(f"/api/chat/{unit}/start", json={},
                              headers=auth(token)).status_code == 200
    shown = sides(server, unit)
    play(server, unit, token, ["hello"], ["ab"[shown.index("a")] if "a" in shown else "a"])
    assert server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                              json={"answers": {}}).status_code == 200
    with server.db.snapshot() as connection:
        return connection.execute(select(Unit.pool).where(Unit.public_id == unit)
                                  ).scalar_one(), tuple(sorted(shown))


def test_no_worker_meets_a_pair_twice_across_floor_and_adaptive_battles(tmp_path,
                                                                        database_url):
    bots = {name: ScriptedBot(name, delay=0.0) for name in ("a", "b", "c")}
    conf = write_arena_conf(tmp_path, list(bots), battles_per_pair=1, extra=(
        "    pairs: adaptive\n    adaptive_battles: 6\n    random_seed: 3\n"
        "    gold_pairs: ['a>b']\n    min_golds: 1\n"))
    server = ChatServer(tmp_path, conf, bots, database_url)
    try:
        assert _battle(server, "hog", "g")[0] == "gold"
        for visit in "xyz":  # the hog holds every pair's floor battle, unstarted
            server.claim("hog", visit)
        met = {"w1": [_battle(server, "w1", "1")]}  # its gold battle
        met["w1"].append(_battle(server, "w1", "2"))  # no floor free: an adaptive battle
        assert met["w1"][-1][0] == "arena_adaptive"
        with server.db.transaction() as connection:  # the hog's battles go back to the pool
            connection.execute(update(Unit).where(Unit.status == "assigned")
                               .values(deadline=utcnow() - timedelta(seconds=1)))
            assert expire_overdue(connection, server.served.run_id) == 3
        for worker in ("w1", "w2", "w3"):
            met.setdefault(worker, [])
            while (battle := _battle(server, worker, str(len(met[worker]) + 1))) is not None:
                met[worker].append(battle)
    finally:
        server.stop()
    for worker, battles in met.items():
        real = [pair for pool, pair in battles if pool != "gold"]
        assert sorted(real) == [("a", "b"), ("a", "c"), ("b", "c")], (worker, battles)
        # a gold battle is no meeting: its pair came again as a real battle
        assert ("gold", ("a", "b")) in battles, (worker, battles)


def test_an_adaptive_battle_back_from_a_timeout_chooses_its_pair_again(tmp_path):
    bots = {name: ScriptedBot(name, delay=0.0) for name in ("a", "b", "c")}
    conf = write_arena_conf(tmp_path, list(bots), battles_per_pair=1, extra=(
        "    pairs: adaptive\n    adaptive_battles: 1\n"))
    server = ChatServer(tmp_path, conf, bots)

    def time_out(worker: str) -> None:
        with server.db.transaction() as connection:
            held = select(Worker.id).where(Worker.provider_worker_id == worker)
            connection.execute(update(Unit).where(Unit.status == "assigned",
                                                  Unit.worker_id.in_(held.scalar_subquery()))
                               .values(deadline=utcnow() - timedelta(seconds=1)))
            assert expire_overdue(connection, server.served.run_id)

    try:
        for visit in "xyz":  # the hog holds every pair's floor battle
            server.claim("hog", visit)
        unit, token = server.claim("w1", "1")  # the adaptive battle, started, timed out
        server.client.post(f"/api/chat/{unit}/start", json={}, headers=auth(token))
        time_out("w1")
        battles = [_battle(server, "w1", "2")]  # the same unit again, its pair chosen anew
        assert battles[0][0] == "arena_adaptive"
        time_out("hog")
        while (battle := _battle(server, "w1", str(len(battles) + 2))) is not None:
            battles.append(battle)
    finally:
        server.stop()
    assert sorted(pair for _pool, pair in battles) == [("a", "b"), ("a", "c"), ("b", "c")]
