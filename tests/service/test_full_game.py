"""Issue 5: a complete game by email, from setup to a winner, through the real mail loop.

`pbem demo` starts the real post office (SMTP on loopback, outbox into
Maildirs) and plays each player's mail client: every reply is a real MIME
message sent with smtplib, answering the newest prompt with orders a
`planner` bot wrote for it. The game is agreed to end after turn 10 (§34,
option last-turn). Afterwards `pbem verify` re-derives every outcome from
the recorded orders and the seed.
"""

from __future__ import annotations

import email
import json
import mailbox
import subprocess
import sys
from collections import Counter
from email.policy import default as default_policy

from pbem.rules.turn import PHASE_IDS
from pbem.store.database import make_engine
from pbem.store.unit_of_work import UnitOfWork

from .mailclient import topic


def test_a_whole_game_by_mail_from_setup_to_a_winner_and_verify_re_derives_it(tmp_path):
    out = tmp_path / "game"
    played = subprocess.run(
        [sys.executable, "-m", "pbem.cli", "demo", "--out", str(out), "--players", "3", "--turns", "10",
         "--bots", "planner", "--option", "last-turn=10", "--seed", "i"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
    url = f"sqlite:///{out / 'pbem.sqlite'}"

    with UnitOfWork(make_engine(url)) as uow:
        events = list(uow.events.read("demo"))
    kinds = Counter(e.type for e in events)
    began = {e.payload["phase"] for e in events if e.type == "PhaseBegan"}
    assert set(PHASE_IDS) <= began, f"phases never played: {set(PHASE_IDS) - began}"
    for kind in ("StartTokenPlaced", "TaxCollected", "PopulationExpanded", "TokensMoved", "TokenConflictResolved",
                 "CitiesBuilt", "TradeCardsDrawn", "TradeExecuted", "CalamityResolved", "AdvancesBought",
                 "AstAdvanced", "GameEnded"):
        assert kinds[kind], f"no {kind} in the whole game"
    (ended,) = [e for e in events if e.type == "GameEnded"]
    winner = ended.payload["winner"]
    assert ended.payload["last_turn"] == 10 and ended.payload["scores"][0]["nation"] == winner
    assert f"the game has ended: {winner} wins" in played.stdout

    # Every player learns the result by mail: the last report names the winner.
    for name in ("alice", "bruno", "chen"):
        box = mailbox.Maildir(out / "mail" / f"{name}@players.example", factory=None, create=False)
        reports = [email.message_from_bytes(box.get_bytes(k), policy=default_policy) for k in box.keys()]
        final = [m for m in reports if topic(m) == f"[demo] Game over: {winner} wins"]
        assert len(final) == 1, name
        text = final[0].get_body(preferencelist=("plain",)).get_content()
        assert "The game ends: turn 10 was the last turn" in text and f"{winner} wins" in text, name

    state = subprocess.run([sys.executable, "-m", "pbem.cli", "--db", url, "state", "demo", "--json"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert state.returncode == 0
    final = json.loads(state.stdout)
    assert final["pending"] == {} and final["finished"] is True
    assert final["scores"][0]["nation"] == winner and final["scores"][0]["place"] == 1
    verified = subprocess.run([sys.executable, "-m", "pbem.cli", "--db", url, "verify", "demo"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "hash chain ok" in verified.stdout and "re-derivation ok" in verified.stdout
