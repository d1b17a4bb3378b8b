"""A worker's page read and draft against a concurrent submit or expiry on both databases: the
read sees the other step whole or not at all and never waits for it; a draft that waited for
an expiry's lock is refused and writes nothing."""

from __future__ import annotations

import threading
import time

from helpers import dialogue, write_task
from sqlalchemy import text

from collection_and_annotations.engine.allocation import claim_unit, return_unit
from collection_and_annotations.engine.work import WorkRefused, save_draft, submit, unit_view

TASKS = ["overall_quality"]


def _claimed(tmp_path, database_url, open_conf):
    """A one-unit task and its unit, claimed by a worker who saved a draft."""
    conf = write_task(tmp_path, [{"data": [dialogue("d0", "g0", TASKS)]}], {"g0": 1})
    served = open_conf(str(conf), database_url)
    claim = claim_unit(served.db, served.task_id, served.run_id, "local", "w1", "s1",
                       served.limits, served.blocked_workers)
    key = unit_view(served.db, served.blueprint, claim.unit_public_id,
                    claim.worker_id)["dialogues"][0]["key"]
    save_draft(served.db, claim.unit_public_id, claim.worker_id,
               {key: {"overall_quality": {"dialogue": {"Overall": 2}}}}, {"step": 1})
    return served, claim, key


def _within(seconds: float, call):  # type: ignore[no-untyped-def]
    """`call()`'s result, failing when it takes longer (it waited for a lock)."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"still waiting after {seconds} s"
    return result[0]


def test_a_page_read_during_a_submit_sees_the_unit_before_it_whole(tmp_path, database_url,
                                                                  open_conf):
    served, claim, key = _claimed(tmp_path, database_url, open_conf)
    stored, release = threading.Event(), threading.Event()
    after_submit = served.blueprint.after_submit

    def paused(connection, unit):  # type: ignore[no-untyped-def]
        """The submit's writes are done, its transaction not yet committed."""
        stored.set()
        assert release.wait(30)
        return after_submit(connection, unit)

    served.blueprint.after_submit = paused
    answers = {key: {"overall_quality": {"dialogue": {"Overall": 5}}}}
    submitting = threading.Thread(target=submit, args=(
        served.db, served.blueprint, claim.unit_public_id, claim.worker_id, answers, {}, None))
    submitting.start()
    try:
        assert stored.wait(30)

        def view():  # type: ignore[no-untyped-def]
            return unit_view(served.db, served.blueprint, claim.unit_public_id,
                             claim.worker_id)

        during = _within(5, view)
        assert during["status"] == "assigned"
        assert during["draft"]["position"] == {"step": 1}
    finally:
        release.set()
        submitting.join(30)
    after = unit_view(served.db, served.blueprint, claim.unit_public_id, claim.worker_id)
    assert after["status"] == "completed" and after["draft"] is None


def _waiting_on_a_lock(db) -> None:  # type: ignore[no-untyped-def]
    """Returns once another connection's statement waits for a row lock (PostgreSQL)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with db.snapshot() as connection:
            if connection.execute(text(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND datname = current_database()")).scalar():
                return
        time.sleep(0.02)
    raise AssertionError("no statement waited on the lock")


def test_a_draft_that_waited_for_an_expiry_is_refused_and_writes_nothing(tmp_path,
                                                                         postgres_url,
                                                                         open_conf):
    """The draft's lock, ownership check and write are one statement: it waits for the
    expiry's row lock, then sees the unit gone back to the pool."""
    served, claim, key = _claimed(tmp_path, postgres_url, open_conf)
    outcome: list = []

    def draft() -> None:
        try:
            save_draft(served.db, claim.unit_public_id, claim.worker_id, {key: {}}, None)
            outcome.append("saved")
        except WorkRefused as exc:
            outcome.append(exc.status)

    with served.db.transaction() as connection:
        unit_id = connection.execute(text("SELECT id FROM units")).scalar_one()
        assert return_unit(connection, unit_id, "timed_out")
        drafting = threading.Thread(target=draft)
        drafting.start()
        _waiting_on_a_lock(served.db)
    drafting.join(30)
    assert outcome == [409]
    with served.db.snapshot() as connection:
        assert connection.execute(text("SELECT count(*) FROM drafts")).scalar() == 0
        assert connection.execute(text("SELECT status FROM units")).scalar() == "launched"
