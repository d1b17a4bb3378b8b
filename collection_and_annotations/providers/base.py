"""What the server needs from a provider (where workers come from): one module per provider.

A provider vouches for a worker's identity on the claim request, tells the worker how to
finish on its platform (a code, a redirect, a form to post), and carries out the requester's
review actions there. The decisions themselves are rows (`engine/review.py`); a provider only
sends them, and `engine/provider_sync.py` retries what failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from omegaconf import DictConfig

from collection_and_annotations.config.schema import ProviderConf

if TYPE_CHECKING:
    from collection_and_annotations.storage.database import Database

DECISIONS = ("approve", "reject", "soft_reject")


@dataclass(frozen=True)
class Identity:
    """A worker as the provider names them, and the provider's id of this visit (a new one
    asks for new work, the same one resumes)."""

    worker_id: str
    session_id: str


@dataclass(frozen=True)
class Visit:
    """Who did a unit, in the provider's names: what review actions and completion need."""

    unit_id: str
    worker_id: str
    session_id: str


@dataclass(frozen=True)
class Completion:
    """How a worker finishes on the platform: a code to enter, a page to go to, or a form
    the page posts (MTurk's externalSubmit)."""

    code: str | None = None
    redirect_url: str | None = None
    external_submit: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"completion_code": self.code}
        if self.redirect_url:
            body["redirect_url"] = self.redirect_url
        if self.external_submit:
            body["external_submit"] = self.external_submit
        return body


class IdentityRefused(Exception):
    """The claim does not prove who the worker is; the message is shown to them, `status` is
    the HTTP status."""

    def __init__(self, message: str, status: int = 403):
        super().__init__(message)
        self.status = status


class ProviderError(Exception):
    """A platform call failed. `maybe_done`: the request may have reached the platform (a
    timeout after sending), so a call that is not idempotent must not be repeated."""

    def __init__(self, message: str, maybe_done: bool = False):
        super().__init__(message)
        self.maybe_done = maybe_done


class Provider(Protocol):
    name: str
    public_url: str
    # whether the completion differs per worker (then `completion` needs the visit)
    completion_varies: bool
    # whether bonuses are paid through the platform (else they are only recorded)
    pays: bool
    # its conf keys (`mephisto.provider.*`): a dataclass subclassing ProviderConf
    conf: ClassVar[type[ProviderConf]] = ProviderConf
    # origins the page may post a form to and be framed by (MTurk's submit host)
    platform_origins: tuple[str, ...] = ()
    # whether worker links carry this server's signature (the requester API hands out more)
    require_signature: bool = True

    @classmethod
    def check(cls, cfg: DictConfig) -> None:
        """Before anything is written or sent: what the provider needs is there (e.g. its
        credentials); raise UserError when not."""

    @classmethod
    def create(cls, cfg: DictConfig, secret: str, public_url: str) -> Provider:
        """The provider a run conf asks for; `public_url` is where this server is reached."""

    def start(self, db: Database, task_name: str, units: int) -> list[str]:
        """Prepare the platform for a run (a draft study, HITs); lines to print."""

    def identify(self, claim: dict[str, Any]) -> Identity:
        """The worker of a claim request body; raise IdentityRefused when it is not vouched
        for."""

    def link(self, worker_id: str, session_id: str) -> str:
        """A link that brings this worker to this server (for in-house workers)."""

    def completion(self, visit: Visit | None) -> Completion:
        """What the worker gets on submit (`visit` is None unless `completion_varies`)."""

    def check_decision(self, decision: str, reason: str, category: str | None) -> str | None:
        """What the platform would refuse in a decision (checked before it is recorded)."""

    def review(self, visit: Visit, decision: str, reason: str, category: str | None) -> bool:
        """Send a decision to the platform; False when there is nothing to send. Raises
        ProviderError."""

    def bonus_setup(self, visit: Visit, amount_cents: int, reason: str) -> str | None:
        """First step of a bonus; returns the platform's reference of it (None: one step)."""

    def bonus_pay(self, visit: Visit, ref: str | None, amount_cents: int, reason: str) -> None:
        """Pay a bonus set up before; never called twice for one bonus."""

    def block(self, worker_id: str, reason: str) -> bool:
        """Block a worker on the platform too; False when it has no such thing."""

    def unblock(self, worker_id: str) -> bool:
        """Lift a block on the platform too; False when it has no such thing."""

    def entry(self, args: dict[str, str]) -> str:
        """Where a worker arriving from the platform (its URL parameters) is sent: the page,
        with a link this server signed. Raises IdentityRefused (404 without a platform)."""
        raise IdentityRefused("this task is not served through a crowd platform", 404)

    def next_link(self, worker_id: str) -> str | None:
        """The link of this worker's next unit, offered after a submit, for workers who come
        back through links (local); None when the platform hands out the work."""
        return None

    def listed_visits(self) -> dict[tuple[str, str], str] | None:
        """(worker id, session id) -> the platform's status of every visit it lists for this
        run, to verify identities taken from URL parameters and to free the units of visits
        the worker gave up on the platform; None when the platform vouched at claim."""


class NoPlatform(Provider):
    """Review actions for providers with no platform to tell (local and external links):
    decisions and bonuses are recorded here only, and paid by the requester by hand."""

    completion_varies = False
    pays = False

    def start(self, db: Database, task_name: str, units: int) -> list[str]:
        return []

    def check_decision(self, decision: str, reason: str, category: str | None) -> str | None:
        return None

    def review(self, visit: Visit, decision: str, reason: str, category: str | None) -> bool:
        return False

    def bonus_setup(self, visit: Visit, amount_cents: int, reason: str) -> str | None:
        return None

    def bonus_pay(self, visit: Visit, ref: str | None, amount_cents: int, reason: str) -> None:
        return None

    def block(self, worker_id: str, reason: str) -> bool:
        return False

    def unblock(self, worker_id: str) -> bool:
        return False

    def listed_visits(self) -> dict[tuple[str, str], str] | None:
        return None
