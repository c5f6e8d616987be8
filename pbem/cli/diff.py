"""`pbem diff`: what changed between two versions of a game, as one viewer may know it."""

from __future__ import annotations

import click

from pbem.store.unit_of_work import UnitOfWork

from .context import Context, fail, pass_ctx, viewer_option
from .output import say


@click.command("diff")
@click.argument("game_id")
@click.argument("a", type=int)
@click.argument("b", type=int)
@viewer_option
@pass_ctx
def diff(ctx: Context, game_id: str, a: int, b: int, viewer: str) -> None:
    """Tell, in sentences, what changed in GAME from version A to version B (either order) for VIEWER."""
    from pbem.audit.diff import diff as differences
    from pbem.audit.diff import views_between
    from pbem.rules.core.events import Event
    from pbem.rules.view import viewer_label
    from pbem.service.projector import checked_log

    with UnitOfWork(ctx.db) as uow:
        if uow.games.get(game_id) is None:
            fail(f"there is no game called {game_id!r}")
        recorded = checked_log(uow, game_id)
    events = [Event.from_payload(r.type, r.payload) for r in recorded]
    try:
        granted, before, after = views_between(game_id, events, a, b, viewer)
    except ValueError as exc:
        fail(str(exc))
    who = viewer_label(viewer, granted)
    lines = differences(before, after)
    span = (f"from version {a} (turn {before['turn']}, {before['phase']}) "
            f"to version {b} (turn {after['turn']}, {after['phase']})")
    if not lines:
        say(f"{game_id}, as {who}: nothing changed {span}.")
        return
    say(f"{game_id}, as {who}, {span}:")
    for line in lines:
        say(f"  {line}")
