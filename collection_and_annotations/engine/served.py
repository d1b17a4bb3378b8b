"""Everything a server process needs to serve one task run."""

from __future__ import annotations

from dataclasses import dataclass, field

from collection_and_annotations.blueprints.base import TaskBlueprint
from collection_and_annotations.engine.allocation import Limits
from collection_and_annotations.providers.base import Provider
from collection_and_annotations.storage.database import Database


@dataclass
class ServedTask:
    db: Database
    blueprint: TaskBlueprint
    task_name: str
    task_id: int
    run_id: int
    title: str
    description_html: str
    limits: Limits
    provider: Provider
    secret: str
    blocked_workers: frozenset[str] = field(default_factory=frozenset)
    return_rejected_units: bool = False  # a rejected unit's work goes back to the pool
    # False for `serve --task`: the dashboard of a stored task, where no worker gets new work
    taking_work: bool = True
