"""Amazon Mechanical Turk (and its sandbox): an ExternalQuestion HIT pointing at this server.

Kept for compatibility with the original confs: AWS closed MTurk to new customers in 2026.
boto3 is an optional extra (`pip install '.[mturk]'`), imported only when this provider runs.
MTurk opens `/api/enter` with `assignmentId`, `hitId`, `workerId` and `turkSubmitTo`; while the
worker only previews the HIT, `assignmentId` is ASSIGNMENT_ID_NOT_AVAILABLE and nothing is
assigned. On submit the page posts the assignment id to MTurk's externalSubmit (the host is
taken from the sandbox flag, never from the URL, so a forged `turkSubmitTo` leads nowhere).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

from omegaconf import DictConfig

from collection_and_annotations.config.schema import ProviderConf
from collection_and_annotations.errors import UserError
from collection_and_annotations.providers import register_provider
from collection_and_annotations.providers.base import (
    Completion,
    Identity,
    IdentityRefused,
    Provider,
    ProviderError,
    Visit,
)
from collection_and_annotations.providers.local import MAX_ID_LENGTH, LocalProvider
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Setting

PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
ENDPOINTS = {True: "https://mturk-requester-sandbox.us-east-1.amazonaws.com",
             False: "https://mturk-requester.us-east-1.amazonaws.com"}
SUBMIT_HOSTS = {True: "https://workersandbox.mturk.com", False: "https://www.mturk.com"}
FRAME_HEIGHT = 800
PREVIEW_MESSAGE = ("this is a preview of the HIT: accept it on MTurk to start working (nothing "
                   "is assigned to you until then)")


def external_question(url: str) -> str:
    return ('<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurk'
            'DataSchemas/2006-07-14/ExternalQuestion.xsd">'
            f"<ExternalURL>{escape(url)}</ExternalURL>"
            f"<FrameHeight>{FRAME_HEIGHT}</FrameHeight></ExternalQuestion>")


def mturk_client(sandbox: bool) -> Any:
    try:
        import boto3
    except ImportError:
        raise UserError("the mturk provider needs boto3: pip install '.[mturk]'") from None
    return boto3.client("mturk", region_name="us-east-1", endpoint_url=ENDPOINTS[sandbox])


def call(method: Any, **kwargs: Any) -> Any:
    """A boto3 call whose failure is a ProviderError (a read timeout: it may have happened)."""
    from botocore.exceptions import BotoCoreError, ClientError, ReadTimeoutError

    try:
        return method(**kwargs)
    except ClientError as exc:
        raise ProviderError(f"MTurk refused: {exc}") from None
    except ReadTimeoutError as exc:
        raise ProviderError(f"no answer from MTurk ({exc})", maybe_done=True) from None
    except BotoCoreError as exc:
        raise ProviderError(f"cannot reach MTurk ({exc})") from None


@dataclass
class MTurkConf(ProviderConf):
    mturk_hit_lifetime_days: int = 7  # days a HIT stays listed


@register_provider("mturk")
class MTurkProvider(Provider):
    conf = MTurkConf
    completion_varies = True
    pays = True

    def __init__(self, client: Any, secret: str, public_url: str, sandbox: bool,
                 hit: dict[str, Any]):
        self.client, self.sandbox, self.hit = client, sandbox, hit
        self.name = "mturk_sandbox" if sandbox else "mturk"
        self.public_url = public_url.rstrip("/")
        self.links = LocalProvider(secret, public_url, require_signature=True)
        self.hit_id: str | None = None
        # MTurk shows the page in a frame and receives the completion form
        self.platform_origins = (SUBMIT_HOSTS[sandbox],)

    @classmethod
    def check(cls, cfg: DictConfig) -> None:
        """Before anything is written: boto3 and AWS credentials are there."""
        mturk_client(cfg.mephisto.provider._provider_type == "mturk_sandbox")  # boto3 is there
        import boto3

        if boto3.Session().get_credentials() is None:
            raise UserError("the mturk provider needs AWS credentials: set AWS_ACCESS_KEY_ID "
                            "and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, ~/.aws/credentials) "
                            "for the requester account")

    @classmethod
    def create(cls, cfg: DictConfig, secret: str, public_url: str,
               client: Any = None) -> MTurkProvider:
        sandbox = cfg.mephisto.provider._provider_type == "mturk_sandbox"
        task = cfg.mephisto.task
        hit = {"Title": task.task_title or task.task_name,
               "Description": task.task_description or task.task_title or task.task_name,
               "Keywords": task.task_tags, "Reward": f"{task.task_reward:.2f}",
               "AssignmentDurationInSeconds": task.assignment_duration_in_seconds or 3600,
               "LifetimeInSeconds": cfg.mephisto.provider.mturk_hit_lifetime_days * 86400}
        return cls(client or mturk_client(sandbox), secret, public_url, sandbox, hit)

    def start(self, db: Database, task_name: str, units: int) -> list[str]:
        """One HIT per task (an assignment per unit), created at its first launch; later
        launches add assignments when work was added."""
        key = f"{self.name}_hit:{task_name}"[:64]
        with db.read() as session:
            stored = session.get(Setting, key)
        if stored is not None:
            self.hit_id = stored.value
            return [f"MTurk HIT {self.hit_id}{' (sandbox)' * self.sandbox}"
                    f"{self._extend(units)}"]
        created = call(self.client.create_hit, MaxAssignments=units,
                       Question=external_question(f"{self.public_url}/api/enter"), **self.hit)
        self.hit_id = created["HIT"]["HITId"]
        with db.session() as session:
            session.add(Setting(key=key, value=self.hit_id))
        return [f"MTurk HIT {self.hit_id} created with {units} assignments"
                f"{' on the sandbox' * self.sandbox}"]

    def _extend(self, units: int) -> str:
        """Assignments for the units added since the HIT was made (the request token makes a
        retried call add them once); what happened, for the start-up line."""
        hit = call(self.client.get_hit, HITId=self.hit_id)["HIT"]
        missing = units - int(hit.get("MaxAssignments", units))
        if missing <= 0:
            return ""
        try:
            call(self.client.create_additional_assignments_for_hit, HITId=self.hit_id,
                 NumberOfAdditionalAssignments=missing,
                 UniqueRequestToken=f"{self.hit_id}-{units}"[:64])
        except ProviderError as exc:  # e.g. a HIT made with < 10 assignments stays below 10
            return (f"; warning: MTurk did not add the {missing} assignment(s) for the work "
                    f"added ({exc}): publish a new HIT or add them on MTurk")
        return f": {missing} assignment(s) added for the work added"

    def link(self, worker_id: str, session_id: str) -> str:
        return self.links.link(worker_id, session_id)

    def _identity(self, values: dict[str, Any]) -> Identity:
        assignment, worker = values.get("assignmentId"), values.get("workerId")
        if assignment == PREVIEW:
            raise IdentityRefused(PREVIEW_MESSAGE, 409)
        if not all(isinstance(v, str) and 0 < len(v) <= MAX_ID_LENGTH
                   for v in (assignment, worker)):
            raise IdentityRefused("assignmentId and workerId are required (MTurk adds them); "
                                  "open the HIT from MTurk", 400)
        return Identity(worker, assignment)

    def entry(self, args: dict[str, str]) -> str:
        identity = self._identity(args)
        return self.links.link(identity.worker_id, identity.session_id)

    def identify(self, claim: dict[str, Any]) -> Identity:
        if "assignmentId" in claim:
            return self._identity(claim)
        return self.links.identify(claim)

    def completion(self, visit: Visit | None) -> Completion:
        if visit is None:
            return Completion()
        return Completion(external_submit={
            "url": f"{SUBMIT_HOSTS[self.sandbox]}/mturk/externalSubmit",
            "fields": {"assignmentId": visit.session_id}})

    def check_decision(self, decision: str, reason: str, category: str | None) -> str | None:
        if decision == "reject" and not reason:
            return "MTurk shows the worker why their work was rejected: give a reason"
        return None

    def review(self, visit: Visit, decision: str, reason: str, category: str | None) -> bool:
        """A soft reject approves (pays) on MTurk, as Mephisto did; it is recorded here as a
        soft reject so the worker can be kept from later work."""
        if decision == "reject":
            call(self.client.reject_assignment, AssignmentId=visit.session_id,
                 RequesterFeedback=reason[:1024])
        else:
            kwargs = {"RequesterFeedback": reason[:1024]} if reason else {}
            call(self.client.approve_assignment, AssignmentId=visit.session_id, **kwargs)
        return True

    def bonus_setup(self, visit: Visit, amount_cents: int, reason: str) -> str | None:
        """No platform call: a token MTurk uses to pay a retried SendBonus once."""
        return f"cep-{secrets.token_hex(12)}"

    def bonus_pay(self, visit: Visit, ref: str | None, amount_cents: int, reason: str) -> None:
        call(self.client.send_bonus, WorkerId=visit.worker_id, AssignmentId=visit.session_id,
             BonusAmount=f"{amount_cents / 100:.2f}", Reason=reason or "bonus",
             UniqueRequestToken=str(ref))

    def block(self, worker_id: str, reason: str) -> bool:
        call(self.client.create_worker_block, WorkerId=worker_id, Reason=reason or "blocked")
        return True

    def unblock(self, worker_id: str) -> bool:
        call(self.client.delete_worker_block, WorkerId=worker_id, Reason="unblocked")
        return True

    def listed_visits(self) -> dict[tuple[str, str], str] | None:
        return None  # MTurk pays only assignments it assigned: a forged id cannot be paid
