"""The arena's leaderboard: battles played through the server with votes drawn from known
strengths, exported in Chatbot Arena's battle format, and fitted by `analyze`; the ranking
equals an independent Bradley-Terry fit (logistic regression, ties as half wins, as FastChat's
`elo_analysis.py`) of the exported battles."""

from __future__ import annotations

import json
import math
import random

import numpy as np
from arena_helpers import play, sides, write_arena_conf
from chat_helpers import ChatServer, ScriptedBot, auth
from helpers import cli

STRENGTH = {"strong": 1.2, "middle": 0.0, "weak": -1.2}  # log-strengths
WINNERS = {"model_a", "model_b", "tie", "tie (bothbad)"}


def _logistic_fit(battles: list[dict]) -> dict[str, float]:
    """Maximum likelihood of P(a beats b) = 1 / (1 + exp(s_b - s_a)), a tie half a win for
    each side, scores summing to zero."""
    from scipy.optimize import minimize  # slow to import: loaded by the test that uses it

    bots = sorted({b["model_a"] for b in battles} | {b["model_b"] for b in battles})
    index = {bot: i for i, bot in enumerate(bots)}
    a = np.array([index[b["model_a"]] for b in battles])
    b = np.array([index[b["model_b"]] for b in battles])
    y = np.array([{"model_a": 1.0, "model_b": 0.0}.get(x["winner"], 0.5) for x in battles])

    def loss(free):
        s = np.append(free, -free.sum())
        d = s[a] - s[b]
        return float(np.sum(np.logaddexp(0, -d) * y + np.logaddexp(0, d) * (1 - y)))

    fitted = minimize(loss, np.zeros(len(bots) - 1), method="BFGS").x
    return dict(zip(bots, np.append(fitted, -fitted.sum()), strict=True))


def test_the_leaderboard_equals_an_independent_fit_of_the_exported_battles(tmp_path):
    bots = {name: ScriptedBot(f"voice{n}", delay=0.0) for n, name in enumerate(STRENGTH)}
    folder = tmp_path / "study"
    server = ChatServer(folder, write_arena_conf(folder, list(STRENGTH), battles_per_pair=25,
                                                 task="    allowed_concurrent: 0\n"), bots)
    rng = random.Random(3)
    try:
        for n in range(75):
            unit, token = server.claim(f"w{n}")
            a, b = sides(server, unit)
            p_a = 1 / (1 + math.exp(STRENGTH[b] - STRENGTH[a]))
            draw = rng.random()
            choice = "tie" if draw > 0.9 else "bothbad" if draw > 0.85 else \
                "a" if rng.random() < p_a else "b"
            play(server, unit, token, [f"question {n}"], [choice])
            assert server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                      json={"answers": {}}).status_code == 200
    finally:
        server.stop()

    data = ["--data-dir", str(folder / "data")]
    exported = cli("export", "--task", "arena", "--format", "battles", *data)
    assert exported.returncode == 0, exported.stderr
    assert "exported 75 battles" in exported.stderr
    battles = [json.loads(line) for line in exported.stdout.splitlines()]
    assert {b["winner"] for b in battles} <= WINNERS
    assert all(b["turn"] == 1 and [m["role"] for m in b["conversation_a"]] ==
               ["user", "assistant"] and b["conversation_a"][0] == b["conversation_b"][0]
               for b in battles)
    judges = {b["judge"] for b in battles}
    assert len(judges) == 75 and not judges & {f"w{n}" for n in range(75)}  # pseudonyms
    assert sorted(sum(1 for b in battles if {b["model_a"], b["model_b"]} == set(pair))
                  for pair in (("strong", "middle"), ("strong", "weak"),
                               ("middle", "weak"))) == [25, 25, 25]

    results = tmp_path / "results.json"
    analysed = cli("analyze", "--task", "arena", "--json", str(results), "--resamples", "200",
                   *data)
    assert analysed.returncode == 0, analysed.stderr
    arena = json.loads(results.read_text())["arena"]
    independent = _logistic_fit(battles)
    ranking = arena["ranking"]
    assert [r["bot"] for r in ranking] == sorted(independent, key=lambda b: -independent[b])
    for row in ranking:
        # the platform's fit has a weak prior (one virtual tie per bot): close, not equal
        assert abs(row["score"] - independent[row["bot"]]) < 0.1, (row, independent)
        assert row["ci_low"] <= row["score"] <= row["ci_high"]
        assert row["rank_ci_low"] <= row["rank"] <= row["rank_ci_high"]
    assert sum(p["battles"] for p in arena["pairs"]) == 75
    assert arena["position_bias"]["decisive"] == sum(
        b["winner"] in ("model_a", "model_b") for b in battles)
