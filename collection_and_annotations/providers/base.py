"""What the server needs from a provider (where workers come from): one module per provider.

A provider vouches for a worker's identity on the claim request, gives the completion code a
worker takes back to the platform, and carries out the requester's review actions there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from omegaconf import DictConfig


@dataclass(frozen=True)
class Identity:
    """A worker as the provider names them, and the provider's id of this visit (a new one
    asks for new work, the same one resumes)."""

    worker_id: str
    session_id: str


class IdentityRefused(Exception):
    """The claim does not prove who the worker is; the message is shown to them, `status` is
    the HTTP status."""

    def __init__(self, message: str, status: int = 403):
        super().__init__(message)
        self.status = status


class Provider(Protocol):
    name: str
    completion_code: str | None

    @classmethod
    def create(cls, cfg: DictConfig, secret: str, public_url: str) -> Provider:
        """The provider a run conf asks for; `public_url` is where this server is reached."""

    def identify(self, claim: dict[str, Any]) -> Identity:
        """The worker of a claim request body; raise IdentityRefused when it is not vouched
        for."""

    def link(self, worker_id: str, session_id: str) -> str:
        """A link that brings this worker to this server (for in-house workers)."""

    def approve(self, unit_public_id: str) -> None:
        """Tell the platform the unit's work is accepted (pay)."""

    def reject(self, unit_public_id: str, reason: str) -> None:
        """Tell the platform the unit's work is rejected, with the reason."""
