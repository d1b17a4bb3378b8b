"""`python -m collection_and_annotations prolific publish --task T`: the requester publishes the
draft study the launcher created (a study is never published by the server on its own)."""

from __future__ import annotations

import click

from collection_and_annotations.cli.database_options import database_options, stored_database_url
from collection_and_annotations.errors import UserError
from collection_and_annotations.providers.base import ProviderError
from collection_and_annotations.providers.prolific import study_setting
from collection_and_annotations.providers.prolific_api import ProlificApi
from collection_and_annotations.storage.database import Database
from collection_and_annotations.storage.models import Setting


@click.group()
def prolific() -> None:
    """Prolific studies of tasks run with mephisto.provider._provider_type=prolific."""


@prolific.command()
@click.option("--task", "task_name", required=True, help="task_name of the conf")
@database_options
def publish(task_name: str, data_dir: str, database_url: str | None) -> None:
    """Publish the task's draft study: Prolific starts sending participants (and charging)."""
    db = Database(stored_database_url(data_dir, database_url))
    try:
        with db.read() as session:
            stored = session.get(Setting, study_setting(task_name))
        if stored is None:
            raise click.ClickException(f"no Prolific study for task '{task_name}': launch it "
                                       "first with mephisto.provider._provider_type=prolific")
        ProlificApi.from_environment().publish(stored.value)
    except (UserError, ProviderError) as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        db.dispose()
    click.echo(f"published Prolific study {stored.value} of task '{task_name}'")
