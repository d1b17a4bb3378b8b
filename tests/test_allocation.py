"""Unit allocation on SQLite and PostgreSQL: distinct annotators, limits, expiry, races, reruns."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from helpers import dialogue, write_task
from sqlalchemy import func, select, update

from collection_and_annotations.engine.allocation import ClaimRefused, claim_unit
from collection_and_annotations.engine.runs import end_run, unit_counts
from collection_and_annotations.engine.work import WorkRefused, submit
from collection_and_annotations.storage.models import Assignment, Unit, WorkerGroup, utcnow

TASKS = ["overall_quality"]


def _claim(served, worker, session="s1", limits=None):
    """As the server claims."""
    return claim_unit(served.db, served.task_id, served.run_id, "local", worker, session,
                      limits or served.limits, served.blocked_workers)


def _answer(served, claim):
    with served.db.session() as session:
        unit = session.scalars(select(Unit).where(Unit.public_id == claim.unit_public_id)).one()
        data = session.get(Assignment, unit.assignment_id).data
    answers = {d["key"]: {"overall_quality": {"dialogue": {"Overall": 4}}}
               for d in data["dialogues"]}
    return submit(served.db, served.blueprint, claim.unit_public_id, claim.worker_id, answers,
                  {}, None)


def _groups_of(served, claim):
    with served.db.session() as session:
        unit = session.scalars(select(Unit).where(Unit.public_id == claim.unit_public_id)).one()
        return set(session.scalars(
            select(WorkerGroup.group_id).where(WorkerGroup.unit_id == unit.id)))


def test_distinct_annotators_per_group_and_no_group_twice(tmp_path, database_url, open_conf):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", TASKS)]} for i in range(3)]
    lines.append({"data": [dialogue("d0-again", "g0", TASKS)]})  # same group as line 0
    conf = write_task(tmp_path, lines, {"g0": 2, "g1": 2, "g2": 2},
                      task={"allowed_concurrent": 0})
    served = open_conf(str(conf), database_url)
    assert sum(unit_counts(served.db, served.task_id).values()) == 8
    seen: dict[str, set[str]] = {}
    for worker in ("w1", "w2", "w3"):
        for n in range(10):
            try:
                claim = _claim(served, worker, session=f"s{n}")
            except ClaimRefused:
                break
            groups = _groups_of(served, claim)
            assert not groups & seen.setdefault(worker, set()), "a group was served twice"
            seen[worker] |= groups
    assert seen["w1"] == {"g0", "g1", "g2"}  # g0 only once although two lines carry it
    counts = unit_counts(served.db, served.task_id)
    assert counts["assigned"] == 7 and counts["launched"] == 1  # the second g0 line's unit


def test_worker_never_gets_own_dialogue(tmp_path, database_url, open_conf):
    lines = [{"data": [dialogue("mine", "g1", TASKS, origin="alice")]},
             {"data": [dialogue("other", "g2", TASKS, origin="bob")]}]
    served = open_conf(str(write_task(tmp_path, lines, {"g1": 1, "g2": 1})), database_url)
    claim = _claim(served, "alice")
    assert _groups_of(served, claim) == {"g2"}
    _answer(served, claim)
    with pytest.raises(ClaimRefused, match="no more work"):
        _claim(served, "alice", session="s2")


def test_resume_same_link_and_limits(tmp_path, database_url, open_conf):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", TASKS)]} for i in range(4)]
    conf = write_task(tmp_path, lines, {f"g{i}": 2 for i in range(4)},
                      task={"allowed_concurrent": 1, "maximum_units_per_worker": 2,
                            "max_num_concurrent_units": 2})
    served = open_conf(str(conf), database_url)
    first = _claim(served, "w1")
    assert _claim(served, "w1") == first  # same link: same unit
    with pytest.raises(ClaimRefused, match="already have 1 unit"):
        _claim(served, "w1", session="s2")
    _answer(served, first)
    assert _claim(served, "w1").status == "completed"
    second = _claim(served, "w1", session="s2")
    _claim(served, "w2")
    with pytest.raises(ClaimRefused, match="as many workers as it allows"):
        _claim(served, "w3")
    _answer(served, second)
    with pytest.raises(ClaimRefused, match="maximum of 2 units"):
        _claim(served, "w1", session="s3")


def test_unit_not_submitted_in_time_returns_to_pool(tmp_path, database_url, open_conf):
    lines = [{"data": [dialogue("d0", "g0", TASKS)]}]
    served = open_conf(str(write_task(tmp_path, lines, {"g0": 1})), database_url)
    late = _claim(served, "slow")
    with pytest.raises(ClaimRefused):
        _claim(served, "fast")
    with served.db.session() as session:
        session.execute(update(Unit).values(deadline=utcnow() - timedelta(seconds=1)))
    taken = _claim(served, "fast")
    assert taken.unit_public_id == late.unit_public_id
    with pytest.raises(WorkRefused, match="time for this unit ran out"):
        _answer(served, late)
    assert _answer(served, taken) == "completed"


def test_rerun_continues_task(tmp_path, database_url, open_conf):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", TASKS)]} for i in range(3)]
    conf = write_task(tmp_path, lines, {f"g{i}": 1 for i in range(3)})
    served = open_conf(str(conf), database_url)
    done = _claim(served, "w1")
    _answer(served, done)
    pending = _claim(served, "w2")
    end_run(served.db, served.run_id, "stopped")  # as the launcher does when it stops
    rerun = open_conf(str(conf), database_url)
    assert rerun.run_id != served.run_id and rerun.task_id == served.task_id
    counts = unit_counts(rerun.db, rerun.task_id)
    assert counts == {"completed": 1, "assigned": 1, "launched": 1}  # nothing added or re-served
    assert _claim(rerun, "w2") == pending  # an open unit survives the restart
    third = _claim(rerun, "w3")
    with pytest.raises(ClaimRefused, match="no more work"):
        _claim(rerun, "w4")
    assert third.unit_public_id not in (done.unit_public_id, pending.unit_public_id)


def test_200_concurrent_claims_for_50_units(tmp_path, database_url, open_conf):
    lines = [{"data": [dialogue(f"d{i}", f"g{i}", TASKS)]} for i in range(25)]
    conf = write_task(tmp_path, lines, {f"g{i}": 2 for i in range(25)},
                      task={"allowed_concurrent": 0})
    served = open_conf(str(conf), database_url)

    def attempt(n: int):
        try:  # 100 workers, each trying twice at once through different links
            return _claim(served, f"w{n % 100}", session=f"s{n}")
        except ClaimRefused:
            return None

    with ThreadPoolExecutor(max_workers=32) as pool:
        claims = [c for c in pool.map(attempt, range(200)) if c is not None]
    assert len(claims) == 50
    assert len({c.unit_public_id for c in claims}) == 50
    with served.db.session() as session:
        per_group = session.execute(
            select(WorkerGroup.group_id, func.count()).group_by(WorkerGroup.group_id)).all()
        assert all(count == 2 for _, count in per_group) and len(per_group) == 25
        assert session.scalar(select(func.count()).select_from(Unit)
                              .where(Unit.status == "assigned")) == 50
        pairs = session.execute(select(WorkerGroup.worker_id, WorkerGroup.group_id)).all()
        assert len(pairs) == len(set(pairs))
