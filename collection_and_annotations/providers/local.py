"""Local / in-house provider: worker links on this server, signed when reachable from outside.

On loopback anyone who can open the link is on this machine, so links work unsigned (as in the
original project). When the server listens beyond loopback a link carries an HMAC of the worker
and assignment ids, and an unsigned or forged link is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from urllib.parse import urlencode

PROVIDER_NAME = "local"


def is_loopback(hostname: str) -> bool:
    if hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def link_signature(secret: str, worker_id: str, assignment_id: str) -> str:
    message = f"{worker_id}\x00{assignment_id}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:32]


class LocalProvider:
    name = PROVIDER_NAME
    completion_code: str | None = None

    def __init__(self, secret: str, public_url: str, require_signature: bool):
        self.secret = secret
        self.public_url = public_url.rstrip("/")
        self.require_signature = require_signature

    def link(self, worker_id: str, assignment_id: str) -> str:
        query = {"worker_id": worker_id, "assignment_id": assignment_id}
        if self.require_signature:
            query["sig"] = link_signature(self.secret, worker_id, assignment_id)
        return f"{self.public_url}/?{urlencode(query)}"

    def verify(self, worker_id: str, assignment_id: str, signature: object) -> bool:
        if not self.require_signature:
            return True
        expected = link_signature(self.secret, worker_id, assignment_id)
        return isinstance(signature, str) and hmac.compare_digest(expected, signature)
