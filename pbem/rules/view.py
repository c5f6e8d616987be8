"""Per-viewer views of a game (DESIGN.md §3).

Every report, prompt and `pbem state` listing is built from a view, so what a
player may not know (other hands, the secret seed) never reaches a template.
Viewers: ``player:<nation>``, ``observer``, ``moderator``, ``auditor``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState
from pbem.rules.engine import pending
from pbem.rules.phases.ast import final_standings
from pbem.rules.ruleset.model import money_type
from pbem.rules.ruleset.options import options_of
from pbem.rules.ruleset.rulebook import parts_of, ruleset_of
from pbem.rules.table import paused_by_moderator
from pbem.rules.turn import phase_title

VIEWERS = ("observer", "moderator", "auditor")


#: How every command and mail query names a viewer (docs/audit.md): one syntax everywhere.
VIEWER_SYNTAX = "NATION (or player:NATION, or the player's name), observer, moderator, auditor"


def normalise_viewer(viewer: str) -> str:
    """The canonical spelling of a viewer: ``observer``, ``moderator``, ``auditor`` or ``player:<nation>``.

    Syntax only: a bare word that is not a role names a nation. Whether that
    nation is in the game is `check_viewer`'s question, asked once against the
    game as it stands now, so a nation chosen during setup can read the
    versions from before its choice.
    """
    word = viewer.strip().lower()
    if word in VIEWERS:
        return word
    nation = word.split(":", 1)[1].strip() if word.startswith("player:") else word
    if not nation or ":" in nation or " " in nation:
        raise ValueError(f"unknown viewer {viewer!r}: use {VIEWER_SYNTAX}")
    return f"player:{nation}"


def check_viewer(state: GameState, viewer: str) -> str:
    """The canonical viewer for ``viewer`` in the game as it stands now (``state``), or ValueError in one line.

    An auditor reads everything once the game has ended; until then he reads
    what an observer reads (docs/audit.md), so an audit asked for during play
    can never carry a hand or a draw back to the table. Callers pass the
    latest state, so an auditor of a finished game also reads its past
    versions whole.
    """
    by_name = {p.name.strip().lower(): p.nation for p in state.players if p.nation}
    word = viewer.strip().lower()
    if word not in VIEWERS and not word.startswith("player:") and word in by_name and word not in {n.lower() for n in state.nations}:
        word = f"player:{by_name[word]}"
    canonical = normalise_viewer(word)
    if canonical == "auditor" and not state.finished:
        return "observer"
    if canonical.startswith("player:"):
        nation = canonical.split(":", 1)[1]
        if not any(n.lower() == nation for n in state.nations):
            chosen = ", ".join(sorted(n.lower() for n in state.nations)) or "none chosen yet"
            raise ValueError(f"no nation {nation!r} in game {state.game_id} (its nations: {chosen})")
    return canonical


def viewer_label(asked: str, granted: str) -> str:
    """How a command names the viewer it answered: ``granted`` (`check_viewer`'s), except an auditor of a game still
    in play, who is named an auditor with what he reads, not "observer": he asked as an auditor, and a label that
    names another role reads as a mistake (issue 30)."""
    if normalise_viewer(asked) == "auditor" and granted != "auditor":
        return "auditor (reading what an observer reads until the game ends)"
    return granted


def _sees_hand(viewer: str, nation: str) -> bool:
    return viewer in ("moderator", "auditor") or viewer == f"player:{nation.lower()}"


def _hand_count(state: GameState, viewer: str, nation: str) -> int | None:
    """D-8 `public-hand-size`: `seed` shows every count; `1991` shows others only the count kept after 12b."""
    n = state.nations[nation]
    if _sees_hand(viewer, nation) or options_of(state).public_hand_size == "seed":
        return len(n.hand)
    return n.kept_hand_count


def sees_prompt(state: GameState, viewer: str, prompt: Prompt) -> bool:
    """Whether ``viewer`` may read what ``prompt`` asks: its own player and the overseers.

    A question is worded for the one player who must answer it and may say
    what only he knows ("you hold fewer than 3 tradable cards" gives away a
    held Famine; "... and hold 9" a hand size that D-8 `1991` keeps private).
    """
    if viewer in ("moderator", "auditor"):
        return True
    nation = state.player(prompt.player_id).nation
    return bool(nation) and viewer == f"player:{nation.lower()}"


def neutral_question(state: GameState) -> str:
    """What everyone else reads of a pending question: only that orders for this phase are awaited."""
    return f"orders for {phase_title(state, state.phase)}"


def question_gist(question: str) -> str:
    """What a question asks, without the rules it explains: up to its first colon or full stop.

    "Step 3b, movement: each token moves once, ..." is "Step 3b, movement": what the moderator needs to
    see of each player asked, in one short line, when a letter lists them all.
    """
    cut = min((i for i in (question.find(": "), question.find(". ")) if i > 0), default=len(question))
    return question[:cut].rstrip(".")


def asked_entry(state: GameState, viewer: str, prompt: Prompt) -> dict[str, Any]:
    """One entry of a view's ``pending``: who is asked and the step; the question only for those who may read it."""
    question = prompt.question if sees_prompt(state, viewer, prompt) else neutral_question(state)
    return {"step": prompt.step, "question": question, "player": state.player(prompt.player_id).name}


def view(state: GameState, viewer: str) -> dict[str, Any]:
    """The game as ``viewer`` may see it, as JSON-ready data (documented in docs/state.md).

    The viewer is checked for syntax only: a nation not yet chosen at this
    version sees what any other player sees.
    """
    viewer = normalise_viewer(viewer)
    ruleset = ruleset_of(state) if state.players else None
    money = parts_of(state).deck.calamities_apart  # NT-2: the calamity pile, apart from the money piles
    nations: dict[str, Any] = {}
    for name, n in state.nations.items():
        entry: dict[str, Any] = {
            "player": state.player(n.player_id).name,
            "stock": n.stock,
            "treasury": n.treasury,
            "cities_on_board": state.cities_on_board(name),
            "tokens_on_board": state.tokens_on_board(name),
            "towns_on_board": state.towns_on_board(name),
            "ships": state.ships_on_board(name),
            "hand_count": _hand_count(state, viewer, name),
            "civ_cards": list(n.civ_cards),
            "ast_position": n.ast_position,
            "census": n.census,
        }
        if _sees_hand(viewer, name):
            entry["hand"] = list(n.hand)
        if money:  # a money card's type shows on its back; its value only to its holder (Q-NT1)
            entry["money_types"] = dict(sorted(Counter(money_type(c) for c in n.hand).items()))
            entry["volunteers"] = n.volunteers if _sees_hand(viewer, name) else None
        nations[name.lower()] = entry
    areas: dict[str, Any] = {}
    if ruleset is not None:
        in_play = ruleset.setup_for(len(state.players)).areas_in_play
        for name in sorted(in_play):
            area = state.area(name)
            areas[name] = {"tokens": dict(area.tokens), "city": area.city}
            if parts_of(state).pieces.towns:
                areas[name]["towns"] = dict(area.towns)
    return {
        "game": state.game_id,
        "version": state.version,
        "turn": state.turn,
        "phase": state.phase,
        "deadline": state.deadline,
        "paused": paused_by_moderator(state),
        "viewer": viewer,
        "seed_commitment": state.seed_commitment,
        "players": [{"id": p.id, "name": p.name, "nation": p.nation} for p in state.players],
        "place_order": [state.player(pid).name for pid in state.place_order],
        "pending": {who: asked_entry(state, viewer, p) for who, p in pending(state).items()},
        "nations": nations,
        "areas": areas,
        # Revealed in phase 8 (seed 003: 8); who traded a card stays between the two players.
        "calamities": [{"calamity": c[0], "victim": c[1]} for c in state.calamities],
        "variants": variants_in_force(state),
        # No-Trading: calamities drawn stay face up until the next turn's phase 9 (NT-14); the pile is face down.
        **({"calamities_face_up": [{"calamity": c, "turn": t} for c, t in state.calamities_face_up],
            "calamity_pile": len(state.calamity_pile)} if money else {}),
        "finished": state.finished,
        "scores": _scores(state) if state.finished else None,
    }


def variants_in_force(state: GameState) -> list[str]:
    """The variants this game plays, by name, for headers and reports (RULINGS.md §4)."""
    return list(parts_of(state).variants)


def _scores(state: GameState) -> list[dict[str, Any]]:
    """The final table (§35), public once the game has ended."""
    return final_standings(state)
