"""`pbem export` and `pbem import`: a game as one file another installation can check and replay (docs/audit.md)."""

from __future__ import annotations

import gzip
import sys

import click

from pbem.store.unit_of_work import UnitOfWork

from .context import Context, fail, now, pass_ctx
from .output import say


@click.command("export")
@click.argument("game_id")
@click.option("--as", "viewer", default="moderator", show_default=True,
              help="Whose export: moderator (complete), auditor (complete once the game has ended), "
                   "NATION (or player:NATION, or the player's name), observer.")
@pass_ctx
def export(ctx: Context, game_id: str, viewer: str) -> None:
    """Write GAME to standard output as JSON lines, withholding what VIEWER may not read."""
    from pbem.audit.transfer import dump_line, export_records
    from pbem.service.projector import checked_log

    with UnitOfWork(ctx.db) as uow:
        game = uow.games.get(game_id)
        if game is None:
            fail(f"there is no game called {game_id!r}")
        recorded = checked_log(uow, game_id)
    out = sys.stdout.buffer
    written = withheld = 0
    try:
        for number, record in enumerate(export_records(game, recorded, viewer, exported_at=now().isoformat())):
            out.write(dump_line(record).encode("utf-8") + b"\n")
            written = number
            withheld += number > 0 and "withheld" in record
    except ValueError as exc:
        fail(str(exc))
    out.flush()
    head = recorded[-1].hash if recorded else "none"
    held = f", {withheld} withheld" if withheld else ", complete"
    say(f"exported {game_id}: {written} events{held}, head {head}", err=True)


def _read(source: str):
    """The export in ``source`` (``-``: standard input; a gzipped file is read as it is), parsed."""
    from pbem.audit.transfer import decode, read_export

    if source == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(source, "rb") as f:
            data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return read_export(decode(data))


@click.command("import")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--check", "check_only", is_flag=True,
              help="Only check the file (any export, partial or complete); store nothing.")
@pass_ctx
def import_(ctx: Context, source: str, check_only: bool) -> None:
    """Check an export (FILE, or - for standard input) and store it as a new game that nothing plays."""
    from pbem.audit.transfer import (
        ExportError,
        ImportRefused,
        check_export,
        store_export,
    )
    from pbem.service.projector import snapshot_log

    try:
        export = _read(source)
        check = check_export(export)
    except ExportError as exc:
        fail(f"refused: {exc}; nothing was stored")
    game_id, viewer = export.game_id, export.header["exported_as"]
    if not check.ok:
        fail(f"refused: the export of {game_id} is broken at version {check.first_broken}: {check.reason}; "
             "nothing was stored")
    counts = f"{check.events} events, {check.rehashed} rehashed"
    if check.withheld:
        counts += f", {check.withheld} withheld (links checked)"
    if check_only:
        say(f"export of {game_id} as {viewer}: chain ok: {counts}; head version {check.head_version} {check.head}")
        return
    try:
        with UnitOfWork(ctx.db) as uow:
            store_export(uow, export)
            snapshot_log(uow, game_id, now())
            stored = uow.games.get(game_id)
            status, seed = stored.status, stored.secret_seed
    except (ExportError, ImportRefused) as exc:
        fail(f"refused: {exc}; nothing was stored")
    say(f"imported {game_id} (status {status}): {counts}; head version {check.head_version} {check.head}")
    if not seed:
        say("the export does not reveal the secret seed: the chain and the replay can be checked, "
            "the draws cannot be re-derived")
