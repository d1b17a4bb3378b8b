"""Arena: a worker sends each message to two anonymous bots at once and votes on the replies."""

from collection_and_annotations.blueprints.arena.blueprint import ArenaBlueprint

__all__ = ["ArenaBlueprint"]
