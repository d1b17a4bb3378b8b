"""Everything a server process needs to serve one task run."""

from __future__ import annotations

from dataclasses import dataclass, field

from collection_and_annotations.blueprints.base import Blueprint
from collection_and_annotations.engine.allocation import Limits
from collection_and_annotations.providers.local import LocalProvider
from collection_and_annotations.storage.database import Database


@dataclass
class ServedTask:
    db: Database
    blueprint: Blueprint
    task_name: str
    task_id: int
    run_id: int
    title: str
    description_html: str
    limits: Limits
    provider: LocalProvider
    secret: str
    blocked_workers: frozenset[str] = field(default_factory=frozenset)
