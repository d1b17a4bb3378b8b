"""The conf's judges (`mephisto.blueprint.judges: [nick, ...]`) while the task is served: in a
thread of the launcher with its own event loop, each judge answers every item not yet
answered, then looks again every POLL_SECONDS (a chat task's chats are submitted as people
finish them). They are built and checked at launch, before anything is written."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from pathlib import Path

from omegaconf import DictConfig

from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.errors import UserError
from collection_and_annotations.judges.endpoints import JudgeModel
from collection_and_annotations.judges.items import task_items
from collection_and_annotations.judges.prompt import PromptTemplate
from collection_and_annotations.judges.runner import JudgedTask, JudgeRun

POLL_SECONDS = 30.0
CONCURRENCY = 4  # calls in flight per judge: the launcher serves workers too
STOP_SECONDS = 10.0


class ServedJudges:
    def __init__(self, models: list[JudgeModel], template: PromptTemplate, cfg: DictConfig):
        self.models, self.template, self.cfg = models, template, cfg
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def from_conf(cls, cfg: DictConfig) -> ServedJudges | None:
        """The conf's judges, built (UserError for anything to fix); None without any."""
        blueprint_cfg = cfg.mephisto.blueprint
        nicknames = list(dict.fromkeys(blueprint_cfg.judges or []))
        if not nicknames:
            return None
        if not blueprint_cfg.model_opt_path:
            raise UserError("mephisto.blueprint.judges names judges but "
                            "mephisto.blueprint.model_opt_path is not set: name the "
                            "model_opts.yaml that declares them")
        prompt = blueprint_cfg.judge_prompt_path
        template = PromptTemplate.load(Path(prompt) if prompt else None)
        return cls([JudgeModel.build(blueprint_cfg.model_opt_path, nickname)
                    for nickname in nicknames], template, cfg)

    def start(self, served: ServedTask) -> None:
        items = task_items(served.blueprint, self.cfg.mephisto.blueprint.random_seed)
        task = JudgedTask(served.db, served.task_id, served.run_id, served.title, items)
        ready = threading.Event()

        def main() -> None:
            self._loop = asyncio.new_event_loop()
            self._task = self._loop.create_task(self._serve(task))
            ready.set()
            with contextlib.suppress(asyncio.CancelledError):
                self._loop.run_until_complete(self._task)
            self._loop.close()

        self._thread = threading.Thread(target=main, name="judges", daemon=True)
        self._thread.start()
        ready.wait(STOP_SECONDS)
        print(f"judges: {', '.join(m.nickname for m in self.models)} answer the task beside "
              "the workers (docs/judges.md)", flush=True)

    async def _serve(self, task: JudgedTask) -> None:
        try:
            while True:
                for model in self.models:
                    try:
                        summary = await JudgeRun(task, model, self.template, CONCURRENCY,
                                                 progress=False).run()
                    except Exception as exc:  # a database hiccup must not end the judging
                        print(f"warning: judge '{model.nickname}': {type(exc).__name__}: {exc}; "
                              f"trying again in {POLL_SECONDS:g} s", file=sys.stderr, flush=True)
                        continue
                    if summary.units_open:
                        print("\n".join(summary.lines()), flush=True)
                await asyncio.sleep(POLL_SECONDS)
        finally:
            for model in self.models:
                await model.aclose()

    def stop(self) -> None:
        """Cancel the judges' work (every answer so far is stored) and wait for the thread."""
        if self._loop is not None and self._task is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                self._loop.call_soon_threadsafe(self._task.cancel)
        if self._thread is not None:
            self._thread.join(STOP_SECONDS)
