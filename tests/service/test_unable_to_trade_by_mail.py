"""Issue 29: a player whose hand is too small to trade is not asked in phase 7, through the service as mail is.

Bots play a game through `submit` (the use case every mail's orders go
through) until a turn in which one nation holds cards, but fewer than a
trade needs, while the others trade. The log then shows him finished at once
with the clause, the others trade without him, and `pbem verify` re-derives
it all.
"""

from __future__ import annotations

import os
import subprocess
import sys

from pbem.service.simulate import simulate
from pbem.store.database import make_engine
from pbem.store.unit_of_work import UnitOfWork


def test_a_hand_too_small_is_finished_at_once_and_left_out_of_every_offer(tmp_path):
    url = f"sqlite:///{tmp_path / 'trade.sqlite'}"
    summary = simulate(3, 5, "t1", db_url=url, strategy="planner", miss=0.0)
    assert summary.problems == [] and summary.turns_played == 5
    db = make_engine(url)
    try:
        with UnitOfWork(db) as uow:
            events = list(uow.events.read(summary.game))
    finally:
        db.dispose()
    assert events[0].payload["revision"] >= 1  # issue 29 rules from revision 1 on
    unable = [i for i, e in enumerate(events) if e.type == "UnableToTrade" and 0 < min(e.payload["cards"])
              and len(e.payload["nations"]) < 3]
    assert unable, "no turn in which one nation held too few cards while the others traded"
    start = unable[0]
    event = events[start]
    assert event.payload["cites"] == ["seed 003: 7", "§28.3", "D-8"] and event.payload["least"] == 3
    end = next(i for i in range(start, len(events)) if events[i].type == "PhaseEnded")
    phase = events[start + 1 : end]
    left_out = set(event.payload["nations"])
    assert not [e for e in phase if e.type == "TradingFinished" and e.payload["nation"] in left_out]
    assert not [e for e in phase if e.type == "OfferMade" and left_out & set(e.payload["to"])]
    assert [e for e in phase if e.type in ("OfferMade", "TradingFinished")], "the others were asked and traded"

    env = {**os.environ, "PBEM_DATABASE_URL": url}
    verified = subprocess.run([sys.executable, "-m", "pbem.cli", "verify", summary.game],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"{len(events)} events match the engine" in verified.stdout
