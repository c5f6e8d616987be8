"""A game's live page for one reader (pbem/web): who may open it, and what it shows at a version.

Why here, in the service layer: a page joins the store (the log, snapshots,
the seats' addresses), the per-viewer views of the rules, the audit's
history and explanations and the board picture, as a letter does; the web
entry point (`pbem.web`) only routes requests to these use cases.

A link is a signed token per reader and game (`pbem.mail.tokens.page_token`,
made with the game's key as reply addresses are). It names a seat (``p3``),
an observer by his number (``o2``) or the moderator. It stops working when
the seat changes hands (REPLACE), when its player is kicked, when an observer
is dismissed, and when the moderator revokes it (REVOKE); ``LINK`` by mail
sends the reader his current one. Every refusal is the same `None`, so a
caller cannot tell a wrong game from a wrong token.

What a page shows is built from the same per-viewer views as the letters
(`pbem.rules.view`, `positions`, `asks`, `pbem.audit.history`), so a page
holds only what its reader may know at the version shown.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from pbem.audit.explain import explain
from pbem.audit.history import Told, history_after, history_told
from pbem.audit.transfer import dump_line, export_records
from pbem.mail.tokens import MODERATOR, page_token, page_token_matches, reply_address
from pbem.picture import board_svg
from pbem.rules import engine as rules
from pbem.rules.core.events import Event
from pbem.rules.core.state import GameState, Player
from pbem.rules.table import kicked, observers, seat_generation, timezone_of
from pbem.rules.turn import phase_title
from pbem.rules.view import check_viewer, sees_prompt, view, viewer_label
from pbem.store.events import RecordedEvent
from pbem.store.unit_of_work import UnitOfWork

from .archive import nation_rows
from .asks import prompt_context
from .deadline_text import deadline_in
from .links import link_generation
from .positions import own_position, others_positions
from .projector import load_state
from .settings import Settings
from .verification import verify_lines

__all__ = ["Opened", "PageCache", "board", "explanation", "export_text", "form_proof", "game_page", "new_form_id",
           "open_page", "orders_message", "verify_page"]

#: Log entries shown beside the board: those of the version's own turn, at most this many around it.
ENTRIES_AROUND = 40


@dataclass(frozen=True)
class Opened:
    """A link that opened: the game as it stands now and who reads it."""

    game_id: str
    reader: str  # "p3", "o2", "moderator"
    viewer: str  # "player:egypt", "observer", "moderator"
    state: GameState  # now
    player: Player | None  # the seat, for a player's link
    name: str  # who the reader is, in words
    key: bytes  # the game's key: the page's forms are signed with it (never shown)


def _viewer(state: GameState, reader: str) -> tuple[str, Player | None, str] | None:
    """(viewer, seat, name) of a reader who is in the game now, else None."""
    if reader == "moderator":
        return "moderator", None, "the moderator"
    if reader == "auditor":  # reads what an observer reads until the game ends, then everything (docs/audit.md)
        viewer = check_viewer(state, "auditor")
        return viewer, None, "an auditor" if viewer == "auditor" else "an auditor (reading what an observer reads until the game ends)"
    number = int(reader[1:])
    if reader.startswith("o"):
        name = observers(state).get(number)
        return None if name is None else ("observer", None, f"{name}, observer")
    seat = next((p for p in state.players if p.id == number), None) if reader.startswith("p") else None
    if seat is None or seat.id in kicked(state):
        return None
    viewer = f"player:{seat.nation.lower()}" if seat.nation else "observer"
    return viewer, seat, f"{seat.name} ({seat.nation})" if seat.nation else seat.name


def form_proof(opened: Opened, key: bytes, form_id: str) -> str:
    """What a page's form carries beside its id to show it was made by this server for this link (CSRF): an
    HMAC of the reader's current link and the form's id. A form of a revoked link no longer proves anything."""
    token = page_token(key, opened.game_id, opened.reader, link_generation(opened.state, opened.reader))
    return hmac.new(key, f"{token}:form:{form_id}".encode("ascii"), hashlib.sha256).hexdigest()[:32]


def open_page(uow: UnitOfWork, game_id: str, reader: str, token: str) -> Opened | None:
    """The game and its reader if ``token`` is this reader's current link to it; None for anything else."""
    if len(game_id) > 64 or len(token) > 64:
        return None
    game = uow.games.get(game_id)
    if game is None:
        return None
    try:
        state = load_state(uow, game_id)
    except (LookupError, ValueError):
        return None
    try:
        found = _viewer(state, reader) if reader in ("moderator", "auditor") or reader[1:].isdigit() else None
    except (ValueError, IndexError):
        found = None
    if found is None:
        return None
    key = bytes.fromhex(game.reply_secret)
    if not page_token_matches(key, game_id, reader, link_generation(state, reader), token):
        return None
    viewer, seat, name = found
    return Opened(game_id, reader, viewer, state, seat, name, key)


class PageCache:
    """Each game's log and each reader's history as far as they were read: a page reads only the events
    recorded since the last one, and a history step reads none.

    What is kept is always a prefix of the log as it stands (checked by the chain hash of its last event), so
    nothing stale is shown: a log that is not what was kept (a restored backup) is read afresh. Bounded, so a
    server with many games keeps only the ones read lately. One per web application (one per process).
    """

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._logs: OrderedDict[str, list[RecordedEvent]] = OrderedDict()
        self._events: OrderedDict[str, tuple[list[Event], str]] = OrderedDict()
        self._told: OrderedDict[tuple[str, str], Told] = OrderedDict()

    def _keep(self, kept: OrderedDict, key: Any, value: Any) -> Any:
        kept[key] = value
        kept.move_to_end(key)
        while len(kept) > self.size:
            kept.popitem(last=False)
        return value

    def log(self, uow: UnitOfWork, state: GameState) -> list[RecordedEvent]:
        """The game's whole log up to ``state``'s version, read from the store only past what was kept (the
        last kept event read again, to be sure the kept log is still the log's beginning)."""
        game_id, head = state.game_id, state.version
        kept = self._logs.get(game_id)
        if kept and len(kept) <= head:
            since = uow.events.read(game_id, after=len(kept) - 1, upto=head)
            if since and since[0].hash == kept[-1].hash:
                return self._keep(self._logs, game_id, kept + since[1:])
        return self._keep(self._logs, game_id, list(uow.events.read(game_id, upto=head)))

    def events(self, uow: UnitOfWork, state: GameState) -> list[Event]:
        """The log's events decoded, as far as `log` reads it; only the new ones decoded on each call (what was
        decoded is kept with the hash of its last event, so a log that is not its continuation is decoded anew)."""
        recorded = self.log(uow, state)
        kept, last = self._events.get(state.game_id, ([], ""))
        if len(kept) > len(recorded) or (kept and recorded[len(kept) - 1].hash != last):
            kept = []
        events = kept + [Event.from_payload(rec.type, rec.payload) for rec in recorded[len(kept):]]
        self._keep(self._events, state.game_id, (events, recorded[-1].hash if recorded else ""))
        return events

    def entries(self, uow: UnitOfWork, state: GameState, viewer: str) -> list[dict[str, Any]]:
        """The history ``viewer`` reads of the game up to ``state``, extended from what was told before."""
        recorded = self.log(uow, state)
        key = (state.game_id, viewer)
        told = self._told.get(key)
        if told is not None and told.version == len(recorded) and told.head == (recorded[-1].hash if recorded else ""):
            self._told.move_to_end(key)
            return told.entries
        if told is not None and 0 < told.version < len(recorded) and told.head == recorded[told.version - 1].hash:
            told = history_after(told, state.game_id, recorded, viewer)
        else:
            told = history_told(state.game_id, recorded, viewer)
        return self._keep(self._told, key, told).entries


def _turn_starts(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first version the reader may see of each turn (setup is turn 0): the page's turn jumps."""
    starts: dict[int, int] = {}
    for entry in entries:
        starts.setdefault(entry["turn"], entry["version"])
    return [{"turn": t, "title": f"Turn {t}" if t else "Setup", "version": v} for t, v in sorted(starts.items())]


def _phase_starts(entries: Sequence[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    """The phases begun in the shown version's turn, each with the version it began at: the page's phase jumps."""
    upto = [e for e in entries if e["version"] <= version]
    if not upto:
        return []
    turn = upto[-1]["turn"]
    return [{"title": e["text"].split(": ", 1)[-1].removesuffix(" begins."), "version": e["version"]}
            for e in entries if e["turn"] == turn and e["type"] == "PhaseBegan"]


def _nearby(entries: Sequence[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    """The entries of the shown version's turn (the turn of the newest entry up to it), up to that version,
    the last ENTRIES_AROUND of them, newest first."""
    upto = [e for e in entries if e["version"] <= version]
    if not upto:
        return []
    turn = upto[-1]["turn"]
    shown = [e for e in upto if e["turn"] == turn]
    return list(reversed(shown[-ENTRIES_AROUND:]))


def game_page(uow: UnitOfWork, cache: PageCache, opened: Opened, version: int | None = None) -> dict[str, Any]:
    """What the reader's page shows at ``version`` (default: now): the context of templates/web/game.html.

    LookupError for a version outside the log. The board, positions and log are the reader's view at that
    version; the open prompt and its order form only at the latest version, where orders can be given.
    """
    now = opened.state
    latest = now.version
    version = latest if version is None else version
    if not 1 <= version <= latest:
        raise LookupError(f"version {version} is outside the log: 1 to {latest}")
    state = now if version == latest else load_state(uow, opened.game_id, upto=version)
    viewer = opened.viewer
    entries = cache.entries(uow, now, viewer)
    seen = view(state, viewer)
    nation = opened.player.nation if opened.player is not None else None
    asks = []
    mine = None
    for prompt in rules.pending(state).values():
        who = state.player(prompt.player_id)
        entry = {"player": who.name, "nation": who.nation or "", "step": phase_title(state, state.phase)}
        if sees_prompt(state, viewer, prompt):
            entry["question"] = prompt.question.split(":", 1)[0]
        asks.append(entry)
        if opened.player is not None and prompt.player_id == opened.player.id and version == latest:
            mine = prompt_context(state, prompt, phase_title(state, state.phase))
    zone = timezone_of(state, opened.player.id) if opened.player is not None else "UTC"
    deadline, due = deadline_in(state.deadline, zone)
    return {
        "game": opened.game_id,
        "reader": opened.name,
        "viewer": viewer,
        "viewer_label": viewer_label(viewer, viewer),
        "version": version,
        "latest": latest,
        "at_latest": version == latest,
        "turn": state.turn,
        "phase": phase_title(state, state.phase) if state.players else "",
        "finished": state.finished,
        "own": own_position(state, nation) if nation and nation in state.nations else [],
        "others": others_positions(state, viewer, nation) if nation else [],
        "nations": [] if nation else nation_rows(seen),
        "asks": asks,
        "deadline": deadline if asks else None,
        "due": due if asks else None,
        "prompt": mine,
        "entries": _nearby(entries, version),
        "phases": _phase_starts(entries, version),
        "turns": _turn_starts(entries),
        "previous": version - 1 if version > 1 else None,
        "next": version + 1 if version < latest else None,
        "variants": seen.get("variants", []),
        "moderator": viewer == "moderator",
        "player_page": opened.player is not None,
    }


def board(uow: UnitOfWork, opened: Opened, version: int | None = None) -> str:
    """The board as the reader sees it at ``version`` (default: now), as SVG. LookupError outside the log."""
    latest = opened.state.version
    version = latest if version is None else version
    if not 1 <= version <= latest:
        raise LookupError(f"version {version} is outside the log: 1 to {latest}")
    state = opened.state if version == latest else load_state(uow, opened.game_id, upto=version)
    return board_svg(state, opened.viewer)


def explanation(uow: UnitOfWork, cache: PageCache, opened: Opened, version: int) -> dict[str, Any]:
    """Why the event at ``version`` happened, as the reader may read it. LookupError when he may not see it."""
    entries = cache.entries(uow, opened.state, opened.viewer)
    entry = next((e for e in entries if e["version"] == version), None)
    if entry is None:
        raise LookupError(f"no entry {version} this reader may see")
    game_id = opened.game_id

    def state_at(upto: int) -> GameState:  # from the nearest snapshot, not from the log's beginning
        return rules.new_game(game_id) if upto == 0 else load_state(uow, game_id, upto=upto)

    told = explain(game_id, cache.log(uow, opened.state), version, opened.viewer, state_at=state_at, now=opened.state,
                   decoded=cache.events(uow, opened.state))
    return {"game": opened.game_id, "reader": opened.name, "entry": entry, "lines": list(told.lines)}


def verify_page(uow: UnitOfWork, cache: PageCache, opened: Opened) -> dict[str, Any]:
    """`pbem verify` as the page's reader may run it (`verification`): the context of templates/web/verify.html."""
    recorded = cache.log(uow, opened.state)
    ended = uow.games.get(opened.game_id).secret_seed if opened.state.finished else None
    ok, lines = verify_lines(opened.game_id, recorded, cache.events(uow, opened.state), ended)
    return {"game": opened.game_id, "reader": opened.name, "ok": ok, "lines": lines,
            "version": opened.state.version}


def export_text(uow: UnitOfWork, cache: PageCache, opened: Opened, now: datetime) -> str:
    """`pbem export --as` the page's reader: the game's log as JSON lines, what he may not read withheld."""
    game = uow.games.get(opened.game_id)
    records = export_records(game, cache.log(uow, opened.state), opened.viewer, exported_at=now.isoformat())
    return "".join(dump_line(record) + "\n" for record in records)


def new_form_id(now: datetime, random_hex: str) -> str:
    """A form's id: the second it was made (8 hex digits), then 24 random ones. The mail a form sends is
    dated by it, so sending the same form again makes the same message, stored once."""
    return f"{int(now.timestamp()):08x}{random_hex[:24]}"


def orders_message(uow: UnitOfWork, settings: Settings, opened: Opened, text: str, form_id: str
                   ) -> tuple[bytes, str, list[str]]:
    """The orders a reader wrote in his page's form, as the mail his client would send: (message, envelope
    sender, recipients). A player's go from his address of record to his reply address, the moderator's
    from his address to the moderator's reply address, so they take the mail path whole: stored first,
    deduplicated (one Message-ID and one date per form shown: the same form sent twice is the same message,
    stored once), read, and answered by mail. PermissionError for an observer, who gives no orders."""
    if opened.player is None and opened.viewer != "moderator":
        raise PermissionError("only a player's or the moderator's page sends orders")
    if not (len(form_id) == 32 and all(c in "0123456789abcdef" for c in form_id)):
        raise ValueError("a form's id is 32 hex digits")
    game = uow.games.get(opened.game_id)
    key = bytes.fromhex(game.reply_secret)
    if opened.player is not None:
        sender = uow.players.by_id(opened.player.id).email
        to = reply_address(key, opened.game_id, opened.player.id, settings.domain, settings.local_part,
                           seat_generation(opened.state, opened.player.id))
    else:
        sender = game.moderator_email
        to = reply_address(key, opened.game_id, MODERATOR, settings.domain, settings.local_part)
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = f"Orders for {opened.game_id} from the game's page"
    message["Date"] = format_datetime(datetime.fromtimestamp(int(form_id[:8], 16), tz=timezone.utc))
    message["Message-ID"] = f"<web.{form_id}@{settings.domain}>"
    message.set_content(text.replace("\r\n", "\n").rstrip("\n") + "\n")
    return bytes(message), sender, [to]
