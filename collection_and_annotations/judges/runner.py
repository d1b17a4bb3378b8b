"""One judge over one task: every open unit of the judge, at most `concurrency` units (so at
most that many calls) at once. A unit's questions are asked one after the other; a reply
that is not JSON of the bucket's form, or that the task's checker refuses, is asked again
with what was wrong (`invalid_retries` times); every call is stored as it ends. A unit whose
every question has an answer is submitted through the engine (`work.submit`, the task's own
checks); one with a failed question stays open, its failures stored with their reasons, and
the next run asks only what has no answer yet."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from tqdm import tqdm

from collection_and_annotations.engine import work
from collection_and_annotations.engine.judge_work import (
    ANSWER,
    FAILED,
    INVALID,
    Call,
    JudgeUnit,
    answers,
    call_totals,
    open_judge_units,
    record_call,
)
from collection_and_annotations.judges.endpoints import CallFailed, JudgeModel, Reply
from collection_and_annotations.judges.forms import FormError, target_name
from collection_and_annotations.judges.items import ChatItems, Question, StaticItems
from collection_and_annotations.judges.prompt import (
    PromptTemplate,
    answer_format,
    instructions_block,
)
from collection_and_annotations.judges.reply import reply_json
from collection_and_annotations.storage.database import Database

log = logging.getLogger(__name__)
SHOWN_PROBLEMS = 5  # problems quoted back to the model when its reply is refused


@dataclass(frozen=True)
class JudgedTask:
    """The task a judge works on."""

    db: Database
    task_id: int
    run_id: int  # new units of the judge join this run
    title: str
    items: StaticItems | ChatItems


@dataclass
class RunSummary:
    judge: str
    units_before: int = 0  # answered in earlier runs
    units_open: int = 0  # this run's work
    submitted: int = 0
    failed_units: dict[str, str] = field(default_factory=dict)  # unit -> why it stays open
    calls: int = 0
    invalid: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0
    seconds: float = 0.0

    def add(self, call: Call) -> None:
        self.calls += 1
        self.invalid += call.outcome == INVALID
        self.failed_calls += call.outcome == FAILED
        self.input_tokens += call.input_tokens or 0
        self.output_tokens += call.output_tokens or 0
        if call.reply is not None:
            self.cost = None if self.cost is None or call.cost is None else self.cost + call.cost

    def lines(self) -> list[str]:
        """What the command prints when the run ends."""
        cost = "unknown" if self.cost is None else f"{self.cost:.4f}"
        lines = [f"judge '{self.judge}': {self.submitted} units answered now, "
                 f"{self.units_before} before; {len(self.failed_units)} left open; "
                 f"{self.calls} calls ({self.invalid} replies refused, {self.failed_calls} "
                 f"failed) in {self.seconds:.1f} s; tokens {self.input_tokens} in, "
                 f"{self.output_tokens} out; cost {cost}"]
        for unit, why in list(self.failed_units.items())[:SHOWN_PROBLEMS]:
            lines.append(f"  unit {unit} left open: {why}")
        if len(self.failed_units) > SHOWN_PROBLEMS:
            lines.append(f"  ... and {len(self.failed_units) - SHOWN_PROBLEMS} more; run the "
                         "same command again to ask what is missing")
        return lines


class JudgeRun:
    def __init__(self, task: JudgedTask, model: JudgeModel, template: PromptTemplate,
                 concurrency: int = 8, invalid_retries: int = 2, progress: bool | None = None):
        self.task, self.model, self.template = task, model, template
        self.concurrency, self.invalid_retries, self.progress = \
            concurrency, invalid_retries, progress
        self.summary = RunSummary(model.nickname)
        self._settings = {**model.settings(), "prompt_template": template.path}
        self._worker_id = 0

    async def run(self, limit: int | None = None) -> RunSummary:
        """Answer the judge's open units (at most `limit` of them)."""
        started = time.monotonic()
        task, nickname = self.task, self.model.nickname
        items = await asyncio.to_thread(task.items.items, task.db, task.task_id)
        units = await asyncio.to_thread(
            open_judge_units, task.db, task.task_id, task.run_id, nickname, items,
            partial(task.items.layout, nickname=nickname), limit)
        self._worker_id = units.worker_id
        self.summary.units_before, self.summary.units_open = units.done, len(units.open)
        queue: asyncio.Queue[JudgeUnit] = asyncio.Queue()
        for unit in units.open:
            queue.put_nowait(unit)
        # a bar on a terminal only (disable=None), never in a served task's log
        with tqdm(total=len(units.open), desc=f"judge {nickname}", unit=" units",
                  disable=None if self.progress is None else not self.progress,
                  leave=False) as bar:
            await asyncio.gather(*(self._worker(queue, bar)
                                   for _ in range(min(self.concurrency, len(units.open)))))
        self.summary.seconds = time.monotonic() - started
        return self.summary

    async def _worker(self, queue: asyncio.Queue[JudgeUnit], bar: tqdm) -> None:
        while not queue.empty():
            unit = queue.get_nowait()
            try:
                await self._unit(unit)
            except Exception as exc:  # one unit's surprise must not stop the others
                log.exception("judge %s: unit %s", self.model.nickname, unit.public_id)
                self.summary.failed_units[unit.public_id] = f"{type(exc).__name__}: {exc}"
            bar.update(1)
            bar.set_postfix(calls=self.summary.calls, refused=self.summary.invalid,
                            failed=self.summary.failed_calls, refresh=False)

    async def _unit(self, unit: JudgeUnit) -> None:
        db = self.task.db
        questions = await asyncio.to_thread(self.task.items.questions, db, unit)
        known = {} if unit.new else (await asyncio.to_thread(answers, db, [unit.id]))[unit.id]
        given: dict[str, dict[str, Any]] = {}
        missing = []
        for question in questions:
            item = (question.dialogue_key, question.bucket.name)
            value = known[item] if item in known else await self._answer(unit, question)
            if value is None:
                missing.append(f"{question.dialogue_key} '{question.bucket.name}'")
            else:
                given.setdefault(question.dialogue_key, {})[question.bucket.name] = value
        if missing:
            self.summary.failed_units[unit.public_id] = "no answer for " + ", ".join(missing)
            return
        totals, steps = await asyncio.to_thread(call_totals, db, unit.id)
        timings = {"steps": steps, "judge": {"nickname": self.model.nickname,
                                             "settings": self._settings,
                                             "prompt_sha256": self.template.sha256, **totals}}
        try:
            await asyncio.to_thread(work.submit, db, self.task.items.submitter, unit.public_id,
                                    self._worker_id, given, timings, None)
        except work.WorkRefused as exc:
            self.summary.failed_units[unit.public_id] = f"refused: {exc}"
            return
        self.summary.submitted += 1

    async def _answer(self, unit: JudgeUnit, question: Question) -> Any:
        """The bucket's value from the model (None when it gave none after its retries)."""
        if not question.form.targets:
            return {}  # no turn of this dialogue is annotated in this bucket
        messages = self.template.messages(
            task_title=self.task.title, bucket=question.bucket.task_title,
            instructions=instructions_block(question.instructions), dialogue=question.dialogue,
            questions=question.form.text, answer_format=answer_format(question.form))
        record = partial(self._record, unit, question)
        for _ in range(1 + self.invalid_retries):
            try:
                reply = await self.model.ask(messages, question.form.schema)
            except CallFailed as exc:
                await record(FAILED, None, str(exc), None)
                return None
            try:
                value = question.form.value(reply_json(reply.text))
                problems = question.problems(value)
                if problems:
                    raise FormError("; ".join(
                        f"{target_name(p.turn)}: "
                        + (f"{p.question}: " if p.question else "") + p.message
                        for p in problems[:SHOWN_PROBLEMS]))
            except FormError as exc:
                await record(INVALID, None, str(exc), reply)
                messages = [*messages, {"role": "assistant", "content": reply.text},
                            {"role": "user", "content": f"This reply cannot be used: {exc}. "
                             "Reply again with the whole JSON object only."}]
                continue
            if await record(ANSWER, value, None, reply):
                return value
            # another run of this judge answered it first: its answer stands
            known = await asyncio.to_thread(answers, self.task.db, [unit.id])
            return known[unit.id][(question.dialogue_key, question.bucket.name)]
        return None

    async def _record(self, unit: JudgeUnit, question: Question, outcome: str, value: Any,
                      reason: str | None, reply: Reply | None) -> bool:
        call = Call(unit.id, self._worker_id, question.dialogue_key, question.bucket.name,
                    outcome, value, reason, reply.text if reply else None,
                    self.template.sha256, self._settings, bool(reply and reply.schema_used),
                    reply.input_tokens if reply else None, reply.output_tokens if reply else None,
                    reply.cost if reply else None, reply.latency_ms if reply else None)
        self.summary.add(call)
        if outcome != ANSWER:
            log.info("judge %s: unit %s, %s '%s': %s", self.model.nickname, unit.public_id,
                     question.dialogue_key, question.bucket.name, reason)
        return await asyncio.to_thread(record_call, self.task.db, call)


