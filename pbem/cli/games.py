"""Commands about games: create and list them, give orders, verify, roll back, end a step (reading one: `reading`)."""

from __future__ import annotations

import sys

import click

from pbem.audit.heads import SHOWN_HEAD_DIGITS, find_head, is_head, shown_in
from pbem.store.unit_of_work import UnitOfWork

from .context import Context, fail, now, pass_ctx
from .output import say, say_lines
from .progress import progress_bar


@click.group()
def game() -> None:
    """Create and list games."""


@game.command("create")
@click.argument("game_id")
@click.option("--player", "players", multiple=True, required=True, help="NAME:EMAIL[:NATION], once per player.")
@click.option("--option", "options", multiple=True, help="KEY=VALUE game option (see docs/cli.md).")
@click.option("--seed", default=None, help="The secret seed (default: 256 random bits).")
@click.option("--moderator", default=None, help="The moderator's email address.")
@pass_ctx
def game_create(ctx: Context, game_id: str, players: tuple[str, ...], options: tuple[str, ...], seed: str | None, moderator: str | None) -> None:
    """Create GAME and mail every player the start letter and the first prompt."""
    from pbem.service.games import GameError, create_game, parse_player

    try:
        parsed = [parse_player(p) for p in players]
        opts = {}
        for item in options:
            if "=" not in item:
                raise GameError(f"an option is KEY=VALUE, not {item!r}")
            key, value = item.split("=", 1)
            opts[key.strip()] = value.strip()
        state = create_game(ctx.db, ctx.settings, game_id, parsed, options=opts, seed=seed, moderator_email=moderator, now=now())
    except GameError as exc:
        fail(str(exc))
    say(f"created game {state.game_id} (version {state.version}); seed commitment {state.seed_commitment}")
    order = ", ".join(state.player(pid).name for pid in state.place_order)
    say(f"place-card order: {order}")


@game.command("link")
@click.argument("game_id")
@click.argument("reader", default="moderator")
@pass_ctx
def game_link(ctx: Context, game_id: str, reader: str) -> None:
    """Print READER's link to GAME's page: a nation or player, moderator (the default), auditor, or observer N.

    The link is a key to what that reader may know: hand it to him alone. It needs web.url or web.listen
    (docs/web.md); REVOKE by mail replaces it."""
    from pbem.service.links import page_url, reader_named
    from pbem.service.projector import load_state

    if not ctx.settings.web_base:
        fail("no web address is set: set web.url (or web.listen) in pbem.toml, or PBEM_WEB_URL (docs/web.md)")
    with UnitOfWork(ctx.db) as uow:
        row = uow.games.get(game_id)
        if row is None:
            fail(f"no game {game_id!r}")
        state = load_state(uow, game_id)
        try:
            code = reader_named(state, reader)
        except LookupError as exc:
            fail(str(exc))
        say(page_url(ctx.settings, bytes.fromhex(row.reply_secret), state, code))


@game.command("list")
@pass_ctx
def game_list(ctx: Context) -> None:
    """List the games: where each stands (turn, phase), whether it runs, is paused or has ended, its deadline."""
    from pbem.service.standing import standings

    with UnitOfWork(ctx.db) as uow:
        listed = standings(uow)
    for game in listed:
        if game.damaged:
            say(game.game_id, "damaged", game.damaged, f"version {game.version}", sep="\t")
        else:
            say(game.game_id, game.when, game.condition, game.due, f"version {game.version}", sep="\t")


@click.command()
@click.argument("game_id")
@click.option("--as", "who", required=True, help="NATION, player name, or moderator.")
@pass_ctx
def submit(ctx: Context, game_id: str, who: str) -> None:
    """Read orders on stdin, handle them as an authenticated email, print the acknowledgement."""
    from pbem.service.games import GameError
    from pbem.service.games import submit as submit_orders

    data = sys.stdin.buffer.read(ctx.settings.max_message_bytes + 1)
    if len(data) > ctx.settings.max_message_bytes:
        fail(f"the orders are larger than {ctx.settings.max_message_bytes} bytes, the limit of one message; nothing was recorded")
    text = data.decode("utf-8", errors="replace")
    try:
        receipt = submit_orders(ctx.db, ctx.settings, game_id, who, text, now=now())
    except GameError as exc:
        fail(str(exc))
    say_lines(receipt.lines())
    sys.exit(0 if receipt.ok else 1)


def _verify_kept_head(ctx: Context, game_id: str, recorded: list, kept_head: str) -> None:
    """Find a chain head kept from a mail, as the mail shows it (its first 16 hex digits) or whole.

    Says which version it is and the first letter that showed it; a head the
    log does not hold means the log was cut short or rewritten since.
    """
    if not is_head(kept_head):
        fail(f"--head takes a chain head as a letter shows it ({SHOWN_HEAD_DIGITS} hexadecimal digits) or the "
             f"whole hash (64); {kept_head.strip()[:80]!r} is neither")
    found = find_head(recorded, kept_head)
    if len(found.versions) > 1:
        fail(found.text())
    with UnitOfWork(ctx.db) as uow:
        shown = [row for row in uow.outbox.list(game_id) if shown_in(bytes(row.raw), found.kept)]
    if not found.versions:
        say(found.text(shown=bool(shown)))
        sys.exit(1)
    say(found.text())
    if shown:
        first = shown[0]
        say(f"shown in {len(shown)} letter{'s' if len(shown) != 1 else ''}, the first a {first.kind} to "
            f"{first.recipient} on {first.created_at:%Y-%m-%d %H:%M} UTC")


@click.command()
@click.argument("game_id")
@click.option("--head", "kept_head", default=None, metavar="HASH",
              help="A chain head kept from a mail: the log must hold it (a truncated or rewritten log does not).")
@pass_ctx
def verify(ctx: Context, game_id: str, kept_head: str | None) -> None:
    """Recompute the hash chain and re-derive every outcome (both branches of a rollback) from the recorded inputs."""
    from pbem.audit.rederive import rederive
    from pbem.rules.branches import superseded
    from pbem.rules.core.draws import commitment
    from pbem.rules.core.events import Event
    from pbem.store.verify import verify_chain

    with UnitOfWork(ctx.db) as uow:
        game = uow.games.get(game_id)
        if game is None:
            fail(f"there is no game called {game_id!r}")
        recorded = uow.events.read(game_id)
    chain = verify_chain(recorded)
    if not chain.ok:
        say(f"hash chain BROKEN at version {chain.first_broken}: {chain.reason}")
        sys.exit(1)
    say(f"hash chain ok: {chain.checked} events, head {chain.head}")
    if kept_head is not None:
        _verify_kept_head(ctx, game_id, recorded, kept_head)
    events = [Event.from_payload(r.type, r.payload) for r in recorded]
    undone = superseded(events)
    marked = {r.version: r.superseded_by for r in recorded if r.superseded_by is not None}
    if marked != undone:
        wrong = min(set(marked.items()) ^ set(undone.items()))[0]
        say(f"superseded marks WRONG at version {wrong}: the rollbacks in the log say "
            f"{undone.get(wrong)}, the store says {marked.get(wrong)}")
        sys.exit(1)
    if undone:
        rollbacks = sum(1 for e in events if e.type == "RolledBack")
        say(f"rollbacks: {rollbacks}, superseding {len(undone)} events; both branches are re-derived")
    public = [(r.version, r.payload["seed"]) for r in recorded if r.type == "SeedRevealed" and r.payload.get("to") == "everyone"]
    seed = game.secret_seed
    if public:
        at, seed = public[0]
        if commitment(seed) != events[0].data.get("seed_commitment"):
            say(f"seed WRONG: the seed revealed at version {at} does not hash to the commitment published at the start")
            sys.exit(1)
        say(f"seed ok: revealed at version {at}, its SHA-256 is the commitment published at the start")
    if not seed:
        say("re-derivation needs the secret seed, which this log has not revealed yet (it is, when the game ends)")
        return
    with progress_bar("re-deriving events") as report:
        result = rederive(game_id, events, seed, progress=report)
    if not result.ok:
        say(f"re-derivation FAILED at version {result.first_difference}: {result.reason}")
        sys.exit(1)
    say(f"re-derivation ok: {result.batches} inputs, {result.events} events match the engine")


@click.command()
@click.argument("game_id")
@click.argument("version", type=int)
@click.option("--reason", required=True, help="Why: every player is told it.")
@pass_ctx
def rollback(ctx: Context, game_id: str, version: int, reason: str) -> None:
    """Moderator: take GAME back to VERSION; later events stay in the log, superseded; each player hears what changed."""
    from pbem.service.rollback import roll_back_game

    with UnitOfWork(ctx.db) as uow:
        if uow.games.get(game_id) is None:
            fail(f"there is no game called {game_id!r}")
    state = roll_back_game(ctx.db, ctx.settings, game_id, version, reason, now())
    say(f"rolled {game_id} back to version {version}: now turn {state.turn}, {state.phase}, version {state.version}")


@click.command()
@click.argument("game_id")
@click.option("--reason", default="", help="Told to each player whose orders are played by default.")
@pass_ctx
def deadline(ctx: Context, game_id: str, reason: str) -> None:
    """Moderator: end the current step of GAME now, as the DEADLINE order does (the players asked are told)."""
    from pbem.service.games import submit as submit_orders

    with UnitOfWork(ctx.db) as uow:
        if uow.games.get(game_id) is None:
            fail(f"there is no game called {game_id!r}")
    receipt = submit_orders(ctx.db, ctx.settings, game_id, "moderator", f"DEADLINE {reason}".strip(), now=now())
    say("defaults applied" if receipt.ok else "; ".join(e["reason"] for e in receipt.errors))
