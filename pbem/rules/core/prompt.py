"""What the engine asks of a player: the decision pending and how to answer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Prompt:
    """One pending decision, worded for the player who must make it.

    ``choices`` are complete order lines the player may send (a bot picks one
    at random; a human edits ``template``). ``default`` says what the engine
    does when the deadline passes with no order. ``menu``, when a step has
    too many choices to list one by one (movement), says what is open in a
    few short lines instead; the letter shows it in place of the choices.
    """

    who: str
    player_id: int
    step: str
    question: str
    choices: tuple[str, ...]
    template: str
    default: str
    situation: tuple[str, ...] = ()
    cites: tuple[str, ...] = ()
    menu: tuple[str, ...] = ()
