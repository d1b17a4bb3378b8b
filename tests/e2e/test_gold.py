"""A gold unit in Chromium is indistinguishable from real work: same kind, same payload shape,
the same page, and nothing the browser receives names it as gold (the fixture conf `consistency`
unchanged but for turning golds on and screening off)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.browser


def _shape(unit: dict) -> tuple:
    """The payload's structure: its keys, each dialogue's keys and each bucket's keys."""
    return (sorted(unit), sorted({k for d in unit["dialogues"] for k in d}),
            sorted({k for b in unit["buckets"].values() for k in b}))


def test_a_gold_unit_looks_like_real_work(cep_fixtures, serve, worker):
    server = serve(cep_fixtures / "hydra_configs" / "conf" / "consistency.yaml",
                   f"task_dir={cep_fixtures}", "mephisto.blueprint.use_screening_task=false",
                   "mephisto.blueprint.use_golds=true", "mephisto.blueprint.min_golds=1",
                   # this worker answers at random: a failed gold must not block them here
                   "mephisto.blueprint.max_incorrect_golds=5")
    # (a worker id without "gold" in it: the completion page's "Take another unit" link
    # carries it, and the check below reads the whole page)
    gold = worker.open(server.link("annotator7", "1"))
    gold_id = worker.unit_id
    worker.complete()
    gold_page = worker.page.content()
    real = worker.open(server.link("annotator7", "2"))
    real_id = worker.unit_id
    worker.complete()

    assert [s["pool"] for s in server.submissions(gold_id)] == ["gold"]
    assert [s["pool"] for s in server.submissions(real_id)] == ["main"]
    assert gold["kind"] == real["kind"] == "annotation"
    assert _shape(gold) == _shape(real)
    assert "gold" not in json.dumps(gold).lower()  # the unit as the page received it
    assert "gold" not in gold_page.lower()  # and the page it showed
