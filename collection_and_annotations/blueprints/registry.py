"""The kinds of task, by name: `static_annotation`, and the kinds later modules register."""

from __future__ import annotations

from collection_and_annotations.plugins import Registry

BLUEPRINTS = Registry("collection_and_annotations.blueprints", "task kind",
                      "mephisto.blueprint._blueprint_type")
register_blueprint = BLUEPRINTS.register
blueprint_class = BLUEPRINTS.get
# The original project's single blueprint chose its mode from flags; these names mean "choose".
COMBINED_BLUEPRINTS = ("behavior_analysis_blueprint",)
