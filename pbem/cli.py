"""The `pbem` command: thin wrappers over the service layer (documented in docs/cli.md)."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import click

from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Context:
    def __init__(self, db_url: str | None) -> None:
        from pbem.service.settings import Settings

        self.settings = Settings.from_env(db_url=db_url)
        self._db = None

    @property
    def db(self):
        if self._db is None:
            self._db = make_engine(self.settings.db_url)
            ensure_schema(self._db)
        return self._db


pass_ctx = click.make_pass_decorator(Context)


def _transport(ctx: Context):
    """The relay if one is configured, else the local Maildir (created on first use)."""
    from pbem.mail.outbound import transport_from_config

    if not ctx.settings.relay_url:
        ctx.settings.maildir.mkdir(parents=True, exist_ok=True)
    return transport_from_config(ctx.settings.relay_url, ctx.settings.maildir)


def _fail(message: str, code: int = 2) -> None:
    click.echo(f"pbem: {message}", err=True)
    sys.exit(code)


@click.group()
@click.option("--db", "db_url", envvar="PBEM_DATABASE_URL", default=None, help="Database URL (default: sqlite:///pbem.sqlite).")
@click.pass_context
def main(ctx: click.Context, db_url: str | None) -> None:
    """Play Advanced Civilization by email."""
    ctx.obj = Context(db_url)


@main.group()
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
        state = create_game(ctx.db, ctx.settings, game_id, parsed, options=opts, seed=seed, moderator_email=moderator, now=_now())
    except GameError as exc:
        _fail(str(exc))
    click.echo(f"created game {state.game_id} (version {state.version}); seed commitment {state.seed_commitment}")
    order = ", ".join(state.player(pid).name for pid in state.place_order)
    click.echo(f"place-card order: {order}")


@game.command("list")
@pass_ctx
def game_list(ctx: Context) -> None:
    """List the games in the database."""
    with UnitOfWork(ctx.db) as uow:
        for row in uow.games.list():
            version, _ = uow.events.head(row.game_id)
            click.echo(f"{row.game_id}\t{row.status}\tversion {version}")


@main.command()
@click.argument("game_id")
@click.option("--as", "who", required=True, help="NATION, player name, or moderator.")
@pass_ctx
def submit(ctx: Context, game_id: str, who: str) -> None:
    """Read orders on stdin, handle them as an authenticated email, print the acknowledgement."""
    from pbem.service.games import GameError
    from pbem.service.games import submit as submit_orders

    text = sys.stdin.read()
    try:
        receipt = submit_orders(ctx.db, ctx.settings, game_id, who, text, now=_now())
    except GameError as exc:
        _fail(str(exc))
    click.echo(receipt.text())
    sys.exit(0 if receipt.ok else 1)


def _state_at(ctx: Context, game_id: str, at: int | None):
    from pbem.service.projector import load_state

    with UnitOfWork(ctx.db) as uow:
        if uow.games.get(game_id) is None:
            _fail(f"there is no game called {game_id!r}")
        return load_state(uow, game_id, upto=at)


@main.command()
@click.argument("game_id")
@click.option("--as", "viewer", default="observer", help="player:NATION (or NATION), observer, moderator, auditor.")
@click.option("--at", "at", type=int, default=None, help="Show the game as it was at this version.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (see docs/state.md).")
@pass_ctx
def state(ctx: Context, game_id: str, viewer: str, at: int | None, as_json: bool) -> None:
    """Show a game as VIEWER sees it, now or at a past version."""
    from pbem.rules.view import view

    current = _state_at(ctx, game_id, at)
    try:
        data = view(current, viewer)
    except ValueError as exc:
        _fail(str(exc))
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    click.echo(f"{data['game']}  version {data['version']}  turn {data['turn']}  phase {data['phase']}")
    for who, p in data["pending"].items():
        click.echo(f"  waiting for {who}: {p['question']}")
    small = "Small Cities" in data.get("variants", [])
    for name, n in data["nations"].items():
        towns = f"  towns {n['towns_on_board']:>2}" if small else ""
        click.echo(f"  {name:<8} {n['player']:<12} stock {n['stock']:>2}  treasury {n['treasury']:>2}  tokens {n['tokens_on_board']:>2}{towns}  cities {n['cities_on_board']}")
    if viewer in ("moderator", "auditor") and at is None:
        _show_bounces(ctx, game_id, current)
    for name, a in data["areas"].items():
        if a["tokens"] or a["city"] or a.get("towns"):
            units = [f"{k} {v}" for k, v in a["tokens"].items()] + [f"{k} {v} towns" for k, v in a.get("towns", {}).items()]
            click.echo(f"  {name}: {', '.join(units)}" + (f"; city of {a['city']}" if a["city"] else ""))


def _show_bounces(ctx: Context, game_id: str, current) -> None:
    """The moderator's view of whose mail bounces (the players' views never show addresses)."""
    from pbem.service.bounces import bounce_counts

    with UnitOfWork(ctx.db) as uow:
        counts = bounce_counts(uow, game_id)
    for player_id, bounces in sorted(counts.items()):
        last = bounces[-1]
        why = " ".join(x for x in (last.get("status", ""), last.get("reason", "")) if x)
        click.echo(
            f"  mail: {current.player(player_id).name}: {len(bounces)} letter{'s' if len(bounces) != 1 else ''} bounced"
            f", last {last['at'][:16].replace('T', ' ')}" + (f" ({why})" if why else "")
        )


@main.command()
@click.argument("game_id")
@click.option("--as", "viewer", default="observer", help="player:NATION, observer, moderator, auditor.")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def log(ctx: Context, game_id: str, viewer: str, as_json: bool) -> None:
    """The game's history as VIEWER may read it, with the rule clauses applied."""
    from pbem.audit.history import history

    with UnitOfWork(ctx.db) as uow:
        if uow.games.get(game_id) is None:
            _fail(f"there is no game called {game_id!r}")
        recorded = uow.events.read(game_id)
    try:
        entries = history(game_id, recorded, viewer)
    except ValueError as exc:
        _fail(str(exc))
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return
    for e in entries:
        cites = f"  [{', '.join(e['cites'])}]" if e["cites"] else ""
        click.echo(f"{e['version']:>5}  {e['text']}{cites}")


@main.command()
@click.argument("game_id")
@pass_ctx
def verify(ctx: Context, game_id: str) -> None:
    """Recompute the hash chain and re-derive every outcome from the recorded inputs."""
    from pbem.audit.rederive import rederive
    from pbem.rules.core.events import Event
    from pbem.store.verify import verify_chain

    with UnitOfWork(ctx.db) as uow:
        game = uow.games.get(game_id)
        if game is None:
            _fail(f"there is no game called {game_id!r}")
        recorded = uow.events.read(game_id)
    chain = verify_chain(recorded)
    if not chain.ok:
        click.echo(f"hash chain BROKEN at version {chain.first_broken}: {chain.reason}")
        sys.exit(1)
    click.echo(f"hash chain ok: {chain.checked} events, head {chain.head}")
    result = rederive(game_id, [Event.from_payload(r.type, r.payload) for r in recorded], game.secret_seed)
    if not result.ok:
        click.echo(f"re-derivation FAILED at version {result.first_difference}: {result.reason}")
        sys.exit(1)
    click.echo(f"re-derivation ok: {result.batches} inputs, {result.events} events match the engine")


@main.command()
@click.option("--from", "mail_from", default=None, help="Envelope sender (as the MTA passes it; empty for the null return path of a bounce).")
@click.option("--to", "rcpt", multiple=True, help="Envelope recipient(s).")
@pass_ctx
def ingest(ctx: Context, mail_from: str, rcpt: tuple[str, ...]) -> None:
    """Take one RFC 5322 message on stdin (an MTA pipe transport) and handle it as the server would."""
    from pbem.service.inbound import ingest as ingest_mail

    raw = sys.stdin.buffer.read()
    envelope_from = "" if mail_from is None else (mail_from.strip() or "<>")
    outcome = ingest_mail(ctx.db, ctx.settings, raw, envelope_from, list(rcpt), _now())
    click.echo(f"{outcome.status}: {outcome.detail}")


@main.command()
@click.option("--listen", default=None, help="HOST:PORT for inbound mail (default 127.0.0.1:8025).")
@click.option("--lmtp", is_flag=True, help="Speak LMTP instead of SMTP (behind Postfix).")
@click.option("--relay", default=None, help="smtp://host:port or smtp+starttls://user:pass@host:587 for outgoing mail.")
@click.option("--maildir", default=None, type=click.Path(path_type=Path), help="Deliver outgoing mail here when no relay is set.")
@pass_ctx
def serve(ctx: Context, listen: str | None, lmtp: bool, relay: str | None, maildir: Path | None) -> None:
    """Run the inbound mail server, the outbox sender and the deadline clock."""
    import logging
    from dataclasses import replace

    from pbem.service.server import serve_forever

    settings = ctx.settings
    if listen:
        host, _, port = listen.rpartition(":")
        settings = replace(settings, listen_host=host or "127.0.0.1", listen_port=int(port))
    settings = replace(settings, protocol="lmtp" if lmtp else settings.protocol, relay_url=relay or settings.relay_url, maildir=maildir or settings.maildir)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        asyncio.run(serve_forever(ctx.db, settings))
    except KeyboardInterrupt:
        pass


@main.command()
@click.option("--out", default="demo-out", type=click.Path(path_type=Path), help="Folder for the demo's database and mailboxes.")
@click.option("--players", default=3, type=int)
@click.option("--turns", default=0, type=int, help="Play this many turns after setup (0: setup only).")
@click.option("--bots", default="suggested", type=click.Choice(["suggested", "random", "greedy", "planner"]),
              help="How the players write their replies: the prompt's suggested orders unchanged, or a bot's choice.")
@click.option("--option", "options", multiple=True, help="KEY=VALUE game option (e.g. last-turn=8).")
@click.option("--seed", default="demo-seed", help="The game's secret seed; the bots' choices derive from it too.")
def demo(out: Path, players: int, turns: int, bots: str, options: tuple[str, ...], seed: str) -> None:
    """Play a game by mail through real SMTP on loopback and show each player's mail."""
    from pbem.service.demo import run_demo
    from pbem.service.games import GameError

    opts = dict(item.split("=", 1) for item in options if "=" in item)
    try:
        code = asyncio.run(run_demo(out, players, turns, echo=click.echo, bots=bots, options=opts, seed=seed))
    except GameError as exc:
        _fail(str(exc))
    sys.exit(code)


@main.command()
@click.option("--players", default=3, type=int, help="How many bot players (2-8).")
@click.option("--turns", default=1, type=int, help="How many turns to play at most.")
@click.option("--seed", default="1", help="The game's secret seed; the bots' choices derive from it too.")
@click.option("--option", "options", multiple=True, help="KEY=VALUE game option.")
@click.option("--miss", default=0.1, type=float, help="Chance that a bot misses a deadline (defaults apply).")
@click.option("--strategy", default="random", type=click.Choice(["random", "greedy", "planner"]), help="How bots choose among legal orders.")
@click.option("--json", "as_json", is_flag=True)
def simulate(players: int, turns: int, seed: str, options: tuple[str, ...], miss: float, strategy: str, as_json: bool) -> None:
    """Play a game with bots choosing random legal orders, through the same service layer as email."""
    from pbem.service.games import GameError
    from pbem.service.simulate import simulate as run

    opts = dict(item.split("=", 1) for item in options if "=" in item)
    try:
        summary = run(players, turns, seed, options=opts, miss=miss, strategy=strategy)
    except GameError as exc:
        _fail(str(exc))
    if as_json:
        click.echo(json.dumps(summary.as_json(), indent=2))
    else:
        click.echo(
            f"{summary.game}: {summary.turns_played} turns, {summary.events_appended} events, "
            f"{summary.orders_sent} orders, {summary.deadlines_missed} missed deadlines, "
            f"{summary.invariant_checks} invariant checks" + (f"; waiting at {summary.stopped_at}" if summary.stopped_at else "")
        )
        for problem in summary.problems:
            click.echo(f"  PROBLEM: {problem}")
    sys.exit(1 if summary.problems else 0)


@main.command()
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
        click.echo(describe(ruleset_for_options(opts), topic, name))
    except LookupError as exc:
        _fail(str(exc).strip("'\""))


@main.command("flush")
@pass_ctx
def flush(ctx: Context) -> None:
    """Deliver the mail now due in the outbox, once (for cron set-ups without `serve`)."""
    from pbem.service.outbound import flush_outbox

    sent = asyncio.run(flush_outbox(ctx.db, _transport(ctx), ctx.settings.sender, _now))
    click.echo(f"delivered {sent} letters")


@main.command()
@pass_ctx
def tick(ctx: Context) -> None:
    """Apply defaults where deadlines have passed, queue due reminders, then deliver the outbox (for cron)."""
    from pbem.service.deadlines import pass_deadlines
    from pbem.service.outbound import flush_outbox
    from pbem.service.reminders import send_reminders

    moved = pass_deadlines(ctx.db, ctx.settings, now=_now())
    reminded = send_reminders(ctx.db, ctx.settings, now=_now())
    sent = asyncio.run(flush_outbox(ctx.db, _transport(ctx), ctx.settings.sender, _now))
    click.echo(f"deadlines passed in {len(moved)} games; {reminded} reminders; delivered {sent} letters")


@main.command()
@click.argument("game_id")
@pass_ctx
def deadline(ctx: Context, game_id: str) -> None:
    """Moderator: end the current step of GAME now, applying the default for missing orders."""
    from pbem.service.deadlines import pass_deadlines

    moved = pass_deadlines(ctx.db, ctx.settings, now=_now(), force_game=game_id)
    click.echo("defaults applied" if moved else "nothing is pending")


if __name__ == "__main__":
    main()
