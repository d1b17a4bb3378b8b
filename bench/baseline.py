"""A checkout of an earlier revision beside this one, so a benchmark compares before and after
in the same run on the same machine (`--before REV`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STATIC = Path("collection_and_annotations") / "server" / "static"
# The last revision before issue 8's changes.
DEFAULT_BEFORE = "57f0866"


def checkout(revision: str, folder: Path) -> Path:
    """`revision` as a detached worktree in `folder` with this checkout's built page (the
    page is not what is measured; both revisions serve the same build)."""
    target = folder / f"before-{revision}"
    if not target.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-f",
                        str(target), revision], check=True, capture_output=True)
    if not (target / STATIC / "index.html").exists():
        shutil.copytree(REPO / STATIC, target / STATIC, dirs_exist_ok=True)
    return target


def remove(target: Path) -> None:
    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(target)],
                   capture_output=True)
