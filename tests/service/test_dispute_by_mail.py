"""Issue 30: a disputed move, found, explained, undone and proved, by mail alone; then the clock and a seat.

Three players and a moderator play setup by mail through the running
server. In turn 1's movement the first mover sends a move he will say he
did not mean. The moderator, who holds nothing but his mail client, finds
the move with `HISTORY turn 1 movement <nation>`, reads `EXPLAIN <version>`,
sends `ROLLBACK BEFORE <version>`, reads the preview and answers `CONFIRM`.
Every player is told what changed, the mover is asked again. A player then
checks the chain head his last letter ended with by `VERIFY`, and the
auditor does the same with `pbem verify --head`. Then the moderator pauses,
extends, resumes and hands a seat to a newcomer, and after each step every
deadline a player was last told is compared with the one in force.
"""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timedelta, timezone

from click.testing import CliRunner

from pbem.cli import main as cli
from pbem.rules.engine import pending
from pbem.rules.view import view
from pbem.service.demo import reply_to_prompt, suggested_orders
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state
from pbem.service.server import PostOffice
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import latest, letters, send, text_of, topic

PLAYERS = [NewPlayer("Ann", "ann@example.org"), NewPlayer("Ben", "ben@example.net"), NewPlayer("Cy", "cy@example.com")]
MODERATOR = "mod@example.org"
T0 = datetime(2026, 11, 25, 8, 0, tzinfo=timezone.utc)
_HEAD = re.compile(r"chain head ([0-9a-f]{16})")
_WHEN = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


def state_of(db):
    with UnitOfWork(db) as uow:
        return load_state(uow, "g1")


def email_of(name: str) -> str:
    return next(p.email for p in PLAYERS if p.name == name)


def body(message) -> str:
    return text_of(message).replace("\r\n", "\n")


def asked(db) -> str:
    """The name of the one player asked now."""
    state = state_of(db)
    (prompt,) = pending(state).values()
    return state.player(prompt.player_id).name


def first_move(prompt_text: str) -> str:
    """A move the movement prompt offers: its first 'MOVE up to N from A to: B, ...' line, one token to B."""
    line = next(line for line in prompt_text.splitlines() if line.strip().startswith("MOVE up to"))
    where, to = line.strip()[len("MOVE up to "):].split(" to: ", 1)
    origin = where.split(" from ", 1)[1]
    return f"MOVE 1 {origin} {to.split(',')[0].split(' (')[0].strip()}"


def test_a_disputed_move_is_found_explained_previewed_undone_and_proved_by_mail(world):
    db, settings = world
    replies: dict[str, list] = {}
    clock = [T0]
    deadlines: list = []

    def told_deadline(address: str):
        # a date told as a deadline: an answer to VERIFY names when a letter was sent, and an acknowledgement
        # names no deadline when nothing is asked of its reader
        for m in reversed(letters(settings.maildir, address)):
            found = [when for line in body(m).splitlines() if "deadline" in line.lower() or "due" in line.lower()
                     for when in _WHEN.findall(line)]
            if found:
                return topic(m), found
        return None

    async def scenario():
        office = PostOffice(db, settings, clock=lambda: clock[0], outbox_every=0.05, deadlines_every=3600)
        await office.start()

        async def moderator(text: str) -> str:
            welcome = latest(settings.maildir, MODERATOR, "You moderate")
            send(office.port, reply_to_prompt(welcome, MODERATOR, text), MODERATOR, [str(welcome["Reply-To"])])
            await office.idle()
            answer = body(letters(settings.maildir, MODERATOR)[-1])
            replies.setdefault("moderator", []).append(answer)
            return answer

        async def player(name: str, word: str, text: str) -> str:
            prompt = latest(settings.maildir, email_of(name), word)
            send(office.port, reply_to_prompt(prompt, email_of(name), text), email_of(name), [str(prompt["Reply-To"])])
            await office.idle()
            return body(latest(settings.maildir, email_of(name), ""))

        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="dispute", moderator_email=MODERATOR, now=T0)
            await office.idle()
            for _ in range(3):  # setup by mail, each player sending the block his prompt suggests
                name = asked(db)
                prompt = latest(settings.maildir, email_of(name), "your orders")
                await player(name, "your orders", suggested_orders(body(prompt)))
            assert state_of(db).phase == "movement"
            mover = asked(db)
            nation = state_of(db).player(next(p.id for p in state_of(db).players if p.name == mover)).nation
            before_move = view(state_of(db), "moderator")
            move = first_move(body(latest(settings.maildir, email_of(mover), "your orders")))
            await player(mover, "your orders", f"{move}\nHALT\n\nCheers,\n{mover}")
            moved_at = state_of(db).version
            assert view(state_of(db), "moderator") != before_move

            # the moderator finds the move by turn, phase and nation, numbered by version
            found = await moderator(f"HISTORY turn 1 movement {nation}")
            numbered = [line.strip() for line in found.splitlines() if re.match(r"\s*\d+\. ", line)]
            moves = [line for line in numbered if f"{nation} moved" in line or f"{nation} move" in line]
            assert moves, found
            version = int(moves[0].split(".", 1)[0])
            assert all(f"{nation}" in line for line in numbered)  # only the lines naming the nation
            explained = await moderator(f"EXPLAIN {version}")
            assert f"version {version}" in explained
            # the order behind it, as the player wrote it, who sent it, from which mail
            assert f'As written, line 1: "{move}"' in explained and f"By {mover} ({nation})" in explained
            assert 'The mail: Subject "Re: [g1] Turn 1"' in explained

            # ROLLBACK BEFORE the move: a preview first, nothing applied; then CONFIRM
            preview = await moderator(f"ROLLBACK BEFORE {version} {mover} says he meant to hold")
            assert "ROLLBACK previewed, nothing is applied yet" in preview
            assert state_of(db).version == moved_at
            assert "What would change:" in preview and f"Asked then: {mover} ({nation})" in preview
            had = len(letters(settings.maildir, email_of(mover)))
            confirmed = await moderator("CONFIRM")
            fresh = [topic(m) for m in letters(settings.maildir, email_of(mover))[had:]]
            assert any("your orders" in subject for subject in fresh), fresh  # the mover is asked again
            assert "ROLLBACK TO " in confirmed and "NOT ACCEPTED" not in confirmed
            assert view(state_of(db), "moderator")["areas"] == before_move["areas"]
            assert asked(db) == mover

            # a player checks the chain head of his last letter; a forged one is not found
            other = next(p.name for p in PLAYERS if p.name != mover)
            kept = [found for m in letters(settings.maildir, email_of(other)) if (found := _HEAD.findall(body(m)))]
            head = kept[-1][-1]  # the head his newest letter that shows one ends with
            told = await player(other, "", f"VERIFY {head}")
            forged = await player(other, "", "VERIFY 0123456789abcdef")

            # the clock and a seat: after each order, what every player was last told of the deadline holds
            for text, hours in (("PAUSE the mover is travelling", 30), ("EXTEND 72 travel", 0),
                                ("RESUME he is back", 0), (f"REPLACE {nation} WITH Eve eve@example.org {mover} left", 0)):
                clock[0] += timedelta(hours=hours)
                await moderator(text)
                readers = [p.email for p in PLAYERS] + (["eve@example.org"] if text.startswith("REPLACE") else [])
                deadlines.append((text, state_of(db).deadline, {a: told_deadline(a) for a in readers}))
            # the newcomer has the position and the open prompt; the player replaced who writes is answered
            eve = [topic(m) for m in letters(settings.maildir, "eve@example.org")]
            assert any(f"You take over {nation}" in s for s in eve) and any("your orders" in s for s in eve), eve
            prompt = latest(settings.maildir, email_of(mover), "your orders")
            send(office.port, reply_to_prompt(prompt, email_of(mover), "HALT"), email_of(mover), [str(prompt["Reply-To"])])
            await office.idle()
            gone = letters(settings.maildir, email_of(mover))[-1]
            assert "You no longer play in g1" in topic(gone) + body(gone), topic(gone)
            assert asked(db) == "Eve"  # nothing of his was applied: Eve is still asked
            return mover, nation, head, told, forged
        finally:
            await office.stop()

    mover, nation, head, told, forged = asyncio.run(scenario())
    for order, in_force, last_told in deadlines:
        assert in_force, order
        for address, (subject, said) in last_told.items():  # every date his newest letter naming one gives
            assert set(said) == {in_force}, (order, address, subject, said)
    assert "The hash chain is whole" in told and "Your head is version " in told
    assert "\nNOW ON FILE FOR YOU\n  You play " in told
    # the moderator reads who is asked in a line each, not their prompts' rules
    assert all("\nWHO IS ASKED NOW\n  Asked now: " in answer for answer in replies["moderator"])
    assert "NOT FOUND" in forged
    for p in PLAYERS:  # everyone is told the game was rolled back, with the reason
        rolled = [body(m) for m in letters(settings.maildir, p.email) if "rolled back" in topic(m)]
        assert len(rolled) == 1 and f"{mover} says he meant to hold" in rolled[0], p.name

    # the auditor, with the head the player kept
    result = CliRunner().invoke(cli, ["verify", "g1", "--head", head], env={"PBEM_DATABASE_URL": settings.db_url})
    assert result.exit_code == 0, result.output
    assert "head ok: the hash you kept is version" in result.output
