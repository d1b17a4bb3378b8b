"""Bearer tokens: a worker's token names its worker row; the requester token is one secret."""

from __future__ import annotations

import hashlib
import hmac


def _mac(secret: str, message: str) -> str:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()[:40]


def worker_token(secret: str, worker_id: int) -> str:
    return f"{worker_id}.{_mac(secret, f'worker:{worker_id}')}"


def worker_from_token(secret: str, token: str) -> int | None:
    worker_id, _, mac = token.partition(".")
    if not worker_id.isdigit() or not hmac.compare_digest(mac, _mac(secret, f"worker:{worker_id}")):
        return None
    return int(worker_id)


def requester_token(secret: str) -> str:
    return _mac(secret, "requester")


def bearer(header: str | None) -> str | None:
    if header and header.startswith("Bearer "):
        return header[len("Bearer "):].strip()
    return None
