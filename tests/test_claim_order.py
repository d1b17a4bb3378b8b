"""Units are served in a random order fixed per run by `random_seed`, whichever claim path
takes them (a new worker's first claim, a known worker's, the locked one), through the API."""

from __future__ import annotations

from helpers import app_client, write_task

from collection_and_annotations.server.app import create_app

UNITS = 24


def _lines() -> list[dict]:
    """One dialogue per line, its text naming its place in the file."""
    return [{"data": [{"dialogue_id": f"d{i}", "group_id": f"g{i}",
                       "annotation_tasks": ["overall_quality"],
                       "turns": [["user", f"line {i}"], ["system", "a reply"]]}]}
            for i in range(UNITS)]


def _served_order(open_conf, folder, database_url: str, *overrides: str) -> list[int]:
    """Claim every unit through the API: half by new workers, half by one known worker on
    new visits; the file lines in the order they were served."""
    conf = write_task(folder, _lines(), {f"g{i}": 1 for i in range(UNITS)},
                      task={"allowed_concurrent": 0})
    served = open_conf(str(conf), database_url, *overrides)
    client = app_client(create_app(served))
    order = []
    for n in range(UNITS):
        worker, visit = (f"new{n}", "a1") if n < UNITS // 2 else ("known", f"visit{n}")
        claimed = client.post("/api/claim", json={"worker_id": worker, "assignment_id": visit})
        assert claimed.status_code == 200, claimed.json()
        body = claimed.json()
        unit = client.get(f"/api/units/{body['unit_id']}",
                          headers={"Authorization": f"Bearer {body['token']}"}).json()
        order.append(int(unit["dialogues"][0]["turns"][0]["text"].removeprefix("line ")))
    served.db.dispose()
    return order


def test_units_are_served_in_a_seeded_random_order(tmp_path, database_url, open_conf):
    seeded = _served_order(open_conf, tmp_path / "a", database_url,
                           "mephisto.blueprint.random_seed=7")
    assert sorted(seeded) == list(range(UNITS))
    assert seeded != list(range(UNITS))  # not the file's order
    # The same seed gives the same order on another database, and on the locked claim path
    # (a limit on the whole task sends every claim there).
    again = _served_order(open_conf, tmp_path / "b", f"sqlite:///{tmp_path / 'b.sqlite3'}",
                          "mephisto.blueprint.random_seed=7",
                          "mephisto.task.max_num_concurrent_units=1000")
    assert again == seeded
    other = _served_order(open_conf, tmp_path / "c", f"sqlite:///{tmp_path / 'c.sqlite3'}",
                          "mephisto.blueprint.random_seed=8")
    assert other != seeded
