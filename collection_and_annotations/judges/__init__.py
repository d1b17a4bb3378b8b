"""LLM judges beside human annotators (docs/judges.md): a bot of `model_opts.yaml` answers a
task's buckets as a worker would, its answers are checked and stored like a person's, and the
analysis measures how far to trust it."""
