"""External link: any platform that opens a URL with the worker's id in it.

The platform is given a URL template (printed at start) whose parameters name the worker and
the visit; `/api/enter` turns them into a link this server signs, so the page's claim is vouched
for like a local link. Both parameters are required: a visit (its unit, draft and code) is bound
to the platform's session or assignment id as well as the worker's, so knowing a worker's id
is not enough to take it over. On submit the worker gets a completion code, fixed by the conf
or derived per visit (an HMAC of the worker and session ids with the run secret, so a code
cannot be guessed from another's), and is sent to `completion_url` when one is set.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from string import Formatter
from typing import Any
from urllib.parse import quote, urlsplit

from omegaconf import DictConfig

from collection_and_annotations.config.schema import ProviderConf
from collection_and_annotations.providers import register_provider
from collection_and_annotations.providers.base import (
    Completion,
    Identity,
    IdentityRefused,
    NoPlatform,
    Visit,
)
from collection_and_annotations.providers.local import MAX_ID_LENGTH, LocalProvider

PLACEHOLDERS = ("code", "worker_id", "session_id")  # what `completion_url` may hold


def visit_code(secret: str, worker_id: str, session_id: str) -> str:
    """The completion code of one visit: only this server can make it."""
    message = f"completion\x00{worker_id}\x00{session_id}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:12].upper()


def completion_url_problem(url: str) -> str | None:
    """What is wrong with a `completion_url` (checked at launch, so no submit fails on it),
    or None."""
    if urlsplit(url).scheme not in ("http", "https"):
        return "must be a web address starting with https:// (or http://)"
    try:
        fields = list(Formatter().parse(url))
    except ValueError:
        return ("has a '{' or '}' that opens or closes no placeholder; write a brace that is "
                "part of the address as {{ or }}")
    allowed = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
    for _, name, spec, conversion in fields:
        if name is not None and (name not in PLACEHOLDERS or spec or conversion):
            shown = "{" + name + (f"!{conversion}" if conversion else "") + \
                (f":{spec}" if spec else "") + "}"
            return (f"has the placeholder {shown}, which is not one of {allowed} (write a "
                    "brace that is part of the address as {{ or }})")
    return None


@dataclass
class ExternalConf(ProviderConf):
    # the URL parameters naming the worker and the visit (docs/providers.md)
    worker_id_param: str = "worker_id"
    session_id_param: str = "assignment_id"
    # the code a worker takes back; unset: one derived per worker (HMAC)
    completion_code: str | None = None
    # where the worker goes on submit, `{code}` and `{worker_id}` filled in
    completion_url: str | None = None


@register_provider("external")
class ExternalProvider(NoPlatform):
    conf = ExternalConf
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
        """The visit is the worker's id and the platform's session id together: a link
        without the session id is refused, or anyone who knows a worker's id could resume
        that worker's visit."""
        for param in (self.worker_param, self.session_param):
            value = args.get(param, "")
            if not value or len(value) > MAX_ID_LENGTH:
                raise IdentityRefused(f"this link has no valid '{param}' parameter (the "
                                      "platform adds it); open the task again from the "
                                      "platform", 400)
        return self.links.link(args[self.worker_param], args[self.session_param])

    def link(self, worker_id: str, session_id: str) -> str:
        return self.links.link(worker_id, session_id)

    def identify(self, claim: dict[str, Any]) -> Identity:
        return self.links.identify(claim)

    def completion(self, visit: Visit | None) -> Completion:
        if visit is None:
            return Completion(self.code)
        code = self.code or visit_code(self.secret, visit.worker_id, visit.session_id)
        redirect = None
        if self.completion_url:
            redirect = self.completion_url.format(code=quote(code),
                                                  worker_id=quote(visit.worker_id),
                                                  session_id=quote(visit.session_id))
        return Completion(code, redirect)
