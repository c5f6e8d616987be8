"""Questions any player may send by mail: STATUS, ORDERS, HAND, BOARD, HISTORY [n], EXPLAIN <version>.

A player away from the board asks the server instead of a friend. Each
answer is written from the sender's own view (a player sees his own hand,
never another's) and comes back in the acknowledgement, after the orders of
the same message were decided, so "orders + STATUS" shows the result.
"""

from __future__ import annotations

from pbem.audit.history import history
from pbem.rules import engine as rules
from pbem.rules import table
from pbem.rules.core.state import GameState, Player
from pbem.rules.turn import phase_title
from pbem.rules.view import neutral_question, sees_prompt, view
from pbem.store.unit_of_work import UnitOfWork

from .origins import explained

#: HISTORY without a number shows this many lines; more than the maximum is cut to it.
HISTORY_LINES = 10
HISTORY_MAX = 40
#: EXPLAIN without a version lists this many of the latest versions the sender may read, to choose from.
EXPLAIN_CHOICES = 5


def _viewer(player: Player | None) -> str:
    if player is None:
        return "moderator"
    return f"player:{player.nation.lower()}" if player.nation else "observer"


def _status(state: GameState, player: Player | None) -> str:
    """Where the game stands and who is still asked, as the sender may see it.

    A question is worded for the player who must answer it and may tell what
    only he knows (a held calamity, a private hand size under D-8 `1991`), so
    the others read only who is asked and for which phase (`sees_prompt`).
    """
    when = f"Turn {state.turn}, {phase_title(state, state.phase)}" if state.turn else f"Setup, {phase_title(state, state.phase)}"
    lines = [f"STATUS: {when}. Deadline: {state.deadline or 'none set'}."]
    asked = rules.pending(state)
    if not asked:
        lines.append("Nobody is asked for orders now.")
    viewer = _viewer(player)
    for prompt in asked.values():
        who = state.player(prompt.player_id)
        label = f"{who.name} ({who.nation})" if who.nation else who.name
        question = prompt.question if sees_prompt(state, viewer, prompt) else neutral_question(state)
        lines.append(f"Still asked: {label}: {question}")
    for player_id, (first, last, reason) in table.absences(state).items():
        who = state.player(player_id)
        lines.append(f"Away: {who.name} from {first} to {last}" + (f" ({reason})" if reason else ""))
    for player_id, reason in table.kicked(state).items():
        who = state.player(player_id)
        lines.append(f"Played by its defaults: {who.nation or who.name} (the moderator took {who.name} out: {reason})")
    if paused := table.paused_by_moderator(state):
        lines.append(f"Paused by the moderator: {paused}. No deadline passes until it resumes.")
    if watching := table.observers(state):
        lines.append("Observers: " + ", ".join(watching.values()) + ".")
    return "\n".join(lines)


def _hand(state: GameState, player: Player | None) -> str:
    if player is None or not player.nation:
        return "HAND: you hold nothing yet (no nation chosen)."
    n = state.nations[player.nation]
    cards = ", ".join(sorted(n.hand)) or "none"
    civ = ", ".join(sorted(n.civ_cards)) or "none"
    return f"HAND of {player.nation}: trade cards {cards}. Civilization cards: {civ}. Treasury {n.treasury}, stock {n.stock}."


def _board(state: GameState, player: Player | None) -> str:
    data = view(state, _viewer(player))
    lines = ["BOARD:"]
    for name, nation in data["nations"].items():
        lines.append(
            f"{name.title()} ({nation['player']}): {nation['tokens_on_board']} tokens, {nation['cities_on_board']} cities"
            + (f", {nation['towns_on_board']} towns" if nation.get("towns_on_board") else "")
            + f", stock {nation['stock']}, treasury {nation['treasury']}, A.S.T. {nation['ast_position']}"
        )
    for name, area in data["areas"].items():
        units = [f"{k} {v}" for k, v in area["tokens"].items()] + [f"{k} {v} towns" for k, v in area.get("towns", {}).items()]
        if units or area["city"]:
            lines.append(f"  {name}: {', '.join(units)}" + (f"; city of {area['city']}" if area["city"] else ""))
    return "\n".join(lines)


def _history(uow: UnitOfWork, state: GameState, player: Player | None, rest: str) -> str:
    """HISTORY [n]: the last n lines of the sender's own log (`pbem log`): what a rollback superseded is not in it."""
    count = int(rest) if rest.strip().isdigit() else HISTORY_LINES
    count = max(1, min(count, HISTORY_MAX))
    shown = [entry["text"] for entry in history(state.game_id, uow.events.read(state.game_id), _viewer(player))[-count:]]
    return "\n".join([f"HISTORY (the last {len(shown)}):", *shown]) if shown else "HISTORY: nothing has happened yet."


def _explain(uow: UnitOfWork, state: GameState, player: Player | None, rest: str) -> str:
    """EXPLAIN <version>: why that event happened, from the sender's view (`pbem.audit.explain`).

    Without a version it lists the latest ones the sender may read, since a
    player's letters do not number the events. An order's line as written and
    its mail are in the answer to the moderator and to the player who sent it
    (`origins`).
    """
    recorded = uow.events.read(state.game_id)
    viewer = _viewer(player)
    word = rest.split()[0] if rest.split() else ""
    if not word.isdigit():
        latest = history(state.game_id, recorded, viewer)[-EXPLAIN_CHOICES:]
        return "\n".join(["EXPLAIN <version> explains one event. The latest you may read:",
                          *(f"{e['version']}: {e['text']}" for e in latest)])
    try:
        told = explained(uow, state.game_id, recorded, int(word), viewer)
    except ValueError as exc:
        return f"EXPLAIN: {exc}."
    return told.text() if len(told.lines) > 1 else f"EXPLAIN: {told.text()}."


def answer(uow: UnitOfWork, state: GameState, player: Player | None, verb: str, rest: str, on_file: list[str]) -> str:
    """The answer to one query line, as the acknowledgement shows it."""
    if verb == "STATUS":
        return _status(state, player)
    if verb == "ORDERS":
        return "\n".join(["ORDERS on file for you:", *on_file])
    if verb == "HAND":
        return _hand(state, player)
    if verb == "MAP":
        return "MAP: the board as it stands is shown below (and attached as an SVG file you can zoom)."
    if verb == "BOARD":
        return _board(state, player)
    if verb == "EXPLAIN":
        return _explain(uow, state, player, rest)
    return _history(uow, state, player, rest)
