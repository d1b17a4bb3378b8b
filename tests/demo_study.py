"""Answers to the demo's buckets, and a demo study submitted through the engine."""

from __future__ import annotations

from collection_and_annotations.engine.allocation import claim_unit
from collection_and_annotations.engine.work import submit, unit_view

RELEVANCE_Q = "Does SPEAKER_X's reply follow from what SPEAKER_Y just said?"
PROBLEMS_Q = "Which problems does the reply have?"
DRIFT = "Partly, it responds but drifts away."


def demo_answers(dialogue: dict, worker: int) -> dict:
    """Answers every demo bucket asks of one dialogue (the first worker is stricter)."""
    bot_turns = [str(t["index"]) for t in dialogue["turns"] if t["speaker"] == "system"]
    given: dict = {}
    for bucket in dialogue["annotation_tasks"]:
        if bucket == "relevance":
            given[bucket] = {turn: {RELEVANCE_Q: {DRIFT: {"Where does it drift?": {
                "To something unrelated.": {}}}} if (i + worker) % 2 else
                {"Yes, it responds to it directly.": {}},
                PROBLEMS_Q: {"It repeats an earlier reply.": {}} if i == worker else {}}
                for i, turn in enumerate(bot_turns)}
        elif bucket == "issues":
            given[bucket] = {turn: ["off_topic"] if i == 0 else [] for i, turn in
                             enumerate(bot_turns)}
        elif bucket == "overall_quality":
            given[bucket] = {"dialogue": {"Overall": 3 + worker}}
        elif bucket == "preference":
            # helper-a's dialogue is the good one, wherever the unit shows it
            left_is_a = "mystery novel" in dialogue["turns"][1]["text"]
            choice = "Dialogue 1 (left)" if left_is_a else "Dialogue 2 (right)"
            given[bucket] = {"dialogue": choice if worker else "No real difference"}
    return given


def submit_demo(served, workers: int = 2) -> int:
    """Every demo unit answered by `workers` workers (4 data lines); the number submitted."""
    submitted = 0
    for worker in range(workers):
        for visit in range(4):
            claim = claim_unit(served.db, served.task_id, served.run_id, "local",
                               f"worker{worker}", str(visit), served.limits)
            view = unit_view(served.db, served.blueprint, claim.unit_public_id,
                             claim.worker_id)
            answers = {d["key"]: demo_answers(d, worker) for d in view["dialogues"]}
            submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id, answers,
                   {"duration_ms": 1}, None)
            submitted += 1
    return submitted
