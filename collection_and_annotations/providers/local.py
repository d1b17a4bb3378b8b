"""Local / in-house provider: worker links on this server, signed when reachable from outside.

On loopback anyone who can open the link is on this machine, so links work unsigned (as in the
original project). When the server listens beyond loopback a link carries an HMAC of the worker
and assignment ids, and an unsigned or forged link is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from typing import Any
from urllib.parse import urlencode, urlsplit

from omegaconf import DictConfig

from collection_and_annotations.providers import register_provider
from collection_and_annotations.providers.base import (
    Completion,
    Identity,
    IdentityRefused,
    NoPlatform,
    Visit,
)

MAX_ID_LENGTH = 200


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


@register_provider("local")
class LocalProvider(NoPlatform):
    """Links on this server; review actions have no platform to tell (they are recorded in
    the database by the caller)."""

    name = "local"

    def __init__(self, secret: str, public_url: str, require_signature: bool):
        self.secret = secret
        self.public_url = public_url.rstrip("/")
        self.require_signature = require_signature

    @classmethod
    def create(cls, cfg: DictConfig, secret: str, public_url: str) -> LocalProvider:
        """Links need a signature as soon as the server listens beyond loopback or is
        reached through a public URL (a proxy on this machine forwards to loopback)."""
        public_host = urlsplit(public_url).hostname or ""
        return cls(secret, public_url, not (is_loopback(cfg.mephisto.architect.hostname)
                                            and is_loopback(public_host)))

    def link(self, worker_id: str, assignment_id: str) -> str:
        query = {"worker_id": worker_id, "assignment_id": assignment_id}
        if self.require_signature:
            query["sig"] = link_signature(self.secret, worker_id, assignment_id)
        return f"{self.public_url}/?{urlencode(query)}"

    def next_link(self, worker_id: str) -> str:
        """The link of this worker's next unit: a new assignment id is a new visit."""
        return self.link(worker_id, secrets.token_hex(4))

    def verify(self, worker_id: str, assignment_id: str, signature: object) -> bool:
        if not self.require_signature:
            return True
        expected = link_signature(self.secret, worker_id, assignment_id)
        return isinstance(signature, str) and hmac.compare_digest(  # bytes: any text
            expected.encode(), signature.encode("utf-8", "surrogatepass"))

    def identify(self, claim: dict[str, Any]) -> Identity:
        worker, assignment = claim.get("worker_id"), claim.get("assignment_id")
        if not isinstance(worker, str) or not worker or not isinstance(assignment, str) or (
            not assignment
        ):
            raise IdentityRefused("worker_id and assignment_id are required (they come from "
                                  "your link)", 400)
        if len(worker) > MAX_ID_LENGTH or len(assignment) > MAX_ID_LENGTH:
            raise IdentityRefused(f"worker_id and assignment_id must be at most "
                                  f"{MAX_ID_LENGTH} characters", 422)
        if not self.verify(worker, assignment, claim.get("sig")):
            raise IdentityRefused("this link is not valid (its signature does not match); ask "
                                  "the requester for your link")
        return Identity(worker, assignment)

    def completion(self, visit: Visit | None) -> Completion:
        return Completion()
