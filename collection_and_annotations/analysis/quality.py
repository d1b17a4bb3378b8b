"""Quality figures from the submissions: units and time per unit per worker.

Screening and gold units are not served yet (confs that turn them on are refused), so their
pass rate and accuracy are reported as unavailable until they land."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from collection_and_annotations.analysis.load import Tables


def quality(tables: Tables) -> dict[str, Any]:
    seconds = [u["seconds"] for u in tables.units.values()
               if isinstance(u["seconds"], int | float)]
    per_worker: dict[str, list[float]] = defaultdict(list)
    for unit in tables.units.values():
        per_worker[str(unit["worker"])].append(unit["seconds"])
    workers = []
    for worker, times in sorted(per_worker.items()):
        known = [t for t in times if isinstance(t, int | float)]
        workers.append({"worker": worker, "units": len(times),
                        "median_seconds": float(np.median(known)) if known else None})

    def quantiles(values: list[float]) -> dict[str, float] | None:
        if not values:
            return None
        q = np.percentile(values, [10, 50, 90])
        return {"p10": float(q[0]), "median": float(q[1]), "p90": float(q[2])}

    return {
        "units": len(tables.units), "workers": len(per_worker),
        "seconds_per_unit": quantiles(seconds), "per_worker": workers,
        "screening_pass_rate": None, "gold_accuracy": None,
        "note": "screening and gold units are not served by this version; their pass rate, "
                "gold accuracy and the results without flagged workers appear once they are",
    }
