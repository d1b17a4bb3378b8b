"""How far to trust each LLM judge (docs/analysis.md, "Judges"): its answers beside the
humans' on the same items, per bucket and label.

- `judges` rows: accuracy against the human majority (the unique most frequent human answer
  of the item; items without one are left out) with the dialogue-clustered interval of
  `analysis.intervals`, Cohen's kappa against that majority (quadratic weights for 1-5
  ratings), and Krippendorff's alpha of the humans alone and with the judge as one more
  annotator, on the same items (those with two human answers or more), with a paired item
  bootstrap. The verdict: "worse than humans" when the interval of alpha with the judge minus
  alpha of the humans lies below 0 (adding the judge lowers the agreement: it agrees with
  people less than people agree with each other), "too little data" below MIN_ITEMS such items
  or without an alpha, else "as good as humans".
- `bias` rows: per bot, the judge's label rate or mean rating and the humans' on the same
  items, their difference and its MOVER interval (the two means are correlated through the
  dialogues they share).
- `judge_figures`: the alphas' intervals and each Likert dimension's mean absolute error
  against the human median (`agreement`), the ranking of the bots by the judge beside the
  humans' with a rank correlation (`rankings`: mean rates and ratings; Bradley-Terry on
  comparisons, the same code as the main ranking), and what the judge cost and took per 100
  dialogues (`costs`).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from collection_and_annotations.analysis.answers import label_columns, presence
from collection_and_annotations.analysis.behaviours import Behaviour
from collection_and_annotations.analysis.comparisons import ranking
from collection_and_annotations.analysis.intervals import clustered_means, correlations, difference
from collection_and_annotations.analysis.load import Records, Tables, add_records
from collection_and_annotations.analysis.stats import paired_alpha_bootstrap
from collection_and_annotations.metrics.agreement import cohens_kappa_from_table

MIN_ITEMS = 20  # items with >= 2 human answers below which a verdict says too little
AS_GOOD, WORSE, TOO_LITTLE = "as good as humans", "worse than humans", "too little data"
RATINGS = [1, 2, 3, 4, 5]
CHOICES = ["turns", "turns2", "none"]
RATE_SCALE, RATING_SCALE = (0.0, 1.0), (1.0, 5.0)
PER = 100  # costs per this many dialogues


@dataclass
class JudgeData:
    """One judge's submissions as tables, and what its calls cost."""

    tables: Tables = field(default_factory=Tables)
    dialogues: int = 0
    totals: dict[str, float | None] = field(default_factory=lambda: dict.fromkeys(
        ("calls", "invalid_replies", "failed_calls", "input_tokens", "output_tokens", "cost",
         "latency_ms"), 0))
    prompts: set[str] = field(default_factory=set)
    settings: list[dict[str, Any]] = field(default_factory=list)

    def add(self, record: dict[str, Any], definitions: dict[str, Any], by: str) -> None:
        before = self.tables.records
        add_records(self.tables, [(record, definitions)], by)
        if self.tables.records == before:
            return  # unreadable (named in its tables) or a repeat
        self.dialogues += len(record["dialogues"])
        summary = _inside(record, "timings", "client", "judge")
        for key, total in self.totals.items():
            value = summary.get(key)
            number = value if isinstance(value, int | float) and not isinstance(value, bool) \
                else None
            self.totals[key] = None if total is None or number is None else total + number
        if isinstance(summary.get("prompt_sha256"), str):
            self.prompts.add(summary["prompt_sha256"])
        if isinstance(summary.get("settings"), dict) and summary["settings"] not in self.settings:
            self.settings.append(summary["settings"])


def _inside(record: dict[str, Any], *keys: str) -> dict[str, Any]:
    """`record[k1][k2]...` when each is an object, else {} (a file's odd record)."""
    found: Any = record
    for key in keys:
        found = found.get(key) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else {}


def without_judges(records: Records, judges: dict[str, JudgeData], by: str
                   ) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """The people's records; a judge's (`judge` set) go into `judges` on the way."""
    for record, definitions in records:
        name = record.get("judge") if isinstance(record, dict) else None
        if name is None:
            yield record, definitions
            continue
        judges.setdefault(str(name), JudgeData()).add(record, definitions, by)


@dataclass
class _Label:
    """One label's answers per item: every human answer and the judge's."""

    bucket: str
    label: str
    level: str  # nominal | ordinal
    domain: list[Any]
    items: list[str] = field(default_factory=list)
    dialogues: list[str] = field(default_factory=list)
    bots: list[str] = field(default_factory=list)
    human: list[list[Any]] = field(default_factory=list)
    judge: list[Any] = field(default_factory=list)

    def add(self, item: str, dialogue: str, bot: str, human: list[Any], judge: Any) -> None:
        self.items.append(item)
        self.dialogues.append(dialogue)
        self.bots.append(bot)
        self.human.append(human)
        self.judge.append(judge)


def _labels(humans: Tables, judge: Tables, behaviours: list[Behaviour]) -> list[_Label]:
    """Every label both answered, with the items the judge and at least one human answered."""
    found = []
    for bucket in sorted(humans.turns.keys() & judge.turns.keys()):
        people, model = list(humans.turns[bucket].values()), list(judge.turns[bucket].values())
        columns = label_columns(bucket, humans.buckets.get(bucket, {}), people, behaviours)
        human_rows, judge_rows = presence(people, columns), presence(model, columns)
        by_item: dict[str, list[int]] = defaultdict(list)
        for row, turn in enumerate(people):
            by_item[turn.item].append(row)
        judged = {}
        for row, turn in enumerate(model):
            judged.setdefault(turn.item, row)
        for j, (label, _, _) in enumerate(columns):
            table = _Label(bucket, label, "nominal", [0, 1])
            for item, row in judged.items():
                if item in by_item:
                    first = people[by_item[item][0]]
                    table.add(item, first.cluster, first.bot,
                              [int(human_rows[r, j]) for r in by_item[item]],
                              int(judge_rows[row, j]))
            found.append(table)
    return found + _rating_labels(humans, judge) + _comparison_labels(humans, judge)


def _rating_labels(humans: Tables, judge: Tables) -> list[_Label]:
    people: dict[tuple[str, str], dict[str, list[tuple]]] = defaultdict(lambda: defaultdict(list))
    for bucket, dimension, _level, bot, cluster, item, _worker, rating, _unit in humans.ratings:
        people[(bucket, dimension)][item].append((rating, cluster, bot))
    model: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for bucket, dimension, _level, _bot, _cluster, item, _worker, rating, _unit in judge.ratings:
        model[(bucket, dimension)].setdefault(item, rating)
    found = []
    for key in sorted(people.keys() & model.keys()):
        table = _Label(*key, "ordinal", RATINGS)
        for item, rating in model[key].items():
            answers = people[key].get(item)
            if answers:
                table.add(item, answers[0][1], answers[0][2], [a[0] for a in answers], rating)
        found.append(table)
    return found


def _choice(chosen: Any) -> str:
    return chosen if chosen in CHOICES[:2] else "none"


def _comparison_labels(humans: Tables, judge: Tables) -> list[_Label]:
    people: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for bucket, item, *_rest, chosen, _left, _unit in humans.comparisons:
        people[bucket][item].append(_choice(chosen))
    found = []
    for bucket in sorted(people.keys() & {c[0] for c in judge.comparisons}):
        table = _Label(bucket, "chosen dialogue", "nominal", CHOICES)
        seen: set[str] = set()
        for _bucket, item, _worker, bot, bot2, chosen, _left, _unit in judge.comparisons:
            if _bucket == bucket and item in people[bucket] and item not in seen:
                seen.add(item)
                table.add(item, item, f"{bot} vs {bot2}", people[bucket][item], _choice(chosen))
        found.append(table)
    return found


def _majority(values: list[Any]) -> Any:
    """The unique most frequent value (None on a tie)."""
    counts = defaultdict(int)
    for value in values:
        counts[value] += 1
    top = max(counts.values())
    winners = [v for v, n in counts.items() if n == top]
    return winners[0] if len(winners) == 1 else None


def _codes(names: list[str]) -> np.ndarray:
    return np.unique(np.asarray(names, dtype=object), return_inverse=True)[1].ravel()


def _value(x: float) -> float | None:
    return None if x is None or np.isnan(x) else float(x)


def _agreement(judge: str, table: _Label, resamples: int, rng: np.random.Generator,
               confidence: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The `judges` row of one label, and its details for `judge_figures.agreement`."""
    decided = [(i, m) for i, m in enumerate(map(_majority, table.human)) if m is not None]
    accuracy = low = high = kappa = None
    if decided:
        correct = np.array([table.judge[i] == m for i, m in decided], dtype=np.float64)
        [mean], _ = clustered_means(correct, [_codes([table.dialogues[i] for i, _ in decided])],
                                    confidence)
        accuracy, low, high = mean.value, mean.ci_low, mean.ci_high
        index = {value: k for k, value in enumerate(table.domain)}
        contingency = np.zeros((len(table.domain), len(table.domain)))
        for i, majority in decided:
            contingency[index[table.judge[i]], index[majority]] += 1
        kappa = _value(cohens_kappa_from_table(
            contingency, "quadratic" if table.level == "ordinal" else None).kappa)
    index = {value: k for k, value in enumerate(table.domain)}
    counts = np.zeros((len(table.items), len(table.domain)))
    for row, answers in enumerate(table.human):
        for value in answers:
            counts[row, index[value]] += 1
    with_judge = counts.copy()
    with_judge[np.arange(len(table.items)), [index[v] for v in table.judge]] += 1
    pairable = int((counts.sum(axis=1) >= 2).sum())
    alphas = paired_alpha_bootstrap(counts, with_judge, table.level, table.domain, resamples,
                                    rng, confidence) if pairable else None
    verdict = _verdict(pairable, alphas)
    row = {"judge": judge, "bucket": table.bucket, "label": table.label,
           "n_items": len(decided), "accuracy": accuracy, "accuracy_ci_low": low,
           "accuracy_ci_high": high, "kappa": kappa,
           "alpha_humans": _value(alphas["alpha_a"]) if alphas else None,
           "alpha_with_judge": _value(alphas["alpha_b"]) if alphas else None,
           "verdict": verdict}
    detail = {"judge": judge, "bucket": table.bucket, "label": table.label,
              "level": table.level, "n_items_judged": len(table.items),
              "n_items_two_humans": pairable,
              **{key: _value(alphas[name]) if alphas else None for key, name in (
                  ("alpha_humans_ci_low", "low_a"), ("alpha_humans_ci_high", "high_a"),
                  ("alpha_with_judge_ci_low", "low_b"), ("alpha_with_judge_ci_high", "high_b"),
                  ("alpha_difference_ci_low", "diff_low"),
                  ("alpha_difference_ci_high", "diff_high"))},
              **_mae(table, confidence)}
    return row, detail


def _verdict(pairable: int, alphas: dict[str, float] | None) -> str:
    if alphas is None or pairable < MIN_ITEMS or None in (
            _value(alphas["alpha_a"]), _value(alphas["alpha_b"])):
        return TOO_LITTLE
    high = _value(alphas["diff_high"])
    return WORSE if high is not None and high < 0 else AS_GOOD


def _mae(table: _Label, confidence: float) -> dict[str, Any]:
    """Ordinal labels: the mean absolute error against the human median, with its interval."""
    if table.level != "ordinal" or not table.items:
        return {"mae": None, "mae_ci_low": None, "mae_ci_high": None}
    errors = np.array([abs(j - statistics.median(h)) for j, h in zip(table.judge, table.human,
                                                                      strict=True)])
    [mean], _ = clustered_means(errors, [_codes(table.dialogues)], confidence, (0.0, 4.0))
    return {"mae": mean.value, "mae_ci_low": mean.ci_low, "mae_ci_high": mean.ci_high}


def _bias(judge: str, table: _Label, confidence: float) -> list[dict[str, Any]]:
    """Per bot: the judge's rate (or mean rating) and the humans' on the same items."""
    scale = RATING_SCALE if table.level == "ordinal" else RATE_SCALE
    rows = []
    for bot in sorted(set(table.bots)):
        mine = [i for i, b in enumerate(table.bots) if b == bot]
        names = [table.dialogues[i] for i in mine] + [table.dialogues[i] for i in mine
                                                      for _ in table.human[i]]
        codes = _codes(names)
        judge_codes, human_codes = codes[:len(mine)], codes[len(mine):]
        judge_values = np.array([table.judge[i] for i in mine], dtype=np.float64)
        human_values = np.array([v for i in mine for v in table.human[i]], dtype=np.float64)
        [a], var_a = clustered_means(judge_values, [judge_codes], confidence, scale)
        [b], var_b = clustered_means(human_values, [human_codes], confidence, scale)
        [rho] = correlations(judge_values, human_values, [judge_codes], [human_codes])
        found = difference(a, b, float(var_a[0]), float(var_b[0]), float(rho), confidence, scale)
        rows.append({"judge": judge, "bucket": table.bucket, "label": table.label, "bot": bot,
                     "judge_value": a.value, "human_value": b.value,
                     "difference": found.value, "ci_low": found.ci_low,
                     "ci_high": found.ci_high})
    return rows


def _rank_row(judge: str, bucket: str, label: str, method: str,
              scores: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """`scores`: bot -> (humans' score, judge's score)."""
    bots = sorted(scores)
    human = [scores[b][0] for b in bots]
    model = [scores[b][1] for b in bots]
    rho = None
    if len(bots) >= 3 and len(set(human)) > 1 and len(set(model)) > 1:
        from scipy.stats import spearmanr  # scipy.stats is slow to import: loaded when used

        rho = _value(float(spearmanr(human, model).statistic))
    return {"judge": judge, "bucket": bucket, "label": label, "method": method,
            "n_bots": len(bots), "rank_correlation": rho,
            "same_best": max(bots, key=lambda b: scores[b][0]) == max(
                bots, key=lambda b: scores[b][1]) if bots else None,
            "bots": [{"bot": b, "humans": scores[b][0], "judge": scores[b][1]} for b in bots]}


def _rankings(judge: str, bias: list[dict[str, Any]], humans: Tables, model: Tables,
              resamples: int, rng: np.random.Generator, confidence: float
              ) -> list[dict[str, Any]]:
    rows = []
    means: dict[tuple[str, str], dict[str, tuple[float, float]]] = defaultdict(dict)
    for row in bias:
        means[(row["bucket"], row["label"])][row["bot"]] = (row["human_value"],
                                                            row["judge_value"])
    for (bucket, label), scores in sorted(means.items()):
        if len(scores) >= 2:
            rows.append(_rank_row(judge, bucket, label, "mean", scores))
    judged = {(c[0], c[1]) for c in model.comparisons}
    people = Tables(comparisons=[c for c in humans.comparisons if (c[0], c[1]) in judged])
    scored: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(
        lambda: defaultdict(list))
    for side, tables in enumerate((people, Tables(comparisons=model.comparisons))):
        for found in ranking(tables, resamples, rng, confidence)[0]:
            scored[found["dimension"]][found["bot"]].append((side, found["score"]))
    for dimension, bots in sorted(scored.items()):
        both = {bot: (dict(v)[0], dict(v)[1]) for bot, v in bots.items() if len(v) == 2}
        if len(both) >= 2:
            rows.append(_rank_row(judge, dimension, "chosen dialogue", "bradley_terry", both))
    return rows


def _costs(judge: str, data: JudgeData) -> dict[str, Any]:
    totals = data.totals
    dialogues = data.dialogues

    def per(value: float | None) -> float | None:
        return None if value is None or not dialogues else value * PER / dialogues

    return {"judge": judge, "submissions": data.tables.records, "dialogues": dialogues,
            **totals, "seconds": None if totals["latency_ms"] is None
            else totals["latency_ms"] / 1000,
            "per_100_dialogues": {
                "calls": per(totals["calls"]), "input_tokens": per(totals["input_tokens"]),
                "output_tokens": per(totals["output_tokens"]), "cost": per(totals["cost"]),
                "seconds": per(None if totals["latency_ms"] is None
                               else totals["latency_ms"] / 1000)},
            "prompt_sha256": sorted(data.prompts), "settings": data.settings}


def judge_section(humans: Tables, judges: dict[str, JudgeData], behaviours: list[Behaviour],
                  resamples: int, rng: np.random.Generator, confidence: float
                  ) -> dict[str, Any]:
    """results.json's `judges`, `bias` and `judge_figures` (empty without judges)."""
    rows: list[dict[str, Any]] = []
    bias: list[dict[str, Any]] = []
    figures: dict[str, list[dict[str, Any]]] = {"agreement": [], "rankings": [], "costs": []}
    for name in sorted(judges):
        data = judges[name]
        mine: list[dict[str, Any]] = []
        for table in _labels(humans, data.tables, behaviours):
            row, detail = _agreement(name, table, resamples, rng, confidence)
            rows.append(row)
            figures["agreement"].append(detail)
            if table.bucket not in {c[0] for c in data.tables.comparisons}:
                mine += _bias(name, table, confidence)
        bias += mine
        figures["rankings"] += _rankings(name, mine, humans, data.tables, resamples, rng,
                                         confidence)
        figures["costs"].append(_costs(name, data))
    return {"judges": rows, "bias": bias, "judge_figures": figures}


def judges_signature(judges: dict[str, JudgeData]) -> dict[str, Any]:
    """What the judges' figures were computed from."""
    return {name: {"submissions": data.tables.records, "data_sha256": data.tables.data_sha256,
                   "prompt_sha256": sorted(data.prompts)} for name, data in sorted(judges.items())}
