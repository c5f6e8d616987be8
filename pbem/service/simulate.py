"""`pbem simulate`: a whole game played by bots through the same service layer as email.

Each bot answers its prompts with a random legal choice from its own seeded
generator, sometimes misses a deadline (so defaults are exercised), and the
clock is simulated, so the same seeds give exactly the same game. The
invariants are checked after every batch.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pbem.rules import engine as rules
from pbem.rules.board.stacks import cards_not_conserved
from pbem.rules.invariants import broken_invariants
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork

from .bots import WAIT, bot_orders
from .deadlines import pass_deadlines
from .games import NewPlayer, create_game, submit
from .projector import load_state
from .settings import Settings

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dataclass
class Summary:
    game: str
    turns_played: int = 0
    winner: str | None = None
    winner_score: int | None = None
    finishers: list[str] = field(default_factory=list)  # nations on the A.S.T. finish square: the natural end (§34)
    events_appended: int = 0
    invariant_checks: int = 0
    orders_sent: int = 0
    deadlines_missed: int = 0
    deadlines_waited: int = 0  # every bot asked was waiting for an answer: the deadline ended the step
    stopped_at: str = ""
    problems: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "game": self.game,
            "turns_played": self.turns_played,
            "winner": self.winner,
            "winner_score": self.winner_score,
            "finishers": self.finishers,
            "events_appended": self.events_appended,
            "invariant_checks": self.invariant_checks,
            "orders_sent": self.orders_sent,
            "deadlines_missed": self.deadlines_missed,
            "deadlines_waited": self.deadlines_waited,
            "stopped_at": self.stopped_at,
            "problems": self.problems,
        }


def simulate(
    players: int,
    turns: int,
    seed: str,
    *,
    options: dict[str, str] | None = None,
    miss: float = 0.1,
    db_url: str | None = None,
    max_steps: int = 5000,
    strategy: str = "random",
    progress: Callable[[int, int, str], None] | None = None,
) -> Summary:
    """Play up to ``turns`` turns with ``players`` bots; stop early if the game waits on nobody.

    ``progress(turns done, turns, phase)`` is told before each step (nothing the game depends on).
    """
    with tempfile.TemporaryDirectory() as tmp:
        url = db_url or f"sqlite:///{Path(tmp) / 'simulate.sqlite'}"
        db = make_engine(url)
        ensure_schema(db)
        settings = replace(Settings(), db_url=url, maildir=Path(tmp) / "mail", board_pictures=False)  # bots read no pictures
        try:
            return _play(db, settings, players, turns, seed, options or {}, miss, max_steps, strategy, progress)
        finally:
            db.dispose()


def _play(db, settings, players, turns, seed, options, miss, max_steps, strategy, progress=None) -> Summary:
    game_id = "sim-" + "".join(c for c in seed.lower() if c.isalnum())[:20] or "sim"
    rng = random.Random(f"bots:{seed}")
    clock = START
    people = [NewPlayer(f"Bot{i + 1}", f"bot{i + 1}@sim.invalid") for i in range(players)]
    create_game(db, settings, game_id, people, options=dict(options), seed=seed, now=clock)
    summary = Summary(game_id)

    def state():
        with UnitOfWork(db) as uow:
            return load_state(uow, game_id)

    def check(current) -> None:
        summary.invariant_checks += 1
        broken = broken_invariants(current) + cards_not_conserved(current)
        summary.problems.extend(f"version {current.version}: {p}" for p in broken)

    current = state()
    check(current)
    for _ in range(max_steps):
        if progress is not None:
            progress(max(0, min(current.turn - 1, turns)), turns, current.phase)
        if current.finished or current.turn > turns or summary.problems:
            break
        asked = rules.pending(current)
        if rules.paused(current):
            clock += timedelta(hours=1)
            pass_deadlines(db, settings, now=clock)
            current = state()
            check(current)
            continue
        if not asked:
            summary.stopped_at = current.phase
            break
        clock += timedelta(hours=1)
        if rng.random() < miss:
            pass_deadlines(db, settings, now=clock, force_game=game_id)
            summary.deadlines_missed += 1
        else:
            # Whoever is asked may answer first, as by mail; a bot waiting on an answer lets the others act.
            candidates = sorted(asked.items())
            rng.shuffle(candidates)
            for who, prompt in candidates:
                text = bot_orders(prompt, rng, current, strategy)
                if text != WAIT:
                    break
            if text == WAIT:
                clock += timedelta(days=3)  # past any deadline: the phase closes as its deadline would close it
                pass_deadlines(db, settings, now=clock, force_game=game_id)
                summary.deadlines_waited += 1
            else:
                receipt = submit(db, settings, game_id, current.player(prompt.player_id).name, text, now=clock)
                summary.orders_sent += 1
                if not receipt.ok:
                    summary.problems.append(
                        f"version {current.version}: a bot's legal choice {text!r} was refused: {receipt.errors}")
        current = state()
        check(current)
    finished_turn = current.turn if current.finished else current.turn - 1  # a finished game stops in its last turn
    summary.turns_played = max(0, min(finished_turn, turns))
    summary.events_appended = current.version
    if current.finished:
        with UnitOfWork(db) as uow:
            ended = [r for r in uow.events.read(game_id) if r.type == "GameEnded"]
        if ended:
            summary.winner = ended[-1].payload["winner"]
            summary.winner_score = ended[-1].payload["scores"][0]["total"]
            summary.finishers = list(ended[-1].payload["finishers"])
    if not summary.stopped_at and current.turn <= turns and not current.finished:
        summary.stopped_at = current.phase
    return summary
