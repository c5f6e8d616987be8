"""The table around the board: the clock, the moderator, press, absences, observers, orders kept.

None of this moves a token or a card; it is what a group playing for months
by mail records beside the game: deadlines set and extended, a pause and its
reason, a seat handed to someone new or played by defaults (KICK), who is
away, who watches, messages between players, and orders a player sent before
his turn. Each is an event in the log like any order, so `verify` re-derives
it and every report can tell it, to the viewers allowed to read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbem.rules.core.commands import (
    AdmitObserver,
    AskToObserve,
    DismissObserver,
    Kick,
    RevokeLinks,
    Moderate,
    NoteAbsence,
    NoteBounce,
    QueueOrders,
    ReplacePlayer,
    SendPress,
    SetDeadline,
    SetMailPreference,
    SetTimezone,
    TakeQueued,
)
from pbem.rules.core.events import Event
from pbem.rules.core.frozen import replace
from pbem.rules.core.phase import PhaseRules
from pbem.rules.core.rejection import Rejection
from pbem.rules.core.state import GameState, Player

#: What the players are told of each moderator action, with his reason.
MODERATED = {
    "pause": "The moderator paused the game: {reason}. No deadline passes until it resumes.",
    "resume": "The moderator resumed the game: {reason}.",
    "extend": "The moderator extended the deadline by {hours} hours, to {due}: {reason}.",
    "announce": "The moderator announces: {reason}",
}
#: Viewers who see everything recorded at the table.
_OVERSEERS = ("moderator", "auditor")


# -- what the table holds (read by the service and the phases' views) ----------------


def absences(state: GameState) -> dict[int, tuple[str, str, str]]:
    """Each player's announced absence: (first day, last day, reason)."""
    return {p.id: state.table[f"absent:{p.id}"] for p in state.players if f"absent:{p.id}" in state.table}


def seat_generation(state: GameState, player_id: int) -> int:
    """How many times a player's seat was handed over (REPLACE): his reply tokens are minted for it."""
    held = state.table.get(f"seat:{player_id}")
    return held[0] if held else 0


#: How a bot may play a seat (pbem/service/bots): the strategies a seat can be handed to.
BOT_STRATEGIES = ("planner", "greedy", "random")


def bot_strategy(state: GameState, player_id: int) -> str | None:
    """The strategy of the bot that plays a seat (REPLACE ... WITH BOT), or None for a person's seat."""
    held = state.table.get(f"bot:{player_id}")
    return held[0] if held else None


def link_revocations(state: GameState, reader: str) -> int:
    """How many times the moderator revoked a reader's page links (REVOKE): "p3", "o2" or "moderator"."""
    held = state.table.get(f"links:{reader}")
    return held[0] if held else 0


def timezone_of(state: GameState, player_id: int) -> str:
    """The time zone a player set (TIMEZONE), else UTC."""
    held = state.table.get(f"timezone:{player_id}")
    return held[0] if held else "UTC"


#: A seat's mail as it is until its player says otherwise (MAIL): every letter, with pictures.
MAIL_DEFAULT = ("every", True)
DELIVERIES = ("every", "digest")


def mail_preference(state: GameState, player_id: int) -> tuple[str, bool]:
    """(delivery, pictures) a player chose with MAIL, else `MAIL_DEFAULT`."""
    held = state.table.get(f"mail:{player_id}")
    return (held[0], bool(held[1])) if held else MAIL_DEFAULT


def paused_by_moderator(state: GameState) -> str | None:
    """The reason the moderator gave for pausing the game, or None when it runs."""
    held = state.table.get("paused")
    return held[0] if held else None


def kicked(state: GameState) -> dict[int, str]:
    """Players the moderator took out (KICK), with his reason: their nations play by defaults."""
    return {p.id: state.table[f"kicked:{p.id}"][0] for p in state.players if f"kicked:{p.id}" in state.table}


def observers(state: GameState, status: str = "watching") -> dict[int, str]:
    """Observers by number and name: those who watch (the default), or those who ``asked`` and wait."""
    return {
        int(key.split(":", 1)[1]): value[0]
        for key, value in state.table.items()
        if key.startswith("observer:") and value[1] == status
    }


def queued_orders(state: GameState, player_id: int) -> tuple[str, ...]:
    """The orders a player sent before his turn in the current phase, still kept (none once the phase is over)."""
    held = state.table.get(f"queued:{player_id}")
    if not held or (held[0], held[1]) != (state.turn, state.phase):
        return ()
    return tuple(held[2:])


def press_readers(state: GameState, data: Mapping[str, Any]) -> list[Player]:
    """Who reads a press message: the players it names (every player for ALL), never its sender.

    A reply to press is read by the writer of the press it answers alone (``reader``): a mail client's
    Reply goes to one person, and a deal offered in private is not shown to the others the press went to.
    """
    if data.get("reader") is not None:
        return [p for p in state.players if p.id == data["reader"] and p.id != data["player"]]
    to = {n.lower() for n in data["to"]}
    return [p for p in state.players if p.id != data["player"] and ("all" in to or (p.nation or "").lower() in to)]


def _label(player: Player) -> str:
    return f"{player.name} ({player.nation})" if player.nation else player.name


def _viewer_of(player: Player) -> str:
    return f"player:{(player.nation or '').lower()}"


# -- folding ------------------------------------------------------------------------


def _kept(state: GameState, key: str, value: tuple | None) -> GameState:
    """The table with ``key`` set to ``value`` (None: taken off)."""
    return replace(state, table=state.table.without(key) if value is None else state.table.set(key, value))


def _apply_deadline_set(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, deadline=data["due"])


def _apply_deadline_passed(state: GameState, data: dict[str, Any]) -> GameState:
    return replace(state, deadline=None)


def _unchanged(state: GameState, data: dict[str, Any]) -> GameState:
    return state  # a note in the log (a bounce, a press message): nothing on the board or in a hand changes


def _apply_timezone(state: GameState, data: dict[str, Any]) -> GameState:
    return _kept(state, f"timezone:{data['player']}", (data["zone"],))


def _apply_mail(state: GameState, data: dict[str, Any]) -> GameState:
    return _kept(state, f"mail:{data['player']}", (data["delivery"], data["pictures"]))


def _apply_replaced(state: GameState, data: dict[str, Any]) -> GameState:
    pid = data["player"]
    players = tuple(replace(p, name=data["name"]) if p.id == pid else p for p in state.players)
    seat = state.table.set(f"seat:{pid}", (seat_generation(state, pid) + 1,))
    seat = seat.set(f"bot:{pid}", (data["bot"],)) if data.get("bot") else seat.without(f"bot:{pid}")
    kept = (
        seat
        .without(f"timezone:{pid}")
        .without(f"mail:{pid}")
        .without(f"kicked:{pid}")
        .without(f"absent:{pid}")
        .without(f"queued:{pid}")
    )
    return replace(state, players=players, table=kept)


def _apply_absence(state: GameState, data: dict[str, Any]) -> GameState:
    value = (data["from"], data["to"], data.get("reason", "")) if data["from"] else None
    return _kept(state, f"absent:{data['player']}", value)


def _apply_moderated(state: GameState, data: dict[str, Any]) -> GameState:
    action = data["action"]
    if action == "pause":
        return _kept(state, "paused", (data["reason"],))
    if action == "resume":
        return _kept(state, "paused", None)
    if action == "extend":
        return replace(state, deadline=data["due"])
    return state  # an announcement changes nothing


def _apply_kicked(state: GameState, data: dict[str, Any]) -> GameState:
    """A kicked seat plays its defaults; what its player had kept for his turn goes with him."""
    state = _kept(state, f"queued:{data['player']}", None)
    return _kept(state, f"kicked:{data['player']}", (data["reason"],))


def _apply_links_revoked(state: GameState, data: dict[str, Any]) -> GameState:
    return _kept(state, f"links:{data['reader']}", (link_revocations(state, data["reader"]) + 1,))


def _apply_kick_lifted(state: GameState, data: dict[str, Any]) -> GameState:
    return _kept(state, f"kicked:{data['player']}", None)


def _apply_observer_asked(state: GameState, data: dict[str, Any]) -> GameState:
    return _kept(state, f"observer:{data['observer']}", (data["name"], "asked"))


def _apply_observer_joined(state: GameState, data: dict[str, Any]) -> GameState:
    return _kept(state, f"observer:{data['observer']}", (data["name"], "watching"))


def _apply_observer_left(state: GameState, data: dict[str, Any]) -> GameState:
    return _kept(state, f"observer:{data['observer']}", None)


def _apply_queued(state: GameState, data: dict[str, Any]) -> GameState:
    kept = queued_orders(state, data["player"]) + tuple(data["lines"])
    return _kept(state, f"queued:{data['player']}", (data["turn"], data["phase"], *kept))


def _apply_queue_taken(state: GameState, data: dict[str, Any]) -> GameState:
    return _kept(state, f"queued:{data['player']}", None)


# -- deciding -----------------------------------------------------------------------


def _player(state: GameState, player_id: int) -> Player:
    for player in state.players:
        if player.id == player_id:
            return player
    raise Rejection(f"there is no player {player_id} in this game")


def _decide_deadline_set(state: GameState, command: SetDeadline) -> list[Event]:
    return [Event("DeadlineSet", {"due": command.due})]


def _decide_moderated(state: GameState, command: Moderate) -> list[Event]:
    if command.action not in MODERATED:
        raise Rejection(f"unknown moderator action {command.action!r}")
    if command.action == "pause" and paused_by_moderator(state) is not None:
        raise Rejection("the game is paused already")
    if command.action == "resume" and paused_by_moderator(state) is None:
        raise Rejection("the game is not paused")
    data: dict[str, Any] = {"action": command.action, "reason": command.reason}
    if command.action == "extend":
        data.update(due=command.due, hours=command.hours)
    return [Event("Moderated", data)]


def _decide_absence(state: GameState, command: NoteAbsence) -> list[Event]:
    _player(state, command.player_id)
    data = {"player": command.player_id, "from": command.start, "to": command.end, "reason": command.reason}
    return [Event("AbsenceNoted", data)]


def _decide_replaced(state: GameState, command: ReplacePlayer) -> list[Event]:
    _player(state, command.player_id)
    data = {"player": command.player_id, "name": command.name, "reason": command.reason}
    if command.bot:
        if command.bot not in BOT_STRATEGIES:
            raise Rejection(f"a bot plays as {', '.join(BOT_STRATEGIES)}, not {command.bot!r}")
        data["bot"] = command.bot
    return [Event("PlayerReplaced", data)]


def _decide_timezone(state: GameState, command: SetTimezone) -> list[Event]:
    _player(state, command.player_id)
    return [Event("TimezoneSet", {"player": command.player_id, "zone": command.zone})]


def _decide_mail(state: GameState, command: SetMailPreference) -> list[Event]:
    _player(state, command.player_id)
    delivery, pictures = mail_preference(state, command.player_id)
    if command.delivery is not None and command.delivery not in DELIVERIES:
        raise Rejection(f"mail comes as {' or '.join(DELIVERIES)}, not {command.delivery!r}")
    chosen = (command.delivery or delivery, pictures if command.pictures is None else command.pictures)
    return [Event("MailPreferenceSet", {"player": command.player_id, "delivery": chosen[0], "pictures": chosen[1]})]


def _decide_press(state: GameState, command: SendPress) -> list[Event]:
    if all(p.id != command.player_id for p in state.players):
        raise Rejection("press comes from a player of this game")
    if not command.text.strip():
        raise Rejection("the press message is empty")
    data = {"player": command.player_id, "to": list(command.to), "text": command.text[:4000], "anonymous": command.anonymous}
    if command.reader is not None:  # a reply to press: only the fields a reply has, so older events read the same
        data.update(reader=command.reader, reply=command.reply, blind=command.blind)
    if not press_readers(state, data):
        raise Rejection("nobody would read it: name other players' nations, or ALL")
    return [Event("PressSent", data)]


def _decide_bounce(state: GameState, command: NoteBounce) -> list[Event]:
    _player(state, command.player_id)
    return [Event("MailBounced", {"player": command.player_id, "status": command.status, "reason": command.reason})]


def _decide_kick(state: GameState, command: Kick) -> list[Event]:
    player = _player(state, command.player_id)
    out = command.player_id in kicked(state)
    if command.lift:
        if not out:
            raise Rejection(f"{_label(player)} was not kicked")
        return [Event("KickLifted", {"player": command.player_id, "reason": command.reason})]
    if out:
        raise Rejection(f"{_label(player)} was kicked already; his nation plays by its defaults")
    return [Event("PlayerKicked", {"player": command.player_id, "reason": command.reason})]


def _reader_named(state: GameState, reader: str) -> str:
    """A page's reader in words ("Egypt", "observer 2", "the moderator"); Rejection for one not at the table."""
    if reader in ("moderator", "auditor"):
        return f"the {reader}" if reader == "moderator" else "the auditors"
    kind, number = reader[:1], reader[1:]
    if kind == "p" and number.isdigit():
        return _label(_player(state, int(number)))
    if kind == "o" and number.isdigit() and int(number) in observers(state):
        return f"observer {number}"
    raise Rejection(f"there is no reader {reader!r} of this game's page")


def _decide_revoke(state: GameState, command: RevokeLinks) -> list[Event]:
    _reader_named(state, command.reader)
    return [Event("LinksRevoked", {"reader": command.reader, "reason": command.reason})]


#: Requests to watch a game waiting for the moderator at once: a stranger's mail cannot swell the log.
MAX_WAITING_OBSERVERS = 20


def _decide_ask(state: GameState, command: AskToObserve) -> list[Event]:
    if f"observer:{command.observer}" in state.table:
        raise Rejection(f"observer {command.observer} is known already")
    if len(observers(state, "asked")) >= MAX_WAITING_OBSERVERS:
        raise Rejection(f"{MAX_WAITING_OBSERVERS} requests to watch already wait for the moderator; ask again later")
    return [Event("ObserverAsked", {"observer": command.observer, "name": " ".join(command.name.split())[:60]})]


def _decide_admit(state: GameState, command: AdmitObserver) -> list[Event]:
    if command.observer in observers(state):
        raise Rejection(f"observer {command.observer} watches already")
    asked = observers(state, "asked")
    if command.observer not in asked:
        raise Rejection(f"nobody numbered {command.observer} asked to watch this game")
    data = {"observer": command.observer, "name": asked[command.observer], "reason": command.reason}
    return [Event("ObserverJoined", data)]


def _decide_dismiss(state: GameState, command: DismissObserver) -> list[Event]:
    if command.observer not in {**observers(state), **observers(state, "asked")}:
        raise Rejection(f"there is no observer {command.observer} in this game")
    return [Event("ObserverLeft", {"observer": command.observer, "reason": command.reason})]


def _decide_queue(state: GameState, command: QueueOrders) -> list[Event]:
    _player(state, command.player_id)
    if not command.lines:
        raise Rejection("no orders to keep")
    data = {"player": command.player_id, "turn": state.turn, "phase": state.phase, "lines": list(command.lines)}
    return [Event("OrdersQueued", data)]


def _decide_take_queued(state: GameState, command: TakeQueued) -> list[Event]:
    _player(state, command.player_id)
    if queued_orders(state, command.player_id) != command.lines:
        raise Rejection("those are not the orders kept for this player")
    return [Event("QueuedOrdersTaken", {"player": command.player_id, "lines": list(command.lines)})]


# -- telling ------------------------------------------------------------------------


def _tell_deadline_set(state: GameState, event: Event, viewer: str) -> str | None:
    return None if viewer.startswith("player:") else f"Orders are due by {event.data['due']}."


def _tell_deadline_passed(state: GameState, event: Event, viewer: str) -> str | None:
    if event.data.get("reason"):
        return f"The moderator ended the step: {event.data['reason']}. Defaults were applied to missing orders."
    return f"The deadline passed ({event.data.get('by', 'clock')}); defaults were applied to missing orders."


def _tell_absence(state: GameState, event: Event, viewer: str) -> str | None:
    d = event.data
    label = _label(state.player(d["player"]))
    if not d["from"]:
        return f"{label} is no longer away."
    return f"{label} will be away from {d['from']} to {d['to']}" + (f": {d['reason']}." if d.get("reason") else ".")


def _tell_replaced(state: GameState, event: Event, viewer: str) -> str | None:
    old = state.player(event.data["player"])
    to = f"a bot ({event.data['bot']}), {event.data['name']}" if event.data.get("bot") else event.data["name"]
    return f"The moderator handed {old.nation or old.name} from {old.name} to {to}: {event.data['reason']}."


def _tell_nobody(state: GameState, event: Event, viewer: str) -> str | None:
    return None  # a player's own setting: nobody's business


def _tell_press(state: GameState, event: Event, viewer: str) -> str | None:
    d = event.data
    if d.get("reader") is not None:
        return _tell_press_reply(state, d, viewer)
    readers = {_viewer_of(p) for p in press_readers(state, d)}
    sender = state.player(d["player"])
    own = _viewer_of(sender)
    public = "ALL" in [t.upper() for t in d["to"]]
    if viewer not in (*_OVERSEERS, own) and viewer not in readers and not (viewer == "observer" and public):
        return None
    hidden = d.get("anonymous") and viewer not in (*_OVERSEERS, own)
    who = "Anonymous" if hidden else (sender.nation or sender.name)
    return f"Press from {who} to {', '.join(d['to'])}: {d['text']}"


def _tell_press_reply(state: GameState, d: Mapping[str, Any], viewer: str) -> str | None:
    """A reply to press as each may read it: never public; the replier to anonymous press is not told whom he answered."""
    sender = state.player(d["player"])
    reader = next((p for p in state.players if p.id == d["reader"]), None)
    own, overseer = _viewer_of(sender), viewer in _OVERSEERS
    if reader is None or viewer not in (*_OVERSEERS, own, _viewer_of(reader)):
        return None
    who = "Anonymous" if d.get("anonymous") and viewer not in (*_OVERSEERS, own) else (sender.nation or sender.name)
    if viewer == _viewer_of(reader) and not overseer:
        return f"Press from {who} in reply to your press: {d['text']}"
    answered = "the writer of the anonymous press you read" if d.get("blind") and not overseer else (reader.nation or reader.name)
    return f"Press from {who} in reply to {answered}: {d['text']}"


def _tell_moderated(state: GameState, event: Event, viewer: str) -> str | None:
    d = event.data
    return MODERATED[d["action"]].format(reason=d["reason"], hours=d.get("hours", 0), due=d.get("due", ""))


def _tell_bounce(state: GameState, event: Event, viewer: str) -> str | None:
    if viewer not in _OVERSEERS:
        return None
    d = event.data
    why = " ".join(x for x in (d.get("status", ""), d.get("reason", "")) if x)
    return f"A letter to {state.player(d['player']).name} bounced" + (f": {why}." if why else ".")


def _tell_kicked(state: GameState, event: Event, viewer: str) -> str | None:
    who = state.player(event.data["player"])
    return f"The moderator took {_label(who)} out of the game: {event.data['reason']}. {who.nation or 'The seat'} plays by its defaults."


def _tell_links_revoked(state: GameState, event: Event, viewer: str) -> str | None:
    if viewer not in _OVERSEERS:  # the moderator's own business: nobody else learns whose letter went astray
        return None
    who = _reader_named(state, event.data["reader"])
    return f"The moderator revoked the page links of {who}: {event.data['reason']}. Later letters carry a new one."


def _tell_kick_lifted(state: GameState, event: Event, viewer: str) -> str | None:
    who = state.player(event.data["player"])
    return f"The moderator gave {who.nation or 'the seat'} back to {who.name}" + (
        f": {event.data['reason']}." if event.data.get("reason") else "."
    )


def _tell_observer_asked(state: GameState, event: Event, viewer: str) -> str | None:
    if viewer not in _OVERSEERS:
        return None
    return f"{event.data['name']} asked to watch the game (observer {event.data['observer']}); APPROVE or DENY."


def _tell_observer_joined(state: GameState, event: Event, viewer: str) -> str | None:
    return f"{event.data['name']} watches the game from now on (observer {event.data['observer']})."


def _tell_observer_left(state: GameState, event: Event, viewer: str) -> str | None:
    held = state.table.get(f"observer:{event.data['observer']}")
    if held and held[1] == "asked" and viewer not in _OVERSEERS:
        return None  # a request turned down is the moderator's business
    name = held[0] if held else f"observer {event.data['observer']}"
    verb = "no longer watches the game" if held and held[1] == "watching" else "will not watch the game"
    return f"{name} {verb}" + (f": {event.data['reason']}." if event.data.get("reason") else ".")


def _tell_queued(state: GameState, event: Event, viewer: str) -> str | None:
    """Orders kept are the player's secret until played: only he and the overseers read them."""
    who = state.player(event.data["player"])
    if viewer not in (*_OVERSEERS, _viewer_of(who)):
        return None
    return f"{_label(who)} sent orders before the turn came; kept until it does: " + "; ".join(event.data["lines"]) + "."


def _tell_queue_taken(state: GameState, event: Event, viewer: str) -> str | None:
    who = state.player(event.data["player"])
    if viewer not in (*_OVERSEERS, _viewer_of(who)):
        return None
    return f"{_label(who)}'s turn came; the orders sent before it are played now: " + "; ".join(event.data["lines"]) + "."


RULES = PhaseRules(
    name="table",
    apply={
        "DeadlineSet": _apply_deadline_set,
        "DeadlinePassed": _apply_deadline_passed,
        "MailBounced": _unchanged,
        "PressSent": _unchanged,
        "Moderated": _apply_moderated,
        "TimezoneSet": _apply_timezone,
        "MailPreferenceSet": _apply_mail,
        "PlayerReplaced": _apply_replaced,
        "AbsenceNoted": _apply_absence,
        "PlayerKicked": _apply_kicked,
        "KickLifted": _apply_kick_lifted,
        "LinksRevoked": _apply_links_revoked,
        "ObserverAsked": _apply_observer_asked,
        "ObserverJoined": _apply_observer_joined,
        "ObserverLeft": _apply_observer_left,
        "OrdersQueued": _apply_queued,
        "QueuedOrdersTaken": _apply_queue_taken,
    },
    decide={
        SetDeadline: _decide_deadline_set,
        Moderate: _decide_moderated,
        NoteAbsence: _decide_absence,
        ReplacePlayer: _decide_replaced,
        SetTimezone: _decide_timezone,
        SetMailPreference: _decide_mail,
        SendPress: _decide_press,
        NoteBounce: _decide_bounce,
        Kick: _decide_kick,
        RevokeLinks: _decide_revoke,
        AskToObserve: _decide_ask,
        AdmitObserver: _decide_admit,
        DismissObserver: _decide_dismiss,
        QueueOrders: _decide_queue,
        TakeQueued: _decide_take_queued,
    },
    inputs={
        "DeadlineSet": lambda s, d: SetDeadline(d["due"]),
        "MailBounced": lambda s, d: NoteBounce(d["player"], d.get("status", ""), d.get("reason", "")),
        "Moderated": lambda s, d: Moderate(d["action"], d["reason"], d.get("due", ""), d.get("hours", 0)),
        "TimezoneSet": lambda s, d: SetTimezone(d["player"], d["zone"]),
        "MailPreferenceSet": lambda s, d: SetMailPreference(d["player"], d["delivery"], d["pictures"]),
        "PlayerReplaced": lambda s, d: ReplacePlayer(d["player"], d["name"], d["reason"], bot=d.get("bot", "")),
        "AbsenceNoted": lambda s, d: NoteAbsence(d["player"], d["from"], d["to"], d.get("reason", "")),
        "PressSent": lambda s, d: SendPress(d["player"], tuple(d["to"]), d["text"], d.get("anonymous", False),
                                            d.get("reader"), d.get("reply", 0), d.get("blind", False)),
        "PlayerKicked": lambda s, d: Kick(d["player"], d["reason"]),
        "KickLifted": lambda s, d: Kick(d["player"], d["reason"], lift=True),
        "LinksRevoked": lambda s, d: RevokeLinks(d["reader"], d["reason"]),
        "ObserverAsked": lambda s, d: AskToObserve(d["observer"], d["name"]),
        "ObserverJoined": lambda s, d: AdmitObserver(d["observer"], d.get("reason", "")),
        "ObserverLeft": lambda s, d: DismissObserver(d["observer"], d.get("reason", "")),
        "OrdersQueued": lambda s, d: QueueOrders(d["player"], tuple(d["lines"])),
        "QueuedOrdersTaken": lambda s, d: TakeQueued(d["player"], tuple(d["lines"])),
    },
    narrate={
        "DeadlineSet": _tell_deadline_set,
        "DeadlinePassed": _tell_deadline_passed,
        "AbsenceNoted": _tell_absence,
        "PlayerReplaced": _tell_replaced,
        "TimezoneSet": _tell_nobody,
        "MailPreferenceSet": _tell_nobody,
        "PressSent": _tell_press,
        "Moderated": _tell_moderated,
        "MailBounced": _tell_bounce,
        "PlayerKicked": _tell_kicked,
        "KickLifted": _tell_kick_lifted,
        "LinksRevoked": _tell_links_revoked,
        "ObserverAsked": _tell_observer_asked,
        "ObserverJoined": _tell_observer_joined,
        "ObserverLeft": _tell_observer_left,
        "OrdersQueued": _tell_queued,
        "QueuedOrdersTaken": _tell_queue_taken,
    },
)
