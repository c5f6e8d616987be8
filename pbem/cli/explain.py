"""`pbem explain GAME VERSION`: why one event of a game's log happened, as a viewer may read it (docs/audit.md)."""

from __future__ import annotations

import click

from pbem.store.unit_of_work import UnitOfWork

from .context import Context, fail, pass_ctx, viewer_option
from .output import say_json, say_lines


@click.command()
@click.argument("game_id")
@click.argument("version", type=int)
@viewer_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON: version, viewer, lines, cites.")
@pass_ctx
def explain(ctx: Context, game_id: str, version: int, viewer: str, as_json: bool) -> None:
    """Explain the event at VERSION: its outcome, the order that started it (to the moderator and its sender: the
    line as written and the mail it came in), the numbers before it, the rule clauses and the arithmetic."""
    from pbem.service.origins import explained
    from pbem.service.projector import checked_log

    with UnitOfWork(ctx.db) as uow:  # open while explaining: an older log's orders are looked up in the inbox
        if uow.games.get(game_id) is None:
            fail(f"there is no game called {game_id!r}")
        recorded = checked_log(uow, game_id)
        try:
            result = explained(uow, game_id, recorded, version, viewer)
        except ValueError as exc:
            fail(str(exc))
    if as_json:
        say_json(result.as_json(), indent=2)
        return
    say_lines(result.lines)
