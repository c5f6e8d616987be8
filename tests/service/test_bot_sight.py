"""A bot sees only what its seat may know (issue 33): what is hidden from the seat cannot change its answer.

Bots play a three-player game on the pure engine. At every decision of the
first turns, the seat's game (`in_sight`) must be one and the same whatever
lies where the seat cannot see, and each asked bot answers twice: from the game as it is, and from
a game that differs only in what that seat cannot see (cards of the same
pile moved between the other hands and the stacks, every stack reversed,
the offers between the two others dropped). The answers must be the same
text: a bot that read another hand, a stack's order or another's offer
would answer differently somewhere in the game.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from pbem.orders.language import Actor, parse_orders
from pbem.rules import engine as rules
from pbem.rules.core.commands import PassDeadline
from pbem.rules.core.draws import Draws, commitment
from pbem.rules.core.frozen import FrozenMap, replace
from pbem.rules.core.state import GameState
from pbem.rules.phases.trade.offers import open_offers
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.service.bots import WAIT, bot_orders
from pbem.service.bots.lookahead import nation_of
from pbem.service.bots.sight import in_sight


def _pile(state: GameState, card: str) -> int:
    rules_ = ruleset_of(state)
    for find in (rules_.stack_of, rules_.money_pile_of):
        try:
            return find(card).number
        except KeyError:
            continue
    return -1


def _scrambled(state: GameState, nation: str, rng: random.Random) -> GameState:
    """The game with what ``nation`` cannot see moved about: same piles, same hand sizes, other places."""
    shown: dict[str, Counter] = {n: Counter(s.set_aside) for n, s in state.nations.items()}
    for offer in open_offers(state):
        if nation in offer.to:
            shown[offer.offerer].update(offer.give_named)
    hands = {n: list(s.hand) for n, s in state.nations.items() if n != nation}
    stacks = {k: list(v) for k, v in state.stacks.items()}
    if len(hands) < 2:
        return state
    for _ in range(40):
        name = rng.choice(sorted(hands))
        hand = hands[name]
        free = [i for i, c in enumerate(hand) if Counter(hand)[c] > shown[name][c]]
        if not free:
            continue
        i = rng.choice(free)
        pile = _pile(state, hand[i])
        if pile in stacks and stacks[pile] and rng.random() < 0.5:
            j = rng.randrange(len(stacks[pile]))
            hand[i], stacks[pile][j] = stacks[pile][j], hand[i]
            continue
        other = rng.choice([n for n in sorted(hands) if n != name])
        theirs = hands[other]
        same = [j for j, c in enumerate(theirs) if _pile(state, c) == pile and Counter(theirs)[c] > shown[other][c]]
        if same:
            j = rng.choice(same)
            hand[i], theirs[j] = theirs[j], hand[i]
    nations = state.nations
    for name, hand in hands.items():
        volunteers = rng.random() < 0.5  # whether another nation volunteers for calamities is his own (NT-8)
        nations = nations.set(name, replace(nations[name], hand=tuple(hand), volunteers=volunteers))
    givers = tuple(g for g in state.calamity_givers if nation in (g[0], g[2]))
    offers = tuple(r for r in state.filed.get("offers", ()) if r[1] == nation or nation in r[2])
    filed = state.filed.set("offers", offers) if "offers" in state.filed else state.filed
    return replace(state, nations=nations, filed=filed, calamity_givers=givers,
                   stacks=FrozenMap({k: tuple(reversed(v)) for k, v in stacks.items()}),
                   calamity_pile=tuple(reversed(state.calamity_pile)))


@pytest.mark.parametrize("options", [{}, {"variant-no-trading": "on"}], ids=["base", "no-trading"])
def test_what_a_seat_cannot_see_does_not_change_its_bots_answer(options):
    seed = "sight-3p"
    draws = Draws(seed)
    people = [(i + 1, f"Bot{i + 1}", None) for i in range(3)]
    state = rules.fold(rules.new_game("sight"), rules.create("sight", people, options, commitment(seed), draws))
    play, probe = random.Random("play"), random.Random("probe")
    compared = hidden_differed = 0
    while not state.finished and state.turn <= 6:
        text, prompt = WAIT, None
        for _, prompt in sorted(rules.pending(state).items()):
            nation = nation_of(state, prompt)
            if nation is not None:
                other = _scrambled(state, nation, probe)
                hidden_differed += other.nations != state.nations or other.stacks != state.stacks
                assert in_sight(other, nation) == in_sight(state, nation)  # the seat's game: one, whatever is hidden
                for strategy in ("planner", "greedy"):
                    salt = probe.random()
                    truth = bot_orders(prompt, random.Random(salt), state, strategy)
                    guess = bot_orders(prompt, random.Random(salt), other, strategy)
                    assert truth == guess, f"turn {state.turn} {prompt.step} {nation} ({strategy})"
                    compared += 1
            text = bot_orders(prompt, play, state, "planner")
            if text != WAIT:
                break
        if text == WAIT or prompt is None:
            state = rules.fold(state, rules.decide(state, PassDeadline(), draws))
            continue
        for line in parse_orders(text, state, Actor(player_id=prompt.player_id)).lines:
            if line.command is not None and not line.error:
                state = rules.fold(state, rules.decide(state, line.command, draws))
    assert compared > 60 and hidden_differed > 20, (compared, hidden_differed)  # the game reached trade and cards; the probe moved them


def test_the_seat_keeps_its_own_hand_and_offers_shown_to_it_and_nothing_else_of_others():
    seed = "sight-hands"
    draws = Draws(seed)
    people = [(i + 1, f"Bot{i + 1}", None) for i in range(3)]
    state = rules.fold(rules.new_game("sight"), rules.create("sight", people, {}, commitment(seed), draws))
    rng = random.Random("walk")
    guessed_wrong = 0
    while state.turn <= 5 and not state.finished:
        for nation in state.nations:
            seen = in_sight(state, nation)
            assert seen.nations[nation] == state.nations[nation]
            for name, n in state.nations.items():
                assert len(seen.nations[name].hand) == len(n.hand)
                guessed_wrong += Counter(seen.nations[name].hand) != Counter(n.hand)
            assert {k: len(v) for k, v in seen.stacks.items()} == {k: len(v) for k, v in state.stacks.items()}
            assert all(nation == r[1] or nation in r[2] for r in seen.filed.get("offers", ()))
        asked = sorted(rules.pending(state).items())
        done = False
        for _, prompt in asked:
            text = bot_orders(prompt, rng, state, "planner")
            if text == WAIT:
                continue
            for line in parse_orders(text, state, Actor(player_id=prompt.player_id)).lines:
                if line.command is not None and not line.error:
                    state = rules.fold(state, rules.decide(state, line.command, draws))
            done = True
            break
        if not done:
            state = rules.fold(state, rules.decide(state, PassDeadline(), draws))
    assert guessed_wrong > 0  # other hands really are a guess
