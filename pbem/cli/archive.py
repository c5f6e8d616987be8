"""`pbem archive`: one game as a folder of static web pages, as one viewer may see it."""

from __future__ import annotations

from pathlib import Path

import click

from pbem.store.unit_of_work import UnitOfWork

from .context import Context, fail, pass_ctx, viewer_option
from .output import say


@click.command()
@click.argument("game_id", metavar="GAME")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="The folder to write the pages into (created if missing).")
@viewer_option
@click.option("--force", is_flag=True, help="Write into a folder that already holds files.")
@pass_ctx
def archive(ctx: Context, game_id: str, out: Path, viewer: str, force: bool) -> None:
    """Write GAME as static HTML pages (index, one page per turn with its board, the log) as VIEWER may see it."""
    from pbem.service.archive import archive_files, check_out, write_archive
    from pbem.service.projector import checked_log

    try:
        check_out(out, force=force)
    except FileExistsError as exc:
        fail(str(exc))
    with UnitOfWork(ctx.db) as uow:
        if uow.games.get(game_id) is None:
            fail(f"there is no game called {game_id!r}")
        recorded = checked_log(uow, game_id)
    try:
        files = archive_files(game_id, recorded, viewer)
    except ValueError as exc:
        fail(str(exc))
    try:
        written = write_archive(files, out, force=force)
    except (FileExistsError, ValueError) as exc:
        fail(str(exc))
    pages = sum(1 for p in written if p.suffix == ".html")
    say(f"{out}: {pages} pages of {game_id} for {viewer}; open {out / 'index.html'} in a browser")

