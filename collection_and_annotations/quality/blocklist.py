"""Worker block lists: text files with one provider worker id per line (`#` comments)."""

from __future__ import annotations

import warnings
from pathlib import Path

from collection_and_annotations.json_files import read_text

WHAT = "worker block list (worker_blocklist_paths)"


def _paths(entries: tuple[str | None, ...]) -> list[Path]:
    """Each entry is a comma-separated list of files, as in the original confs."""
    return [Path(name) for entry in entries
            for name in filter(None, (p.strip() for p in (entry or "").split(",")))]


def _read(path: Path) -> set[str]:
    return {worker for line in read_text(path, WHAT).splitlines()
            if (worker := line.split("#", 1)[0].strip())}


def check_blocklists(*entries: str | None) -> None:
    """Read every block list that exists (UTF-8, else an error with its line) before anything
    is written; missing ones are left to `load_blocklist`'s warning."""
    for path in _paths(entries):
        if path.is_file():
            _read(path)


def load_blocklist(*entries: str | None) -> frozenset[str]:
    """Union of the named files; a missing file is a warning (the original confs name one
    that is often absent), so check the message when you rely on a list."""
    blocked: set[str] = set()
    for path in _paths(entries):
        if not path.is_file():
            warnings.warn(f"{path}: worker block list not found; no workers blocked by it",
                          stacklevel=2)
            continue
        blocked |= _read(path)
    return frozenset(blocked)
