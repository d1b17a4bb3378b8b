"""Checks on a composed conf that its types alone cannot express: ranges and served kinds."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from omegaconf import DictConfig, OmegaConf

from collection_and_annotations.config.keys import declared
from collection_and_annotations.config.schema import RunConfig
from collection_and_annotations.errors import NotSupportedYet

SUPPORTED_ARCHITECTS = ("local",)


def out_of_range(cfg: DictConfig) -> tuple[str, str] | None:
    """(key, reason) of the first value outside its range, or None."""
    for key, allowed in declared(RunConfig(), "range").items():
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
    from collection_and_annotations.providers.external import completion_url_problem

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
    from collection_and_annotations.providers import PROVIDERS

    provider = cfg.mephisto.provider._provider_type
    if provider not in PROVIDERS:
        raise NotSupportedYet(
            f"mephisto.provider._provider_type={provider!r} is not supported yet: use "
            f"{', '.join(PROVIDERS.names())} (external: any platform that opens a link with "
            "the worker's id in it, docs/providers.md)")
