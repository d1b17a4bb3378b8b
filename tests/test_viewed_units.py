"""The units a process keeps from its workers' page reads for their submits: bounded, each
taken once, and only by the worker who read it."""

from __future__ import annotations

from collection_and_annotations.engine.hot_sql import UnitWithData
from collection_and_annotations.engine.viewed_units import ViewedUnits


def _unit(unit_id: int, worker_id: int = 7) -> UnitWithData:
    return UnitWithData(unit_id, "assigned", worker_id, 0, 1, None, None, "main", {"n": unit_id})


def test_a_kept_unit_is_taken_once_by_its_worker():
    viewed = ViewedUnits()
    viewed.keep("u1", _unit(1))
    viewed.keep("u2", _unit(2))
    assert viewed.take("u1", 8) is None  # another worker's submit never gets it
    assert viewed.take("u2", 7) == _unit(2)
    assert viewed.take("u2", 7) is None  # a retry reads the database
    assert len(viewed) == 0


def test_the_oldest_read_goes_first_when_full():
    viewed = ViewedUnits(capacity=3)
    for n in range(3):
        viewed.keep(f"u{n}", _unit(n))
    viewed.keep("u0", _unit(0))  # read again: now the newest
    viewed.keep("u3", _unit(3))
    assert len(viewed) == 3
    assert viewed.take("u1", 7) is None
    assert [viewed.take(f"u{n}", 7).id for n in (0, 2, 3)] == [0, 2, 3]
