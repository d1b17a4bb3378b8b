"""Providers: where workers come from and how their identity is vouched for (`providers.base`).

`mephisto.provider._provider_type` names one; `mock` (the original confs' name for local runs)
means `local`, and `mturk_sandbox` is the `mturk` module on the sandbox endpoint.
"""

from __future__ import annotations

from collection_and_annotations.plugins import Registry

PROVIDERS = Registry("provider", "providers", package="collection_and_annotations.providers",
                     conf_key="mephisto.provider._provider_type",
                     aliases={"mock": "local", "mturk_sandbox": "mturk"})
register_provider = PROVIDERS.register
provider_class = PROVIDERS.get
