"""Static annotation: workers label existing dialogues with annotation buckets."""

from collection_and_annotations.blueprints.static_annotation.blueprint import (
    StaticAnnotationBlueprint,
)

__all__ = ["StaticAnnotationBlueprint"]
