"""The requester's browser session: a signed cookie instead of the token in every request.

The dashboard exchanges the requester token once for an HTTP-only cookie, so page scripts
never hold the token. The cookie is signed (`<expiry>.<nonce>.<mac>`, HMAC with the task's
secret, like server/auth.py), so every server process of a deployment accepts it and a
restart keeps it; signing out records the session in the database (`settings`, until it would
have expired), so a copy of the cookie is refused everywhere from then on. A browser sends
cookies on its own, so a cookie request that changes state must also carry the CSRF token,
which only a page that read `/api/requester/session` knows (it is derived from the cookie, so
nothing is stored).
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from collection_and_annotations.server.auth import same_secret, signature
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Setting

COOKIE = "cep_requester"
CSRF_HEADER = "X-CSRF-Token"
SESSION_SECONDS = 12 * 3600
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
MAX_CLIENTS = 10_000  # addresses with recent wrong tokens kept before quiet ones are dropped
SIGNED_OUT = "signed-out:"  # + "<expiry>.<nonce>": a `settings` key per closed session


def new_session(secret: str, now: float | None = None) -> str:
    """A cookie value valid for SESSION_SECONDS from `now`."""
    expires = int((time.time() if now is None else now) + SESSION_SECONDS)
    nonce = secrets.token_hex(16)
    return f"{expires}.{nonce}.{signature(secret, f'requester-session:{expires}:{nonce}', 64)}"


def valid_session(secret: str, value: str | None, now: float | None = None) -> bool:
    """Whether a cookie value was signed with `secret` and has not expired."""
    if not value or value.count(".") != 2:
        return False
    expires, nonce, mac = value.split(".")
    if not expires.isdigit() or not same_secret(
            mac, signature(secret, f"requester-session:{expires}:{nonce}", 64)):
        return False
    return int(expires) > (time.time() if now is None else now)


def _signed_out_key(session: str) -> str:
    expires, nonce, _ = session.split(".")
    return f"{SIGNED_OUT}{expires}.{nonce}"


def session_is_open(db: Database, secret: str, value: str | None) -> bool:
    """Whether a cookie value is a valid session that was not signed out."""
    if not valid_session(secret, value):
        return False
    with db.read() as session:
        return session.get(Setting, _signed_out_key(value or "")) is None


def sign_out(db: Database, secret: str, value: str | None) -> None:
    """Close a session for good (every process reads it), and forget closed sessions that
    have expired since."""
    if not valid_session(secret, value):
        return
    now = time.time()
    # IntegrityError: signed out twice at once; it is closed
    with contextlib.suppress(IntegrityError), db.session() as session:
        closed = session.scalars(select(Setting.key)
                                 .where(Setting.key.startswith(SIGNED_OUT))).all()
        expired = [key for key in closed if int(key[len(SIGNED_OUT):].split(".")[0]) <= now]
        if expired:
            session.execute(delete(Setting).where(Setting.key.in_(expired)))
        session.add(Setting(key=_signed_out_key(value or ""), value=""))


def csrf_token(secret: str, session: str) -> str:
    """The CSRF token of one session (the page reads it from the session endpoints)."""
    return signature(secret, f"requester-csrf:{session}")


def valid_csrf(secret: str, session: str, given: str | None) -> bool:
    return bool(given) and same_secret(given, csrf_token(secret, session))


def cookie_options(public_url: str) -> dict[str, object]:
    """`Response.set_cookie` keywords: the cookie is unreadable by scripts, never sent by
    another site's page, and over https only when the server is reached by https."""
    return {"httponly": True, "samesite": "Strict", "path": "/",
            "secure": public_url.lower().startswith("https:")}


class FailureLimit:
    """Wrong tokens per client in a sliding window: a guessing script is slowed to
    `limit` tries per `window` seconds (the token has 160 bits; this keeps logs quiet)."""

    def __init__(self, limit: int = 20, window: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        self.limit, self.window, self.clock = limit, window, clock
        self._failures: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        failures = self._failures[client]
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        return failures

    def blocked(self, client: str) -> bool:
        with self._lock:
            blocked = len(self._recent(client, self.clock())) >= self.limit
            if not self._failures[client]:
                del self._failures[client]
            return blocked

    def failed(self, client: str) -> None:
        with self._lock:
            now = self.clock()
            self._recent(client, now).append(now)
            if len(self._failures) > MAX_CLIENTS:  # many addresses: forget the quiet ones
                for quiet in [c for c, f in self._failures.items()
                              if f[-1] <= now - self.window]:
                    del self._failures[quiet]
