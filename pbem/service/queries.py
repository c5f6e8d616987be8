"""Questions any player may send by mail: STATUS, ORDERS, HAND, BOARD, HISTORY, EXPLAIN <version>, VERIFY <head>.

A player away from the board asks the server instead of a friend. Each
answer is written from the sender's own view (a player sees his own hand,
never another's) and comes back in the acknowledgement, after the orders of
the same message were decided, so "orders + STATUS" shows the result.
"""

from __future__ import annotations

from pbem.audit.heads import find_head, is_head
from pbem.audit.history import history
from pbem.orders.moments import Moment, phase_named, read_moment
from pbem.rules import engine as rules
from pbem.rules import table
from pbem.rules.branches import superseded
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState, Player
from pbem.rules.turn import phase_title
from pbem.rules.view import neutral_question, sees_prompt, view
from pbem.store.unit_of_work import UnitOfWork
from pbem.store.verify import verify_chain

from .origins import explained
from .positions import calamity_names, hand_text

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
    if player is not None:
        lines.append(_mail_line(*table.mail_preference(state, player.id)))
    return "\n".join(lines)


def _mail_line(delivery: str, pictures: bool) -> str:
    """How the sender gets his mail, and the order that changes it (MAIL, issue 31)."""
    how = ("every letter as it is written" if delivery == "every"
           else "one letter a turn, and at once what asks you something or refuses a line")
    other = "MAIL DIGEST for one letter a turn" if delivery == "every" else "MAIL EVERY for every letter"
    shown = "with pictures of the board" if pictures else "without pictures"
    switch = "MAIL NOPICTURES" if pictures else "MAIL PICTURES"
    return f"Your mail: {how}, {shown} ({other}; {switch})."


def _hand(state: GameState, player: Player | None) -> str:
    if player is None or not player.nation:
        return "HAND: you hold nothing yet (no nation chosen)."
    n = state.nations[player.nation]
    cards = hand_text(sorted(n.hand), calamity_names(state)) if n.hand else "none"  # calamities marked as such
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


def _history_filter(state: GameState, rest: str) -> tuple[int | None, Moment | None, set[str], list[str]]:
    """HISTORY's arguments: a count, a turn (and phase), nations or players; and the words that name nothing."""
    words = rest.split()
    count: int | None = None
    moment: Moment | None = None
    nations: set[str] = set()
    unread: list[str] = []
    seats = {p.nation.upper(): p.nation for p in state.players if p.nation}
    seats |= {p.name.upper(): p.nation for p in state.players if p.nation}
    while words:
        word = words[0].strip(",;")
        read = read_moment(words) if word.lower() == "turn" else None
        if read is not None:
            moment, words = read
            continue
        phase = phase_named(words)
        if phase is not None:
            moment = Moment(turn=moment.turn if moment else None, phase=phase[0])
            words = words[phase[1]:]
            continue
        if word.isdigit() and count is None:
            count = int(word)
        elif word.upper() in seats:
            nations.add(seats[word.upper()])
        else:
            unread.append(word)
        words = words[1:]
    return count, moment, nations, unread


def _mentions(text: str, nations: set[str]) -> bool:
    """Whether the line, as the reader reads it, names one of the nations (a whole word)."""
    words = set("".join(c if c.isalnum() else " " for c in text.lower()).split())
    return any(n.lower() in words for n in nations)


def _history(uow: UnitOfWork, state: GameState, player: Player | None, rest: str) -> str:
    """HISTORY [n] [turn T] [phase] [nation...]: numbered lines of the sender's own log (`pbem log`).

    Each line starts with its version, the number ROLLBACK and EXPLAIN take. A turn, a phase and nations
    (or players) narrow it ("HISTORY turn 3 Egypt"); n is how many of the last lines are shown. What a
    rollback superseded is not in a player's log; the moderator's shows it, marked.
    """
    count, moment, nations, unread = _history_filter(state, rest)
    limit = max(1, min(count or (HISTORY_MAX if moment or nations else HISTORY_LINES), HISTORY_MAX))
    entries = history(state.game_id, uow.events.read(state.game_id), _viewer(player))
    if moment is not None and moment.turn is not None:
        entries = [e for e in entries if e["turn"] == moment.turn]
    if moment is not None and moment.phase is not None:
        entries = [e for e in entries if e["phase"] == moment.phase]
    if nations:
        entries = [e for e in entries if _mentions(e["text"], nations)]
    asked = ", ".join(
        ([f"turn {moment.turn}"] if moment and moment.turn is not None else [])
        + ([phase_title(state, moment.phase)] if moment and moment.phase else []) + sorted(nations)
    )
    found = len(entries)
    shown = entries[-limit:]
    lines = [f"{e['version']}. {e['text']}" + (f"  [superseded by the rollback at {e['superseded_by']}]"
                                                 if "superseded_by" in e else "") for e in shown]
    where = f" of {asked}" if asked else ""
    if not shown:
        head = f"HISTORY{where}: nothing you may read happened there." if asked else "HISTORY: nothing has happened yet."
    elif found > len(shown):
        head = f"HISTORY{where}, by version (the last {len(shown)} of {found}; HISTORY {HISTORY_MAX} and a turn or phase narrow it):"
    else:
        head = f"HISTORY{where}, by version ({found} line{'s' if found != 1 else ''}):"
    tail = [f"Not understood, left out: {' '.join(unread)}."] if unread else []
    return "\n".join([head, *lines, *tail])


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


def _verify(uow: UnitOfWork, state: GameState, rest: str) -> str:
    """VERIFY <head>: whether the log still holds the chain head a letter showed, and which version it is.

    The server checks what the reader cannot from his mailbox: the hash chain from the first event to the
    head, and where the head he kept sits in it. Only letters to the reader himself are searched for it.
    Re-deriving every outcome needs the secret seed and minutes on a long game: `pbem verify` does that,
    with anyone's copy of the log once the seed is public at the end.
    """
    kept = rest.split()[0] if rest.split() else ""
    if not is_head(kept):
        return ("VERIFY <head>: copy the chain head from the end of one of your letters (16 hexadecimal digits, "
                "as in 'chain head c982c37a85d6770a').")
    recorded = uow.events.read(state.game_id)
    chain = verify_chain(recorded)
    found = find_head(recorded, kept)
    lines = [f"VERIFY {found.kept}:"]
    lines.append(f"The hash chain is whole: {chain.checked} events, each sealing the one before it."
                 if chain.ok else f"The hash chain is BROKEN at version {chain.first_broken}: {chain.reason}.")
    if found.version:
        lines.append(f"Your head is version {found.version} of {found.head}: what you were told then is still "
                     "part of the record.")
        undone = superseded([Event.from_payload(r.type, r.payload) for r in recorded]).get(found.version)
        if undone:
            lines.append(f"The moderator's rollback at version {undone} took the game back past it: that stretch "
                         "is kept in the log, superseded.")
        at = recorded[found.version - 1].metadata.get("recorded_at", "")[:16].replace("T", " ")
        later = found.head - found.version
        lines.append(f"It was recorded {at} UTC; {later} event{'s' if later != 1 else ''} followed it.")
    else:
        lines.append(found.text().replace("head NOT FOUND", "NOT FOUND") + ": tell the moderator.")
    return "\n".join(lines)


def answer(uow: UnitOfWork, state: GameState, player: Player | None, verb: str, rest: str, on_file: list[str],
           link: str | None = None) -> str:
    """The answer to one query line, as the acknowledgement shows it; ``link``: the sender's page link (LINK)."""
    if verb == "LINK":
        if link is None:
            return "LINK: this server shows no pages of its games (its operator has not set web.listen)."
        return f"LINK: your page of the game, yours alone (a REVOKE by the moderator replaces it):\n{link}"
    if verb == "VERIFY":
        return _verify(uow, state, rest)
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


def position(state: GameState, player: Player) -> list[str]:
    """A seat's position as STATUS, HAND and BOARD answer its player, line by line: what a newcomer to it reads first."""
    return [line for text in (_status(state, player), _hand(state, player), _board(state, player)) for line in text.split("\n")]
