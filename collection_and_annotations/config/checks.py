"""Checks on a composed conf that its types alone cannot express: ranges and served kinds."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from omegaconf import DictConfig, OmegaConf

from collection_and_annotations.errors import NotSupportedYet
from collection_and_annotations.providers.external import completion_url_problem

SUPPORTED_ARCHITECTS = ("local",)
SUPPORTED_PROVIDERS = ("mock", "local", "prolific", "mturk", "mturk_sandbox", "external")
TEN_YEARS = 10 * 365 * 24 * 3600


@dataclass(frozen=True)
class Range:
    low: int
    high: int | None = None
    zero_means: str | None = None  # what 0 means when it is allowed, e.g. "no limit"

    def describe(self) -> str:
        low = f"{self.low} ({self.zero_means})" if self.zero_means else str(self.low)
        return f"from {low} to {self.high}" if self.high is not None else f"{low} or more"


RANGES: dict[str, Range] = {
    "mephisto.architect.port": Range(1, 65535),
    "mephisto.architect.server_processes": Range(1, 64),
    "mephisto.task.allowed_concurrent": Range(0, zero_means="no limit"),
    "mephisto.task.maximum_units_per_worker": Range(0, zero_means="no limit"),
    "mephisto.task.max_num_concurrent_units": Range(0, zero_means="no limit"),
    "mephisto.task.assignment_duration_in_seconds": Range(0, TEN_YEARS, "no limit"),
    "mephisto.blueprint.annotation_duration_in_seconds": Range(0, TEN_YEARS),
    "mephisto.blueprint.max_concurrent_responses": Range(1),
    "monitoring_log_rate": Range(1),
}


def out_of_range(cfg: DictConfig) -> tuple[str, str] | None:
    """(key, reason) of the first value outside its range, or None."""
    for key, allowed in RANGES.items():
        value = OmegaConf.select(cfg, key)
        if value is None:
            continue
        if value < allowed.low or (allowed.high is not None and value > allowed.high):
            return key, f"{key}={value} is out of range: it must be {allowed.describe()}"
    return None


def bad_address(cfg: DictConfig) -> tuple[str, str] | None:
    """(key, reason) when the public URL or a trusted proxy is not usable, or None."""
    architect = cfg.mephisto.architect
    if architect.public_url is not None:
        key, url = "mephisto.architect.public_url", str(architect.public_url)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return key, (f"{key}={url!r} is not a web address: give the scheme and host "
                         "workers use, e.g. https://eval.example.org")
        if parts.path.strip("/") or parts.query or parts.fragment:
            return key, (f"{key}={url!r} has a path, query or fragment: the server is served "
                         "at the root of its host (give e.g. https://eval.example.org, and "
                         "proxy that whole host to the server)")
    for proxy in architect.trusted_proxies or []:
        try:
            ipaddress.ip_network(str(proxy), strict=False)
        except ValueError:
            return "mephisto.architect.trusted_proxies", (
                f"mephisto.architect.trusted_proxies: {proxy!r} is not an IP address or "
                "network (e.g. 127.0.0.1 or 10.0.0.0/8)")
    return None


def bad_completion_url(cfg: DictConfig) -> tuple[str, str] | None:
    """(key, reason) when the external provider's `completion_url` could not be filled in on
    submit (an unknown placeholder, a stray brace), or None."""
    url = cfg.mephisto.provider.completion_url
    problem = completion_url_problem(str(url)) if url is not None else None
    key = "mephisto.provider.completion_url"
    return (key, f"{key}={url!r} {problem}") if problem else None


def check_services_supported(cfg: DictConfig) -> None:
    """Refuse Mephisto architects and providers not built here instead of serving local links
    in their place (a conf for MTurk must not quietly become a local run)."""
    architect = cfg.mephisto.architect._architect_type
    if architect not in SUPPORTED_ARCHITECTS:
        raise NotSupportedYet(
            f"mephisto.architect._architect_type={architect!r} is not supported yet: this "
            "version serves the task itself; set mephisto.architect._architect_type=local (behind "
            "a proxy, add its host name to mephisto.architect.allowed_hosts)")
    provider = cfg.mephisto.provider._provider_type
    if provider not in SUPPORTED_PROVIDERS:
        raise NotSupportedYet(
            f"mephisto.provider._provider_type={provider!r} is not supported yet: use "
            f"{', '.join(SUPPORTED_PROVIDERS)} (external: any platform that opens a link with "
            "the worker's id in it, docs/providers.md)")
