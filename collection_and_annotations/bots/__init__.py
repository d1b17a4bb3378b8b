"""Bots: model specs from `model_opts.yaml`, every kind of bot behind one interface (`base.py`),
built at launch by `build_bots` (docs/bots.md)."""

from collection_and_annotations.bots.base import (
    Bot,
    BotContext,
    BotSession,
    BotUnavailable,
    SpecSource,
    Turn,
)
from collection_and_annotations.bots.build import build_bots, check_bots, kind_of
from collection_and_annotations.bots.model_opts import (
    BotSpec,
    BotSpecWarning,
    load_model_opts,
    nicknames_in,
    parse_conversations_needed,
)

__all__ = ["Bot", "BotContext", "BotSession", "BotSpec", "BotSpecWarning", "BotUnavailable",
           "SpecSource", "Turn", "build_bots", "check_bots", "kind_of", "load_model_opts",
           "nicknames_in", "parse_conversations_needed"]
