"""Request and response hardening: the Host allow-list and the security headers.

A page on another site can point its own DNS name at 127.0.0.1 (DNS rebinding) and reach a
server that listens on loopback; the only trace is the `Host` header naming that site, so
requests for names we do not serve are refused. Rebinding needs a DNS name, so IP literals are
safe to accept when the server listens beyond loopback.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
MAX_REMEMBERED_HOSTS = 256  # Host verdicts kept per server (any name past these is checked anew)
ANY_HOST = "*"
# The worker page is one module script and one stylesheet from /assets. Inline styles stay
# allowed because requester HTML (task description, instructions) may carry style attributes;
# images may come from https for the same reason; the favicon is a data: URL.
_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: https:; object-src 'none'; base-uri 'none'; "
)


def security_headers(platform_origins: Sequence[str] = ()) -> dict[str, str]:
    """The headers of every response (uvicorn adds them: server/http.py). `platform_origins`:
    a crowd platform's pages that show ours in a frame and receive its completion form
    (MTurk's); without any, no framing and forms only to this server."""
    framing = " ".join(platform_origins) or "'none'"
    headers = {
        "Content-Security-Policy": (f"{_POLICY}form-action 'self' {' '.join(platform_origins)}"
                                    .rstrip() + f"; frame-ancestors {framing}"),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    if not platform_origins:  # the older header cannot name origins: CSP decides then
        headers["X-Frame-Options"] = "DENY"
    return headers


SECURITY_HEADERS = security_headers()


def host_name(host: str) -> str:
    """`Host` header or allow-list entry -> bare lower-case name: no port, no brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


class HostCheck:
    """Which `Host` names this server answers to."""

    def __init__(self, public_url: str, allowed_hosts: Iterable[str] | None = None):
        public = host_name(urlsplit(public_url).netloc)
        names = list(allowed_hosts) if allowed_hosts is not None else []
        self.any_host = ANY_HOST in names
        self.names = {host_name(n) for n in [*LOOPBACK_NAMES, public, *names] if n != ANY_HOST}
        self.ip_literals = public not in LOOPBACK_NAMES
        self._verdicts: dict[str, str | None] = {}

    def allows(self, host: str) -> bool:
        name = host_name(host)  # no Host at all (HTTP/1.0 probes) never comes from a browser
        if not name or self.any_host or name in self.names:
            return True
        if not self.ip_literals:
            return False
        try:  # an IP literal: safe from rebinding when the server listens beyond loopback
            ipaddress.ip_address(name)
        except ValueError:  # a name we do not serve
            return False
        return True

    def refusal(self, host: str) -> str | None:
        """Why a request for `host` is refused (421), or None when it is served. Asked on
        every request, so the verdicts on the few names a server sees are remembered."""
        if host in self._verdicts:
            return self._verdicts[host]
        verdict = None if self.allows(host) else (
            f"this server does not answer to the host name '{host[:100]}' (it answers to "
            f"{', '.join(sorted(self.names))}); if workers reach it under that name "
            "through a proxy, add it to mephisto.architect.allowed_hosts")
        if len(self._verdicts) < MAX_REMEMBERED_HOSTS:
            self._verdicts[host] = verdict
        return verdict
