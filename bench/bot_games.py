"""How often planner bots bring a game to its natural end: the table of docs/bots.md.

Run: .venv/bin/python bench/bot_games.py [--games 10] [--players 3-8] [--option KEY=VALUE ...] [--jobs 2] [--path engine]

With ``--path service`` (the default) each game is `pbem simulate`: the same
service layer as email, storage and letters included, every invariant
checked after every step. With ``--path engine`` the same bots answer the
same prompts with the same order texts, parsed by the same order language
and decided by the same pure engine, with no storage or letters in between:
about three times faster, the figures for many games. (The two paths draw
differently, since the service records more events, so a seed gives a
different game on each.) Planner bots, no missed deadlines, at most
``--turns`` turns (40), no turn limit in the game itself. A game ends
naturally when a nation reaches the finish square of the A.S.T. (§34).
Seeds are ``bots-<players>p-<k>``, ``k`` from ``--first`` (0); a game of the service path replays with
`pbem --db sqlite:///g.sqlite simulate --players P --seed S --turns 40 --miss 0 --strategy planner`.
Prints one markdown row per player count: games, natural ends, the median
turn of the end and the median winner's score (both over natural ends).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as rules
from pbem.rules.board.stacks import cards_not_conserved
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws, commitment
from pbem.rules.core.rejection import Rejection
from pbem.rules.invariants import broken_invariants
from pbem.service.bots import WAIT, bot_orders
from pbem.service.simulate import simulate


def _one(spec: tuple[int, str, int, dict[str, str], str]) -> dict:
    players, seed, turns, options, path = spec
    if path == "engine":
        return {"players": players, "seed": seed, **_on_the_engine(players, turns, seed, options)}
    summary = simulate(players, turns, seed, options=options, miss=0.0, strategy="planner", max_steps=40_000)
    return {"players": players, "seed": seed, **summary.as_json()}


def _on_the_engine(players: int, turns: int, seed: str, options: dict[str, str]) -> dict:
    """One game with the pure engine: the bots' order texts parsed and decided as the service would."""
    draws = Draws(seed)
    people = [(i + 1, f"Bot{i + 1}", None) for i in range(players)]
    state = rules.fold(rules.new_game("bench"), rules.create("bench", people, options, commitment(seed), draws))
    rng = random.Random(f"bots:{seed}")
    problems: list[str] = []
    ended: dict | None = None
    for _ in range(200_000):
        if state.finished or state.turn > turns or problems:
            break
        asked = rules.pending(state)
        text, prompt = WAIT, None
        candidates = sorted(asked.items())
        rng.shuffle(candidates)
        for _, prompt in candidates:
            text = bot_orders(prompt, rng, state, "planner")
            if text != WAIT:
                break
        if text == WAIT or prompt is None:
            if not asked and not rules.paused(state):
                problems.append(f"turn {state.turn}: nobody is asked in {state.phase}")
                break
            events = rules.decide(state, PassDeadline(), draws)
            ended = next((e.data for e in events if e.type == "GameEnded"), ended)
            state = rules.fold(state, events)
        else:
            for line in parse_orders(text, state, Actor(player_id=prompt.player_id)).lines:
                if line.error:
                    problems.append(f"turn {state.turn}: {line.text!r} refused: {line.error}")
                elif line.command is not None:
                    try:
                        events = rules.decide(state, line.command, draws)
                    except Rejection as refused:  # the server would refuse it: a bot that misread its seat
                        problems.append(f"turn {state.turn}: {line.text!r} refused: {refused}")
                        break
                    ended = next((e.data for e in events if e.type == "GameEnded"), ended)
                    state = rules.fold(state, events)
        problems += [f"turn {state.turn}: {p}" for p in broken_invariants(state) + cards_not_conserved(state)]
    finished_turn = state.turn if state.finished else state.turn - 1
    return {
        "turns_played": min(finished_turn, turns),
        "winner": ended["winner"] if ended else None,
        "winner_score": ended["scores"][0]["total"] if ended else None,
        "finishers": list(ended["finishers"]) if ended else [],
        "problems": problems,
    }


def _counts(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10, help="games per player count")
    parser.add_argument("--players", default="3-8", help="player counts, e.g. 3-8 or 5")
    parser.add_argument("--first", type=int, default=0, help="first seed number k (a second seed set: --first 30)")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--option", action="append", default=[], help="KEY=VALUE game option")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--path", choices=("service", "engine"), default="service")
    args = parser.parse_args()
    options = dict(o.split("=", 1) for o in args.option)
    tag = "".join(f"-{v[:2]}" for v in options.values())
    specs = [(p, f"bots-{p}p{tag}-{k}", args.turns, options, args.path) for p in _counts(args.players) for k in range(args.first, args.first + args.games)]
    started = time.monotonic()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(_one, specs))
    print(f"options: {options or 'none'}; path: {args.path}; {len(results)} games in {time.monotonic() - started:.0f} s", file=sys.stderr)
    print("| players | games | ended naturally | median end turn | median winner's score | problems |")
    print("|---|---|---|---|---|---|")
    failed = 0
    for players in _counts(args.players):
        rows = [r for r in results if r["players"] == players]
        natural = [r for r in rows if r["finishers"]]
        problems = sum(1 for r in rows if r["problems"])
        failed += problems
        end = statistics.median(r["turns_played"] for r in natural) if natural else "-"
        score = statistics.median(r["winner_score"] for r in natural) if natural else "-"
        print(f"| {players} | {len(rows)} | {len(natural)} ({100 * len(natural) // len(rows)} %) | {end} | {score} | {problems} |")
    for r in results:
        for problem in r["problems"][:3]:
            print(f"PROBLEM {r['seed']}: {problem}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
