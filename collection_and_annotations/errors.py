"""Errors a user can act on: each names the file (and line) and the reason."""

from __future__ import annotations

from pathlib import Path


class UserError(Exception):
    """Bad input the user must fix before anything runs; the launcher exits 2 on it."""

    def __init__(self, reason: str, path: str | Path | None = None, line: int | None = None):
        self.reason = reason
        self.path = str(path) if path is not None else None
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or ""
        if self.path and self.line is not None:
            where = f"{self.path}:{self.line}"
        return f"{where}: {self.reason}" if where else self.reason


class UserErrors(UserError):
    """Every problem found in one input, reported at once so one run of the launcher shows
    all that needs fixing (the first `SHOWN`, then how many more)."""

    SHOWN = 50

    def __init__(self, errors: list[UserError]):
        self.errors = errors
        first = errors[0]
        super().__init__(first.reason, first.path, first.line)

    def __str__(self) -> str:
        if len(self.errors) == 1:
            return str(self.errors[0])
        lines = [f"{len(self.errors)} problems:"]
        lines += [f"  {error}" for error in self.errors[:self.SHOWN]]
        if len(self.errors) > self.SHOWN:
            lines.append(f"  ... and {len(self.errors) - self.SHOWN} more")
        return "\n".join(lines)


class NotSupportedYet(UserError):
    """A feature the conf turns on that this version cannot serve (refused, never ignored)."""
