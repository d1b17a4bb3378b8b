"""Find a conf by name or path, compose it with Hydra and report problems with file and line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
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
    found = _KEY_IN_MESSAGE.search(message)
    key = found.group(1) if found else None
    if key is None:
        return UserError(message.splitlines()[0], path)
    conversion = _CONVERSION.search(message)
    if "ConfigKeyError" in message or "not in '" in message:
        reason = f"unknown key '{key}': check its spelling or remove it"
    elif conversion:
        value, wanted, boolean = conversion.groups()
        wanted = "Boolean" if boolean else wanted
        reason = f"'{key}' must be {_TYPE_NAMES.get(wanted, wanted)}, got '{value}'"
    else:
        reason = f"{message.splitlines()[0]} (key '{key}')"
    return _located(reason, key, path, overrides)


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


def load_run_config(conf: str, overrides: list[str] | None = None) -> LoadedConf:
    """Compose `conf` with the CLI `overrides`; interpolations such as `${task_dir}` resolved."""
    path = resolve_conf_path(conf)
    node = _load_yaml(path)
    register_configs()
    ConfigStore.instance().store(group="conf", name=path.stem, node=node, package="_global_")
    GlobalHydra.instance().clear()
    overrides = list(overrides or [])
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
            cfg = compose("cep_run_config", overrides=[f"+conf={path.stem}", *overrides])
        # `+key=value` on the command line bypasses struct mode; the schema still decides.
        cfg = OmegaConf.merge(OmegaConf.structured(RunConfig), cfg)
        OmegaConf.resolve(cfg)
    except (HydraException, OmegaConfBaseException) as exc:
        raise _explain(exc, path, overrides) from None
    finally:
        GlobalHydra.instance().clear()
    _check_values(cfg, path, overrides)
    warn_unused_keys(OmegaConf.to_container(node, resolve=False), overrides, path, _line_of_key)
    return LoadedConf(cfg, path)
