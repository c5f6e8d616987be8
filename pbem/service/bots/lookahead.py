"""What every bot needs to think: whose prompt this is, and what an order would do.

A bot tries an order on a copy of the game with the pure engine before it
sends it, so it never sends one the server would refuse. The draws it uses
for that are its own (``Draws("bot lookahead")``): the real seed is secret,
so whatever the engine would draw at random is only a guess to a bot, as it
is to a person.
"""

from __future__ import annotations

import random

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as rules
from pbem.rules.core.draws import Draws
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState

GUESSES = Draws("bot lookahead")


def nation_of(state: GameState, prompt: Prompt) -> str | None:
    """The nation the prompt's player plays (None before nations are chosen)."""
    return next((name for name, n in state.nations.items() if n.player_id == prompt.player_id), None)


def try_orders(state: GameState, player_id: int, text: str) -> GameState | None:
    """The game after the order text, or None when the server would refuse any line of it."""
    try:
        after = state
        for order in parse_orders(text, state, Actor(player_id=player_id)).lines:
            if order.command is None:
                if order.error:
                    return None
                continue
            after = rules.decide_and_fold(after, order.command, GUESSES)[1]
        return after
    except Rejection:
        return None


def standing(state: GameState, nation: str) -> float:
    """A rough worth of one nation's position: what wins the game, and what grows it."""
    n = state.nations[nation]
    return (
        60 * state.cities_on_board(nation)
        + 100 * n.ast_position
        + sum(1 for _ in n.civ_cards) * 40
        + 2 * state.tokens_on_board(nation)
        + 3 * state.towns_on_board(nation)  # Small Cities: a town pays tax and draws cards, but never grows
        + n.treasury
        + 3 * len(n.hand)
    )


def best_choice(prompt: Prompt, rng: random.Random, state: GameState) -> str:
    """The prompt's choice that leaves the nation standing best when the engine next waits (ties at random)."""
    nation = nation_of(state, prompt)
    if nation is None:
        return rng.choice(prompt.choices)
    scored = []
    for choice in prompt.choices:
        after = try_orders(state, prompt.player_id, choice)
        if after is not None:
            scored.append((standing(after, nation) + rng.random(), choice))
    return max(scored)[1] if scored else rng.choice(prompt.choices)
