"""Run configuration: Hydra structured configs compatible with the original project's confs."""

from collection_and_annotations.config.loader import LoadedConf, load_run_config
from collection_and_annotations.config.schema import RunConfig

__all__ = ["LoadedConf", "RunConfig", "load_run_config"]
