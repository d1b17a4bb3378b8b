"""Automatic metrics over collected chats, per bot, through the metrics registry and
`metrics.compute.compute_metrics` (the code `evaluate` runs), so the numbers match `evaluate`
on the same texts and latencies.

- `richness` (lengths included: `avg_turn_length` is tokens per bot turn) over bot turns;
- `latency` over bot turns from the stored `latency_ms` (worker's message stored -> whole
  reply), and as `first_piece_latency` from `first_piece_ms`;
- `worker_response_time`: the same percentiles over the worker's messages, from the bot
  message before each to the worker's (`sent_at`; the server's opener is not the worker's);
- `bot_turns_per_dialogue`: mean bot turns per chat.

Collected chats carry no references, so reference-based metrics (BLEU, chrF, TER) are not
run on them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from collection_and_annotations.analysis.chat_logs import ChatLog, LoggedMessage
from collection_and_annotations.metrics.base import MetricError
from collection_and_annotations.metrics.compute import compute_metrics
from collection_and_annotations.metrics.inputs import Segments

NO_REFERENCES = ("collected chats carry no references: reference-based metrics (BLEU, chrF, "
                 "TER) are not computed on them")
SECONDS = 1000.0

# (message, the message before it) -> (is it scored, its latency in seconds)
Picker = Callable[[LoggedMessage, LoggedMessage | None], tuple[bool, float | None]]


def _bot_reply(message: LoggedMessage, _: LoggedMessage | None) -> tuple[bool, float | None]:
    return (message.speaker == "system",
            None if message.latency_ms is None else message.latency_ms / SECONDS)


def _first_piece(message: LoggedMessage, _: LoggedMessage | None) -> tuple[bool, float | None]:
    return (message.speaker == "system",
            None if message.first_piece_ms is None else message.first_piece_ms / SECONDS)


def _worker_response(message: LoggedMessage,
                     before: LoggedMessage | None) -> tuple[bool, float | None]:
    own = message.speaker == "user" and not message.opener
    if not own or before is None or before.speaker != "system":
        return own, None
    return True, (message.sent_at - before.sent_at).total_seconds()


# (name in the results, metric in the registry, which messages with which latency)
RUNS: tuple[tuple[str, str, Picker], ...] = (
    ("richness", "richness", _bot_reply),
    ("latency", "latency", _bot_reply),
    ("first_piece_latency", "latency", _first_piece),
    ("worker_response_time", "latency", _worker_response),
)


def _segments(logs: list[ChatLog], pick: Picker) -> Segments:
    """The picked messages as metric segments tagged with their bot (`line`: the chat's
    number, for the metrics' error messages)."""
    segments = Segments("collected chats")
    for number, log in enumerate(logs, start=1):
        tags = {"bot": log.bot, "dialogue_id": log.dialogue_id}
        before = None
        for message in log.messages:
            keep, latency = pick(message, before)
            if keep:
                segments.append(message.text, [], number, tags, {}, latency)
            before = message
    return segments


def automatic_metrics(logs: list[ChatLog]) -> tuple[list[dict[str, Any]], dict[str, str],
                                                      list[str]]:
    """Rows `{bot, metric, value, n, n_dialogues}` (`n`: messages scored), the metrics'
    signatures, and notes on what could not be computed."""
    dialogues = Counter(log.bot for log in logs)
    bot_turns = Counter()
    for log in logs:
        bot_turns[log.bot] += sum(m.speaker == "system" for m in log.messages)
    rows = [{"bot": bot, "metric": "bot_turns_per_dialogue", "value": bot_turns[bot] / n,
             "n": n, "n_dialogues": n} for bot, n in sorted(dialogues.items())]
    signatures, notes = {}, [NO_REFERENCES]
    for name, metric, pick in RUNS:
        try:
            result = compute_metrics(_segments(logs, pick), [metric], by=["bot"])
        except MetricError as exc:
            notes.append(f"{name}: not computed ({exc})")
            continue
        computed = result["metrics"][metric]
        signatures[name] = computed["signature"]
        components = computed["direction"] if isinstance(computed["direction"], dict) else {}
        for bot, group in computed["by_tag"]["bot"]["groups"].items():
            value = group["value"]  # None when none of the bot's messages has what it needs
            for component in components or [None]:
                rows.append({
                    "bot": bot, "metric": f"{name}.{component}" if component else name,
                    "value": value.get(component) if component and value else value,
                    "n": group["n"], "n_dialogues": dialogues[bot]})
    rows.sort(key=lambda r: r["bot"])  # stable: each bot's metrics in the order above
    return rows, signatures, notes
