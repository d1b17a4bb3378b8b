"""Plug-ins by name: task kinds, bot kinds, providers and metrics, one `Registry` each.

A built-in plug-in is a module `<package>.<name>` that registers itself
(`@registry.register(name)`); it is imported the first time a conf, a stored task or a listing
names it, so a new kind is a new module and never an edit of the core. A plug-in outside the
package is an entry point of an installed distribution in the registry's group
(`collection_and_annotations.task_kinds`, `.bots`, `.providers`, `.metrics`), written
`name = module:object`, where the object is what a built-in registers (a class, or a metric's
`MetricSpec`). docs/plugins.md shows one of each.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypeVar

from collection_and_annotations.errors import UserError

GROUP_PREFIX = "collection_and_annotations."
T = TypeVar("T")


class PluginError(UserError):
    """A plug-in that cannot be used: it fails to load, or its name is taken or malformed."""


class Registry:
    def __init__(self, what: str, group: str, *, package: str | None = None,
                 conf_key: str | None = None, aliases: dict[str, str] | None = None,
                 error: type[Exception] = PluginError):
        """`what` names one plug-in in messages ("task kind"); `group` is the entry point
        group's last part; `package` holds the built-in modules (None: the built-ins are
        registered by the registry's own module); `conf_key` is where a conf names one."""
        self.what, self.group, self.package, self.conf_key = what, group, package, conf_key
        self.aliases = dict(aliases or {})
        self.error = error
        self._entries: dict[str, Any] = {}
        self._origins: dict[str, str] = {}
        self._complete = False  # every built-in module and installed plug-in is loaded
        self._loading = threading.RLock()  # request threads may be the first to ask

    def register(self, name: str) -> Callable[[T], T]:
        """Class decorator of a built-in plug-in: registers the class as `name`."""
        def _register(cls: T) -> T:
            self.add(name, cls)
            return cls

        return _register

    def add(self, name: str, entry: Any, origin: str = "built in") -> None:
        """Register `entry` as `name`; a malformed or taken name is refused, naming both."""
        if not name or any(c in name for c in ".,") or name != name.strip():
            raise self.error(f"invalid {self.what} name {name!r}: no dots, no commas")
        if name in self._entries or name in self.aliases:
            taken = self._origins.get(name) or f"another name of '{self.aliases.get(name)}'"
            raise self.error(f"{self.what} '{name}' is already registered ({taken}); give "
                             f"the one of {origin} another name")
        if isinstance(entry, type):
            entry.name = name  # type: ignore[attr-defined]
        elif getattr(entry, "name", name) != name:
            raise self.error(f"{self.what} '{name}' ({origin}) calls itself "
                             f"'{entry.name}': the two names must be the same")
        self._entries[name] = entry
        self._origins[name] = origin

    def get(self, name: str) -> Any:
        """The plug-in registered as `name` (or an alias of it), loading it if need be."""
        name = self.aliases.get(name, name)
        if name not in self._entries and self.package and name.isidentifier():
            self._import_builtin(name)
        if name not in self._entries:
            self.load_all()
        if name not in self._entries:
            where = f" ({self.conf_key})" if self.conf_key else ""
            raise self.error(f"unknown {self.what} '{name}'{where}; available: "
                             f"{', '.join(self.names())}")
        return self._entries[name]

    def names(self) -> list[str]:
        """Every name a conf may use: the plug-ins (built in first) and their aliases."""
        self.load_all()
        return [*self._entries, *self.aliases]

    def __iter__(self) -> Iterator[Any]:
        self.load_all()
        return iter(list(self._entries.values()))

    def __contains__(self, name: object) -> bool:
        self.load_all()
        return name in self._entries or name in self.aliases

    def copy(self) -> Registry:
        """A registry with the same plug-ins, to add some for one use (an external metric)."""
        self.load_all()
        other = Registry(self.what, self.group, conf_key=self.conf_key, aliases=self.aliases,
                         error=self.error)
        other._entries, other._origins = dict(self._entries), dict(self._origins)
        other._complete = True
        return other

    def load_all(self) -> None:
        """Import every built-in module, then every installed plug-in of the group."""
        with self._loading:
            if self._complete:
                return
            if self.package:
                package = importlib.import_module(self.package)
                for module in pkgutil.iter_modules(package.__path__):
                    self._import_builtin(module.name)
            for point in entry_points(group=GROUP_PREFIX + self.group):
                self._load_plugin(point)
            self._complete = True

    def _import_builtin(self, name: str) -> None:
        module = f"{self.package}.{name}"
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise

    def _load_plugin(self, point: EntryPoint) -> None:
        distribution = point.dist.name if point.dist is not None else "an unnamed distribution"
        origin = f"plug-in '{point.name} = {point.value}' (distribution {distribution})"
        if self._origins.get(point.name) == origin:
            return  # loaded by an earlier call that another plug-in's failure stopped
        try:
            entry = point.load()
        except Exception as exc:
            raise PluginError(f"{self.what} {origin} failed to load: "
                              f"{type(exc).__name__}: {exc}") from exc
        self.add(point.name, entry, origin)
