"""Issue 11: the variants played by real mail to the running server (`pbem demo`: SMTP on loopback).

Every reply is a real MIME message a bot writes to its newest prompt. The
No-Trading game runs on a house map (option ``ruleset-data``) whose money
cards cost 2 and whose hand limit is 3, so that in a few turns the bots draw
money cards, buy them, pay for civilization cards with them and discard over
the limit; everything else is the packaged 1991 board.
"""

from __future__ import annotations

import email
import json
import mailbox
import re
import shutil
import subprocess
import sys
from collections import Counter
from email.policy import default as default_policy
from pathlib import Path

from pbem.rules.ruleset.loader import PACKAGED_DATA
from pbem.rules.ruleset.model import money_type
from pbem.store.database import make_engine
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import topic


def _letters(box: Path) -> list[tuple[str, str]]:
    """(subject, plain text) of every mail in a Maildir."""
    maildir = mailbox.Maildir(box, factory=None, create=False)
    out = []
    for key in maildir.keys():
        mail = email.message_from_bytes(maildir.get_bytes(key), policy=default_policy)
        out.append((" ".join(topic(mail).split()), mail.get_body(preferencelist=("plain",)).get_content()))
    return out


def test_a_no_trading_game_by_mail_draws_buys_pays_and_limits_money_cards(tmp_path):
    house = tmp_path / "house"
    shutil.copytree(PACKAGED_DATA, house)
    numbers = json.loads((house / "no_trading.json").read_text())
    numbers.update(price=2, hand_limit=3)
    (house / "no_trading.json").write_text(json.dumps(numbers, indent=1))
    out = tmp_path / "game"
    played = subprocess.run(
        [sys.executable, "-m", "pbem.cli", "demo", "--out", str(out), "--players", "3", "--turns", "10",
         "--bots", "planner", "--option", "variant-no-trading=on", "--option", "last-turn=10",
         "--option", f"ruleset-data={house}", "--seed", "nt"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
    url = f"sqlite:///{out / 'pbem.sqlite'}"
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        events = list(uow.events.read("demo"))
    db.dispose()
    kinds = Counter(e.type for e in events)

    assert kinds["MoneyPilesSetUp"] == 1 and kinds["TradeExecuted"] == 0 and kinds["CalamitiesRevealed"] == 0
    drawn = [c for e in events if e.type == "TradeCardsDrawn" for c in e.payload["cards"]]
    piles = {pile["type"] for pile in numbers["piles"]}  # Ore, Water, ..., Microbiotics once a nation holds 5 cities
    assert drawn and all(money_type(c) in piles for c in drawn)
    assert any(e.payload["count"] for e in events if e.type == "TradeCardsBought")
    paid = [e.payload for e in events if e.type == "AdvancesBought" and e.payload["cards"]]
    assert paid and all(money_type(card) for p in paid for card in p["pay"])
    assert kinds["CardsDiscarded"]
    assert all(kept <= 3 for e in events if e.type == "HandsLimited" for kept in e.payload["kept"].values())
    assert kinds["CalamityCountRolled"] == 10

    letters = _letters(out / "mail" / "alice@players.example")
    (start,) = [text for subject, text in letters if "A new game" in subject or "is starting" in text]
    assert "It plays the No-Trading variant" in start and "VARIANTS" in start and "VOLUNTEER" in start
    assert all(len(line) <= 100 for line in start.splitlines())
    # a report's heading, whether it travels alone or with an acknowledgement or a prompt
    reports = [line for _subject, text in letters for line in text.splitlines() if ": what happened from " in line]
    assert reports and all("(No-Trading variant)" in line for line in reports)
    assert any("6. Money cards acquisition" in text for text in reports)
    everyone = [t for name in ("alice", "bruno", "chen") for _, t in _letters(out / "mail" / f"{name}@players.example")]
    assert any("money cards of your highest type" in text for text in everyone)
    assert any("money cards you pay with" in text for text in everyone)

    verified = subprocess.run([sys.executable, "-m", "pbem.cli", "--db", url, "verify", "demo"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "re-derivation ok" in verified.stdout


def test_a_small_cities_game_by_mail_makes_towns_and_says_so(tmp_path):
    out = tmp_path / "game"
    played = subprocess.run(
        [sys.executable, "-m", "pbem.cli", "demo", "--out", str(out), "--players", "3", "--turns", "10",
         "--bots", "planner", "--option", "variant-small-cities=on", "--option", "last-turn=10", "--seed", "sc"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
    url = f"sqlite:///{out / 'pbem.sqlite'}"
    db = make_engine(url)
    with UnitOfWork(db) as uow:
        events = list(uow.events.read("demo"))
    db.dispose()
    made = [m for e in events if e.type == "TownsBuilt" for m in e.payload["made"]]
    assert made, "no town was made"
    assert any(e.type == "TaxCollected" and "SC-12" in e.payload["cites"] for e in events)

    letters = _letters(out / "mail" / "alice@players.example")
    (start,) = [text for subject, text in letters if "A new game" in subject or "is starting" in text]
    assert "It plays the Small Cities variant" in start and "(TOWN Memphis 2, then DONE)" in " ".join(start.split())
    assert all(len(line) <= 100 for line in start.splitlines())
    # a report's heading, whether it travels alone or with an acknowledgement or a prompt
    reports = [line for _subject, text in letters for line in text.splitlines() if ": what happened from " in line]
    assert reports and all("(Small Cities variant)" in line for line in reports)
    assert not any(re.search(r"Turn \d+, turn", line) for line in reports)  # the span names its turns once
    assert any(re.search(r": what happened from turn 1, 5\. City construction until turn 2, ", line) for line in reports)
    everyone = [t for name in ("alice", "bruno", "chen") for _, t in _letters(out / "mail" / f"{name}@players.example")]
    assert any("City construction (Small Cities)" in text and "TOWN" in text for text in everyone)
    assert any(" made " in text and "town" in text for text in everyone)
    reported = [text for _subject, text in letters if ": what happened from " in text]
    assert any(re.search(r"\(\d+, \d+ towns?\)", text) for text in reported)  # the position lists towns by area

    shown = subprocess.run([sys.executable, "-m", "pbem.cli", "--db", url, "state", "demo"],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert shown.returncode == 0 and " towns " in shown.stdout, shown.stdout + shown.stderr
    as_json = json.loads(subprocess.run([sys.executable, "-m", "pbem.cli", "--db", url, "state", "demo", "--json"],
                                        capture_output=True, text=True, timeout=300, cwd=tmp_path).stdout)
    assert all("towns" in area for area in as_json["areas"].values())
    assert sum(n["towns_on_board"] for n in as_json["nations"].values()) == sum(
        sum(area["towns"].values()) for area in as_json["areas"].values())

    verified = subprocess.run([sys.executable, "-m", "pbem.cli", "--db", url, "verify", "demo"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "re-derivation ok" in verified.stdout
