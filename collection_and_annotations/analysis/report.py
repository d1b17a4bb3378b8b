"""The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched),
laid out as a paper's results section."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from collection_and_annotations.analysis import figures

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1000px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.85em}
th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}
.note{color:#8a5300}pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.8em}
"""


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return "nan" if value != value else f"{value:.{digits}f}"
    return str(value)


def _interval(row: dict[str, Any], key: str, digits: int = 3) -> str:
    return (f"{_fmt(row[key], digits)} [{_fmt(row['ci_low'], digits)}, "
            f"{_fmt(row['ci_high'], digits)}]")


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    if not rows:
        return "<p>None in this data.</p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(
            f"<td class='n'>{escape(_fmt(c))}</td>" if isinstance(c, int | float)
            else f"<td>{escape(_fmt(c))}</td>" for c in row) + "</tr>"
        for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figure(svg: str | None, caption: str) -> str:
    if not svg:
        return ""
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def render_report(results: dict[str, Any], title: str = "Evaluation results") -> str:
    sig = results["signature"]
    rates = results["behaviour_rates"]
    likert = results["likert"]
    ranking = results["ranking"]
    alpha = results["agreement"]
    comparisons = results["comparisons"]
    quality = results["quality"]
    pooled = [r for r in ranking if r["dimension"] == "all"]
    summary = [
        ["submissions", sig["submissions"]], ["answer rows", sig["answer_rows"]],
        ["bots", ", ".join(sorted({r["bot"] for r in rates + likert} |
                                  {r["bot"] for r in ranking})) or "–"],
        ["workers", quality["workers"]],
        ["best ranked", f"{pooled[0]['bot']} ({_interval(pooled[0], 'score', 2)})"
         if pooled else "–"],
    ]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>Tasks: {escape(', '.join(sig['settings']['tasks']) or '–')}. Every interval is a "
        f"{int(sig['settings']['confidence'] * 100)} % interval; methods are listed under "
        "“Settings and signature”.</p>",
        "<h2>Summary</h2>", _table(["", ""], summary),
        "<h2>Behaviour rates</h2>",
        f"<p>{escape(sig['methods']['behaviour_rates'])}.</p>",
        _figure(figures.rates_figure(rates), "Behaviour rates per bot with 95 % intervals."),
        _table(["bucket", "label", "behaviour", "bot", "rate [CI]", "n turns", "n dialogues"],
               [[r["bucket"], r["label"], r["behaviour"], r["bot"], _interval(r, "rate"),
                 r["n_turns"], r["n_dialogues"]] for r in rates]),
        "<h2>Ratings</h2>", f"<p>{escape(sig['methods']['likert'])}.</p>",
        _figure(figures.likert_figure(likert), "Distribution of 1–5 ratings."),
        _table(["bucket", "dimension", "level", "bot", "mean [CI]", "median", "n",
                "n dialogues"],
               [[r["bucket"], r["dimension"], r["level"], r["bot"], _interval(r, "mean", 2),
                 r["median"], r["n"], r["n_dialogues"]] for r in likert]),
        "<h2>Comparisons</h2>", f"<p>{escape(sig['methods']['comparisons'])}.</p>",
        _figure(figures.comparisons_figure(comparisons), "Wins, ties and losses per pair."),
        _table(["dimension", "bot A", "bot B", "wins", "ties", "losses", "win rate [CI]",
                "p (sign test)"],
               [[r["dimension"], r["bot_a"], r["bot_b"], r["wins"], r["ties"], r["losses"],
                 _interval(r, "win_rate"), r["p_value"]] for r in comparisons]),
        "<h3>Position bias</h3>", f"<p>{escape(sig['methods']['position_bias'])}.</p>",
        _table(["dimension", "left share [CI]", "p", "n decisive"],
               [[r["dimension"], _interval(r, "left_share"), r["p_value"], r["n_decisive"]]
                for r in results["position_bias"]]),
        "<h3>Ranking</h3>", f"<p>{escape(sig['methods']['ranking'])}.</p>",
        _figure(figures.ranking_figure(ranking), "Bradley–Terry ranking with 95 % intervals."),
        _table(["dimension", "rank", "bot", "score [CI]", "n comparisons"],
               [[r["dimension"], r["rank"], r["bot"], _interval(r, "score", 2),
                 r["n_comparisons"]] for r in ranking]),
        "".join(f"<p class='note'>{escape(n)}</p>" for n in results["notes"]),
        "<h2>Agreement</h2>", f"<p>{escape(sig['methods']['agreement'])}.</p>",
        _figure(figures.agreement_figure(alpha), "Krippendorff's alpha with 95 % intervals."),
        _table(["bucket", "label", "level", "alpha [CI]", "items", "raters", "note"],
               [[r["bucket"], r["label"], r["level"], _interval(r, "alpha"), r["n_items"],
                 r["n_raters"], r["note"]] for r in alpha]),
        "<h2>Quality</h2>",
        _table(["units", "workers", "seconds per unit (p10 / median / p90)"],
               [[quality["units"], quality["workers"],
                 " / ".join(_fmt(v, 1) for v in (quality["seconds_per_unit"] or {}).values())
                 or "–"]]),
        f"<p class='note'>{escape(quality['note'])}</p>",
        "<h2>Settings and signature</h2>",
        "<pre>" + escape(json.dumps({k: v for k, v in sig.items() if k != "behaviours"},
                                    indent=2, ensure_ascii=False)) + "</pre>",
        "</body></html>",
    ]
    return "\n".join(parts)
