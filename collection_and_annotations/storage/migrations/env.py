"""Alembic environment: migrations run on the connection the application hands over."""

from alembic import context

from collection_and_annotations.storage.models import Base

connection = context.config.attributes.get("connection")
if connection is None:  # `alembic` command line: use the URL from alembic.ini / -x url=...
    from sqlalchemy import create_engine

    url = context.get_x_argument(as_dictionary=True).get("url") or context.config.get_main_option(
        "sqlalchemy.url"
    )
    connection = create_engine(url).connect()

context.configure(connection=connection, target_metadata=Base.metadata,
                  render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
