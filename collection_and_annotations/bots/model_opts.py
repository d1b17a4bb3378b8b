"""`model_opts.yaml` (nickname -> spec) and `conversations_needed_string` (`spec:count,...`)."""

from __future__ import annotations

from pathlib import Path

import yaml

from collection_and_annotations.errors import UserError


def load_model_opts(path: str | Path) -> dict[str, str]:
    path = Path(path)
    if not path.is_file():
        raise UserError("model options file not found (mephisto.blueprint.model_opt_path)", path)
    try:
        document = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UserError(f"invalid YAML: {exc}", path, mark.line + 1 if mark else None) from None
    if not isinstance(document, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in document.items()
    ):
        raise UserError("model options map each bot nickname to a string of options", path)
    return {name: spec.strip() for name, spec in document.items()}


def parse_conversations_needed(text: str, known_bots: dict[str, str]) -> dict[tuple[str, ...], int]:
    """`"a|b:20,c:5"` -> {("a", "b"): 20, ("c",): 5}; every bot must be in model_opts."""
    needed: dict[tuple[str, ...], int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        spec, sep, count = part.rpartition(":")
        if not sep or not count.strip().isdigit():
            raise UserError(f"conversations_needed_string: '{part}' must be 'bot:count' or "
                            "'botA|botB:count'")
        bots = tuple(b.strip() for b in spec.split("|"))
        for bot in bots:
            if bot not in known_bots:
                raise UserError(f"conversations_needed_string: bot '{bot}' is not in model_opts "
                                f"(known: {', '.join(sorted(known_bots))})")
        needed[bots] = int(count)
    return needed
