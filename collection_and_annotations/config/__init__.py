"""Run configuration: Hydra structured configs compatible with the original project's confs.

`config.loader.load_run_config` composes and checks a conf (it loads Hydra); `config.schema`
declares the keys and loads Hydra only to register them, so a task kind's conf class and
the commands that read stored runs (`export`) import no Hydra.
"""
