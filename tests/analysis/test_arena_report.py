"""The HTML report of an arena study (`analyze` and the dashboard's report link) has the
leaderboard with the same numbers as results.json's `arena`, every bot name escaped."""

from __future__ import annotations

import json
import re
from html import escape
from html.parser import HTMLParser

from arena_helpers import play, sides, write_arena_conf
from chat_helpers import ChatServer, ScriptedBot, auth
from helpers import REPO, cli

from collection_and_annotations.analysis.stored import stored_report

TRICKY = "b<i>&amp"  # a nickname that is HTML
BOTS = ("alpha", TRICKY, "gamma")
STRENGTH = {"alpha": 2, TRICKY: 1, "gamma": 0}
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class _Tables(HTMLParser):
    """Every table of a page: rows of cell texts (entities decoded)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _tables(html: str) -> dict[str, list[list[str]]]:
    """The arena section's tables, by the text of their first header cell."""
    parser = _Tables()
    parser.feed(html[html.index("<h2>Arena leaderboard</h2>"):])
    return {table[0][0] or "matrix": table for table in parser.tables[:5]}


def _numbers(cell: str) -> list[float]:
    return [float(n) for n in NUMBER.findall(cell)]


def _close(cell: str, *values: float | None, digits: int) -> bool:
    return len(_numbers(cell)) == len(values) and all(
        abs(shown - value) <= 0.5 * 10 ** -digits + 1e-9
        for shown, value in zip(_numbers(cell), values, strict=True))


def test_the_report_shows_the_leaderboard_of_results_json(tmp_path):
    bots = {name: ScriptedBot(f"voice{n}", delay=0.0) for n, name in enumerate(BOTS)}
    folder = tmp_path / "study"
    server = ChatServer(folder, write_arena_conf(folder, list(BOTS), battles_per_pair=4,
                                                 task="    allowed_concurrent: 0\n"), bots)
    try:
        for n in range(12):
            unit, token = server.claim(f"w{n}")
            a, b = sides(server, unit)
            choice = ("tie", "bothbad")[n % 2] if n % 5 == 0 else \
                "a" if STRENGTH[a] > STRENGTH[b] else "b"
            play(server, unit, token, [f"question {n}"], [choice])
            assert server.client.post(f"/api/units/{unit}/submit", headers=auth(token),
                                      json={"answers": {}}).status_code == 200
        url = server.served.db.url
    finally:
        server.stop()

    results, report = tmp_path / "results.json", tmp_path / "report.html"
    analysed = cli("analyze", "--task", "arena", "--database-url", url, "--json", str(results),
                   "--output", str(report), cwd=REPO)
    assert analysed.returncode == 0, analysed.stderr
    arena = json.loads(results.read_text())["arena"]
    html = report.read_text(encoding="utf-8")
    assert TRICKY not in html and "b&lt;i&gt;&amp;amp" in html  # text, never markup
    assert "<svg" in html[html.index("<h2>Arena leaderboard</h2>"):]  # the figure

    leader = arena["ranking"][0]
    assert f"arena leader</td><td>{escape(leader['bot'])} ({leader['score']:.2f}" in html
    tables = _tables(html)
    shown = {row[2]: row for row in tables["rank"][1:]}
    assert [row[2] for row in tables["rank"][1:]] == [r["bot"] for r in arena["ranking"]]
    for r in arena["ranking"]:
        row = shown[r["bot"]]
        assert int(row[0]) == r["rank"]
        assert _close(row[1].replace("–", " "), *sorted({r["rank_ci_low"], r["rank_ci_high"]}),
                      digits=0)
        assert _close(row[3], r["score"], r["ci_low"], r["ci_high"], digits=2)
        assert _close(row[4], r["elo"], r["elo_ci_low"], r["elo_ci_high"], digits=0)
        assert [int(c) for c in row[5:10]] == [r[k] for k in ("battles", "wins", "losses",
                                                            "ties", "bothbad")]
        assert _close(row[10], r["win_rate"], digits=3)
    pairs = {(row[0], row[1]): row for row in tables["bot A"][1:]}
    assert len(pairs) == len(arena["pairs"]) == 3
    for p in arena["pairs"]:
        row = pairs[(p["bot_a"], p["bot_b"])]
        assert [int(c) for c in row[2:7]] == [p[k] for k in ("battles", "wins_a", "wins_b",
                                                           "ties", "bothbad")]
        assert _close(row[7], p["win_rate_a"], digits=3)
    matrix = {row[0]: dict(zip(tables["matrix"][0][1:], row[1:], strict=True))
              for row in tables["matrix"][1:]}
    for p in arena["pairs"]:
        assert _close(matrix[p["bot_a"]][p["bot_b"]], p["win_rate_a"], p["battles"], digits=3)
        assert _close(matrix[p["bot_b"]][p["bot_a"]], 1 - p["win_rate_a"], p["battles"],
                      digits=3)
    bias = arena["position_bias"]
    [_head, bias_row] = tables[next(k for k in tables if k.startswith("Model A"))]
    assert _close(bias_row[0], bias["model_a_share"], bias["ci_low"], bias["ci_high"],
                  digits=3)
    assert int(bias_row[2]) == bias["decisive"]

    # the dashboard's report link gives the same report
    served = stored_report(url, "arena")
    assert served.replace("Evaluation results: arena", "Evaluation results") == html
