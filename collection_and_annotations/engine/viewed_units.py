"""Units as their workers' pages last read them, kept in the server process for the submit
that follows (PostgreSQL).

A submit judges the answers against the unit's data and layout, then stores them in one
statement that checks, in the database, that the unit is still the worker's open unit on the
same try (`HotStatements.store_if_unchanged`). What that check does not cover never changes
for a unit on one try: its data, layout, pool, run and the time it was assigned. So the read
the page's own `GET` made can stand in for the submit's read, one statement fewer a unit.
A unit not found here (read by another process, evicted, or never viewed) is read as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from collection_and_annotations.engine.hot_sql import UnitWithData

# One unit for each of a thousand workers between their page and their submit at once. A
# unit of the original's sample tasks takes 10-20 KB in memory, so this is about 20 MB at
# most; a worker whose read was pushed out costs one read more, nothing else.
CAPACITY = 1024


class ViewedUnits:
    """The last `capacity` units viewed by their workers, by public id, each taken at most
    once (`take`): the one submit it serves."""

    def __init__(self, capacity: int = CAPACITY):
        self._capacity = capacity
        self._units: OrderedDict[str, UnitWithData] = OrderedDict()
        self._lock = threading.Lock()  # server threads share it (several per process)

    def keep(self, public_id: str, unit: UnitWithData) -> None:
        with self._lock:
            self._units[public_id] = unit
            self._units.move_to_end(public_id)
            if len(self._units) > self._capacity:
                self._units.popitem(last=False)

    def take(self, public_id: str, worker_id: int) -> UnitWithData | None:
        """The unit as `worker_id`'s page read it, removed from here; None when this process
        holds no read of it by that worker."""
        with self._lock:
            unit = self._units.pop(public_id, None)
        return unit if unit is not None and unit.worker_id == worker_id else None

    def __len__(self) -> int:
        return len(self._units)
