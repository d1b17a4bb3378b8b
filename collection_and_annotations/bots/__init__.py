"""Bots: model specs from `model_opts.yaml` and the conversations each needs."""
