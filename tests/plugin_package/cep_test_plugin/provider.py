"""A provider: local links, and a completion code from its own conf key."""

from dataclasses import dataclass

from collection_and_annotations.config.schema import ProviderConf
from collection_and_annotations.providers.base import Completion
from collection_and_annotations.providers.local import LocalProvider


@dataclass
class ThanksConf(ProviderConf):
    thanks_code: str = "THANKS"


class Thanks(LocalProvider):
    conf = ThanksConf

    @classmethod
    def create(cls, cfg, secret, public_url):
        provider = super().create(cfg, secret, public_url)
        provider.code = cfg.mephisto.provider.thanks_code
        return provider

    def completion(self, visit):
        return Completion(self.code)
