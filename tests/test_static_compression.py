"""The worker page is sent gzipped to browsers that accept it (but for files too small to gain),
and cacheable: hashed assets for a year, index.html revalidated on each visit."""

from __future__ import annotations

import gzip
import re

import httpx
from helpers import http_get, live_server

from collection_and_annotations.server.app import GZIP_MIN_BYTES, STATIC_DIR


def test_page_and_assets_are_gzipped_and_cacheable(sqlite_url, open_conf):
    served = open_conf("demo", sqlite_url)
    with live_server(served) as base:
        index = (STATIC_DIR / "index.html").read_bytes()
        script = re.search(rb'src="/assets/([^"]+\.js)"', index).group(1).decode()
        for path, file, cache in [("/", STATIC_DIR / "index.html", "no-cache"),
                                  (f"/assets/{script}", STATIC_DIR / "assets" / script,
                                   "public, max-age=31536000, immutable")]:
            with httpx.stream("GET", base + path, headers={"Accept-Encoding": "gzip"}) as zipped:
                raw = b"".join(zipped.iter_raw())
            assert zipped.status_code == 200
            assert zipped.headers["cache-control"] == cache
            if file.stat().st_size < GZIP_MIN_BYTES:
                assert "content-encoding" not in zipped.headers and raw == file.read_bytes()
            else:
                assert zipped.headers["content-encoding"] == "gzip"
                assert zipped.headers["vary"] == "Accept-Encoding"
                assert len(raw) < file.stat().st_size
                assert gzip.decompress(raw) == file.read_bytes()
            plain = http_get(base + path, headers={"Accept-Encoding": "identity"})
            assert "content-encoding" not in plain.headers
            assert plain.content == file.read_bytes()
            assert plain.headers["cache-control"] == cache
            again = http_get(base + path, headers={"Accept-Encoding": "gzip",
                                                    "If-None-Match": zipped.headers["etag"]})
            assert again.status_code == 304
        assert http_get(f"{base}/assets/../index.html").status_code == 404
        assert http_get(f"{base}/assets/nothing.js").status_code == 404
