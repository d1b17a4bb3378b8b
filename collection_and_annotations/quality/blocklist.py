"""Worker block lists: text files with one provider worker id per line (`#` comments)."""

from __future__ import annotations

import warnings
from pathlib import Path


def load_blocklist(*paths: str | None) -> frozenset[str]:
    """Union of the named files; a missing file is a warning (the original confs name one
    that is often absent), so check the message when you rely on a list."""
    blocked: set[str] = set()
    for entry in paths:
        for name in filter(None, (p.strip() for p in (entry or "").split(","))):
            path = Path(name)
            if not path.is_file():
                warnings.warn(f"{path}: worker block list not found; no workers blocked by it",
                              stacklevel=2)
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                worker = line.split("#", 1)[0].strip()
                if worker:
                    blocked.add(worker)
    return frozenset(blocked)
