"""Dialogue collection: workers chat live with one bot, or with several one after the other."""

from collection_and_annotations.blueprints.dialogue_collection.blueprint import (
    DialogueCollectionBlueprint,
)

__all__ = ["DialogueCollectionBlueprint"]
