"""gzip content negotiation shared by the static files and the WSGI responses.

Only gzip: every browser accepts it, the standard library does it, and brotli would save a few
more KB for an extra compiled dependency.
"""

from __future__ import annotations

import zlib

# Below this a response fits in one TCP segment or two anyway; compressing costs more than it saves.
MIN_SIZE = 1024
COMPRESSIBLE = ("text/", "application/json", "application/javascript", "image/svg+xml")


def accepts_gzip(accept_encoding: str | None) -> bool:
    """True when the Accept-Encoding header allows gzip (an explicit q=0 refuses it)."""
    for item in (accept_encoding or "").lower().split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip() in ("gzip", "*"):
            quality = params.strip()
            return not (quality.startswith("q=") and _zero(quality[2:]))
    return False


def _zero(value: str) -> bool:
    try:
        return float(value) == 0
    except ValueError:
        return False


def gzip_bytes(data: bytes, level: int = 6) -> bytes:
    """gzip without a timestamp, so the same input always gives the same bytes (stable ETags)."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


def compressible(content_type: str | None) -> bool:
    return bool(content_type) and content_type.lower().startswith(COMPRESSIBLE)


def add_vary(headers: list[tuple[str, str]]) -> None:
    """Add Accept-Encoding to Vary (caches must keep one copy per encoding)."""
    for i, (name, value) in enumerate(headers):
        if name.lower() == "vary":
            if "accept-encoding" not in value.lower():
                headers[i] = (name, f"{value}, Accept-Encoding")
            return
    headers.append(("Vary", "Accept-Encoding"))
