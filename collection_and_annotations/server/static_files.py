"""The built worker page, served from memory, gzipped once per file and cacheable.

Each file is read and gzipped on first request and kept (about 350 KB for today's build); a
rebuilt file (new size or mtime) is read again. Hashed assets never change under their name, so
browsers may keep them a year; index.html names the current hashes, so it is revalidated on each
visit (its ETag makes that a 304).
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

from flask import Response, abort, request
from werkzeug.security import safe_join

from collection_and_annotations.server.compression import accepts_gzip, compressible, gzip_bytes

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


@dataclass(frozen=True)
class _File:
    stamp: tuple[int, int]  # (size, mtime_ns): a rebuilt file gets a new one
    mimetype: str
    raw: bytes
    gzipped: bytes | None  # None when not worth compressing
    etag: str


class StaticFiles:
    """Files under one folder, each answered gzipped to clients that accept it."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._files: dict[str, _File] = {}
        self._lock = threading.Lock()

    def response(self, name: str, cache_control: str) -> Response:
        """The file `name` (relative to the folder) as a response; 404 when there is none."""
        found = self._load(name)
        gzipped = found.gzipped is not None and accepts_gzip(request.headers.get("Accept-Encoding"))
        response = Response(found.gzipped if gzipped else found.raw, mimetype=found.mimetype)
        if gzipped:
            response.headers["Content-Encoding"] = "gzip"
        if found.gzipped is not None:
            response.vary.add("Accept-Encoding")
        response.headers["Cache-Control"] = cache_control
        response.set_etag(found.etag + ("-gz" if gzipped else ""))
        return response.make_conditional(request)

    def _load(self, name: str) -> _File:
        path = safe_join(str(self.folder), name)
        try:
            stat = os.stat(path) if path else None
        except (OSError, ValueError):  # ValueError: a NUL in the name
            stat = None
        if stat is None or not S_ISREG(stat.st_mode):  # one stat call per request
            abort(404)
        stamp = (stat.st_size, stat.st_mtime_ns)
        found = self._files.get(name)
        if found is None or found.stamp != stamp:
            with self._lock:  # one thread compresses; the others wait for its result
                found = self._files.get(name)
                if found is None or found.stamp != stamp:
                    found = self._files[name] = _read(Path(path), stamp)
        return found


def _read(path: Path, stamp: tuple[int, int]) -> _File:
    raw = path.read_bytes()
    mimetype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    gzipped = gzip_bytes(raw, 9) if compressible(mimetype) and len(raw) > 256 else None
    return _File(stamp, mimetype, raw, gzipped, hashlib.sha256(raw).hexdigest()[:32])
