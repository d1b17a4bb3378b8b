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


def remove(target: Path) -> None:
    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(target)],
                   capture_output=True)
