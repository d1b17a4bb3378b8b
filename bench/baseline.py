"""A checkout of an earlier revision beside this one, so a benchmark compares before and after
in the same run on the same machine (`--before REV`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STATIC = Path("collection_and_annotations") / "server" / "static"
# The last revision before issue 8's changes.
DEFAULT_BEFORE = "57f0866"


CACHE = REPO / ".bench-cache"


def checkout(revision: str, folder: Path = CACHE) -> Path:
    """`revision` as a detached worktree (kept in `.bench-cache/` for the next run, with its
    own virtual environment) serving this checkout's built page: the page is not what is
    measured, so both revisions serve the same build."""
    target = folder / f"before-{revision}"
    if not target.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-f",
                        str(target), revision], check=True, capture_output=True)
    if not (target / STATIC / "index.html").exists():
        shutil.copytree(REPO / STATIC, target / STATIC, dirs_exist_ok=True)
    return target


def python_for(target: Path) -> Path:
    """The interpreter that runs a checkout: this one for the current checkout, otherwise a
    virtual environment made once with that revision's own dependencies."""
    if target == REPO:
        return Path(sys.executable)
    python = target / ".venv" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(target / ".venv")], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(target)],
                       check=True)
    return python
