"""The kinds of bot, one module each (`kinds/<type>.py` registers its class as `<type>`), or an
installed plug-in.

A kind's class has `from_spec(spec, context) -> Bot` (raising UserError for what the user must
fix) and `keys`/`required`: the mapping keys its spec accepts besides `type` (`keys = None`: the
kind is declared with a ParlAI opt string, never a mapping).
"""

from __future__ import annotations

from collection_and_annotations.plugins import Registry

BOT_KINDS = Registry("bot type", "bots", package="collection_and_annotations.bots.kinds",
                     conf_key="model_opts.yaml type")
