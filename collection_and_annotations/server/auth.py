"""Bearer tokens: a worker's token names its worker row; the requester token is one secret."""

from __future__ import annotations

import hashlib
import hmac
from functools import lru_cache

from starlette.requests import HTTPConnection

from collection_and_annotations.engine.work import WorkRefused


def signature(secret: str, message: str, length: int = 40) -> str:
    """HMAC-SHA256 of `message` with the task's secret, as `length` hex digits."""
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()[:length]


def same_secret(given: str, expected: str) -> bool:
    """Constant-time equality of what a client sent with a secret: any text, where
    `hmac.compare_digest` takes only ASCII strings."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode())


def worker_token(secret: str, worker_id: int) -> str:
    return f"{worker_id}.{signature(secret, f'worker:{worker_id}')}"


@lru_cache(maxsize=65536)  # every worker request presents its token: verified once each
def worker_from_token(secret: str, token: str) -> int | None:
    worker_id, _, mac = token.partition(".")
    expected = signature(secret, f"worker:{worker_id}")
    if not worker_id.isdigit() or not same_secret(mac, expected):
        return None
    return int(worker_id)


def worker_of(request: HTTPConnection, secret: str) -> int:
    """The worker the request's bearer token names, or 401."""
    token = bearer(request.headers.get("Authorization"))
    worker_id = worker_from_token(secret, token) if token else None
    if worker_id is None:
        raise WorkRefused("missing or invalid worker token; open your task link again", 401)
    return worker_id


def requester_token(secret: str) -> str:
    return signature(secret, "requester")


def bearer(header: str | None) -> str | None:
    if header and header.startswith("Bearer "):
        return header[len("Bearer "):].strip()
    return None
