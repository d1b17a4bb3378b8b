"""The few Prolific REST calls the provider makes (Prolific's public API v1, with httpx).

Errors become ProviderError; `maybe_done` tells the caller whether the request may have
reached Prolific (a timeout or a dropped connection after sending, or an answer that says
nothing of it: 408 or a 5xx, e.g. a gateway that lost Prolific's answer) or surely did not
take effect (no connection, or Prolific refused it with a 4xx).
"""

from __future__ import annotations

import functools
import os
import ssl
from typing import Any

from collection_and_annotations.errors import UserError
from collection_and_annotations.providers.base import ProviderError

DEFAULT_URL = "https://api.prolific.com"  # Prolific's CLI's default for PROLIFIC_URL
API_PATH = "/api/v1"
TIMEOUT_SECONDS = 15.0


def api_base(url: str) -> str:
    """The API base of a `PROLIFIC_URL`. Prolific's CLI takes it as the host
    (`https://api.prolific.com`) and adds `/api/v1/...` to it; a value that already ends in
    `/api/v1` (this platform's earlier reading) is taken as it is."""
    base = url.strip().rstrip("/")
    return (base if base.endswith(API_PATH) else base + API_PATH) + "/"


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context a process for every client: building one reads the whole CA bundle,
    and a launch makes two clients (the check, then the provider)."""
    import httpx  # loaded by the first client already

    return httpx.create_ssl_context()


class ProlificApi:
    def __init__(self, base_url: str, token: str, timeout: float = TIMEOUT_SECONDS):
        import httpx  # with the first client: listing the providers imports this module

        self.client = httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=timeout,
                                   headers={"Authorization": f"Token {token}"},
                                   verify=tls_context())

    @classmethod
    def from_environment(cls) -> ProlificApi:
        """`PROLIFIC_TOKEN` and `PROLIFIC_URL`, the names Prolific's own CLI reads, read as
        it reads them."""
        token = os.environ.get("PROLIFIC_TOKEN", "")
        if not token:
            raise UserError("the prolific provider needs an API token: set PROLIFIC_TOKEN "
                            "(Prolific: Settings > API tokens)")
        return cls(api_base(os.environ.get("PROLIFIC_URL") or DEFAULT_URL), token)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import httpx  # loaded by __init__ already

        try:
            response = self.client.request(method, path, json=body)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ProviderError(f"cannot reach Prolific ({exc})") from None
        except httpx.TransportError as exc:
            raise ProviderError(f"no answer from Prolific ({type(exc).__name__})",
                                maybe_done=True) from None
        if response.status_code >= 400:
            unknown = response.status_code == 408 or response.status_code >= 500
            raise ProviderError(f"Prolific answered {response.status_code} to {method} "
                                f"{path}: {response.text[:300]}", maybe_done=unknown)
        return response.json() if response.content else None

    def create_study(self, payload: dict[str, Any]) -> str:
        return self.call("POST", "studies/", payload)["id"]

    def publish(self, study_id: str) -> None:
        self.call("POST", f"studies/{study_id}/transition/", {"action": "PUBLISH"})

    def submissions(self, study_id: str) -> list[dict[str, Any]]:
        """Every submission of the study, following the pages."""
        found: list[dict[str, Any]] = []
        path: str | None = f"studies/{study_id}/submissions/"
        while path:
            page = self.call("GET", path)
            found += page.get("results", [])
            path = ((page.get("_links") or {}).get("next") or {}).get("href")
        return found

    def transition(self, submission_id: str, body: dict[str, Any]) -> None:
        self.call("POST", f"submissions/{submission_id}/transition/", body)

    def request_return(self, submission_id: str, reason: str) -> None:
        """Ask the participant to return their submission (Prolific: not paid, no mark on
        their record; Prolific words the message around the reason)."""
        self.call("POST", f"submissions/{submission_id}/request-return/",
                  {"request_return_reasons": [reason]})

    def study(self, study_id: str) -> dict[str, Any]:
        return self.call("GET", f"studies/{study_id}/")

    def update_study(self, study_id: str, fields: dict[str, Any]) -> None:
        self.call("PATCH", f"studies/{study_id}/", fields)

    def set_up_bonus(self, study_id: str, participant_id: str, amount: str) -> str:
        body = {"study_id": study_id, "csv_bonuses": f"{participant_id},{amount}\n"}
        return self.call("POST", "submissions/bonus-payments/", body)["id"]

    def pay_bonus(self, bonus_id: str) -> None:
        self.call("POST", f"bulk-bonus-payments/{bonus_id}/pay/")
