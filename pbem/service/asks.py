"""What a prompt asks, worded for the first line of a letter read on a phone, and its choices as order lines.

The engine's question (pbem.rules) is the whole rule of a step: what may be
done, what it costs, the order syntax. A player on a 390-pixel screen needs
first what is asked of him and by when, then his own numbers, then the orders
he may send; the rule text comes last, under "How to write orders". The
headline comes from a short table of the steps a turn asks every player; any
other step (a calamity's pick, a conflict) is told by the first sentence of
its own question, which names the calamity or the conflict.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of

from .positions import calamity_names, mark_hand_line

#: step (before any ':') → (what the step is called, what the player does), for the steps of every turn; a step
#: named None is called by its phase (trade cards are money cards under No-Trading).
STEP_ASKS: dict[str, tuple[str | None, str]] = {
    "choose-nation": ("Nations and start areas", "choose your nation, then place its first token"),
    "place-start-token": ("Nations and start areas", "place your first token in a start area"),
    "ship-construction": ("Ship construction", "keep, scrap or build ships, then HALT"),
    "movement": ("Movement", "move your tokens, then HALT"),
    "build-cities": ("City construction", "name the cities you build, or DONE"),
    "trade": ("Trade", "offer, accept or withdraw; FINISH when you are done"),
    "grow": ("Population expansion", "say where your new tokens go"),
    "buy-advances": ("Civilization advances", "name the cards you buy and what you pay with"),
    "hand-limit": ("Hand limit", "name the cards you give up"),
    "buy-trade-cards": (None, "say how many cards you buy"),
}

#: Orders that close a step: listed last, after the orders that do something.
CLOSING = ("HALT", "DONE", "FINISH")

#: A headline's own words at most (the first sentence of a long question is cut there).
HEADLINE_WORDS = 24


def _first_sentence(text: str) -> tuple[str, str]:
    """(the first sentence, the rest): a sentence ends at '. ' (not inside 'e.g. ')."""
    start = 0
    while True:
        end = text.find(". ", start)
        if end < 0:
            return text.rstrip("."), ""
        if not text[:end].endswith(("e.g", "i.e")):
            return text[:end], text[end + 2:]
        start = end + 2


def _step_label(phase: str) -> str:
    """'3. Movement' → 'Movement': the number of a phase means nothing on a phone's first line."""
    number, dot, name = phase.partition(". ")
    return name if dot and number.isdigit() else phase


def headline(prompt: Prompt, phase: str) -> tuple[str, str]:
    """(what is asked, in a line; the question's rule text that the line does not already say)."""
    known = STEP_ASKS.get(prompt.step.split(":", 1)[0])
    if known is not None:
        return f"{known[0] or _step_label(phase)}, your turn: {known[1]}", prompt.question
    first, rest = _first_sentence(prompt.question)
    words = first.split()
    if len(words) > HEADLINE_WORDS:  # too long for a first line: the whole question goes below
        return f"{_step_label(phase)}, your turn: {' '.join(words[:HEADLINE_WORDS])} …", prompt.question
    return f"{_step_label(phase)}, your turn: {first}", rest


def order_lines(choices: Sequence[str]) -> list[str]:
    """Each choice as complete order lines, one a line, each once; the orders closing a step last.

    The engine's choices are whole replies of several lines ('SHIP Susa\\nHALT'); a letter that joined them
    with ' / ' showed 'SHIP Susa / HALT', which is no order a player can send as it stands.
    """
    lines = list(dict.fromkeys(line.strip() for choice in choices for line in choice.split("\n") if line.strip()))
    return [line for line in lines if line not in CLOSING] + [line for line in lines if line in CLOSING]


#: Orders whose lines name nations, never places.
NATION_VERBS = ("NATION", "OFFER", "ACCEPT", "WITHDRAW")


def named_areas(state: GameState, texts: Sequence[str]) -> list[str]:
    """The areas of the board that the given lines name, in the board's order: what a prompt's picture highlights."""
    # a nation may share its name with an area (Crete, Thrace): NATION and trade lines name no place, so a
    # trade prompt carries no picture (it was 60 KB of board in each of them, issue 31)
    lines = [line for text in texts for line in text.split("\n") if line.split(" ", 1)[0] not in NATION_VERBS]
    joined = " " + " ".join(t.replace(",", " ").replace(":", " ") for t in lines) + " "
    board = ruleset_of(state).areas if state.players else {}  # state.areas holds only the areas with something in them
    return [name for name in board if f" {name} " in joined]


#: Order lines a prompt lists at most; the rest are counted (a trade round offers up to sixty).
MAX_CHOICES = 20


def prompt_context(state: GameState, prompt: Prompt, phase: str) -> dict:
    """What a prompt letter says, in the order a phone shows it: the ask, the player's numbers, the orders, the rules."""
    asked, rules = headline(prompt, phase)
    calamities = calamity_names(state)
    choices = list(prompt.menu) or order_lines(prompt.choices)
    return {
        "headline": asked,
        "situation": [mark_hand_line(line, calamities) for line in prompt.situation],
        "rules": rules,
        "default": prompt.default,
        "choices": choices[:MAX_CHOICES],
        "choices_left": max(0, len(choices) - MAX_CHOICES),
        "template": prompt.template,
        "areas": named_areas(state, [*prompt.choices, *prompt.menu]),
    }
