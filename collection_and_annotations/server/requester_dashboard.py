"""Requester API behind the dashboard (docs/dashboard.md): overview, workers, the review queue,
one submission as its worker saw it, bulk review, the payments that did not reach the
platform, answer counts, the judges' progress and answers ("Judges") and the arena's live
leaderboard (docs/arena.md); qualifications by pseudonym are in server/requester_quals.py.

Routes are `requester` routes and so pass its token, cookie and CSRF checks; the queries live
in engine/dashboard.py, engine/review_queue.py, judges/review.py and analysis/arena.py.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

from sqlalchemy import func, select
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from collection_and_annotations.engine import review
from collection_and_annotations.engine.dashboard import overview as overview_of
from collection_and_annotations.engine.dashboard import sync_failures
from collection_and_annotations.engine.dashboard import workers as workers_of
from collection_and_annotations.engine.provider_sync import send_bonus, send_review
from collection_and_annotations.engine.review_queue import (
    QueueFilter,
    resolve_bonus,
    retry_failures,
    review_page,
    shown_bonus,
    shown_decision,
    submission_record,
)
from collection_and_annotations.engine.runs import Progress, unit_counts
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.export.answer_counts import answer_counts
from collection_and_annotations.judges.review import judge_answers, judges_overview
from collection_and_annotations.server.report_jobs import report_job
from collection_and_annotations.server.requester_api import PREFIX, attachment, requester
from collection_and_annotations.server.requester_review import block_name
from collection_and_annotations.server.web import JSON, abort, json_body
from collection_and_annotations.server.worker_api import unit_payload
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import BattleVote, Bonus, ReviewDecision

MAX_BULK = 500
# Bootstrap resamples of the live arena leaderboard: enough for its intervals, fast to poll.
LIVE_RESAMPLES = 200
BULK_SEND_SECONDS = 10.0  # sends left after this go with the background sync


def _buckets(served: ServedTask) -> list[str]:
    return list(served.blueprint.describe().get("buckets", {}))


def _chat_buckets(served: ServedTask) -> list[str] | None:
    """The buckets every unit asks in a chat task; None in a static one (each unit says)."""
    return _buckets(served) if served.blueprint.chats else None


@requester
def overview(request: Request, task: ServedTask) -> Response:
    progress = Progress.of(unit_counts(task.db, task.task_id))
    with task.db.read() as session:
        shown = overview_of(session, task.task_id, task.run_id, progress,
                            task.blueprint.pool_labels(), task.taking_work)
    return JSON({"task": task.task_name, "current_run": task.run_id,
                 "state": shown.pop("state"), "provider": task.provider.name,
                 "arena": task.blueprint.chat_server == "arena", **shown})


@requester
def workers(request: Request, task: ServedTask) -> Response:
    block = block_name(task)
    with task.db.read() as session:
        return JSON({"workers": workers_of(session, task.task_id, block,
                                           task.blocked_workers)})


def _int_arg(request: Request, name: str, default: int) -> int:
    given = request.query_params.get(name, "")
    if not given:
        return default
    if not given.isdigit():
        raise abort(400, f"{name} must be a whole number")
    return int(given)


@requester
def review_queue(request: Request, task: ServedTask) -> Response:
    """Submitted units, newest first; query: worker, status, decision, bucket, flag, pool,
    offset, limit (docs/dashboard.md)."""
    chosen = QueueFilter.of(dict(request.query_params))
    with task.db.read() as session:
        page = review_page(session, task.task_id, chosen, _int_arg(request, "offset", 0),
                           _int_arg(request, "limit", 50), _chat_buckets(task))
    return JSON({"total": page.pop("total"), "offset": page.pop("offset"),
                 "limit": page.pop("limit"), "buckets": _buckets(task), **page})


@requester
def one_submission(request: Request, task: ServedTask) -> Response:
    """A submitted unit with the worker page's payload for it, as its worker saw it."""
    unit_id = request.path_params["unit_id"]
    with task.db.read() as session:
        found = submission_record(session, task.task_id, unit_id, _chat_buckets(task))
    if found is None:
        raise abort(404, f"no submitted unit '{unit_id}' in this task")
    record, worker_id, _ = found
    try:
        record["payload"] = unit_payload(task, unit_id, worker_id)
    except WorkRefused as exc:  # the unit went on to another worker since
        record["payload"] = {"error": str(exc)}
    return JSON(record)


def _unit_ids(body: dict[str, Any]) -> list[str]:
    ids = body.get("unit_ids")
    if not isinstance(ids, list) or not ids or len(ids) > MAX_BULK or not all(
            isinstance(i, str) and i for i in ids):
        raise abort(400, f"give unit_ids: a list of 1 to {MAX_BULK} unit ids")
    return list(dict.fromkeys(ids))


@requester
def bulk_review(request: Request, task: ServedTask) -> Response:
    """`{"unit_ids": [...], "decision": "approve", "reason": ""}`: each unit is decided on
    its own (one refused does not stop the others); every decision is recorded before any is
    sent, and sends that do not fit in BULK_SEND_SECONDS go with the background sync."""
    body = json_body(request)
    results: list[dict[str, Any]] = []
    recorded: list[tuple[int, int]] = []  # (result index, decision row id)
    for unit_id in _unit_ids(body):
        try:
            row_id = review.decide(task, unit_id, body.get("decision"), body.get("reason", ""),
                                   body.get("rejection_category"))
        except review.ReviewRefused as exc:
            results.append({"unit_id": unit_id, "ok": False, "error": str(exc)})
            continue
        recorded.append((len(results), row_id))
        results.append({"unit_id": unit_id, "ok": True})
    stop = time.monotonic() + BULK_SEND_SECONDS
    for _, row_id in recorded:
        if time.monotonic() > stop:
            break
        send_review(task.db, task.provider, row_id)
    with task.db.read() as session:
        for index, row_id in recorded:
            results[index]["decision"] = shown_decision(session.get(ReviewDecision, row_id))
    return JSON({"results": results})


def _sync_failures(request: Request, task: ServedTask) -> Response:
    with task.db.read() as session:
        return JSON(sync_failures(session, task.task_id))


@requester
def retry_sync_failures(request: Request, task: ServedTask) -> Response:
    retry_failures(task.db, task.provider, task.task_id)
    return _sync_failures(request, task)


list_sync_failures = requester(_sync_failures)


@requester
def resolve(request: Request, task: ServedTask) -> Response:
    """`{"paid": true|false}` for an uncertain bonus, after checking on the platform."""
    bonus_id = request.path_params["bonus_id"]
    resolve_bonus(task.db, task.task_id, bonus_id, json_body(request).get("paid"))
    send_bonus(task.db, task.provider, bonus_id)
    with task.db.read() as session:
        return JSON(shown_bonus(session.get(Bonus, bonus_id)))


@requester
def results(request: Request, task: ServedTask) -> Response:
    downloads = [("Submissions (JSONL)", "/api/requester/submissions?format=jsonl"),
                 ("Items (CSV)", "/api/requester/submissions?format=csv"),
                 ("Items (JSONL)", "/api/requester/submissions?format=items-jsonl"),
                 ("Worker identities (CSV)", "/api/requester/workers/identities?format=csv"),
                 ("Analysis report (HTML)", "/api/requester/report")]
    return JSON({"questions": answer_counts(task.db, task.task_name, task.task_id),
                 "downloads": [{"label": label, "url": url} for label, url in downloads]})


@requester
def report(request: Request, task: ServedTask) -> Response:
    """The analysis report of the task so far (docs/analysis.md), as `analyze --task` writes
    it: a self-contained HTML file, computed once per data version (waits for it)."""
    job, current = report_job(task)
    job.finished.wait()
    if job.version != current:  # an older version's computation ran first: now this one
        job, _ = report_job(task)
        job.finished.wait()
    if job.error or job.html is None:
        raise abort(500, f"the report could not be computed: {job.error}")
    return attachment(job.html, "text/html", f"{task.task_name}-report.html")


@requester
def report_status(request: Request, task: ServedTask) -> Response:
    """Starts the report of the data as it is now unless it is kept or running, and says how
    far it got (the dashboard polls this, then downloads the report at once)."""
    job, current = report_job(task)
    return JSON(job.shown(current))


@requester
def judges(request: Request, task: ServedTask) -> Response:
    with task.db.read() as session:
        return JSON({"judges": judges_overview(session, task.task_id)})


@requester
def unit_judges(request: Request, task: ServedTask) -> Response:
    """What the judges answered about the same dialogues as this person's unit."""
    unit_id = request.path_params["unit_id"]
    with task.db.read() as session:
        found = judge_answers(session, task.task_id, unit_id, task.blueprint.chats)
    if found is None:
        raise abort(404, f"no unit '{unit_id}' of a person in this task")
    return JSON({"unit_id": unit_id, "judges": found})


@requester
def arena(request: Request, task: ServedTask) -> Response:
    """The live leaderboard: the same figures as `analyze` gives over the battles so far."""
    if task.blueprint.chat_server != "arena":
        raise abort(404, "this task is not an arena; its results are under /api/requester/results")
    with task.db.snapshot() as connection:
        count, newest = connection.execute(
            select(func.count(BattleVote.id), func.coalesce(func.max(BattleVote.id), 0))).one()
    return JSON(_leaderboard(task.db, task.task_name, task.task_id, count, newest))


@lru_cache(maxsize=1)  # only the newest answer is worth keeping
def _leaderboard(db: Database, task_name: str, task_id: int, votes: int,
                 newest: int) -> dict[str, Any]:
    """The answer for the task's votes as they are (`votes` of them, the newest `newest`)."""
    from collection_and_annotations.analysis.arena import stored_leaderboard
    from collection_and_annotations.export.writers import json_safe

    board = stored_leaderboard(db, [task_name], LIVE_RESAMPLES)
    return {"resamples": LIVE_RESAMPLES, "leaderboard": json_safe(board)}


ROUTES = [
    Route(f"{PREFIX}/overview", overview, methods=["GET"]),
    Route(f"{PREFIX}/workers", workers, methods=["GET"]),
    Route(f"{PREFIX}/review", review_queue, methods=["GET"]),
    Route(f"{PREFIX}/units/bulk-review", bulk_review, methods=["POST"]),
    Route(f"{PREFIX}/units/{{unit_id}}", one_submission, methods=["GET"]),
    Route(f"{PREFIX}/sync-failures", list_sync_failures, methods=["GET"]),
    Route(f"{PREFIX}/sync-failures/retry", retry_sync_failures, methods=["POST"]),
    Route(f"{PREFIX}/bonuses/{{bonus_id:int}}/resolve", resolve, methods=["POST"]),
    Route(f"{PREFIX}/results", results, methods=["GET"]),
    Route(f"{PREFIX}/report", report, methods=["GET"]),
    Route(f"{PREFIX}/report/status", report_status, methods=["GET"]),
    Route(f"{PREFIX}/judges", judges, methods=["GET"]),
    Route(f"{PREFIX}/units/{{unit_id}}/judges", unit_judges, methods=["GET"]),
    Route(f"{PREFIX}/arena", arena, methods=["GET"]),
]
