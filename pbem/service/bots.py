"""Bot players: legal orders, sent through the same order language as people.

A bot reads a prompt's choices (complete order texts) and picks one with its
own seeded random generator, so a bot game is reproducible from its seed.
A `random` bot picks uniformly. A `greedy` bot looks one decision ahead: it
tries each choice on a copy of the game with the pure engine, scores its own
position when the engine next waits, and takes the best (ties at random).
"""

from __future__ import annotations

import random

from pbem.orders import Actor, parse_orders
from pbem.rules import engine as rules
from pbem.rules.draws import Draws
from pbem.rules.prompt import Prompt
from pbem.rules.rejection import Rejection
from pbem.rules.state import GameState

STRATEGIES = ("random", "greedy")


def bot_orders(prompt: Prompt, rng: random.Random, state: GameState | None = None, strategy: str = "random") -> str:
    """One order text for ``prompt``."""
    if not prompt.choices:
        return prompt.template
    if strategy == "greedy" and state is not None and len(prompt.choices) > 1:
        return _best(prompt, rng, state)
    return rng.choice(prompt.choices)


def standing(state: GameState, nation: str) -> float:
    """A rough worth of one nation's position: what wins the game, and what grows it."""
    n = state.nations[nation]
    return (
        60 * state.cities_on_board(nation)
        + 100 * n.ast_position
        + sum(1 for _ in n.civ_cards) * 40
        + 2 * state.tokens_on_board(nation)
        + n.treasury
        + 3 * len(n.hand)
    )


def _best(prompt: Prompt, rng: random.Random, state: GameState) -> str:
    nation = next((name for name, n in state.nations.items() if n.player_id == prompt.player_id), None)
    if nation is None:
        return rng.choice(prompt.choices)
    draws = Draws("bot lookahead")  # the bot cannot know the real seed; its guesses use its own
    scored = []
    for choice in prompt.choices:
        after = state
        try:
            for line in parse_orders(choice, after, Actor(player_id=prompt.player_id)).lines:
                if line.command is None:
                    continue
                after = rules.fold(after, rules.decide(after, line.command, draws))
        except Rejection:
            continue
        scored.append((standing(after, nation) + rng.random(), choice))
    return max(scored)[1] if scored else rng.choice(prompt.choices)
