"""What the task engine needs from a blueprint (a kind of task): a plug-in interface.

Static annotation is the first; dialogue collection with bots and quality-control units plug in
the same way: they produce assignments, render a unit for a worker and judge a submission.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class AssignmentPlan:
    """An assignment the engine should offer: stable key, groups and who may not take it."""

    key: str
    annotators: int
    groups: list[str]
    excluded_workers: list[str]
    data: dict[str, Any]


class Blueprint(Protocol):
    name: str

    def plan(self) -> list[AssignmentPlan]:
        """Every assignment of this task, in serving order."""

    def unit_content(self, data: dict[str, Any]) -> dict[str, Any]:
        """What the worker page receives for an assignment's `data` (nothing identifying)."""

    def describe(self) -> dict[str, Any]:
        """Definitions stored with the run so exports read answers without the conf files."""

    def check_submission(self, data: dict[str, Any], answers: Any) -> list[dict[str, Any]]:
        """Problems that make the submission unacceptable; empty when it may be stored."""
