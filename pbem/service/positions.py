"""A nation's position as a letter tells it: the reader's own numbers first, then the others' in a line each.

A player reading on a phone decides from his own cities, tokens, stock,
treasury, hand and A.S.T. space; a list of every nation's tokens area by area
(what reports showed before) makes him search for them. Everything here is
read from the per-viewer view (pbem.rules.view), so a report can show only
what its reader may know: another nation's hand is a count of cards.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from pbem.rules.core.state import GameState
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.rules.turn import phase_title
from pbem.rules.view import view

#: How a situation line of the rules names a hand; what follows is a list of cards as write_cards writes it.
HAND_PREFIXES = ("Your hand: ",)


def calamity_names(state: GameState) -> frozenset[str]:
    """The calamities of the game's rule set: a hand lists them beside commodities, and a player must tell them apart."""
    if not state.players:
        return frozenset()
    return frozenset(ruleset_of(state).calamities)


def _marked(card: str, calamities: frozenset[str]) -> str:
    """'Slave Revolt' → 'Slave Revolt (calamity)'; 'Treachery 2' → 'Treachery 2 (calamities)'; others unchanged."""
    name, _, count = card.rpartition(" ")
    if not (name and count.isdigit()):
        name, count = card, ""
    if name not in calamities:
        return card
    return f"{card} ({'calamities' if count and count != '1' else 'calamity'})"


def hand_text(cards: Iterable[str], calamities: frozenset[str]) -> str:
    """Cards grouped as a player writes them (``Salt 2``), each calamity marked as one."""
    counts = Counter(cards)
    return ", ".join(_marked(f"{c} {k}" if k > 1 else c, calamities) for c, k in counts.items()) or "no cards"


def mark_hand_line(line: str, calamities: frozenset[str]) -> str:
    """A situation line that lists a hand, its calamities marked; any other line as it is."""
    for prefix in HAND_PREFIXES:
        if line.startswith(prefix) and calamities:
            listed = line[len(prefix):]
            end = "." if listed.endswith(".") else ""
            cards = listed[: len(listed) - len(end)].split(", ")
            return prefix + ", ".join(_marked(card, calamities) for card in cards) + end
    return line


def _areas_of(seen: dict[str, Any], nation: str) -> tuple[list[str], list[str]]:
    """(the areas of the nation's cities, its tokens as 'Area (n)'), in the board's order."""
    cities, tokens = [], []
    for name, area in seen["areas"].items():
        if area.get("city") == nation:
            cities.append(name)
        count = area.get("tokens", {}).get(nation, 0)
        towns = area.get("towns", {}).get(nation, 0) if isinstance(area.get("towns"), dict) else 0
        if count or towns:
            tokens.append(f"{name} ({count}" + (f", {towns} town{'s' if towns != 1 else ''}" if towns else "") + ")")
    return cities, tokens


def own_position(state: GameState, nation: str) -> list[str]:
    """The reader's own nation in a few lines: cities, tokens, stock and treasury, ships, hand, cards, A.S.T. space."""
    seen = view(state, f"player:{nation.lower()}")
    mine = seen["nations"].get(nation.lower())
    if mine is None:
        return []
    cities, tokens = _areas_of(seen, nation)
    hand = hand_text(mine.get("hand", ()), calamity_names(state))
    return [
        f"Cities ({len(cities)}): {', '.join(cities) or 'none'}.",
        f"Tokens ({mine['tokens_on_board']} on the board): {', '.join(tokens) or 'none'}.",
        f"Stock {mine['stock']}, treasury {mine['treasury']}, ships {mine['ships']}.",
        f"Hand ({len(mine.get('hand', ()))}): {hand}.",
        f"Civilization cards: {', '.join(mine['civ_cards']) or 'none'}.",
        f"A.S.T. space {mine['ast_position']}.",
    ]


def others_positions(state: GameState, viewer: str, nation: str | None) -> list[str]:
    """Every other nation in one line as ``viewer`` may see it: its player, cities, tokens, cards held, A.S.T. space."""
    seen = view(state, viewer)
    lines = []
    for player in state.players:
        if not player.nation or player.nation == nation:
            continue
        theirs = seen["nations"].get(player.nation.lower())
        if theirs is None:
            continue
        cities, tokens = _areas_of(seen, player.nation)
        lines.append(
            f"{player.nation} ({player.name}): cities {', '.join(cities) or 'none'}; "
            f"tokens {', '.join(tokens) or 'none'}; {theirs['hand_count']} cards in hand; "
            f"A.S.T. space {theirs['ast_position']}."
        )
    return lines


def _when(state: GameState) -> str:
    return f"turn {state.turn}, {phase_title(state, state.phase)}" if state.turn else f"Setup, {phase_title(state, state.phase)}"


def report_span(since: GameState, after: GameState, result: str, asked: bool) -> dict[str, str]:
    """What a report covers and what comes next, in two sentences.

    A heading 'Setup, Nations and start areas to turn 1, 3. Movement is resolved' read as if movement were
    over, when it had only begun: the span is told as from one phase until another began.
    """
    began, now = _when(since), _when(after)
    if result:
        return {"covers": f"what happened from {began} to the end of the game", "next": f"The game is over: {result}."}
    if (since.turn, since.phase) != (after.turn, after.phase):
        covers = f"what happened from {began} until {now} began"
    else:
        covers = f"what happened in {began} so far"
    upcoming = f"{now[:1].upper()}{now[1:]}"
    if asked:
        return {"covers": covers, "next": f"Next: {upcoming}. Your orders are asked: a prompt follows."}
    return {"covers": covers, "next": f"Next: {upcoming}. A prompt comes when it is your turn."}
