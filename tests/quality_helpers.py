"""Helpers shared by the screening and gold tests."""

from __future__ import annotations

from sqlalchemy import select

from collection_and_annotations.storage.models import Unit


def pool_of(served, unit_id: str) -> str:
    """The pool a claimed unit (by public id) was served from."""
    with served.db.read() as session:
        return session.scalars(select(Unit.pool).where(Unit.public_id == unit_id)).one()
