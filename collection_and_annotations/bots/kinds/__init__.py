"""The kinds of bot, one module each: `kinds/<type>.py` registers its class as `<type>`.

A kind's class has `from_spec(spec, context) -> Bot` (raising UserError for what the user must
fix) and `keys`/`required`: the mapping keys its spec accepts besides `type` (`keys = None`: the
kind is declared with a ParlAI opt string, never a mapping).
"""

from __future__ import annotations

import pkgutil

from collection_and_annotations.plugins import Registry

BOT_KINDS = Registry("collection_and_annotations.bots.kinds", "bot type", "model_opts.yaml type")


def kind_names() -> list[str]:
    return sorted(module.name for module in pkgutil.iter_modules(__path__))
