"""`python welcome.py conf=<name> [overrides]`: read the conf, then serve it.

Only the conf's own libraries load before the conf is read, so a typo in a conf name or an
override answers at once; the server, the database and the task kinds load after that.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from collection_and_annotations.config.loader import load_run_config
from collection_and_annotations.config.task_dir import task_dir_hint
from collection_and_annotations.errors import UserError

USAGE = "usage: python welcome.py conf=<name or path.yaml> [key=value ...]"


def split_argv(argv: list[str]) -> tuple[str, list[str]]:
    conf = [a for a in argv if a.startswith("conf=")]
    if len(conf) != 1:
        raise UserError(f"name exactly one conf: {USAGE}")
    return conf[0].split("=", 1)[1], [a for a in argv if not a.startswith("conf=")]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    warnings.formatwarning = lambda message, category, *args, **kwargs: (
        f"warning: {message}\n"
    )
    try:
        conf, overrides = split_argv(argv)
        loaded = load_run_config(conf, overrides)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from collection_and_annotations.cli.run import serve  # the server's libraries

    try:
        return serve(loaded.config, str(loaded.path))
    except UserError as exc:
        hint = (task_dir_hint(exc.path, loaded.config.task_dir, loaded.path)
                if exc.path and not Path(exc.path).exists() else None)
        print(f"error: {exc}" + (f"; {hint}" if hint else ""), file=sys.stderr)
        return 2
