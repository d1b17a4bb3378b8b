"""Keys a conf may set that this version accepts but does not use, and why.

The original project's confs and Mephisto 1.x's arguments load unchanged; a key that would
silently do nothing gets one warning naming it and the reason, so nobody relies on it unawares.
The module that owns a key declares it unused (`config.keys.unused`).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from collection_and_annotations.config.keys import declared
from collection_and_annotations.config.schema import RunConfig


class UnusedKeyWarning(UserWarning):
    """A conf key this version accepts but does not use."""


class DeprecatedKeyWarning(UnusedKeyWarning):
    """A conf key the original project accepted but never used."""


def unused_keys() -> dict[str, str]:
    """Dotted key -> why it is not used, for every key its owner declares unused."""
    return declared(RunConfig(), "unused")


def override_keys(overrides: list[str]) -> set[str]:
    """The dotted keys that command-line overrides (`key=v`, `+key=v`, `~key`) set."""
    return {o.lstrip("+~").split("=", 1)[0] for o in overrides}


def _is_set(tree: Any, dotted_key: str) -> bool:
    for part in dotted_key.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return tree is not None


def warn_unused_keys(
    file_keys: dict[str, Any], overrides: list[str], path: Path, line_of: Any
) -> None:
    """One warning per unused key the conf file (`file_keys`, unresolved) or the command line
    sets; `line_of(path, key)` finds its line."""
    from_cli = override_keys(overrides)
    deprecated = declared(RunConfig(), "deprecated")
    for key, why in unused_keys().items():
        if key in from_cli:
            where = f"{key} (set on the command line)"
        elif _is_set(file_keys, key):
            line = line_of(path, key)
            where = f"{path}:{line}: {key}" if line else f"{path}: {key}"
        else:
            continue
        category = DeprecatedKeyWarning if key in deprecated else UnusedKeyWarning
        warnings.warn(f"{where} is accepted but not used ({why}); remove it", category,
                      stacklevel=3)
