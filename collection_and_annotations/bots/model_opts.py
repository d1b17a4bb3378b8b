"""`model_opts.yaml` (nickname -> spec) and `conversations_needed_string` (`spec:count,...`).

A spec is either the original project's ParlAI opt string, a mapping with `type:`, or a mapping
with `opt:` (an opt string with this platform's keys, e.g. the reply limits). Each nickname
keeps its line so every later error points at `model_opts.yaml:LINE`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from collection_and_annotations.bots.base import SpecSource
from collection_and_annotations.bots.limits import LIMIT_KEYS, ReplyLimits
from collection_and_annotations.bots.opt_string import ParsedOpt, parse_opt_string
from collection_and_annotations.errors import UserError
from collection_and_annotations.json_files import read_text

NEEDED_KEY = "mephisto.blueprint.conversations_needed_string"


class BotSpecWarning(UserWarning):
    """A problem in the spec of a bot the conf does not use (it would be an error if used)."""


@dataclass(frozen=True)
class BotSpec:
    """One nickname of `model_opts.yaml`: an opt string (`parsed`) or a mapping (`options`),
    and the limits of its replies (any kind)."""

    nickname: str
    source: SpecSource
    parsed: ParsedOpt | None = None
    options: dict[str, Any] = field(default_factory=dict)
    key_lines: dict[str, int] = field(default_factory=dict)
    limits: ReplyLimits = field(default_factory=ReplyLimits)

    @property
    def type(self) -> str | None:
        """The mapping's `type`; None for an opt string (its kind depends on where agents are)."""
        return None if self.parsed else self.options.get("type")

    def error(self, reason: str, key: str | None = None) -> UserError:
        """A UserError naming the bot and the line of its spec (or of `key` in it)."""
        line = self.key_lines.get(key, self.source.line) if key else self.source.line
        return UserError(f"bot '{self.nickname}': {reason}", self.source.path, line)


def load_model_opts(path: str | Path) -> dict[str, BotSpec]:
    path = Path(path)
    text = read_text(path, "model options file (mephisto.blueprint.model_opt_path)")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UserError(f"invalid YAML: {exc}", path, mark.line + 1 if mark else None) from None
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise UserError("model options map each bot nickname to a spec (an opt string or a "
                        "mapping with 'type')", path, root.start_mark.line + 1)
    specs: dict[str, BotSpec] = {}
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + 1
        nickname = key_node.value
        if not isinstance(key_node, yaml.ScalarNode) or not _valid_nickname(nickname):
            raise UserError(f"bot nickname {nickname!r} must be a word without '|', ':', ',' "
                            "or spaces (conversations_needed_string uses them)", path, line)
        if nickname in specs:
            raise UserError(f"bot '{nickname}' is declared twice (first at line "
                            f"{specs[nickname].source.line})", path, line)
        specs[nickname] = _spec(nickname, value_node, SpecSource(str(path), line))
    return specs


def _valid_nickname(nickname: object) -> bool:
    return (isinstance(nickname, str) and bool(nickname)
            and not any(c in nickname for c in "|:,") and not any(c.isspace() for c in nickname))


def _spec(nickname: str, node: yaml.Node, source: SpecSource) -> BotSpec:
    value = yaml.constructor.SafeConstructor().construct_document(node)
    if isinstance(value, str) and value.strip():
        return BotSpec(nickname, source, parsed=parse_opt_string(value))
    if isinstance(value, dict) and isinstance(node, yaml.MappingNode):
        key_lines = {k.value: k.start_mark.line + 1 for k, _ in node.value}
        spec = BotSpec(nickname, source, options=value, key_lines=key_lines)
        limits = ReplyLimits.of(value, spec.error)
        if "opt" in value:
            return _opt_mapping(spec, limits)
        if not isinstance(value.get("type"), str):
            raise spec.error("a mapping spec needs 'type' (openai, command, demo), or 'opt' "
                             "with a ParlAI opt string (e.g. opt: --model internal:<name>)")
        return BotSpec(nickname, source, options=value, key_lines=key_lines, limits=limits)
    raise UserError(f"bot '{nickname}': the spec must be a ParlAI opt string (e.g. "
                    "'--model internal:<name>') or a mapping with 'type'", source.path,
                    source.line)


def _opt_mapping(spec: BotSpec, limits: ReplyLimits) -> BotSpec:
    """`{opt: "--model internal:x", reply_timeout: 60}`: an opt string with this platform's
    own keys; its kind comes from the opt string, as for a bare one."""
    for key in spec.options:
        if key == "type":
            raise spec.error("a spec with 'opt' takes its kind from the opt string: remove "
                             "'type'", key)
        if key != "opt" and key not in LIMIT_KEYS:
            raise spec.error(f"unknown key '{key}' for a spec with 'opt' (known: "
                             f"{', '.join(sorted({'opt', *LIMIT_KEYS}))})", key)
    opt = spec.options["opt"]
    if not isinstance(opt, str) or not opt.strip():
        raise spec.error("'opt' must be a ParlAI opt string, e.g. --model internal:<name>",
                         "opt")
    return BotSpec(spec.nickname, spec.source, parsed=parse_opt_string(opt),
                   key_lines=spec.key_lines, limits=limits)


def parse_conversations_needed(text: str, known_bots: Mapping[str, Any],
                               source: str = NEEDED_KEY) -> dict[tuple[str, ...], int]:
    """`"a|b:20,c:5"` -> {("a", "b"): 20, ("c",): 5}; every bot must be in model_opts.
    `source` says where the string came from, for the error."""
    needed: dict[tuple[str, ...], int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        spec, sep, count = part.rpartition(":")
        if not sep or not count.strip().isdigit():
            raise UserError(f"{source}: '{part}' must be 'bot:count' or 'botA|botB:count'")
        bots = tuple(b.strip() for b in spec.split("|"))
        for bot in bots:
            if bot not in known_bots:
                raise UserError(f"{source}: bot '{bot}' is not in {_model_opts_name(known_bots)}"
                                f" (known: {', '.join(sorted(known_bots)) or 'none'})")
        needed[bots] = int(count)
    return needed


def _model_opts_name(known_bots: Mapping[str, Any]) -> str:
    for spec in known_bots.values():
        if isinstance(spec, BotSpec):
            return spec.source.path
    return "model_opts"


def nicknames_in(needed: Mapping[tuple[str, ...], int]) -> list[str]:
    """The bots a `conversations_needed_string` uses, each once, in order of appearance."""
    return list(dict.fromkeys(bot for bots in needed for bot in bots))


def check_spec_problems(specs: Mapping[str, BotSpec], used: Iterable[str]) -> None:
    """Typos in opt strings: an error for a bot the conf uses, a warning for the others (the
    original's own file has one in a bot nobody used)."""
    used = set(used)
    for nickname, spec in specs.items():
        for problem in spec.parsed.problems if spec.parsed else []:
            if nickname in used:
                raise spec.error(problem)
            # One location for every caller (the launch checks, then builds the bots): the
            # same warning is printed once.
            warnings.warn(f"{spec.source}: bot '{nickname}' (not used by this conf): {problem}",
                          BotSpecWarning, stacklevel=1)
