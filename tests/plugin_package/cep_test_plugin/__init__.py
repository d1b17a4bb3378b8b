"""A plug-in of each kind for ChatEvaluationPlatform's tests: a task kind, a provider, a bot
kind and a metric."""
