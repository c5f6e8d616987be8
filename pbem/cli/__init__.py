"""The `pbem` command: thin wrappers over the service layer (documented in docs/cli.md).

Each subcommand imports what it needs when it runs, so `pbem ingest` behind
an MTA starts fast. An error an operator can make (a bad setting, a database
that cannot be opened, a full disk) ends in one line and exit status 2, never
a traceback (`errors`).
"""

from __future__ import annotations

import click

from .archive import archive
from .context import Context
from .diff import diff
from .errors import Pbem
from .explain import explain
from .games import deadline, game, rollback, submit, verify
from .operator import config, flush, ingest, queue, serve, tick
from .play import demo, map_, rules, simulate
from .reading import log, state
from .transfer import export, import_


@click.group(cls=Pbem)
@click.option("--config", "config", default=None, type=click.Path(dir_okay=False),
              help="The settings file (pbem.toml); also PBEM_CONFIG. See `pbem config example`.")
@click.option("--db", "db_url", default=None, help="Database URL (default: sqlite:///pbem.sqlite; also PBEM_DATABASE_URL).")
@click.pass_context
def main(ctx: click.Context, config: str | None, db_url: str | None) -> None:
    """Play Advanced Civilization by email."""
    ctx.obj = Context(config, db_url)
    ctx.call_on_close(ctx.obj.close)


for _command in (game, submit, state, log, explain, verify, rollback, deadline, ingest, serve, flush, tick, queue, config, demo, simulate, rules, map_, archive, export, import_, diff):
    main.add_command(_command)
