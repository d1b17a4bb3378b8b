"""Outlier voters of an arena: a voter who keeps choosing the weaker bot is flagged, voters who
follow the bots' strengths with the usual noise are not; the votes' position bias is read from
which side won."""

from __future__ import annotations

import math
import random

from collection_and_annotations.analysis.arena import leaderboard

STRENGTH = {"strong": 1.5, "middle": 0.0, "weak": -1.5}


def _battles(rng: random.Random, judge: str, votes: int, contrarian: bool = False):
    bots = list(STRENGTH)
    for _ in range(votes):
        a, b = rng.sample(bots, 2)
        p_a = 1 / (1 + math.exp(STRENGTH[b] - STRENGTH[a]))
        a_wins = (STRENGTH[a] < STRENGTH[b]) if contrarian else rng.random() < p_a
        yield {"model_a": a, "model_b": b, "winner": "model_a" if a_wins else "model_b",
               "judge": judge}


def test_a_voter_against_the_consensus_is_flagged_and_honest_ones_are_not():
    rng = random.Random(5)
    battles = [battle for n in range(30) for battle in _battles(rng, f"honest{n}", 12)]
    battles += list(_battles(rng, "contrarian", 12, contrarian=True))
    board = leaderboard(battles, resamples=100)
    assert [r["bot"] for r in board["ranking"]] == ["strong", "middle", "weak"]
    assert [o["judge"] for o in board["outlier_voters"]] == ["contrarian"]
    assert board["outlier_voters"][0]["against"] == 12


def test_position_bias_counts_decisive_votes_for_model_a():
    battles = ([{"model_a": "x", "model_b": "y", "winner": "model_a", "judge": "j"}] * 30
               + [{"model_a": "y", "model_b": "x", "winner": "model_a", "judge": "j"}] * 30
               + [{"model_a": "x", "model_b": "y", "winner": "tie (bothbad)", "judge": "j"}] * 5)
    board = leaderboard(battles, resamples=50)
    bias = board["position_bias"]
    assert bias["decisive"] == 60 and bias["model_a_share"] == 1.0 and bias["p_value"] < 1e-6
    assert board["pairs"] == [{"bot_a": "x", "bot_b": "y", "battles": 65, "wins_a": 30,
                               "wins_b": 30, "ties": 0, "bothbad": 5, "win_rate_a": 0.5}]
