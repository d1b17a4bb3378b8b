"""SQLite write transactions run in the event loop itself, for the chat's short steps.

A step handed to a pool thread needs the GIL back after every SQLite call (each releases it);
while the event loop is busy, every such handoff waits for the interpreter's switch interval
(5 ms), and the thread holds the process's write lock all along, so under load the chat's
writes queued for hundreds of milliseconds to seconds (measured: bench/RESULTS.md, 2026-11-23
"the message request's tail"). Run in the loop, a message or a bot reply costs its 0.2 ms of
CPU and no handoff at all.

The loop never waits here: when another thread holds the write lock, or another process holds
SQLite's (busy timeout 0 on this connection), the step raises `WriterBusy` before doing
anything and the caller runs it in a thread instead. This connection never checkpoints (an
fsync) either: `commits` tells the caller when to have a thread do it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from collection_and_annotations.storage.database import Database


class WriterBusy(Exception):
    """The write lock is taken: nothing was done; run the step in a thread."""


class LoopWrites:
    """One SQLite connection of the event loop's own, with `driver_transaction` like
    `Database`'s (engine/chat.py's steps take either)."""

    def __init__(self, db: Database):
        assert db.write_lock is not None, "SQLite only"
        self.dialect = db.dialect
        self._lock = db.write_lock
        self._connection = db.engine.raw_connection()
        self._connection.detach()  # its settings below must never reach the pool
        cursor = self._connection.cursor()
        cursor.execute("PRAGMA busy_timeout=0")
        cursor.execute("PRAGMA wal_autocheckpoint=0")
        cursor.close()
        self.commits = 0

    @contextmanager
    def driver_transaction(self) -> Iterator[Any]:
        """A write transaction that starts only if it needs no waiting (else `WriterBusy`)."""
        if not self._lock.acquire(blocking=False):
            raise WriterBusy
        try:
            cursor = self._connection.cursor()
            try:
                cursor.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:  # another process is writing
                raise WriterBusy from exc
            try:
                yield cursor
                self._connection.commit()
                self.commits += 1
            except BaseException:
                self._connection.rollback()
                raise
        finally:
            self._lock.release()

    def close(self) -> None:
        self._connection.close()
