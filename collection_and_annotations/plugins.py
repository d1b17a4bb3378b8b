"""A small registry for the plug-in kinds (task kinds, providers, later bots and metrics).

A plug-in is a module `<package>.<name>` whose class is decorated with `registry.register(name)`;
the module is imported the first time a conf (or a stored task) names it, so a new kind is a new
module and never an edit of the core.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from collection_and_annotations.errors import NotSupportedYet


class Registry:
    def __init__(self, package: str, what: str, conf_key: str,
                 aliases: dict[str, str] | None = None):
        self.package, self.what, self.conf_key = package, what, conf_key
        self.aliases = aliases or {}
        self._classes: dict[str, Any] = {}

    def register(self, name: str) -> Callable[[type], type]:
        def _register(cls: type) -> type:
            self._classes[name] = cls
            cls.name = name  # type: ignore[attr-defined]
            return cls

        return _register

    def get(self, name: str) -> Any:
        """The class registered as `name` (or an alias of it), importing its module."""
        name = self.aliases.get(name, name)
        if name not in self._classes and name.isidentifier():
            module = f"{self.package}.{name}"
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name != module:
                    raise
        if name not in self._classes:
            known = sorted({*self._classes, *self.aliases})
            raise NotSupportedYet(f"{self.what} '{name}' ({self.conf_key}) is not supported yet"
                                  f"{'; known: ' + ', '.join(known) if known else ''}")
        return self._classes[name]
