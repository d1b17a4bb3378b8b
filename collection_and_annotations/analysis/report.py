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
        # + 0.0: a negative zero (an entropy of one type) shows as 0
        return "nan" if value != value else f"{value + 0.0:.{digits}f}"
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


# (section, row key fields, value field, n field, how the figure is named)
COMPARED = (
    ("ranking", ("dimension",), "score", "n_comparisons", "BT score ({dimension})"),
    ("likert", ("bucket", "dimension", "level"), "mean", "n", "mean {dimension} ({level})"),
    ("behaviour_rates", ("bucket", "label"), "rate", "n_turns", "rate {label} ({bucket})"),
)


def _rate(figure: dict[str, Any]) -> str:
    if figure["rate"] is None:
        return "–"
    return f"{figure['rate']:.3f} ({figure['passed']}/{figure['scored']})"


def _with_and_without(results: dict[str, Any]) -> list[list[Any]]:
    """One row per bot and main figure: with everyone, and without flagged work."""
    without = results["quality"]["excluding_flagged"]
    rows = []
    for section, keys, value, n, name in COMPARED:
        kept = {tuple(r[k] for k in (*keys, "bot")): r for r in without[section]}
        for row in results[section]:
            other = kept.get(tuple(row[k] for k in (*keys, "bot")))
            rows.append([row["bot"], name.format(**row), _interval(row, value), row[n],
                         _interval(other, value) if other else "–",
                         other[n] if other else 0])
    return sorted(rows, key=lambda r: r[0])


def _quality(results: dict[str, Any]) -> list[str]:
    quality = results["quality"]
    without = quality["excluding_flagged"]
    seconds = quality["seconds_per_unit"] or {}
    if without["units_left_out"]:
        left_out = "; ".join(f"{w}: {why}" for w, why in without["workers_left_out"].items())
        comparison = [
            f"<p>Rule: {escape(without['rule'])}. Left out: {without['units_left_out']} "
            f"submissions{escape(' (' + left_out + ')') if left_out else ''}.</p>",
            _table(["bot", "figure", "everyone [CI]", "n", "without flagged [CI]", "n"],
                   _with_and_without(results))]
    else:
        comparison = ["<p>No work is flagged and no worker failed screening or golds: the "
                      "figures without flagged workers are the same.</p>"]
    return [
        "<h2>Quality</h2>", f"<p>{escape(results['signature']['methods']['quality'])}.</p>",
        _table(["units", "workers", "seconds per unit (p10 / median / p90)",
                "screening pass rate", "gold accuracy", "gold mean mistakes"],
               [[quality["units"], quality["workers"],
                 " / ".join(_fmt(v, 1) for v in seconds.values()) or "–",
                 _rate(quality["screening_pass_rate"]), _rate(quality["gold_accuracy"]),
                 quality["gold_accuracy"]["mean_mistakes"]]]),
        _table(["worker", "units", "median seconds", "screening passed / scored",
                "gold passed / scored", "gold mean mistakes", "flagged units", "left out"],
               [[w["worker"], w["units"], w["median_seconds"],
                 f"{w['screening_passed']} / {w['screening_scored']}",
                 f"{w['gold_passed']} / {w['gold_scored']}", w["gold_mean_mistakes"],
                 w["flagged_units"], w["excluded"]] for w in quality["per_worker"]]),
        "<h3>Without flagged or disqualified workers</h3>", *comparison,
    ]


def _automatic(results: dict[str, Any]) -> list[str]:
    rows = results["automatic_metrics"]
    if not rows:
        return []
    bots = sorted({r["bot"] for r in rows})
    cells = {(r["metric"], r["bot"]): r for r in rows}
    chats = {r["bot"]: r["n_dialogues"] for r in rows}
    return [
        "<h2>Automatic metrics over collected chats</h2>",
        f"<p>{escape(results['signature']['methods']['automatic_metrics'])}. Latencies and "
        "response times in seconds; n: messages scored (chats for bot_turns_per_dialogue); "
        "collected chats have no references, so BLEU and chrF are not computed.</p>",
        _table(["metric", *(f"{bot} ({chats[bot]} chats)" for bot in bots)],
               [[metric, *(f"{_fmt(cells[(metric, bot)]['value'])} "
                           f"(n={cells[(metric, bot)]['n']})" if (metric, bot) in cells
                           else "–" for bot in bots)]
                for metric in dict.fromkeys(r["metric"] for r in rows)]),
    ]


def render_report(results: dict[str, Any], title: str = "Evaluation results") -> str:
    sig = results["signature"]
    rates = results["behaviour_rates"]
    likert = results["likert"]
    ranking = results["ranking"]
    alpha = results["agreement"]
    comparisons = results["comparisons"]
    pooled = [r for r in ranking if r["dimension"] == "all"]
    summary = [
        ["submissions", sig["submissions"]], ["answer rows", sig["answer_rows"]],
        ["bots", ", ".join(sorted({r["bot"] for r in rates + likert + ranking} |
                                  {r["bot"] for r in results["automatic_metrics"]})) or "–"],
        ["workers", results["quality"]["workers"]],
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
        "<h2>Agreement</h2>", f"<p>{escape(sig['methods']['agreement'])}.</p>",
        _figure(figures.agreement_figure(alpha), "Krippendorff's alpha with 95 % intervals."),
        _table(["bucket", "label", "level", "alpha [CI]", "items", "raters", "note"],
               [[r["bucket"], r["label"], r["level"], _interval(r, "alpha"), r["n_items"],
                 r["n_raters"], r["note"]] for r in alpha]),
        *_quality(results),
        *_automatic(results),
        "<h2>Notes</h2>" if results["notes"] else "",
        "".join(f"<p class='note'>{escape(n)}</p>" for n in results["notes"]),
        "<h2>Settings and signature</h2>",
        "<pre>" + escape(json.dumps({k: v for k, v in sig.items() if k != "behaviours"},
                                    indent=2, ensure_ascii=False)) + "</pre>",
        "</body></html>",
    ]
    return "\n".join(parts)
