"""The kinds of task, by name: one module each under `blueprints/`, or an installed plug-in."""

from __future__ import annotations

from collection_and_annotations.plugins import Registry

BLUEPRINTS = Registry("task kind", "task_kinds", package="collection_and_annotations.blueprints",
                      conf_key="mephisto.blueprint._blueprint_type")
register_blueprint = BLUEPRINTS.register
blueprint_class = BLUEPRINTS.get
