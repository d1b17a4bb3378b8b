"""The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched),
laid out as a paper's results section. Each section is a function of results.json listed in
SECTIONS, so a new section is one function and one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from typing import Any

from collection_and_annotations.analysis import figures
from collection_and_annotations.analysis.figures import level

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1000px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.85em}
th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}
.note{color:#8a5300}pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.8em}
"""
SMALLEST_P = 0.001  # p-values below this print as "< 0.001"

Results = dict[str, Any]


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        # + 0.0: a negative zero (an entropy of one type) shows as 0
        return "nan" if value != value else f"{value + 0.0:.{digits}f}"
    return str(value)


def p_value(value: float | None) -> str:
    """A p-value as the report prints it: 3 decimals, "< 0.001" (a no-break space) below
    that."""
    if value is None:
        return "–"
    return f"<\u00a0{SMALLEST_P}" if value < SMALLEST_P else f"{value:.3f}"  # kept on a line


def _interval(row: dict[str, Any] | None, key: str, digits: int = 3, low: str = "ci_low",
              high: str = "ci_high") -> str:
    if row is None:
        return "–"
    return (f"{_fmt(row[key], digits)}\u00a0[{_fmt(row[low], digits)},\u00a0"
            f"{_fmt(row[high], digits)}]")  # no-break spaces: an interval stays on one line


def _ranks(row: dict[str, Any], low: str = "rank_low", high: str = "rank_high") -> str:
    if row[low] is None:
        return "–"
    if row[low] == row[high]:
        return str(row[low])
    return f"{row[low]}–{row[high]}"


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


def _figure(fig: Any, caption: str) -> str:
    drawn = figures.svg(fig)
    if not drawn:
        return ""
    return f"<figure>{drawn}<figcaption>{escape(caption)}</figcaption></figure>"


def _method(results: Results, name: str) -> str:
    return f"<p>{escape(results['signature']['methods'][name])}.</p>"


def _notes(rows: list[dict[str, Any]]) -> str:
    notes = dict.fromkeys(r["note"] for r in rows if r.get("note"))
    return "".join(f"<p class='note'>{escape(n)}</p>" for n in notes)


def _concentrated(results: Results) -> bool:
    return bool(results["annotators"]["concentrated"])


def _confidence(results: Results) -> float:
    return results["signature"]["settings"]["confidence"]


def _rates(results: Results) -> list[str]:
    rows, c = results["behaviour_rates"], _confidence(results)
    aware = _concentrated(results)
    return [
        "<h2>Behaviour rates</h2>", _method(results, "behaviour_rates"),
        _figure(figures.rates_plot(rows, c), f"Behaviour rates per bot with {level(c)} "
                                             "intervals."),
        _table(["bucket", "label", "behaviour", "bot", "rate [CI]",
                *(["rate [worker-aware CI]"] if aware else []), "n turns", "n dialogues"],
               [[r["bucket"], r["label"], r["behaviour"], r["bot"], _interval(r, "rate"),
                 *([_interval(r, "rate", 3, "ci_low_workers", "ci_high_workers")]
                   if aware else []), r["n_turns"], r["n_dialogues"]] for r in rows]),
        _notes(rows),
    ]


def _likert(results: Results) -> list[str]:
    rows = results["likert"]
    aware = _concentrated(results)
    return [
        "<h2>Ratings</h2>", _method(results, "likert"),
        _figure(figures.likert_plot(rows), "Distribution of 1–5 ratings."),
        _table(["bucket", "dimension", "level", "bot", "mean [CI]",
                *(["mean [worker-aware CI]"] if aware else []), "median", "n", "n dialogues"],
               [[r["bucket"], r["dimension"], r["level"], r["bot"], _interval(r, "mean", 2),
                 *([_interval(r, "mean", 2, "ci_low_workers", "ci_high_workers")]
                   if aware else []), r["median"], r["n"], r["n_dialogues"]] for r in rows]),
        _notes(rows),
    ]


def _answer_shares(results: Results) -> list[str]:
    rows = results["answer_shares"]
    if not rows:
        return []
    return [
        "<h2>Answers to question trees</h2>", _method(results, "answer_shares"),
        _table(["bucket", "question", "answer", "bot", "share [CI]", "n asked",
                "n with answer", "n dialogues"],
               [[r["bucket"], r["question"], r["answer"], r["bot"], _interval(r, "share"),
                 r["n"], r["n_with_answer"], r["n_dialogues"]] for r in rows]),
        _notes(rows),
    ]


def _texts(results: Results) -> list[str]:
    rows = results["texts"]
    if not rows:
        return []
    return [
        "<h2>Free text</h2>", _method(results, "texts"),
        _table(["bucket", "text", "bot", "given", "left empty", "characters (mean / median / "
                "min / max)", "words (mean)"],
               [[r["bucket"], r["kind"], r["bot"], r["answered"], r["missing"],
                 " / ".join(_fmt(r[k], 1) for k in ("chars_mean", "chars_median",
                                                    "chars_min", "chars_max")),
                 r["words_mean"]] for r in rows]),
        "<p>Every text is in the appendix at the end.</p>",
    ]


def _text_appendix(results: Results) -> list[str]:
    rows = results["text_appendix"]
    if not rows:
        return []
    return [
        "<h2 id='appendix-texts'>Appendix: free text</h2>",
        _table(["bucket", "text", "bot", "dialogue", "turn", "worker", "what they wrote"],
               [[r["bucket"], r["kind"], r["bot"], r["dialogue"],
                 "dialogue" if r["turn"] is None else str(r["turn"]), r["worker"], r["text"]]
                for r in rows]),
    ]


def _differences(results: Results) -> list[str]:
    rows = results["differences"]
    return [
        "<h2>Differences between bots</h2>", _method(results, "differences"),
        _method(results, "adjustment"),
        _table(["figure", "bucket", "bot A", "bot B", "A", "B", "A − B [CI]", "effect size",
                "p", "p adjusted", "paired"],
               [[r["label"] + (f" ({r['level']})" if r["level"] else ""), r["bucket"],
                 r["bot_a"], r["bot_b"], r["value_a"], r["value_b"],
                 _interval(r, "difference"),
                 f"{r['effect_size_name'].replace('_', ' ')} {_fmt(r['effect_size'], 2)}",
                 p_value(r["p_value"]), p_value(r["p_adjusted"]),
                 "yes" if r["paired"] else "no"] for r in rows]),
    ]


def _comparisons(results: Results) -> list[str]:
    rows, ranking, c = results["comparisons"], results["ranking"], _confidence(results)
    return [
        "<h2>Comparisons</h2>", _method(results, "comparisons"),
        _figure(figures.comparisons_plot(rows), "Wins, ties and losses per pair."),
        _table(["dimension", "bot A", "bot B", "wins", "ties", "losses",
                f"win rate [{level(c)} CI]", "p (sign test)", "p adjusted"],
               [[r["dimension"], r["bot_a"], r["bot_b"], r["wins"], r["ties"], r["losses"],
                 _interval(r, "win_rate"), p_value(r["p_value"]),
                 p_value(r["p_adjusted"])] for r in rows]),
        "<h3>Position bias</h3>", _method(results, "position_bias"),
        _table(["dimension", f"left share [{level(c)} CI]", "p", "n decisive"],
               [[r["dimension"], _interval(r, "left_share"), p_value(r["p_value"]),
                 r["n_decisive"]] for r in results["position_bias"]]),
        "<h3>Ranking</h3>", _method(results, "ranking"),
        _figure(figures.ranking_plot(ranking, c),
                f"Bradley–Terry ranking with {level(c)} intervals."),
        _table(["dimension", "rank", f"rank interval ({level(c)})", "bot", "score [CI]",
                "n comparisons"],
               [[r["dimension"], r["rank"], _ranks(r), r["bot"],
                 _interval(r, "score", 2), r["n_comparisons"]] for r in ranking]),
    ]


def _win_rates(pairs: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """The win-rate matrix: the row bot's win rate against the column bot (ties as halves)
    with their battles."""
    bots = sorted({p["bot_a"] for p in pairs} | {p["bot_b"] for p in pairs})
    cells = {}
    for p in pairs:
        cells[(p["bot_a"], p["bot_b"])] = (p["win_rate_a"], p["battles"])
        cells[(p["bot_b"], p["bot_a"])] = (1.0 - p["win_rate_a"], p["battles"])
    return ["", *bots], [[row, *(f"{_fmt(cells[(row, col)][0])} ({cells[(row, col)][1]})"
                                 if (row, col) in cells else "–" for col in bots)]
                         for row in bots]


def _arena(results: Results) -> list[str]:
    arena, c = results.get("arena"), _confidence(results)
    if not arena:
        return []
    ranking, bias = arena["ranking"], arena["position_bias"]
    return [
        "<h2>Arena leaderboard</h2>", _method(results, "arena"),
        f"<p>{arena['battles']} votes of submitted battles (gold battles left out).</p>",
        _figure(figures.ranking_plot(ranking, c, "Arena leaderboard"),
                f"Bradley–Terry scores of the arena's bots with {level(c)} intervals."),
        _table(["rank", f"rank interval ({level(c)})", "bot", "score [CI]", "Elo [CI]",
                "battles", "wins", "losses", "ties", "both bad", "win rate"],
               [[r["rank"], _ranks(r, "rank_ci_low", "rank_ci_high"), r["bot"],
                 _interval(r, "score", 2), _interval(r, "elo", 0, "elo_ci_low", "elo_ci_high"),
                 r["battles"], r["wins"], r["losses"], r["ties"], r["bothbad"], r["win_rate"]]
                for r in ranking]),
        "<h3>Battles per pair</h3>",
        _table(["bot A", "bot B", "battles", "A wins", "B wins", "ties", "both bad",
                "A's win rate"],
               [[p["bot_a"], p["bot_b"], p["battles"], p["wins_a"], p["wins_b"], p["ties"],
                 p["bothbad"], p["win_rate_a"]] for p in arena["pairs"]]),
        "<p>Win rate of the row's bot against the column's (battles):</p>",
        _table(*_win_rates(arena["pairs"])),
        "<h3>Position bias</h3>",
        _table([f"Model A (left) share [{level(c)} CI]", "p", "n decisive"],
               [[_interval(bias, "model_a_share"), p_value(bias["p_value"]),
                 bias["decisive"]]] if bias else []),
        "<h3>Outlier voters</h3>",
        _table(["worker", "decisive votes", "against the favourite", "expected against", "p"],
               [[o["judge"], o["decisive_votes"], o["against"], o["expected_against"],
                 p_value(o["p_value"])] for o in arena["outlier_voters"]]),
    ]


def _agreement(results: Results) -> list[str]:
    rows, c = results["agreement"], _confidence(results)
    return [
        "<h2>Agreement</h2>", _method(results, "agreement"),
        _figure(figures.agreement_plot(rows, c),
                f"Krippendorff's alpha with {level(c)} intervals."),
        _table(["bucket", "label", "level", "alpha [CI]", "items", "raters", "note"],
               [[r["bucket"], r["label"], r["level"], _interval(r, "alpha"), r["n_items"],
                 r["n_raters"], r["note"]] for r in rows]),
    ]


def _annotators(results: Results) -> list[str]:
    found = results["annotators"]
    return [
        "<h2>Annotators</h2>", _method(results, "annotators"),
        f"<p class='note'>{escape(found['note'])}</p>" if found["note"] else "",
        _table(["units", "effective number of workers", "workers doing 80 % of the units",
                "agreeing answer pairs"],
               [[found["units"], found["effective_workers"], found["workers_for_most_work"],
                 found["agreement"]]]),
        _table(["worker", "units", "share", "label rate", "others' label rate",
                "Likert mean", "others' Likert mean", "agreement with others"],
               [[w["worker"], w["units"], w["share"], w["label_rate"],
                 w["others_label_rate"], w["likert_mean"], w["others_likert_mean"],
                 w["agreement"]] for w in found["workers"]]),
    ]


def _judges(results: Results) -> list[str]:
    rows, c = results["judges"], _confidence(results)
    if not rows and not results["judge_figures"]["costs"]:
        return []
    details = {(d["judge"], d["bucket"], d["label"]): d
               for d in results["judge_figures"]["agreement"]}

    def alpha(row: dict[str, Any], which: str) -> str:
        detail = details[(row["judge"], row["bucket"], row["label"])]
        return _interval({which: row[which], **detail}, which, 3, f"{which}_ci_low",
                         f"{which}_ci_high")

    def mae(row: dict[str, Any]) -> str:
        detail = details[(row["judge"], row["bucket"], row["label"])]
        return _interval(detail, "mae", 2, "mae_ci_low", "mae_ci_high") \
            if detail["mae"] is not None else "–"

    costs = results["judge_figures"]["costs"]
    return [
        "<h2 id='judges'>Judges</h2>", _method(results, "judges"),
        "<h3>Agreement with people</h3>",
        _table(["judge", "bucket", "label", "items", f"accuracy [{level(c)} CI]", "kappa",
                "MAE [CI]", "alpha humans [CI]", "alpha with judge [CI]", "verdict"],
               [[r["judge"], r["bucket"], r["label"], r["n_items"],
                 _interval(r, "accuracy", 3, "accuracy_ci_low", "accuracy_ci_high"),
                 r["kappa"], mae(r), alpha(r, "alpha_humans"), alpha(r, "alpha_with_judge"),
                 r["verdict"]] for r in rows]),
        "<h3>Bias per bot</h3>",
        _table(["judge", "bucket", "label", "bot", "judge", "humans",
                f"judge − humans [{level(c)} CI]"],
               [[r["judge"], r["bucket"], r["label"], r["bot"], r["judge_value"],
                 r["human_value"], _interval(r, "difference")] for r in results["bias"]]),
        "<h3>Ranking of the bots</h3>",
        _table(["judge", "bucket", "label", "by", "bots: humans / judge", "rank correlation",
                "same best bot"],
               [[r["judge"], r["bucket"], r["label"], r["method"].replace("_", "-"),
                 "; ".join(f"{b['bot']} {_fmt(b['humans'], 2)} / {_fmt(b['judge'], 2)}"
                           for b in r["bots"]),
                 r["rank_correlation"], "yes" if r["same_best"] else "no"]
                for r in results["judge_figures"]["rankings"]]),
        "<h3>Cost and time</h3>",
        _table(["judge", "dialogues", "calls", "refused replies", "failed calls",
                "tokens in / out per 100 dialogues", "cost per 100 dialogues",
                "model seconds per 100 dialogues", "prompt template (SHA-256)"],
               [[r["judge"], r["dialogues"], r["calls"], r["invalid_replies"], r["failed_calls"],
                 f"{_fmt(r['per_100_dialogues']['input_tokens'], 0)} / "
                 f"{_fmt(r['per_100_dialogues']['output_tokens'], 0)}",
                 _fmt(r["per_100_dialogues"]["cost"], 4),
                 _fmt(r["per_100_dialogues"]["seconds"], 1),
                 ", ".join(h[:12] for h in r["prompt_sha256"]) or "–"] for r in costs]),
    ]


# (section, row key fields, value field, n field, how the figure is named)
COMPARED = (
    ("ranking", ("dimension",), "score", "n_comparisons", "BT score ({dimension})"),
    ("likert", ("bucket", "dimension", "level"), "mean", "n", "mean {dimension} ({level})"),
    ("behaviour_rates", ("bucket", "label"), "rate", "n_turns", "rate {label} ({bucket})"),
)


def _side_by_side(results: Results, other: Results) -> list[list[Any]]:
    """One row per bot and main figure: the main figures, and `other`'s."""
    rows = []
    for section, keys, value, n, name in COMPARED:
        kept = {tuple(r[k] for k in (*keys, "bot")): r for r in other[section]}
        for row in results[section]:
            match = kept.get(tuple(row[k] for k in (*keys, "bot")))
            rows.append([row["bot"], name.format(**row), _interval(row, value), row[n],
                         _interval(match, value), match[n] if match else 0])
    return sorted(rows, key=lambda r: r[0])


def _review(results: Results) -> list[str]:
    review = results["review"]
    if not review["units_left_out"]:
        return ["<h2>Review decisions</h2>", _method(results, "review"),
                "<p>No unit was rejected: every submitted unit counts.</p>"]
    return [
        "<h2>Review decisions</h2>", _method(results, "review"),
        f"<p>Left out: {review['units_left_out']} units ({review['rejected']} rejected, "
        f"{review['soft_rejected']} soft-rejected).</p>",
        _table(["bot", "figure", "without rejected [CI]", "n", "with rejected [CI]", "n"],
               _side_by_side(results, review["including_rejected"])),
    ]


def _rate(figure: dict[str, Any]) -> str:
    if figure["rate"] is None:
        return "–"
    return f"{figure['rate']:.3f} ({figure['passed']}/{figure['scored']})"


def _quality(results: Results) -> list[str]:
    quality = results["quality"]
    without = quality["excluding_flagged"]
    seconds = quality["seconds_per_unit"] or {}
    if without["units_left_out"]:
        left_out = "; ".join(f"{w}: {why}" for w, why in without["workers_left_out"].items())
        comparison = [
            f"<p>Rule: {escape(without['rule'])}. Left out: {without['units_left_out']} "
            f"submissions{escape(' (' + left_out + ')') if left_out else ''}.</p>",
            _table(["bot", "figure", "everyone [CI]", "n", "without flagged [CI]", "n"],
                   _side_by_side(results, without))]
    else:
        comparison = ["<p>No work is flagged and no worker failed screening or golds: the "
                      "figures without flagged workers are the same.</p>"]
    return [
        "<h2>Quality</h2>", _method(results, "quality"),
        _table(["units", "workers", "seconds per unit (p10 / median / p90)",
                "screening pass rate", "gold accuracy", "gold mean mistakes"],
               [[quality["units"], quality["workers"],
                 " / ".join(_fmt(v, 1) for v in seconds.values()) or "–",
                 _rate(quality["screening_pass_rate"]), _rate(quality["gold_accuracy"]),
                 quality["gold_accuracy"]["mean_mistakes"]]]),
        _table(["worker", "units", "rejected units", "median seconds",
                "screening passed / scored", "gold passed / scored", "gold mean mistakes",
                "flagged units", "left out"],
               [[w["worker"], w["units"], w["rejected_units"], w["median_seconds"],
                 f"{w['screening_passed']} / {w['screening_scored']}",
                 f"{w['gold_passed']} / {w['gold_scored']}", w["gold_mean_mistakes"],
                 w["flagged_units"], w["excluded"]] for w in quality["per_worker"]]),
        "<h3>Without flagged or disqualified workers</h3>", *comparison,
    ]


def _automatic(results: Results) -> list[str]:
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


def _summary(results: Results) -> list[str]:
    sig = results["signature"]
    rates, likert, ranking = results["behaviour_rates"], results["likert"], results["ranking"]
    pooled = [r for r in ranking if r["dimension"] == "all"]
    leaderboard = (results.get("arena") or {}).get("ranking") or []
    rows = [
        ["submissions", sig["submissions"]], ["answer rows", sig["answer_rows"]],
        ["bots", ", ".join(sorted({r["bot"] for r in rates + likert + ranking + leaderboard} |
                                  {r["bot"] for r in results["automatic_metrics"]})) or "–"],
        ["workers", results["quality"]["workers"]],
        ["units left out by review", results["review"]["units_left_out"]],
        ["best ranked", f"{pooled[0]['bot']} ({_interval(pooled[0], 'score', 2)})"
         if pooled else "–"],
        *([["arena leader", f"{leaderboard[0]['bot']} "
            f"({_interval(leaderboard[0], 'score', 2)})"]] if leaderboard else []),
    ]
    return ["<h2>Summary</h2>", _table(["", ""], rows)]


def _closing_notes(results: Results) -> list[str]:
    if not results["notes"]:
        return []
    return ["<h2>Notes</h2>",
            "".join(f"<p class='note'>{escape(n)}</p>" for n in results["notes"])]


def _signature(results: Results) -> list[str]:
    sig = results["signature"]
    return ["<h2>Settings and signature</h2>",
            "<pre>" + escape(json.dumps({k: v for k, v in sig.items() if k != "behaviours"},
                                        indent=2, ensure_ascii=False)) + "</pre>"]


SECTIONS: tuple[Callable[[Results], list[str]], ...] = (
    _summary, _arena, _rates, _answer_shares, _likert, _texts, _differences, _comparisons,
    _agreement, _annotators, _judges, _review, _quality, _automatic, _closing_notes,
    _signature, _text_appendix,
)


def render_report(results: Results, title: str = "Evaluation results") -> str:
    sig = results["signature"]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>Tasks: {escape(', '.join(sig['settings']['tasks']) or '–')}. Every interval is a "
        f"{level(_confidence(results))} interval; methods are listed under "
        "“Settings and signature”.</p>",
    ]
    for section in SECTIONS:
        parts += section(results)
    parts.append("</body></html>")
    return "\n".join(parts)
