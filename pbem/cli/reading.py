"""Commands that read one game as a viewer may: `pbem state` (now or at a past version) and `pbem log`.

Split from `games` (the commands that change games) by subject, and because
both grew with issue 30: the state tells the deadline and a pause, the log
tells when each event was recorded and, to those who may know it, by whom
and through what.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from pbem.store.unit_of_work import UnitOfWork

from .context import Context, fail, pass_ctx, viewer_option
from .output import say, say_json

if TYPE_CHECKING:  # for the annotations alone: the command loads the engine when it runs
    from pbem.rules.core.state import GameState


def state_at(ctx: Context, game_id: str, at: int | None, viewer: str = "observer") -> tuple[GameState, str, str]:
    """The game at version ``at`` (default: now), the viewer checked against the game as it stands now, and how
    to name that viewer.

    The log's whole chain is checked first (`check_log`: from the texts
    stored, nothing decoded): a damaged log is named, never shown as if it
    were sound. Both states then start from their nearest snapshot
    (`load_state`), so a past version of a 10,000-event game is a snapshot
    interval folded, not a replay from zero (docs/performance.md).
    """
    from pbem.rules.view import check_viewer, viewer_label
    from pbem.service.projector import check_log, load_state

    with UnitOfWork(ctx.db) as uow:
        if uow.games.get(game_id) is None:
            fail(f"there is no game called {game_id!r}")
        version = check_log(uow, game_id)
        if at is not None and not 1 <= at <= version:
            fail(f"--at {at} is outside the log of {game_id}: versions 1 to {version}")
        current = load_state(uow, game_id)
        try:
            who = check_viewer(current, viewer)
        except ValueError as exc:
            fail(str(exc))
        shown = current if at is None else load_state(uow, game_id, upto=at)
    return shown, who, viewer_label(viewer, who)


@click.command()
@click.argument("game_id")
@viewer_option
@click.option("--at", "at", type=int, default=None, help="Show the game as it was at this version.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (see docs/state.md).")
@pass_ctx
def state(ctx: Context, game_id: str, viewer: str, at: int | None, as_json: bool) -> None:
    """Show a game as VIEWER sees it, now or at a past version: where it stands, its deadline, a pause."""
    from pbem.rules.view import view
    from pbem.service.standing import standing

    current, viewer, label = state_at(ctx, game_id, at, viewer)
    data = view(current, viewer)
    if as_json:
        say_json(data, indent=2, sort_keys=True)
        return
    stands = standing(current)
    say(f"{data['game']}  version {data['version']}  turn {data['turn']}  phase {data['phase']}  as {label}")
    say(f"  {stands.when}: {stands.due}")
    if stands.paused is not None:
        say(f"  paused by the moderator: {stands.paused}")
    for who, p in data["pending"].items():
        say(f"  waiting for {who}: {p['question']}")
    small = "Small Cities" in data.get("variants", [])
    for name, n in data["nations"].items():
        towns = f"  towns {n['towns_on_board']:>2}" if small else ""
        say(f"  {name:<8} {n['player']:<12} stock {n['stock']:>2}  treasury {n['treasury']:>2}  tokens {n['tokens_on_board']:>2}{towns}  cities {n['cities_on_board']}")
    if viewer in ("moderator", "auditor") and at is None:
        _show_bounces(ctx, game_id, current)
    for name, a in data["areas"].items():
        if a["tokens"] or a["city"] or a.get("towns"):
            units = [f"{k} {v}" for k, v in a["tokens"].items()] + [f"{k} {v} towns" for k, v in a.get("towns", {}).items()]
            city = [f"city of {a['city']}"] if a["city"] else []
            say(f"  {name}: {'; '.join(filter(None, [', '.join(units), *city]))}")


def _show_bounces(ctx: Context, game_id: str, current: GameState) -> None:
    """The moderator's view of whose mail bounces (the players' views never show addresses)."""
    from pbem.service.bounces import bounce_counts

    with UnitOfWork(ctx.db) as uow:
        counts = bounce_counts(uow, game_id)
    for player_id, bounces in sorted(counts.items()):
        last = bounces[-1]
        why = " ".join(x for x in (last.get("status", ""), last.get("reason", "")) if x)
        say(
            f"  mail: {current.player(player_id).name}: {len(bounces)} letter{'s' if len(bounces) != 1 else ''} bounced"
            f", last {last['at'][:16].replace('T', ' ')}" + (f" ({why})" if why else "")
        )


def _when(recorded_at: str | None) -> str:
    """``2026-01-01 12:00`` (UTC, to the minute, as the letters give deadlines) from the ISO time the batch
    recorded; a dash for an event recorded without one (an import of an old log)."""
    return recorded_at[:16].replace("T", " ") if recorded_at else "-"


def log_line(entry: dict[str, Any]) -> str:
    """One entry of `pbem log` as text: version, time recorded, who and through what (only in the entries of
    the viewers `history` gives them to: the moderator, an auditor once the game has ended), then what happened.

    The sentence comes after the columns so a reader's eye finds it in the same place on every line, and a
    player's log holds no column that is empty for him alone.
    """
    cites = f"  [{', '.join(entry['cites'])}]" if entry["cites"] else ""
    undone = f"  (superseded by the rollback at version {entry['superseded_by']})" if entry.get("superseded_by") else ""
    by = f"  {entry.get('actor') or '-'} via {entry.get('source') or '-'}" if "actor" in entry else ""
    return f"{entry['version']:>5}  {_when(entry.get('recorded_at'))}{by}  {entry['text']}{cites}{undone}"


@click.command()
@click.argument("game_id")
@viewer_option
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def log(ctx: Context, game_id: str, viewer: str, as_json: bool) -> None:
    """The game's history as VIEWER may read it, with the rule clauses applied, when, and (overseers) by whom."""
    from pbem.audit.history import history
    from pbem.service.projector import checked_log

    with UnitOfWork(ctx.db) as uow:
        if uow.games.get(game_id) is None:
            fail(f"there is no game called {game_id!r}")
        recorded = checked_log(uow, game_id)
    try:
        entries = history(game_id, recorded, viewer)
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        say_json(entries, indent=2)
        return
    for entry in entries:
        say(log_line(entry))
