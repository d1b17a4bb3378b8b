"""p-values adjusted across a report's family of tests: Holm's step-down (controls the
family-wise error rate, any dependence) by default, Benjamini-Hochberg (the false discovery
rate, scipy's `false_discovery_control`) on request."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

METHODS = {"holm": "Holm (family-wise error rate)",
           "bh": "Benjamini-Hochberg (false discovery rate)"}


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's adjusted p-values: the k-th smallest times (m - k + 1), kept monotone, at most 1."""
    m = len(pvalues)
    order = np.argsort(pvalues, kind="stable")
    stepped = np.maximum.accumulate(pvalues[order] * (m - np.arange(m)))
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def adjust_rows(rows: Iterable[dict[str, Any]], method: str) -> None:
    """Set `p_adjusted` on every row with a `p_value` (None stays None), the rows together
    being the family."""
    rows = list(rows)
    tested = [r for r in rows if r.get("p_value") is not None]
    for row in rows:
        row["p_adjusted"] = None
    if not tested:
        return
    pvalues = np.array([r["p_value"] for r in tested], dtype=np.float64)
    if method == "holm":
        adjusted = holm(pvalues)
    elif method == "bh":
        from scipy.stats import false_discovery_control  # slow to import: loaded when used

        adjusted = false_discovery_control(pvalues, method="bh")
    else:
        raise ValueError(f"unknown adjustment {method!r}; one of {', '.join(METHODS)}")
    for row, value in zip(tested, adjusted, strict=True):
        row["p_adjusted"] = float(value)
