"""What the engine asks of a player: the decision pending and how to answer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Prompt:
    """One pending decision, worded for the player who must make it.

    ``choices`` are complete order lines the player may send (a bot picks one
    at random; a human edits ``template``). ``default`` says what the engine
    does when the deadline passes with no order.
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
