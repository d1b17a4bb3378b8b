"""Find a conf by name or path, compose it with Hydra and report problems with file and line."""

from __future__ import annotations

import copy
import dataclasses
import functools
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, OverrideType
from hydra.errors import HydraException
from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from collection_and_annotations import PACKAGE_DIR
from collection_and_annotations.config.accepted import (  # noqa: F401 (re-exported)
    DeprecatedKeyWarning,
    UnusedKeyWarning,
    override_keys,
    warn_unused_keys,
)
from collection_and_annotations.config.checks import (
    bad_address,
    bad_completion_url,
    out_of_range,
)
from collection_and_annotations.config.schema import RunConfig, register_configs
from collection_and_annotations.errors import UserError

CONF_DIR = PACKAGE_DIR / "hydra_configs" / "conf"
_KEY_IN_MESSAGE = re.compile(r"full_key: ([\w.]+)")
_CONVERSION = re.compile(r"Value '(.*)' (?:of type '\w+' could not be converted to (\w+)"
                         r"|is not a valid (bool))")
_TYPE_NAMES = {"Integer": "a whole number", "Float": "a number", "Boolean": "true or false"}
_MISSING_OPTION = re.compile(r"Could not find '(mephisto/\w+)/([^']*)'")


def resolve_conf_path(conf: str) -> Path:
    """`demo` means hydra_configs/conf/demo.yaml; anything with a slash or .yaml is a path."""
    candidate = Path(conf)
    if candidate.suffix in (".yaml", ".yml") or "/" in conf or "\\" in conf:
        path = candidate.expanduser().resolve()
    else:
        path = CONF_DIR / f"{conf}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in CONF_DIR.glob("*.yaml"))
        raise UserError(
            f"conf '{conf}' not found (looked for {path}); built-in confs: {', '.join(known)}",
        )
    return path


def _load_yaml(path: Path) -> DictConfig:
    try:
        node = OmegaConf.load(path)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise UserError(f"invalid YAML: {getattr(exc, 'problem', exc)}", path, line) from None
    if not isinstance(node, DictConfig):
        raise UserError("a conf must be a mapping of keys", path)
    return node


def _line_of_key(path: Path, dotted_key: str) -> int | None:
    """Line where the last part of a dotted key is written in the file, for error messages."""
    leaf = dotted_key.rsplit(".", 1)[-1]
    pattern = re.compile(rf"^\s*{re.escape(leaf)}\s*:")
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if pattern.match(text):
            return number
    return None


def _explain(exc: Exception, path: Path, overrides: list[str]) -> UserError:
    """Turn a Hydra/OmegaConf error into one line naming the key, the file and its line."""
    message = str(exc.__cause__ or exc)
    if missing := _MISSING_OPTION.search(message):
        return _unknown_option(*missing.groups(), message, path)
    found = _KEY_IN_MESSAGE.search(message)
    key = found.group(1) if found else None
    if key is None and "Cannot merge" in message:  # a file's value of the wrong shape
        misshapen = _misshapen_key(OmegaConf.to_container(_load_yaml(path), resolve=False))
        if misshapen is not None:
            return _located(_wrong_shape(misshapen, "container") or message, misshapen,
                            path, overrides)
    if key is None:
        unreadable = _unreadable_override(overrides)
        if unreadable is None and message.startswith("Ambiguous value for argument"):
            unreadable = (f"{message.splitlines()[0]}: on the command line a ',' in a value "
                          "makes a list or a sweep; write a list as [a, b], or quote text "
                          "that holds a comma, and the argument again for the shell: "
                          "'key=\"a,b\"'")
        return UserError(unreadable or message.splitlines()[0], path)
    conversion = _CONVERSION.search(message)
    mismatch = _shape_mismatch(message)
    shape = _wrong_shape(key, mismatch) if mismatch else None
    if "ConfigKeyError" in message or "not in '" in message:
        reason = f"unknown key '{key}': check its spelling or remove it"
    elif conversion:
        value, wanted, boolean = conversion.groups()
        wanted = "Boolean" if boolean else wanted
        reason = f"'{key}' must be {_TYPE_NAMES.get(wanted, wanted)}, got '{value}'"
    elif shape:
        reason = shape
    elif "is not in struct" in message and _free_mapping(key.rsplit(".", 1)[0]) is not None:
        parent, leaf = key.rsplit(".", 1)
        known = ", ".join(_free_mapping(parent) or []) or "none"
        reason = (f"'{parent}' has no key '{leaf}' in this conf (it has {known}); on the command "
                  f"line a new key of a mapping takes a leading '+': +{key}=<value>")
        key = key if key in override_keys(overrides) else parent
    else:
        reason = f"{message.splitlines()[0]} (key '{key}')"
    return _located(reason, key, path, overrides)


def _unknown_option(group: str, name: str, message: str, path: Path) -> UserError:
    """A defaults list naming a task kind, architect or provider that is not there."""
    available = re.findall(r"^\t(\S+)$", message.split("Config search path")[0], re.M)
    pattern = re.compile(rf"^\s*-?\s*/?{re.escape(group)}\s*:\s*{re.escape(name)}\s*$")
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next((n for n, text in enumerate(lines, start=1) if pattern.match(text)), None)
    return UserError(f"unknown {group} '{name}' in the defaults list (available: "
                     f"{', '.join(available)}); a plug-in's is there once its distribution is "
                     "installed (docs/plugins.md)", path, line)


def _unreadable_override(overrides: list[str]) -> str | None:
    """Which command-line override Hydra's override syntax cannot read, and how to write it."""
    parser = OverridesParser.create()
    for override in overrides:
        try:
            parser.parse_override(override)
        except HydraException as exc:
            key, _, value = override.partition("=")
            quoted = f"'{key}=\"{value}\"'" if '"' not in value else f"\"{key}='{value}'\""
            return (f"cannot read the command-line override '{override}' "
                    f"({str(exc).splitlines()[0]}): in a value, Hydra reads {{ }} [ ] , = "
                    "and spaces as structure, so put the value in quotes, and the whole "
                    f"argument in quotes again for the shell: {quoted}")
    return None


_SHAPE_NAMES = {dict: "a mapping", list: "a list", None: "a single value"}


def _shape_mismatch(message: str) -> str | None:
    """When OmegaConf says a value is not of its key's shape: what was given instead, a
    "container" (a list for a mapping, or the other way round) or a single "value"."""
    if re.search(r"Cannot merge (Dict|List)Config with (Dict|List)Config", message):
        return "container"
    if re.search(r"Cannot assign \w+ to (Dict|List)\[|Invalid value assigned: \w+ is not a "
                 r"ListConfig", message):
        return "value"
    return None


def _wrong_shape(key: str, given_as: str) -> str | None:
    """'speaker_names must be a mapping such as {SPEAKER_X: Bot, ...}, not a list'."""
    wanted = _schema_shape(key)
    if wanted is None:
        return None
    given = None if given_as == "value" else ({dict, list} - {wanted}).pop()
    example = " such as [a, b]" if wanted is list else ""
    default = OmegaConf.select(OmegaConf.structured(RunConfig), key)
    if wanted is dict and isinstance(default, DictConfig) and len(default):
        example = " such as {" + ", ".join(f"{k}: {v}" for k, v in default.items()) + "}"
    return f"'{key}' must be {_SHAPE_NAMES[wanted]}{example}, not {_SHAPE_NAMES[given]}"


def _misshapen_key(values: Any, prefix: str = "") -> str | None:
    """The first key of a conf file's `values` that is a mapping where the schema wants a
    list, or the other way round."""
    if not isinstance(values, dict):
        return None
    for name, value in values.items():
        key = f"{prefix}{name}"
        wanted = _schema_shape(key)
        if wanted is not None and isinstance(value, dict | list) and not isinstance(value, wanted):
            return key
        if found := _misshapen_key(value, f"{key}."):
            return found
    return None


def _schema_shape(key: str) -> type | None:
    """dict or list when the schema types `key` as a mapping or a list."""
    hint: Any = None
    node: Any = RunConfig()  # its kinds' and providers' keys are in its instances' classes
    for part in key.split("."):
        if not dataclasses.is_dataclass(node):
            return None
        hint, node = typing.get_type_hints(type(node)).get(part), getattr(node, part, None)
        if typing.get_origin(hint) in (types.UnionType, typing.Union):  # X | None
            hint = next((a for a in typing.get_args(hint) if a is not type(None)), None)
    origin = typing.get_origin(hint) or hint
    if origin in (dict, list):
        return origin
    default = OmegaConf.select(OmegaConf.structured(RunConfig), key)  # `Any` with a default
    return dict if isinstance(default, DictConfig) else list if isinstance(
        default, ListConfig) else None


def _free_mapping(key: str) -> list[str] | None:
    """The default keys of `key` when the schema makes it a mapping of any keys (such as
    speaker_names), else None."""
    node = OmegaConf.select(OmegaConf.structured(RunConfig), key, default=None)
    if isinstance(node, DictConfig) and OmegaConf.get_type(node) is dict:
        return [str(k) for k in node]
    return None


def _located(reason: str, key: str, path: Path, overrides: list[str]) -> UserError:
    """The error at the key's line in the file, or saying it came from the command line."""
    if key in override_keys(overrides):
        return UserError(f"{reason} (set on the command line)", path)
    return UserError(reason, path, _line_of_key(path, key))


def _check_values(cfg: DictConfig, path: Path, overrides: list[str]) -> None:
    missing = sorted(OmegaConf.missing_keys(cfg))
    if missing:
        key = missing[0]
        raise UserError(f"'{key}' is required: add it to the conf, or give {key}=<value> on "
                        "the command line", path)
    problem = out_of_range(cfg) or bad_address(cfg) or bad_completion_url(cfg)
    if problem:
        raise _located(problem[1], problem[0], path, overrides)


@dataclass(frozen=True)
class LoadedConf:
    config: DictConfig
    path: Path


@functools.cache
def _schema() -> DictConfig:
    """RunConfig as OmegaConf's node, built once a process: building it is about a sixth of a
    conf's loading, and `OmegaConf.merge` copies its first node, never changing it."""
    return OmegaConf.structured(RunConfig)


def load_run_config(conf: str, overrides: list[str] | None = None) -> LoadedConf:
    """Compose `conf` with the CLI `overrides`; interpolations such as `${task_dir}` resolved."""
    path = resolve_conf_path(conf)
    node = _load_yaml(path)
    overrides = list(overrides or [])
    try:
        cfg = _with_values_set(path, node, overrides)
        if cfg is None:
            # `+key=value` on the command line bypasses struct mode; the schema still decides.
            cfg = OmegaConf.merge(_schema(), _compose(path.stem, node, overrides))
        OmegaConf.resolve(cfg)
    except (HydraException, OmegaConfBaseException) as exc:
        raise _explain(exc, path, overrides) from None
    except ValueError as exc:  # Hydra's words for a group (`mephisto=1`) given a bare value
        if "Config group override" not in str(exc):
            raise
        raise UserError(f"a command-line override gives a group of settings a value ({exc}): "
                        "set one of its keys instead (e.g. mephisto.architect.port=3005)",
                        path) from None
    _check_values(cfg, path, overrides)
    warn_unused_keys(OmegaConf.to_container(node, resolve=False), overrides, path, _line_of_key)
    return LoadedConf(cfg, path)


def _compose(name: str, node: DictConfig, overrides: list[str]) -> DictConfig:
    """Hydra's composition of the conf file `name`'s `node` with the command line's
    `overrides`."""
    register_configs()
    ConfigStore.instance().store(group="conf", name=name, node=node, package="_global_")
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
            return compose("cep_run_config", overrides=[f"+conf={name}", *overrides])
    finally:
        GlobalHydra.instance().clear()


@functools.lru_cache(maxsize=16)
def _composed_options(options: str, _registered: tuple) -> DictConfig:
    """Hydra's composition of a defaults list (`options`, as YAML: the schema and the task
    kind, architect and provider options it names), kept for this process by list and
    plug-ins (`_registered`), whatever conf names it: composing is most of a load's time
    (Hydra copies its whole config store each time), and a process may load many confs that
    name the same options (the dashboard, tests). Callers change only copies of it."""
    return _compose("_defaults_list", OmegaConf.create(options), [])


def _with_values_set(path: Path, node: DictConfig, overrides: list[str]) -> DictConfig | None:
    """The conf as Hydra composes it when its file's keys and each override only set values:
    a copy of the composition of its defaults list, the file's keys merged last (where Hydra
    merges a conf whose defaults list does not place `_self_` earlier) and each override set
    the way Hydra sets it (`OmegaConf.update` with merge), all in struct mode, which refuses
    what Hydra might still add. None when the file or an override does more (`hydra` keys,
    + adds, ~ deletes, a group option, a sweep) or anything fails: then Hydra composes it all
    and its error is explained. A key without a dot that names a config group (`hydra`,
    `mephisto`, `conf`) is never a leaf of the conf, so only dotted keys and leaves are set."""
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException:
        return None
    defaults = node.get("defaults")
    if (not isinstance(defaults, ListConfig | None) or "hydra" in node
            or "_self_" in (defaults or [])[:-1]
            or not all(_only_sets_a_value(override) for override in parsed)):
        return None
    options = OmegaConf.masked_copy(node, ["defaults"] if defaults is not None else [])
    try:
        cfg = copy.deepcopy(_composed_options(OmegaConf.to_yaml(options), register_configs()))
    except (HydraException, OmegaConfBaseException):
        return None
    try:
        cfg.merge_with(OmegaConf.masked_copy(node, [k for k in node if k != "defaults"]))
        for override in parsed:
            name = override.key_or_group
            if "." not in name and OmegaConf.is_config(
                    OmegaConf.select(cfg, name, default=cfg, throw_on_resolution_failure=False)):
                return None
            OmegaConf.update(cfg, name, override.value(), merge=True)
    except OmegaConfBaseException:
        return None
    return cfg


def _only_sets_a_value(override: Override) -> bool:
    """Whether Hydra would do no more with `override` than set its value on the composed conf."""
    return (override.type is OverrideType.CHANGE and override.package is None
            and not override.is_sweep_override() and not override.is_hydra_override()
            and "/" not in override.key_or_group)
