"""Prolific: a draft study made from the conf, identity from the study URL, review and bonuses
through Prolific's API (docs/providers.md).

The study is created UNPUBLISHED at the first launch of a task and its id kept in the
database; the requester publishes it (`python -m collection_and_annotations prolific publish
--task T`), never this server on its own. Prolific opens `/api/enter` with PROLIFIC_PID, STUDY_ID
and SESSION_ID (the submission id every transition takes); those parameters cannot be trusted
on their own, so the sync checks each completed unit against the submissions Prolific lists
for the study: one it does not list is a forged identity, never approved or paid, and flagged.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from omegaconf import DictConfig

from collection_and_annotations.config.keys import unused
from collection_and_annotations.config.schema import LOCAL_LINKS, ProviderConf
from collection_and_annotations.providers import register_provider
from collection_and_annotations.providers.base import (
    Completion,
    Identity,
    IdentityRefused,
    Provider,
    Visit,
)
from collection_and_annotations.providers.local import MAX_ID_LENGTH, LocalProvider
from collection_and_annotations.providers.prolific_api import ProlificApi
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Setting

COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc="
URL_PARAMETERS = ("PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
                  "&SESSION_ID={{%SESSION_ID%}}")
MIN_REJECT_MESSAGE = 100
_UNUSED = f"{LOCAL_LINKS}; the prolific provider does not use it (docs/providers.md)"
REJECTION_CATEGORIES = ("TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL",
                        "FAILED_CHECK", "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE",
                        "NO_DATA", "UNSUPP_DEVICE", "OTHER")


def study_setting(task_name: str) -> str:
    return f"prolific_study:{task_name}"[:64]


@dataclass
class ProlificConf(ProviderConf):
    # the code a worker takes back; unset: one per task
    completion_code: str | None = None
    prolific_estimated_completion_time_in_minutes: int = 10
    # accepted, not used: Mephisto's prolific provider's
    prolific_external_study_url: str | None = unused(_UNUSED)
    prolific_id_option: str | None = unused(_UNUSED)
    prolific_eligibility_requirements: list[Any] | None = unused(_UNUSED)
    prolific_workspace_name: str | None = unused(_UNUSED)
    prolific_project_name: str | None = unused(_UNUSED)
    prolific_allow_list_group_name: str | None = unused(_UNUSED)
    prolific_block_list_group_name: str | None = unused(_UNUSED)


@register_provider("prolific")
class ProlificProvider(Provider):
    conf = ProlificConf
    completion_varies = False
    pays = True

    def __init__(self, api: ProlificApi, secret: str, public_url: str, study: dict[str, Any],
                 code: str | None):
        self.api = api
        self.public_url = public_url.rstrip("/")
        self.study = study  # title, description, reward, minutes
        self.code = code or hmac.new(secret.encode(), b"prolific-completion",
                                     hashlib.sha256).hexdigest()[:8].upper()
        self.links = LocalProvider(secret, public_url, require_signature=True)
        self.study_id: str | None = None

    @classmethod
    def check(cls, cfg: DictConfig) -> None:
        """Before anything is written: the API token is set."""
        ProlificApi.from_environment()

    @classmethod
    def create(cls, cfg: DictConfig, secret: str, public_url: str) -> ProlificProvider:
        task, conf = cfg.mephisto.task, cfg.mephisto.provider
        study = {"title": task.task_title or task.task_name, "description":
                 task.task_description, "reward": task.task_reward,
                 "minutes": conf.prolific_estimated_completion_time_in_minutes}
        return cls(ProlificApi.from_environment(), secret, public_url, study,
                   conf.completion_code)

    def study_payload(self, task_name: str, places: int) -> dict[str, Any]:
        """A draft study as Prolific's `POST /studies/` takes it."""
        return {
            "name": self.study["title"],
            "internal_name": task_name,
            "description": self.study["description"] or self.study["title"],
            "external_study_url": f"{self.public_url}/api/enter?{URL_PARAMETERS}",
            "prolific_id_option": "url_parameters",
            "completion_codes": [{"code": self.code, "code_type": "COMPLETED",
                                  "actions": [{"action": "MANUALLY_REVIEW"}]}],
            "total_available_places": places,
            "estimated_completion_time": self.study["minutes"],
            "reward": round(self.study["reward"] * 100),  # pence/cents
        }

    def start(self, db: Database, task_name: str, units: int) -> list[str]:
        """The task's study: created as a draft at its first launch, then reused, with its
        places raised when work was added since (Prolific never lowers them here: places
        already taken stay taken)."""
        with db.read() as session:
            stored = session.get(Setting, study_setting(task_name))
        if stored is not None:
            self.study_id = stored.value
            made = f"Prolific study {self.study_id}"
            places = self.api.study(self.study_id).get("total_available_places")
            if isinstance(places, int) and units > places:
                self.api.update_study(self.study_id, {"total_available_places": units})
                made += f" (places raised from {places} to {units}: work was added)"
        else:
            self.study_id = self.api.create_study(self.study_payload(task_name, units))
            with db.session() as session:
                session.add(Setting(key=study_setting(task_name), value=self.study_id))
            made = f"Prolific draft study {self.study_id} created ({units} places)"
        return [f"{made}; it is unpublished until you publish it: python -m "
                f"collection_and_annotations prolific publish --task {task_name}"]

    def link(self, worker_id: str, session_id: str) -> str:
        return self.links.link(worker_id, session_id)

    def _check(self, pid: Any, study: Any, session: Any) -> Identity:
        values = (pid, study, session)
        if not all(isinstance(v, str) and 0 < len(v) <= MAX_ID_LENGTH for v in values):
            raise IdentityRefused("PROLIFIC_PID, STUDY_ID and SESSION_ID are required (Prolific "
                                  "adds them to the study link); open the study from Prolific",
                                  400)
        if study != self.study_id:
            raise IdentityRefused("this link is for another Prolific study")
        return Identity(pid, session)

    def entry(self, args: dict[str, str]) -> str:
        identity = self._check(args.get("PROLIFIC_PID"), args.get("STUDY_ID"),
                               args.get("SESSION_ID"))
        return self.links.link(identity.worker_id, identity.session_id)

    def identify(self, claim: dict[str, Any]) -> Identity:
        if "PROLIFIC_PID" in claim:
            return self._check(claim.get("PROLIFIC_PID"), claim.get("STUDY_ID"),
                               claim.get("SESSION_ID"))
        return self.links.identify(claim)

    def completion(self, visit: Visit | None) -> Completion:
        return Completion(self.code, COMPLETE_URL + quote(self.code))

    def check_decision(self, decision: str, reason: str, category: str | None) -> str | None:
        if decision == "soft_reject" and not reason.strip():
            return ("a soft reject asks the participant on Prolific to return their submission "
                    "with your reason: give one (e.g. 'Did not finish the study')")
        if decision != "reject":
            return None
        if len(reason) < MIN_REJECT_MESSAGE:
            return (f"Prolific needs a rejection message of at least {MIN_REJECT_MESSAGE} "
                    f"characters (this reason has {len(reason)}): say what was wrong")
        if category not in REJECTION_CATEGORIES:
            return (f"Prolific needs rejection_category, one of {', '.join(REJECTION_CATEGORIES)}"
                    f" (got {category!r})")
        return None

    def review(self, visit: Visit, decision: str, reason: str, category: str | None) -> bool:
        """A soft reject is Prolific's return: the participant is asked to return the
        submission (not paid, no rejection on their record)."""
        if decision == "soft_reject":
            self.api.request_return(visit.session_id, reason)
            return True
        body: dict[str, Any] = {"action": "APPROVE"}
        if decision == "reject":
            body = {"action": "REJECT", "message": reason, "rejection_category": category}
        self.api.transition(visit.session_id, body)
        return True

    def bonus_setup(self, visit: Visit, amount_cents: int, reason: str) -> str | None:
        return self.api.set_up_bonus(self._study(), visit.worker_id, f"{amount_cents / 100:.2f}")

    def bonus_pay(self, visit: Visit, ref: str | None, amount_cents: int, reason: str) -> None:
        self.api.pay_bonus(str(ref))

    def block(self, worker_id: str, reason: str) -> bool:
        return False  # blocked here (the claim refuses them); Prolific's block lists are not used

    def unblock(self, worker_id: str) -> bool:
        return False

    def listed_visits(self) -> dict[tuple[str, str], str] | None:
        return {(s.get("participant_id") or s.get("participant"), s["id"]): s.get("status", "")
                for s in self.api.submissions(self._study())}

    def _study(self) -> str:
        if self.study_id is None:
            raise RuntimeError("the Prolific study is not known before start()")
        return self.study_id
