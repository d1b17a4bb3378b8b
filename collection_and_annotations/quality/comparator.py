"""The one comparator of expected and given answers, used by screening and gold alike.

Both sides are *flat* answers of one turn: `{key: frozenset of chosen values}` (see
`translation.py` for how bucket answers become flat ones). The rules, as the original project
applied them (design.md §4 "Screening and gold"):

- `{}` expected: no selection is correct; any chosen value is a mistake;
- `{"_disjunction": true, "options": [...]}`: correct when any option matches;
- a key whose expected value is `""` must be absent (nothing chosen for it);
- lists compare as sets, a string as the set of itself;
- keys the worker chose beyond the expected ones are not mistakes.

A turn without an expected answer is not scored (the caller never asks).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Flat = Mapping[str, frozenset[str]]


@dataclass(frozen=True)
class Alternative:
    """One acceptable answer of a turn: `nothing` means "no selection at all"; otherwise every
    key of `required` must hold exactly its set (an empty set: the key must be absent)."""

    required: Mapping[str, frozenset[str]]
    nothing: bool = False


@dataclass(frozen=True)
class Expected:
    """What a turn accepts: any of its alternatives (one unless the file wrote a disjunction)."""

    alternatives: tuple[Alternative, ...]


def chosen(given: Flat) -> dict[str, frozenset[str]]:
    """The given answer without keys that hold nothing (an empty list is no selection)."""
    return {key: values for key, values in given.items() if values}


def matches_alternative(alternative: Alternative, given: Flat) -> bool:
    picked = chosen(given)
    if alternative.nothing:
        return not picked
    return all(picked.get(key, frozenset()) == values
               for key, values in alternative.required.items())


def matches(expected: Expected, given: Flat) -> bool:
    """Whether the given flat answer of a turn is correct."""
    return any(matches_alternative(alternative, given) for alternative in expected.alternatives)
