"""A hint for a file the conf names under `task_dir` that is not there: a conf of one's own
task folder, run without `task_dir=`, looks for its files in the package."""

from __future__ import annotations

from pathlib import Path


def task_dir_hint(missing: str | Path, task_dir: str | Path, conf_path: Path) -> str | None:
    """'did you mean task_dir=...?' when the missing file's path under `task_dir` exists under
    the conf's folder or a folder above it; else where a file of that name is beside the conf."""
    missing, conf_folder = Path(missing).absolute(), conf_path.absolute().parent
    try:
        relative = missing.relative_to(Path(task_dir).absolute())
    except ValueError:
        return None  # written in full, not through ${task_dir}
    for folder in (conf_folder, *conf_folder.parents):
        if folder != Path(task_dir).absolute() and (folder / relative).exists():
            return f"did you mean task_dir={folder}?"
    beside = conf_folder / missing.name
    if beside.exists():
        return (f"a file of that name is beside the conf ({beside}): did you mean "
                f"task_dir={conf_folder} with the file at {conf_folder / relative}?")
    return None
