"""Issue 30: EXPLAIN names the order behind an outcome: the line as the player wrote it, his mail, its time.

Real MIME through the running server, from the game's start to the first
moves. The first player asked chooses his nation with a slip of the finger
in the verb ("NATINO") and a sign-off under his orders; the last player sends
his choice before his turn, so it is kept and played when his turn comes; in
the movement phase the first mover writes his move with a slip too
("MOEV"), under a subject of his own. Then the moderator mails `EXPLAIN`
for the three: each answer names the exact line, the sender, the mail's
Subject and Date and its source digest (for the kept choice, the mail it was
kept from). Another player asking about the same move reads the told order
and who sent it, never the line or the mail, which may say more than the
order (a trade offer's terms); the mover reads his own line.
"""

from __future__ import annotations

import asyncio

from pbem.rules.engine import pending
from pbem.service.batch import mail_source
from pbem.service.demo import reply_to_prompt, suggested_orders
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice, utc_now
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import last_ack, latest, send, text_of

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
MODERATOR = "mod@example.org"
SIGN_OFF = "Thanks, and good luck all!"


def _log(db):
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1"), uow.events.read("g1")


def _answers(settings, address: str) -> str:
    """The latest acknowledgement, each line wrapped for a phone joined back to the line it continues."""
    text = text_of(last_ack(settings.maildir, address)).replace("\r\n", "\n")
    out: list[str] = []
    for line in text.splitlines():
        if out and line.startswith("      ") and not line.startswith("       "):  # a continuation of "    By ..."
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


def _slip(orders: str) -> str:
    """The first order's verb with its last two letters swapped, as a hurried thumb types it ("NATINO")."""
    first, _, rest = orders.partition("\n")
    verb, _, words = first.partition(" ")
    return f"{verb[:-2]}{verb[-1]}{verb[-2]} {words}\n{rest}".strip()


def _asked(db):
    state, _ = _log(db)
    asked = pending(state)
    if not asked:
        return None
    (prompt,) = asked.values()
    return next(p for p in PLAYERS if p.name == state.player(prompt.player_id).name)


def test_explain_names_the_line_the_mail_and_the_sender_to_the_moderator_and_the_sender_only(world):
    db, settings = world
    sent = {}  # (address, subject) -> the reply as the client sent it

    async def reply(office, address: str, letter: str, text: str, subject: str | None = None) -> None:
        prompt = latest(settings.maildir, address, letter)
        mail = reply_to_prompt(prompt, address, text)
        if subject is not None:
            mail.replace_header("Subject", subject)
        sent[address, subject] = mail
        send(office.port, mail, address, [str(prompt["Reply-To"])])
        await office.idle()

    def suggested(who: NewPlayer) -> str:
        return suggested_orders(text_of(latest(settings.maildir, who.email, "your orders")))

    async def scenario():
        office = PostOffice(db, settings, outbox_every=0.05)
        await office.start()
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", moderator_email=MODERATOR,
                                    now=utc_now())
            await office.idle()
            first = _asked(db)
            await reply(office, first.email, "your orders", f"{_slip(suggested(first))}\n\n{SIGN_OFF}\n{first.name}",
                        subject="g1: my start")
            second = _asked(db)
            last = next(p for p in PLAYERS if p not in (first, second))
            choices = [line.split()[1] for line in text_of(latest(settings.maildir, second.email, "your orders"))
                       .splitlines() if line.startswith("  NATION ")]
            # the last player writes before his turn, choosing what the second is not suggested: it is kept
            await reply(office, last.email, "new game", f"NATION {choices[-1]}", subject="g1: early bird")
            mover = None
            for _ in range(8):  # everyone as suggested up to the first move, written with a slip and a sign-off
                who = _asked(db)
                orders = suggested(who)
                if orders.startswith("MOVE "):
                    mover = who
                    await reply(office, who.email, "your orders", f"{_slip(orders)}\n\n{SIGN_OFF}\n{who.name}",
                                subject="g1: my moves")
                    break
                await reply(office, who.email, "your orders", orders)
            state, recorded = _log(db)
            ids = {p.name: p.id for p in state.players}
            chose = {r.payload["player"]: r.version for r in recorded if r.type == "NationChosen"}
            moved = next(r.version for r in recorded if r.type == "TokensMoved")
            asked = [chose[ids[first.name]], chose[ids[last.name]], moved]
            await reply(office, MODERATOR, "You moderate", "\n".join(f"EXPLAIN {v}" for v in asked))
            bystander = next(p for p in PLAYERS if p is not mover)
            await reply(office, bystander.email, "Orders received", f"EXPLAIN {moved}")
            await reply(office, mover.email, "Orders received", f"EXPLAIN {moved}")
            return state, recorded, (first, last, mover, bystander), asked
        finally:
            await office.stop()

    state, recorded, (first, last, mover, bystander), (chosen, kept, moved) = asyncio.run(scenario())
    nation = {p.name: p.nation for p in state.players}
    ids = {p.name: p.id for p in state.players}

    def source(address: str, subject: str) -> str:
        return mail_source(str(sent[address, subject]["Message-ID"]).strip("<>"))

    moderator = _answers(settings, MODERATOR)
    start = sent[first.email, "g1: my start"]
    assert moderator.count("Started by: this event itself.") == 3  # each is an order: it begins its own batch
    assert (f"    By {first.name} ({nation[first.name]}) (actor player:{ids[first.name]}, "
            f"source {source(first.email, 'g1: my start')}), recorded at {recorded[chosen - 1].metadata['recorded_at']}."
            ) in moderator
    assert f'    As written, line 1: "NATINO {nation[first.name]}"' in moderator
    assert f'    The mail: Subject "g1: my start", Date "{start["Date"]}"' in moderator
    # the choice kept before its turn: the line, and the mail it was kept from, not the tick that played it
    early = sent[last.email, "g1: early bird"]
    assert f"    By {last.name} ({nation[last.name]}) (actor player:{ids[last.name]}, source kept)" in moderator
    assert f"source {source(last.email, 'g1: early bird')}." in moderator
    assert f'    As written, line 1: "NATION {nation[last.name]}"' in moderator
    assert f'    The mail: Subject "g1: early bird", Date "{early["Date"]}"' in moderator
    # the move: the line with its slip as he wrote it; the sign-off under it is no order and is not named
    line = recorded[moved - 1].metadata["order"]["line"]
    assert line.startswith("MOEV ") and line.split()[1:] == [str(recorded[moved - 1].payload["count"]),
                                                              recorded[moved - 1].payload["from"],
                                                              recorded[moved - 1].payload["to"]]
    moves = sent[mover.email, "g1: my moves"]
    assert f'    As written, line 1: "{line}"' in moderator
    assert f'    The mail: Subject "g1: my moves", Date "{moves["Date"]}"' in moderator
    assert f"source {source(mover.email, 'g1: my moves')})" in moderator
    assert SIGN_OFF not in moderator

    other = _answers(settings, bystander.email)
    assert f"EXPLAIN version {moved} of g1 (turn 1, 3. Movement), as player:{nation[bystander.name].lower()}." in other
    assert f"    By {mover.name} ({nation[mover.name]}), recorded at " in other
    assert line not in other and "g1: my moves" not in other
    assert "As written" not in other and "The mail:" not in other and "source mail:" not in other

    own = _answers(settings, mover.email)
    assert f'    As written, line 1: "{line}"' in own and 'Subject "g1: my moves"' in own
