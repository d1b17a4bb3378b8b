"""How database code waits for the database's socket: by blocking its thread (the default),
or, in a step the server runs in a greenlet of its event loop (server/greenlet_pool.py), by
handing the wait to the loop, which runs other steps meanwhile.

A thread that gives up the GIL for each round trip must win it back afterwards; under load,
with the event loop and other request threads holding it, that took longer than PostgreSQL
took to answer. A step in a greenlet never leaves the loop's thread, so it has nothing to
win back.

A step waits this way only outside transactions (the autocommit statements of
`Database.one_statement` and `Database.snapshot` on PostgreSQL): a step suspended inside a
transaction would keep its row locks while the loop runs other steps, and any of those that
waited (blocking) for one of them would stop the loop, and with it the step that holds it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar

SocketWait = Callable[[int, bool], None]
"""`wait(fd, for_writing)` returns once the socket is ready."""

_wait: ContextVar[SocketWait | None] = ContextVar("cep_socket_wait", default=None)


def cooperative_wait() -> SocketWait | None:
    """How this step waits for a socket without blocking its thread; None when it must block
    (not in a greenlet of the loop, or inside a transaction)."""
    return _wait.get()


@contextmanager
def waiting_with(wait: SocketWait | None) -> Iterator[None]:
    """Inside this block, socket waits go through `wait` (None: they block the thread)."""
    token = _wait.set(wait)
    try:
        yield
    finally:
        _wait.reset(token)


def blocking_waits() -> AbstractContextManager[None]:
    """A block whose socket waits block the thread: a transaction (see the module's note).
    Nothing to change where they block already (threads, SQLite: every transaction there)."""
    return nullcontext() if _wait.get() is None else waiting_with(None)
