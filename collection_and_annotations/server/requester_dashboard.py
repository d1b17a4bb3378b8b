"""Requester API behind the dashboard (docs/dashboard.md): overview, workers, the review queue,
one submission as its worker saw it, bulk review, qualifications by pseudonym, the payments
that did not reach the platform, and answer counts.

Routes join the `requester_api` blueprint and so its token, cookie and CSRF checks; the
queries live in engine/dashboard.py and engine/review_queue.py.
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from flask import Response, abort, jsonify, request

from collection_and_annotations.engine import review
from collection_and_annotations.engine.dashboard import overview as overview_of
from collection_and_annotations.engine.dashboard import workers as workers_of
from collection_and_annotations.engine.provider_sync import send_bonus, send_review
from collection_and_annotations.engine.review_queue import (
    QueueFilter,
    QueueRefused,
    resolve_bonus,
    retry_failures,
    review_page,
    shown_bonus,
    shown_decision,
    submission_record,
    sync_failures,
)
from collection_and_annotations.engine.runs import Progress, unit_counts
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.engine.work import WorkRefused
from collection_and_annotations.export.answer_counts import answer_counts
from collection_and_annotations.quality import qualifications
from collection_and_annotations.server.requester_api import _served, json_body, requester_api
from collection_and_annotations.server.requester_quals import (
    qualification_name,
    qualification_value,
)
from collection_and_annotations.server.requester_review import block_name, worker_by_pseudonym
from collection_and_annotations.server.worker_api import unit_payload
from collection_and_annotations.storage.models import Bonus, ReviewDecision

MAX_BULK = 500
BULK_SEND_SECONDS = 10.0  # sends left after this go with the background sync


@requester_api.errorhandler(QueueRefused)
def _queue_refused(exc: QueueRefused) -> tuple[Response, int]:
    return jsonify({"error": str(exc)}), 400


def _chat_pools(served: ServedTask) -> dict[str, str]:
    return served.blueprint.pool_labels()


def _buckets(served: ServedTask) -> list[str]:
    return list(served.blueprint.describe().get("buckets", {}))


def _kind(served: ServedTask) -> tuple[str, list[str] | None]:
    """The units' kind for the page, and the buckets every unit asks (chat tasks only)."""
    return ("chat", _buckets(served)) if served.chats else ("static", None)


@requester_api.get("/overview")
def overview() -> Response:
    served = _served()
    progress = Progress.of(unit_counts(served.db, served.task_id))
    with served.db.read() as session:
        shown = overview_of(session, served.task_id, served.run_id, progress,
                            _chat_pools(served), served.taking_work)
    return jsonify({"task": served.task_name, "current_run": served.run_id,
                    "state": shown.pop("state"), "provider": served.provider.name, **shown})


@requester_api.get("/workers")
def workers() -> Response:
    served = _served()
    block = block_name()
    with served.db.read() as session:
        return jsonify({"workers": workers_of(session, served.task_id, block,
                                              served.blocked_workers)})


def _qualification(pseudonym: str, body: dict[str, Any], value: int | None) -> Response:
    name = qualification_name(body)
    provider, worker = worker_by_pseudonym(pseudonym)
    with _served().db.transaction() as connection:
        try:
            done = qualifications.change(connection, provider, worker, name, value)
        except qualifications.NotChanged:
            abort(404, f"worker {pseudonym} does not hold '{name}'")
    return jsonify({"ok": True, "message": done.replace(worker, pseudonym)})


@requester_api.post("/workers/<pseudonym>/qualifications/grant")
def grant_by_pseudonym(pseudonym: str) -> Response:
    """`{"name": "q", "value": 1}` (value: an integer, 1 if left out)."""
    body = json_body()
    return _qualification(pseudonym, body, qualification_value(body))


@requester_api.post("/workers/<pseudonym>/qualifications/revoke")
def revoke_by_pseudonym(pseudonym: str) -> Response:
    return _qualification(pseudonym, json_body(), None)


def _int_arg(name: str, default: int) -> int:
    given = request.args.get(name, "")
    if not given:
        return default
    if not given.isdigit():
        abort(400, f"{name} must be a whole number")
    return int(given)


@requester_api.get("/review")
def review_queue() -> Response:
    """Submitted units, newest first; query: worker, status, decision, bucket, flag, pool,
    offset, limit (docs/dashboard.md)."""
    served = _served()
    chosen = QueueFilter.of(request.args.to_dict())
    kind, chat_buckets = _kind(served)
    with served.db.read() as session:
        page = review_page(session, served.task_id, chosen, _int_arg("offset", 0),
                           _int_arg("limit", 50), kind, chat_buckets)
    return jsonify({"total": page.pop("total"), "offset": page.pop("offset"),
                    "limit": page.pop("limit"), "buckets": _buckets(served), **page})


@requester_api.get("/units/<unit_id>")
def one_submission(unit_id: str) -> Response:
    """A submitted unit with the worker page's payload for it, as its worker saw it."""
    served = _served()
    kind, chat_buckets = _kind(served)
    with served.db.read() as session:
        found = submission_record(session, served.task_id, unit_id, kind, chat_buckets)
    if found is None:
        abort(404, f"no submitted unit '{unit_id}' in this task")
    record, worker_id, _ = found
    try:
        record["payload"] = unit_payload(served, unit_id, worker_id)
    except WorkRefused as exc:  # the unit went on to another worker since
        record["payload"] = {"error": str(exc)}
    return jsonify(record)


def _unit_ids(body: dict[str, Any]) -> list[str]:
    ids = body.get("unit_ids")
    if not isinstance(ids, list) or not ids or len(ids) > MAX_BULK or not all(
            isinstance(i, str) and i for i in ids):
        abort(400, f"give unit_ids: a list of 1 to {MAX_BULK} unit ids")
    return list(dict.fromkeys(ids))


@requester_api.post("/units/bulk-review")
def bulk_review() -> Response:
    """`{"unit_ids": [...], "decision": "approve", "reason": ""}`: each unit is decided on
    its own (one refused does not stop the others); every decision is recorded before any is
    sent, and sends that do not fit in BULK_SEND_SECONDS go with the background sync."""
    served, body = _served(), json_body()
    results: list[dict[str, Any]] = []
    recorded: list[tuple[int, int]] = []  # (result index, decision row id)
    for unit_id in _unit_ids(body):
        try:
            row_id, _ = review.decide(served.db, served.provider, served.task_id,
                                      served.run_id, unit_id, body.get("decision"),
                                      body.get("reason", ""), body.get("rejection_category"),
                                      served.return_rejected_units)
        except review.ReviewRefused as exc:
            results.append({"unit_id": unit_id, "ok": False, "error": str(exc)})
            continue
        recorded.append((len(results), row_id))
        results.append({"unit_id": unit_id, "ok": True})
    stop = time.monotonic() + BULK_SEND_SECONDS
    for _, row_id in recorded:
        if time.monotonic() > stop:
            break
        send_review(served.db, served.provider, row_id)
    with served.db.read() as session:
        for index, row_id in recorded:
            results[index]["decision"] = shown_decision(session.get(ReviewDecision, row_id))
    return jsonify({"results": results})


@requester_api.get("/sync-failures")
def list_sync_failures() -> Response:
    served = _served()
    with served.db.read() as session:
        return jsonify(sync_failures(session, served.task_id))


@requester_api.post("/sync-failures/retry")
def retry_sync_failures() -> Response:
    served = _served()
    retry_failures(served.db, served.provider, served.task_id)
    return list_sync_failures()


@requester_api.post("/bonuses/<int:bonus_id>/resolve")
def resolve(bonus_id: int) -> Response:
    """`{"paid": true|false}` for an uncertain bonus, after checking on the platform."""
    served = _served()
    resolve_bonus(served.db, served.task_id, bonus_id, json_body().get("paid"))
    send_bonus(served.db, served.provider, bonus_id)
    with served.db.read() as session:
        return jsonify(shown_bonus(session.get(Bonus, bonus_id)))


@requester_api.get("/results")
def results() -> Response:
    served = _served()
    downloads = [("Submissions (JSONL)", "/api/requester/submissions?format=jsonl"),
                 ("Items (CSV)", "/api/requester/submissions?format=csv"),
                 ("Items (JSONL)", "/api/requester/submissions?format=items-jsonl"),
                 ("Worker identities (CSV)", "/api/requester/workers/identities?format=csv"),
                 ("Analysis report (HTML)", "/api/requester/report")]
    return jsonify({"questions": answer_counts(served.db, served.task_name, served.task_id),
                    "downloads": [{"label": label, "url": url} for label, url in downloads]})


@requester_api.get("/report")
def report() -> Response:
    """The analysis report of the task so far (docs/analysis.md), as `analyze --task` writes
    it: a self-contained HTML file, computed on request."""
    served = _served()
    # In its own process: seconds to a minute of statistics must not hold this server's
    # interpreter while workers wait.
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        html = pool.submit(_report_html, served.db.url, served.task_name,
                           served.blueprint.max_incorrect_golds()).result()
    return Response(html, mimetype="text/html", headers={
        "Content-Disposition": f'attachment; filename="{served.task_name}-report.html"'})


def _report_html(database_url: str, task_name: str, max_failed_golds: int) -> str:
    """Runs in the report's process: only it loads the statistics and plotting libraries."""
    from collection_and_annotations.analysis.stored import stored_report

    return stored_report(database_url, task_name, max_failed_golds)
