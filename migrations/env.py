"""Alembic environment for pbem.

Driven two ways:

* from code (``pbem.store.database.upgrade``): a live connection arrives in
  ``config.attributes["connection"]`` and logging is left untouched;
* from the ``alembic`` command line: the URL is ``sqlalchemy.url`` if set,
  else pbem's own setting (pbem.toml by ``PBEM_CONFIG``, ``PBEM_DATABASE_URL``), else ``sqlite:///pbem.sqlite``.
"""

from __future__ import annotations

import os
from logging.config import fileConfig

from alembic import context

from pbem.store.database import default_url, make_engine
from pbem.service.settings import load_settings
from pbem.store.schema import metadata

config = context.config

if config.config_file_name is not None and not config.attributes.get(
    "pbem_programmatic"
):
    fileConfig(config.config_file_name)

target_metadata = metadata


def _url() -> str:
    """``sqlalchemy.url`` if set, else pbem's own setting: pbem.toml (``PBEM_CONFIG``), then ``PBEM_DATABASE_URL``."""
    if config.get_main_option("sqlalchemy.url"):
        return config.get_main_option("sqlalchemy.url")
    return load_settings(None, os.environ)[0].db_url or default_url()


def run_migrations_offline() -> None:
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(_url())
    try:
        with engine.begin() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
