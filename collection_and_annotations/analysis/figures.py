"""The report's plots, drawn with matplotlib into inline SVG (text kept as text, no dates, a
fixed id salt: the same results give the same bytes)."""

from __future__ import annotations

import io
import re
from collections import defaultdict
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"svg.fonttype": "none", "svg.hashsalt": "cep-analysis", "font.size": 9,
         "axes.spines.top": False, "axes.spines.right": False}


def _svg(fig: Any) -> str:
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = out.getvalue()
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)  # RDF licence block
    return text[text.index("<svg"):]


def _errors(value: float, low: float | None, high: float | None) -> tuple[float, float]:
    if low is None or high is None or low != low or high != high:
        return 0.0, 0.0
    return max(value - low, 0.0), max(high - value, 0.0)


def _grouped_bars(rows: list[dict[str, Any]], category: str, value: str, title: str,
                  xlabel: str) -> str | None:
    if not rows:
        return None
    with plt.rc_context(STYLE):
        categories = list(dict.fromkeys(r[category] for r in rows))
        bots = sorted({r["bot"] for r in rows})
        by = {(r[category], r["bot"]): r for r in rows}
        height = 0.8 / max(len(bots), 1)
        fig, ax = plt.subplots(figsize=(7, 0.35 * len(categories) * max(len(bots), 1) + 1.2))
        for k, bot in enumerate(bots):
            ys, xs, err = [], [], [[], []]
            for i, cat in enumerate(categories):
                row = by.get((cat, bot))
                if row is None or row[value] is None:
                    continue
                ys.append(i + k * height)
                xs.append(row[value])
                low, high = _errors(row[value], row["ci_low"], row["ci_high"])
                err[0].append(low)
                err[1].append(high)
            ax.barh(ys, xs, height=height, xerr=err, capsize=2, label=bot)
        ax.set_yticks([i + height * (len(bots) - 1) / 2 for i in range(len(categories))])
        ax.set_yticklabels(categories)
        ax.invert_yaxis()
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.legend(fontsize=7, loc="lower right")
        return _svg(fig)


def rates_figure(rows: list[dict[str, Any]]) -> str | None:
    named = [dict(r, name=f"{r['behaviour'] or r['label']} ({r['bucket']})") for r in rows]
    return _grouped_bars(named, "name", "rate", "Behaviour rates per bot (95% CI)",
                         "share of annotated bot turns")


def likert_figure(rows: list[dict[str, Any]]) -> str | None:
    if not rows:
        return None
    with plt.rc_context(STYLE):
        labels = [f"{r['dimension']} · {r['bot']} ({r['level']})" for r in rows]
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(rows) + 1.2))
        left = [0.0] * len(rows)
        colours = plt.get_cmap("RdYlGn")
        for score in range(1, 6):
            shares = [r["distribution"][str(score)] / r["n"] if r["n"] else 0 for r in rows]
            ax.barh(range(len(rows)), shares, left=left, color=colours((score - 1) / 4),
                    label=str(score))
            left = [a + b for a, b in zip(left, shares, strict=True)]
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(labels)
        ax.invert_yaxis()
        ax.set_xlabel("share of ratings")
        ax.set_title("Rating distributions")
        ax.legend(title="rating", ncols=5, fontsize=7, loc="upper center",
                  bbox_to_anchor=(0.5, -0.12 if len(rows) > 3 else -0.3))
        return _svg(fig)


def ranking_figure(rows: list[dict[str, Any]]) -> str | None:
    pooled = [r for r in rows if r["dimension"] == "all"]
    if not pooled:
        return None
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6, 0.4 * len(pooled) + 1.2))
        err = [[], []]
        for r in pooled:
            low, high = _errors(r["score"], r["ci_low"], r["ci_high"])
            err[0].append(low)
            err[1].append(high)
        ax.errorbar([r["score"] for r in pooled], range(len(pooled)), xerr=err, fmt="o",
                    capsize=3)
        ax.set_yticks(range(len(pooled)))
        ax.set_yticklabels([f"{r['rank']}. {r['bot']}" for r in pooled])
        ax.invert_yaxis()
        ax.axvline(0, color="grey", linewidth=0.5)
        ax.set_xlabel("Bradley–Terry log-strength (95% CI)")
        ax.set_title("Ranking over all comparisons")
        return _svg(fig)


def agreement_figure(rows: list[dict[str, Any]]) -> str | None:
    shown = [r for r in rows if r["alpha"] is not None]
    if not shown:
        return None
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(shown) + 1.2))
        err = [[], []]
        for r in shown:
            low, high = _errors(r["alpha"], r["ci_low"], r["ci_high"])
            err[0].append(low)
            err[1].append(high)
        ax.errorbar([r["alpha"] for r in shown], range(len(shown)), xerr=err, fmt="s",
                    capsize=3)
        ax.set_yticks(range(len(shown)))
        ax.set_yticklabels([f"{r['label']} ({r['bucket']}, {r['level']})" for r in shown])
        ax.invert_yaxis()
        ax.axvline(0.667, color="grey", linewidth=0.5, linestyle="--")
        ax.set_xlabel("Krippendorff's alpha (95% CI; dashed: 0.667)")
        ax.set_title("Inter-annotator agreement")
        return _svg(fig)


def comparisons_figure(rows: list[dict[str, Any]]) -> str | None:
    if not rows:
        return None
    grouped: dict[str, list] = defaultdict(list)
    for r in rows:
        grouped[r["dimension"]].append(r)
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(rows) + 1.2))
        labels = [f"{r['bot_a']} vs {r['bot_b']} ({r['dimension']})" for r in rows]
        n = [max(r["n"], 1) for r in rows]
        parts = [("wins", "tab:green"), ("ties", "tab:grey"), ("losses", "tab:red")]
        left = [0.0] * len(rows)
        for key, colour in parts:
            shares = [r[key] / k for r, k in zip(rows, n, strict=True)]
            ax.barh(range(len(rows)), shares, left=left, color=colour, label=key)
            left = [a + b for a, b in zip(left, shares, strict=True)]
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(labels)
        ax.invert_yaxis()
        ax.set_xlabel("share of comparisons (first bot's wins)")
        ax.set_title("Win / tie / loss")
        ax.legend(fontsize=7, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.15))
        return _svg(fig)
