"""`pairs: adaptive`: after every pair's floor, the battles go to the pair whose comparison is
least certain; on a simulated study with known strengths that is the closest pair."""

from __future__ import annotations

import math
import random
from collections import Counter

from arena_helpers import play, sides, write_arena_conf
from chat_helpers import ChatServer, ScriptedBot, auth
from sqlalchemy import select

from collection_and_annotations.storage.models import Unit

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
