"""Commands to try the game without players: a demo by mail, bot games, the rules data."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from .context import Context, fail, pass_ctx, viewer_option
from .reading import state_at
from .output import say, say_json, say_lines
from .progress import progress_bar


@click.command()
@click.option("--out", default="demo-out", type=click.Path(path_type=Path), help="Folder for the demo's database and mailboxes.")
@click.option("--players", default=3, type=int)
@click.option("--turns", default=0, type=int, help="Play this many turns after setup (0: setup only).")
@click.option("--bots", default="suggested", type=click.Choice(["suggested", "random", "greedy", "planner"]),
              help="How the players write their replies: the prompt's suggested orders unchanged, or a bot's choice.")
@click.option("--option", "options", multiple=True, help="KEY=VALUE game option (e.g. last-turn=8).")
@click.option("--seed", default="demo-seed", help="The game's secret seed; the bots' choices derive from it too.")
@click.option("--to-the-end", is_flag=True, help="No turn limit: play on until a nation finishes the A.S.T. (§34).")
@click.option("--mail", default=None, help="What every player first sends: MAIL and these words (e.g. digest, "
              "'digest nopictures'), as a player would.")
def demo(out: Path, players: int, turns: int, bots: str, options: tuple[str, ...], seed: str, to_the_end: bool,
         mail: str | None) -> None:
    """Play a game by mail through real SMTP on loopback and show each player's mail."""
    from pbem.service.demo import run_demo
    from pbem.service.games import GameError

    opts = dict(item.split("=", 1) for item in options if "=" in item)
    try:
        with progress_bar("demo: playing by mail") as report:
            code = asyncio.run(run_demo(out, players, turns, echo=say, bots=bots, options=opts, seed=seed,
                                        progress=report, to_the_end=to_the_end, mail=mail))
    except GameError as exc:
        fail(str(exc))
    sys.exit(code)


@click.command()
@click.option("--players", default=3, type=int, help="How many bot players (2-8).")
@click.option("--turns", default=1, type=int, help="How many turns to play at most.")
@click.option("--seed", default="1", help="The game's secret seed; the bots' choices derive from it too.")
@click.option("--option", "options", multiple=True, help="KEY=VALUE game option.")
@click.option("--miss", default=0.1, type=float, help="Chance that a bot misses a deadline (defaults apply).")
@click.option("--strategy", default="random", type=click.Choice(["random", "greedy", "planner"]), help="How bots choose among legal orders.")
@click.option("--db", "db_url", default=None, metavar="URL",
              help="Keep the game in this database (the same as `pbem --db URL simulate`).")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def simulate(
    ctx: Context, players: int, turns: int, seed: str, options: tuple[str, ...], miss: float, strategy: str,
    db_url: str | None, as_json: bool,
) -> None:
    """Play a game with bots choosing legal orders, through the same service layer as email.

    With `pbem simulate --db URL ...` (or `pbem --db URL simulate ...`) the
    game is kept in that database, to be read, replayed and verified
    afterwards (`pbem state`, `pbem log`, `pbem verify`); without it the game
    lives in a temporary database. Only a URL given on the command line is
    used: a server's own database (from its settings file or environment)
    never fills with bot games by accident.
    """
    from pbem.service.games import GameError
    from pbem.service.simulate import simulate as run

    opts = dict(item.split("=", 1) for item in options if "=" in item)
    kept = db_url or (ctx.settings.db_url if ctx.sources.get("db_url") == "command line" else None)
    try:
        with progress_bar("simulating turns", quiet=as_json) as report:
            summary = run(players, turns, seed, options=opts, miss=miss, strategy=strategy, db_url=kept, progress=report)
    except GameError as exc:
        fail(str(exc))
    if as_json:
        say_json(summary.as_json(), indent=2)
    else:
        say(
            f"{summary.game}: {summary.turns_played} turns, {summary.events_appended} events, "
            f"{summary.orders_sent} orders, {summary.deadlines_missed} missed deadlines, "
            f"{summary.invariant_checks} invariant checks" + (f"; waiting at {summary.stopped_at}" if summary.stopped_at else "")
        )
        for problem in summary.problems:
            say(f"  PROBLEM: {problem}")
        if kept:
            say(f"kept in {kept}: pbem --db {kept} verify {summary.game}")
    sys.exit(1 if summary.problems else 0)


@click.command()
@click.argument("topic", type=click.Choice(
    ["areas", "area", "cards", "card", "calamities", "calamity", "stacks", "stack", "ast", "options", "option", "money"]))
@click.argument("name", required=False)
@click.option("--option", "options", multiple=True, help="KEY=VALUE board option (e.g. ruleset-data=PATH).")
def rules(topic: str, name: str | None, options: tuple[str, ...]) -> None:
    """Print the rules data: areas, cards, calamities, stacks, ast, options, money [NAME]."""
    from pbem.rules.ruleset.reference import describe
    from pbem.rules.ruleset.rulebook import ruleset_for_options

    opts = dict(item.split("=", 1) for item in options if "=" in item)
    try:
        say_lines(describe(ruleset_for_options(opts), topic, name).splitlines())
    except LookupError as exc:
        fail(str(exc).strip("'\""))


@click.command("map")
@click.argument("game_id")
@click.option("--at", "at", type=int, default=None, help="The board as it was at this version.")
@viewer_option
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="FILE.svg or FILE.png.")
@pass_ctx
def map_(ctx: Context, game_id: str, at: int | None, viewer: str, out: Path) -> None:
    """Draw the board of GAME (now, or at a version) as VIEWER may see it, into an SVG or PNG file."""
    from pbem.picture import board_png, board_svg

    suffix = out.suffix.lower()
    if suffix not in (".svg", ".png"):
        fail(f"--out names an .svg or a .png file, not {out.name!r}")
    if not out.parent.is_dir():
        fail(f"the folder {out.parent} does not exist")
    state, who, label = state_at(ctx, game_id, at, viewer)
    if suffix == ".svg":
        out.write_text(board_svg(state, who), encoding="utf-8")
    else:
        out.write_bytes(board_png(state, who))
    say(f"{out}: the board of {game_id} at version {state.version}, as {label} sees it")
