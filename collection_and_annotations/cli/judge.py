"""`python -m collection_and_annotations judge --task T --bot NICK`: an LLM judge answers the
task's buckets as a worker would (docs/judges.md)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import click

from collection_and_annotations.cli.database_options import database_options, stored_database_url
from collection_and_annotations.cli.stored_run import stored_blueprint, stored_run
from collection_and_annotations.errors import UserError
from collection_and_annotations.judges.endpoints import JudgeModel, Prices
from collection_and_annotations.judges.items import task_items
from collection_and_annotations.judges.prompt import PromptTemplate
from collection_and_annotations.judges.runner import JudgedTask, JudgeRun, RunSummary
from collection_and_annotations.storage.database import Database


@click.command()
@click.option("--task", "task_name", required=True, help="task_name of the conf")
@click.option("--bot", "nicknames", multiple=True, required=True,
              help="the judge: a nickname of model_opts.yaml of type openai or command "
                   "(repeatable: the judges run one after the other)")
@click.option("--model-opts", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="model_opts.yaml (default: the task's mephisto.blueprint.model_opt_path)")
@click.option("--limit", type=click.IntRange(1),
              help="answer at most this many more units (a trial run)")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1, 256),
              help="units (and so calls) in flight at once")
@click.option("--prompt-template", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="your own prompt template (docs/judges.md); default: the built-in one")
@click.option("--invalid-retries", default=2, show_default=True, type=click.IntRange(0, 10),
              help="times a reply that does not fit the bucket is asked again")
@click.option("--input-price", type=click.FloatRange(0), default=None,
              help="price per million input tokens, for endpoints that report no cost")
@click.option("--output-price", type=click.FloatRange(0), default=None,
              help="price per million output tokens (with --input-price)")
@database_options
def judge(task_name: str, nicknames: tuple[str, ...], model_opts: Path | None,
          limit: int | None, concurrency: int, prompt_template: Path | None,
          invalid_retries: int, input_price: float | None, output_price: float | None,
          data_dir: str, database_url: str | None) -> None:
    """Answer a stored task's units with an LLM judge; safe to stop and run again."""
    if (input_price is None) != (output_price is None):
        raise click.UsageError("give both --input-price and --output-price, or neither")
    prices = Prices(input_price, output_price) if input_price is not None \
        and output_price is not None else None
    logging.basicConfig(format="%(levelname)s: %(message)s", level=logging.WARNING)
    db = Database(stored_database_url(data_dir, database_url))
    try:
        task, template, models = _prepare(db, task_name, nicknames, model_opts, prompt_template,
                                          prices)
        summaries = [_run(JudgeRun(task, model, template, concurrency, invalid_retries),
                          limit) for model in models]
    except UserError as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        raise click.ClickException("stopped: every answer so far is stored; run the same "
                                   "command again to go on") from None
    finally:
        db.dispose()
    for summary in summaries:
        for line in summary.lines():
            click.echo(line)
    if any(s.failed_units for s in summaries):
        raise SystemExit(1)


def _prepare(db: Database, task_name: str, nicknames: tuple[str, ...], model_opts: Path | None,
             prompt_template: Path | None, prices: Prices | None
             ) -> tuple[JudgedTask, PromptTemplate, list[JudgeModel]]:
    """Every check before the first call: the task, its files, the template, the judges."""
    run = stored_run(db, task_name)
    blueprint = stored_blueprint(run, task_name)
    opts = model_opts or run.cfg.mephisto.blueprint.model_opt_path
    if not opts:
        raise UserError(f"task '{task_name}' names no model_opts.yaml "
                        "(mephisto.blueprint.model_opt_path): pass --model-opts FILE")
    template = PromptTemplate.load(prompt_template)
    models = [JudgeModel.build(opts, nickname, prices) for nickname in dict.fromkeys(nicknames)]
    db.migrate()  # a database of an earlier version gets the judges' table
    task_cfg = run.cfg.mephisto.task
    return (JudgedTask(db, run.task_id, run.run_id, task_cfg.task_title or task_name,
                       task_items(blueprint, run.cfg.mephisto.blueprint.random_seed)),
            template, models)


def _run(judge_run: JudgeRun, limit: int | None) -> RunSummary:
    async def main() -> RunSummary:
        try:
            return await judge_run.run(limit)
        finally:
            await judge_run.model.aclose()

    return asyncio.run(main())
