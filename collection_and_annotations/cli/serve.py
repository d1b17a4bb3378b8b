"""`python -m collection_and_annotations serve --task T`: the requester dashboard of a task
already in the database, to review, pay and export after its run ended, without a new run:
no unit is created and no worker gets work."""

from __future__ import annotations

import signal
import time

import click

from collection_and_annotations.cli.database_options import database_options, stored_database_url
from collection_and_annotations.cli.run import (
    base_url,
    check_port_free,
    checked_provider,
    data_location,
    requester_lines,
    served_task,
)
from collection_and_annotations.cli.stored_run import stored_blueprint, stored_run
from collection_and_annotations.config.checks import bad_address
from collection_and_annotations.engine.provider_sync import ProviderSync
from collection_and_annotations.engine.runs import Progress, unit_counts
from collection_and_annotations.engine.served import ServedTask
from collection_and_annotations.errors import UserError
from collection_and_annotations.server.app import check_frontend_built
from collection_and_annotations.server.http import HostNames, HttpService
from collection_and_annotations.storage.database import Database


@click.command()
@click.option("--task", "task_name", required=True, help="task_name of the conf")
@database_options
@click.option("--host", default="localhost", show_default=True, help="address to listen on")
@click.option("--port", default=3001, show_default=True, type=click.IntRange(1, 65535),
              help="port (the launcher's default is 3000, so both can run)")
@click.option("--public-url", default=None,
              help="where the requester reaches this server, e.g. behind a proxy")
def serve(task_name: str, data_dir: str, database_url: str | None, host: str, port: int,
          public_url: str | None) -> None:
    """Open the dashboard of a stored task (review, bonuses, blocks, exports); Ctrl-C stops."""
    db = Database(stored_database_url(data_dir, database_url))
    try:
        served, hosts = _open(db, task_name, host, port, public_url)
        http = HttpService(served, host, port, 1, hosts)
    except UserError as exc:
        db.dispose()
        raise click.ClickException(str(exc)) from None
    _announce(served)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    sync = ProviderSync(db, served.provider, served.task_id) if served.provider.pays else None
    if sync is not None:
        sync.start()
    try:
        while True:
            time.sleep(1.0)
    except KeyboardInterrupt:
        click.echo("\nstopping")
    finally:
        if sync is not None:
            sync.stop()
        http.stop()
        db.dispose()


def _open(db: Database, task_name: str, host: str, port: int,
          public_url: str | None) -> tuple[ServedTask, HostNames]:
    """The task's last run as its conf was stored, served for review only, and the host
    names its conf allows."""
    db.check_reachable()
    run = stored_run(db, task_name)
    cfg = run.cfg
    cfg.mephisto.architect.hostname, cfg.mephisto.architect.port = host, port
    if public_url is not None:
        cfg.mephisto.architect.public_url = public_url
        problem = bad_address(cfg)
        if problem:
            raise UserError(problem[1].replace(problem[0], "--public-url"))
    blueprint = stored_blueprint(run, task_name)
    provider_cls = checked_provider(cfg)  # credentials for review actions and bonuses
    check_port_free(host, port)
    check_frontend_built()
    db.migrate()
    secret = db.setting("secret")
    provider = provider_cls.create(cfg, secret, base_url(cfg.mephisto.architect))
    return (served_task(cfg, db, blueprint, (run.task_id, run.run_id), provider, secret,
                        taking_work=False), HostNames.of(cfg.mephisto.architect))


def _announce(served: ServedTask) -> None:
    progress = Progress.of(unit_counts(served.db, served.task_id))
    state = "complete" if progress.complete else "not complete"
    click.echo(f"task '{served.task_name}', run {served.run_id}: {progress.done}/"
               f"{progress.total} units completed ({state}); open for review only, no worker "
               "gets new work")
    click.echo(f"data: {data_location(served.db.url)}")
    for line in [*requester_lines(served), "press Ctrl-C to stop"]:
        click.echo(line)
