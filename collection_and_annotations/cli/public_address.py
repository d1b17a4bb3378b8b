"""Where workers reach a server that listens on every interface (`hostname: 0.0.0.0` or `::`)
when the conf gives no `public_url`: this machine's name when it resolves to an address other
machines can use, else the machine's own address on its network. Never `localhost` (what
`getfqdn()` says on many machines), which from any other machine is that machine itself."""

from __future__ import annotations

import contextlib
import ipaddress
import socket

WILDCARDS = ("0.0.0.0", "::", "")
# Documentation addresses (RFC 5737, RFC 3849): a UDP socket "connected" to one picks the
# interface of the default route; nothing is sent.
_ROUTE_PROBES = ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1"))


def public_host(hostname: str) -> str:
    """The host of the links for a server listening on `hostname`."""
    if hostname not in WILDCARDS:
        return hostname
    name = socket.getfqdn()
    if _reachable_name(name):
        return name
    return network_address() or "127.0.0.1"


def url_host(host: str) -> str:
    """`host` as it goes in a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


def network_address() -> str | None:
    """This machine's address on the network of its default route (IPv4 first), else any
    address its host name has beyond loopback; None without a network."""
    for family, probe in _ROUTE_PROBES:
        with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as udp:
            udp.connect((probe, 9))
            address = udp.getsockname()[0]
            if _usable(address):
                return address
    with contextlib.suppress(OSError):
        for *_, sockaddr in socket.getaddrinfo(socket.gethostname(), None):
            if _usable(str(sockaddr[0])):
                return str(sockaddr[0])
    return None


def _reachable_name(name: str) -> bool:
    """A name (not localhost) that resolves beyond loopback."""
    if not name or name.lower().startswith("localhost"):
        return False
    try:
        found = socket.getaddrinfo(name, None)
    except OSError:
        return False
    return any(_usable(str(sockaddr[0])) for *_, sockaddr in found)


def _usable(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_unspecified or ip.is_link_local)
