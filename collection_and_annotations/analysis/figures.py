"""The report's plots, drawn with matplotlib and written as inline SVG by `svg` (text kept as
text, no dates, a fixed id salt: the same results give the same bytes). Bot names, labels and
dimensions are data: drawn as plain text, never parsed as mathtext (`$...$`). Legends sit
outside the axes, so they never cover a bar or an axis."""

from __future__ import annotations

import functools
import io
import re
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

STYLE = {"svg.fonttype": "none", "svg.hashsalt": "cep-analysis", "font.size": 9,
         "axes.spines.top": False, "axes.spines.right": False, "text.parse_math": False}
OUTSIDE = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0}


@functools.cache
def _pyplot() -> ModuleType:
    """matplotlib's pyplot on the Agg backend, loaded at the first plot (slow to import)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot


def level(confidence: float) -> str:
    """A confidence level as the report writes it: 0.95 -> "95 %"."""
    return f"{round(confidence * 100, 2):g} %"


def svg(fig: Figure | None) -> str | None:
    """The figure as an inline <svg> element (None: no figure)."""
    if fig is None:
        return None
    plt = _pyplot()
    out = io.StringIO()
    with plt.rc_context(STYLE):
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
                  xlabel: str) -> Figure | None:
    if not rows:
        return None
    plt = _pyplot()
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
        ax.legend(fontsize=7, title="bot", **OUTSIDE)
        return fig


def rates_plot(rows: list[dict[str, Any]], confidence: float) -> Figure | None:
    named = [dict(r, name=f"{r['behaviour'] or r['label']} ({r['bucket']})") for r in rows]
    return _grouped_bars(named, "name", "rate",
                         f"Behaviour rates per bot ({level(confidence)} intervals)",
                         "share of annotated bot turns")


def _stacked_shares(labels: list[str], parts: list[tuple[str, list[float], Any]],
                    xlabel: str, title: str, legend_title: str | None) -> Figure:
    """One horizontal bar per label, stacked from `parts` (legend label, shares, colour)."""
    plt = _pyplot()
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(labels) + 1.2))
        left = [0.0] * len(labels)
        for name, shares, colour in parts:
            ax.barh(range(len(labels)), shares, left=left, color=colour, label=name)
            left = [a + b for a, b in zip(left, shares, strict=True)]
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels)
        ax.invert_yaxis()
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.legend(fontsize=7, title=legend_title, **OUTSIDE)
        return fig


def likert_plot(rows: list[dict[str, Any]]) -> Figure | None:
    if not rows:
        return None
    plt = _pyplot()
    colours = plt.get_cmap("RdYlGn")
    parts = [(str(score),
              [r["distribution"][str(score)] / r["n"] if r["n"] else 0 for r in rows],
              colours((score - 1) / 4))
             for score in range(1, 6)]
    return _stacked_shares([f"{r['dimension']} · {r['bot']} ({r['level']})" for r in rows],
                           parts, "share of ratings", "Rating distributions", "rating")


def _interval_dots(rows: list[dict[str, Any]], value: str, labels: list[str], marker: str,
                   width: float, row_height: float, reference: dict[str, Any], xlabel: str,
                   title: str) -> Figure:
    """One point per row at `row[value]` with its interval, a vertical reference line."""
    plt = _pyplot()
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(width, row_height * len(rows) + 1.2))
        err = [[], []]
        for r in rows:
            low, high = _errors(r[value], r["ci_low"], r["ci_high"])
            err[0].append(low)
            err[1].append(high)
        ax.errorbar([r[value] for r in rows], range(len(rows)), xerr=err, fmt=marker,
                    capsize=3)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(labels)
        ax.invert_yaxis()
        ax.axvline(color="grey", linewidth=0.5, **reference)
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        return fig


def ranking_plot(rows: list[dict[str, Any]], confidence: float,
                 title: str = "Ranking over all comparisons") -> Figure | None:
    """Bradley–Terry scores with their intervals, best first: the pooled ranking of
    comparisons, or an arena's leaderboard (rows without `dimension`)."""
    pooled = [r for r in rows if r.get("dimension", "all") == "all"]
    if not pooled:
        return None
    return _interval_dots(pooled, "score", [f"{r['rank']}. {r['bot']}" for r in pooled], "o",
                          6, 0.4, {"x": 0},
                          f"Bradley–Terry log-strength ({level(confidence)} intervals)", title)


def agreement_plot(rows: list[dict[str, Any]], confidence: float) -> Figure | None:
    shown = [r for r in rows if r["alpha"] is not None]
    if not shown:
        return None
    return _interval_dots(shown, "alpha",
                          [f"{r['label']} ({r['bucket']}, {r['level']})" for r in shown], "s",
                          7, 0.3, {"x": 0.667, "linestyle": "--"},
                          f"Krippendorff's alpha ({level(confidence)} intervals; dashed: 0.667)",
                          "Inter-annotator agreement")


def comparisons_plot(rows: list[dict[str, Any]]) -> Figure | None:
    if not rows:
        return None
    n = [max(r["n"], 1) for r in rows]
    parts = [(key, [r[key] / k for r, k in zip(rows, n, strict=True)], colour)
             for key, colour in (("wins", "tab:green"), ("ties", "tab:grey"),
                                 ("losses", "tab:red"))]
    return _stacked_shares([f"{r['bot_a']} vs {r['bot_b']} ({r['dimension']})" for r in rows],
                           parts, "share of comparisons (first bot's wins)", "Win / tie / loss",
                           None)
