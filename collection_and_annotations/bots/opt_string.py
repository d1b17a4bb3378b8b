"""ParlAI opt strings (`--model-file zoo:... --inference topk`) read the way ParlAI reads them.

The original project's `model_opts.yaml` gives each bot a ParlAI command line; we parse it without
ParlAI so a Python agent gets its `opt` and typos are reported at launch instead of surfacing as
"no module named odel-file" in the middle of a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# ParlAI's own short options (parlai/core/params.py); any other single-dash word is a typo.
SHORT_OPTIONS = {
    "-m": "model",
    "-mf": "model_file",
    "-t": "task",
    "-dt": "datatype",
    "-bs": "batchsize",
    "-im": "init_model",
    "-o": "init_opt",
    "-dp": "datapath",
}


@dataclass(frozen=True)
class ParsedOpt:
    """The options of one opt string and what ParlAI would misread in it."""

    opt: dict[str, Any]
    args: list[str]  # the whitespace-split words, as ParlAI's parser receives them
    problems: list[str]


def parse_opt_string(text: str) -> ParsedOpt:
    """`--key value`, `--key=value` and bare flags; underscores and dashes are the same key
    (ParlAI's `fix_underscores`); a later key overrides an earlier one, as in argparse."""
    args = text.split()
    opt: dict[str, Any] = {}
    problems: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if not word.startswith("-") or _is_number(word):
            problems.append(f"'{word}' is not the value of an option")
            continue
        if word.startswith("--"):
            key, has_value, value = word[2:].partition("=")
        elif word.split("=", 1)[0] in SHORT_OPTIONS:
            short, has_value, value = word.partition("=")
            key = SHORT_OPTIONS[short]
        else:
            problems.append(_single_dash_problem(word))
            if i < len(args) and not args[i].startswith("-"):
                i += 1  # the typo's own value: one message is enough
            continue
        if not has_value and i < len(args) and (not args[i].startswith("-")
                                                or _is_number(args[i])):
            value, has_value = args[i], "="
            i += 1
        opt[key.replace("-", "_")] = _value(value) if has_value else True
    return ParsedOpt(opt, args, problems)


def _single_dash_problem(word: str) -> str:
    """ParlAI's argparse reads `-model-file` as `-m odel-file`: name the misreading."""
    long = "--" + word.lstrip("-")
    for short in sorted(SHORT_OPTIONS, key=len, reverse=True):
        if word.startswith(short):
            return (f"'{word}' has a single dash: ParlAI reads it as '{short} "
                    f"{word[len(short):]}'; did you mean {long}?")
    return f"'{word}' has a single dash and is no ParlAI short option; did you mean {long}?"


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _value(text: str) -> Any:
    """Numbers and true/false become numbers and booleans (ParlAI's typed options); anything
    else, `None` included, stays a string as ParlAI's `str` options keep it."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
