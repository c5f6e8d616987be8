"""Press through the running server: delivered at once to its readers only, kept in the log per viewer."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from pbem.service.demo import reply_to_prompt, suggested_orders
from pbem.service.games import create_game
from pbem.service.server import utc_now

from .mailclient import last_ack, latest, letters, send, text_of, topic
from .test_mail_loop import PLAYERS, current, email_of, run, started, state_of


async def _setup_by_mail(office, db, settings) -> None:
    for _ in range(3):
        name = current(db)
        prompt = latest(settings.maildir, email_of(name), "your orders")
        reply = reply_to_prompt(prompt, email_of(name), suggested_orders(text_of(prompt)))
        send(office.port, reply, email_of(name), [str(prompt["Reply-To"])])
        await office.idle()


def _press_letters(settings, address: str) -> list[str]:
    return [text_of(m) for m in letters(settings.maildir, address) if "ress" in topic(m).split("]", 1)[1][:16]]


@pytest.mark.parametrize("kind", ["on", "grey", "off"])
def test_press_reaches_its_readers_only(world, kind):
    db, settings = world

    async def scenario():
        office = await started(db, settings)
        try:
            await asyncio.to_thread(create_game, db, settings, "g1", PLAYERS, seed="s1", options={"press": kind}, now=utc_now())
            await office.idle()
            await _setup_by_mail(office, db, settings)
            state = state_of(db)
            ann, ben, cy = (next(p for p in state.players if p.name == n) for n in ("Ann", "Ben", "Cy"))
            start = latest(settings.maildir, email_of("Ann"), "new game")
            body = f"PRESS TO {ben.nation}\nShall we leave each other alone this turn?\nEND\nPRESS TO ALL: good luck, all\nThanks"
            send(office.port, reply_to_prompt(start, email_of("Ann"), body), email_of("Ann"), [str(start["Reply-To"])])
            await office.idle()
            return ann, ben, cy
        finally:
            await office.stop()

    ann, ben, cy = run(scenario())
    to_ben, to_cy = _press_letters(settings, email_of("Ben")), _press_letters(settings, email_of("Cy"))
    ack = text_of(last_ack(settings.maildir, email_of("Ann")))
    if kind == "off":
        assert to_ben == [] and to_cy == []
        assert ack.count("press is off in this game") == 2
        return
    signed = "Anonymous" if kind == "grey" else ann.nation
    assert len(to_ben) == 2 and len(to_cy) == 1  # Cy reads only the press to ALL
    assert f"Press from {signed} to {ben.nation}: Shall we leave each other alone this turn?" in to_ben[0]
    assert f"Press from {signed} to ALL: good luck, all" in to_cy[0]
    assert "NOT ACCEPTED" not in ack and f"PRESS TO {ben.nation}" in ack

    def log(viewer: str) -> str:
        cli = [sys.executable, "-m", "pbem.cli", "--db", settings.db_url, "log", "g1", "--as", viewer]
        return subprocess.run(cli, capture_output=True, text=True, check=True).stdout

    assert "leave each other alone" in log(f"player:{ben.nation.lower()}")
    assert "leave each other alone" not in log(f"player:{cy.nation.lower()}")
    moderator = log("moderator")
    assert f"Press from {ann.nation} to {ben.nation}: Shall we" in moderator  # the moderator sees who, even grey
