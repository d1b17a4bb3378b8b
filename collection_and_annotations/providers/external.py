"""External link: any platform that opens a URL with the worker's id in it.

The platform is given a URL template (printed at start) whose parameters name the worker and
the visit; `/api/enter` turns them into a link this server signs, so the page's claim is vouched
for like a local link. On submit the worker gets a completion code, fixed by the conf or
derived per worker (an HMAC of the worker id with the run secret, so a code cannot be guessed
from another worker's), and is sent to `completion_url` when one is set.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any
from urllib.parse import quote

from omegaconf import DictConfig

from collection_and_annotations.providers import register_provider
from collection_and_annotations.providers.base import (
    Completion,
    Identity,
    IdentityRefused,
    NoPlatform,
    Visit,
)
from collection_and_annotations.providers.local import MAX_ID_LENGTH, LocalProvider

SESSION_WHEN_MISSING = "default"  # no visit parameter: one visit per worker (they resume)


def worker_code(secret: str, worker_id: str) -> str:
    digest = hmac.new(secret.encode(), f"completion\x00{worker_id}".encode(), hashlib.sha256)
    return digest.hexdigest()[:12].upper()


@register_provider("external")
class ExternalProvider(NoPlatform):
    completion_varies = True

    def __init__(self, secret: str, public_url: str, worker_param: str, session_param: str,
                 code: str | None, completion_url: str | None):
        self.secret = secret
        self.public_url = public_url.rstrip("/")
        self.worker_param, self.session_param = worker_param, session_param
        self.code, self.completion_url = code, completion_url
        self.links = LocalProvider(secret, public_url, require_signature=True)

    @classmethod
    def create(cls, cfg: DictConfig, secret: str, public_url: str) -> ExternalProvider:
        conf = cfg.mephisto.provider
        return cls(secret, public_url, conf.worker_id_param, conf.session_id_param,
                   conf.completion_code, conf.completion_url)

    def url_template(self) -> str:
        """The link to give the platform; it replaces the upper-case placeholders."""
        return (f"{self.public_url}/api/enter?{quote(self.worker_param)}=WORKER_ID"
                f"&{quote(self.session_param)}=SESSION_ID")

    def start(self, db: Any, task_name: str, units: int) -> list[str]:
        return [f"external link for the platform (it fills in WORKER_ID and SESSION_ID): "
                f"{self.url_template()}"]

    def entry(self, args: dict[str, str]) -> str:
        worker = args.get(self.worker_param, "")
        session = args.get(self.session_param) or SESSION_WHEN_MISSING
        if not worker or len(worker) > MAX_ID_LENGTH or len(session) > MAX_ID_LENGTH:
            raise IdentityRefused(f"this link has no valid '{self.worker_param}' parameter; "
                                  "open the task again from the platform", 400)
        return self.links.link(worker, session)

    def link(self, worker_id: str, session_id: str) -> str:
        return self.links.link(worker_id, session_id)

    def identify(self, claim: dict[str, Any]) -> Identity:
        return self.links.identify(claim)

    def completion(self, visit: Visit | None) -> Completion:
        if visit is None:
            return Completion(self.code)
        code = self.code or worker_code(self.secret, visit.worker_id)
        redirect = None
        if self.completion_url:
            redirect = self.completion_url.format(code=quote(code),
                                                  worker_id=quote(visit.worker_id))
        return Completion(code, redirect)
