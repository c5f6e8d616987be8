"""Bot players: legal orders, sent through the same order language as people.

A bot reads a prompt (and the game as its player may know it) and answers
with an order text, using its own seeded random generator, so a bot game is
reproducible from its seed. Three strategies:

* ``random`` picks one of the prompt's choices uniformly;
* ``greedy`` tries each choice on a copy of the game with the pure engine,
  scores its own position when the engine next waits, and takes the best
  (``lookahead``);
* ``planner`` plays to win: it writes its own movement (``movement``), and
  under No-Trading says whether it rolls for calamities (``calamities``), buys
  several civilization cards a turn by its own plan and keeps the trade
  cards its sets need (``advances``), and trades for sets (``trading``);
  elsewhere it looks ahead like a greedy bot.

In trade every bot but a random one behaves as a patient person would:
accept an offer worth taking, otherwise make an offer and wait for an answer
(``bot_orders`` returns ``WAIT``; the driver lets someone else act, or the
deadline close the phase), and finish once the turn has seen enough offers.

Every bot reads the game as its seat may know it (``sight``): other hands,
the stacks' order and what passes between others are a guess to it, as to
a person.
"""

from __future__ import annotations

import random

from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.phases.movement.turns import MOVE_STEP, SHIP_STEP
from pbem.rules.ruleset.rulebook import parts_of

from .advances import hand_limit_order, plan_purchase
from .calamities import volunteering
from .economy import stack_nine_order, tax_rate_order
from .homeland import choose_nation, place_start
from .lookahead import best_choice, nation_of, try_orders
from .movement import build_order, plan_moves
from .seafaring import ship_order
from .sight import in_sight
from .towns import small_cities_order
from .trading import WAIT, trade

STRATEGIES = ("random", "greedy", "planner")

__all__ = ["STRATEGIES", "WAIT", "bot_orders", "plan_moves", "try_orders"]


def bot_orders(prompt: Prompt, rng: random.Random, state: GameState | None = None, strategy: str = "random") -> str:
    """One order text for ``prompt``, or WAIT, from what the prompt's seat may know (`in_sight`)."""
    if state is not None:
        state = in_sight(state, nation_of(state, prompt))
    if strategy == "planner" and state is not None:
        planned = _planned(prompt, rng, state)
        if planned is not None:
            return planned
    if not prompt.choices:
        return prompt.template
    if strategy in ("greedy", "planner") and state is not None and prompt.step.startswith("trade"):
        return trade(prompt, rng, state, strategy)
    if strategy in ("greedy", "planner") and state is not None and len(prompt.choices) > 1:
        return best_choice(prompt, rng, state)
    return rng.choice(prompt.choices)


def _planned(prompt: Prompt, rng: random.Random, state: GameState) -> str | None:
    """The planner's own order where its plan beats the prompt's choices (None: choose among them)."""
    if prompt.step == "choose-nation":
        return choose_nation(prompt, state)
    if prompt.step == "place-start-token":
        return place_start(prompt, state)
    nation = nation_of(state, prompt)
    if nation is None:
        return None
    if prompt.step == SHIP_STEP:
        return _checked(state, prompt, ship_order(state, nation))
    if prompt.step == MOVE_STEP:  # every nation with tokens is asked: the time to set its standing order
        return "\n".join([*volunteering(state, nation), plan_moves(prompt, state)])
    if prompt.step == "build-cities" and parts_of(state).pieces.towns:
        return _checked(state, prompt, small_cities_order(prompt, state))
    if prompt.step == "build-cities":
        return _checked(state, prompt, build_order(prompt, state))
    if prompt.step == "buy-advances":
        return _checked(state, prompt, plan_purchase(state, nation))
    if prompt.step == "tax-rate":
        return _checked(state, prompt, tax_rate_order(state, nation))
    if prompt.step == "buy-trade-cards":
        return _checked(state, prompt, stack_nine_order(state, nation))
    if prompt.step == "hand-limit":
        return _checked(state, prompt, hand_limit_order(state, nation))
    return None


def _checked(state: GameState, prompt: Prompt, text: str) -> str | None:
    """The planned order if the server would take it, else None (the bot falls back on the choices)."""
    return text if try_orders(state, prompt.player_id, text) is not None else None
