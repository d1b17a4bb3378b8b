"""What a conf key declares besides its type and default: its range, or that it is accepted
but not used (and why). The module that owns a key declares both, beside the key."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

TEN_YEARS = 10 * 365 * 24 * 3600


@dataclass(frozen=True)
class Range:
    low: int
    high: int | None = None
    zero_means: str | None = None  # what 0 means when it is allowed, e.g. "no limit"

    def describe(self) -> str:
        low = f"{self.low} ({self.zero_means})" if self.zero_means else str(self.low)
        return f"from {low} to {self.high}" if self.high is not None else f"{low} or more"


def ranged(default: int, low: int, high: int | None = None, zero_means: str | None = None
           ) -> Any:
    """A whole-number key refused (with file and line) outside `low`..`high`."""
    return dataclasses.field(default=default,
                             metadata={"range": Range(low, high, zero_means)})


def unused(why: str, default: Any = None, deprecated: bool = False) -> Any:
    """A key of the original project or Mephisto 1.x this version accepts but does not use:
    setting it warns once with `why` (`deprecated`: the original never used it either)."""
    return dataclasses.field(default=default,
                             metadata={"unused": why, "deprecated": deprecated})


def declared(conf: Any, what: str, prefix: str = "") -> dict[str, Any]:
    """Dotted key -> the `what` ("range", "unused", "deprecated") its field declares, for
    every key of a conf dataclass instance and the dataclasses it holds."""
    found: dict[str, Any] = {}
    for field in dataclasses.fields(conf):
        key, value = f"{prefix}{field.name}", getattr(conf, field.name)
        if field.metadata.get(what):
            found[key] = field.metadata[what]
        if dataclasses.is_dataclass(value):
            found.update(declared(value, what, f"{key}."))
    return found
