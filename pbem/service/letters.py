"""Composing the mail a batch of events causes, into the outbox.

Every letter is rendered from a per-viewer view or prompt, never from raw
state, and goes into the outbox in the same transaction as the events, so a
crash can neither lose nor duplicate it. Message-IDs derive from the game
version and the letter's purpose: a retried transaction writes the same ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pbem.mail.render import Picture, RenderedMail, Renderer, build_message, make_message_id
from pbem.mail.tokens import MODERATOR, game_address, is_bot_address, press_reply_address, reply_address
from pbem.rules.branches import restored
from pbem.rules.core.events import Event
from pbem.rules.core.prompt import Prompt
from pbem.rules.core.state import GameState, Player
from pbem.rules.engine import apply, describe_event, pending
from pbem.rules.table import mail_preference, press_readers, seat_generation, timezone_of
from pbem.rules.turn import phase_title
from pbem.rules.view import variants_in_force

from .asks import prompt_context
from .combined import RANK, Part, combine, most_pressing
from .deadline_text import deadline_in, short_deadline
from .digests import GATHERED, digest_id, gather, part_of
from .links import letter_link
from .pictures import prompt_picture
from .positions import others_positions, own_position, report_span
from .press_replies import invitation
from .settings import Settings
from .variant_notes import VARIANT_NOTES
from .waiting import NEWS, UPDATE, Waiting

HELP_LINES = (
    "One order per line; case does not matter; names may be abbreviated.",
    "HELP lists the orders; HELP AREA Sinai or HELP CARD Astronomy explains one.",
    "Lines starting with # are ignored.",
)


#: An acknowledgement lists at most this many accepted orders, and this many refused lines;
#: the rest are counted, so a message of a million lines still gets a short answer.
ACK_MAX_LINES = 60
ACK_MAX_ERRORS = 20
#: Notes (HELP answers included) an acknowledgement repeats; the same note is given once.
ACK_MAX_NOTES = 8
#: Lines the one-line list of ignored text quotes.
ACK_MAX_IGNORED = 4


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bounded_notes(notes: Sequence[str]) -> list[str]:
    unique = list(dict.fromkeys(notes))
    kept = [_clip(n, 4000) for n in unique[:ACK_MAX_NOTES]]
    if len(unique) > ACK_MAX_NOTES:
        kept.append(f"... and {len(unique) - ACK_MAX_NOTES} more notes (ask one HELP at a time).")
    return kept


def _ignored_line(ignored: Sequence[str]) -> str:
    """Text that was no order, in one short line: quoted, clipped, the rest counted."""
    if not ignored:
        return ""
    shown = ", ".join(f'"{_clip(i, 30)}"' for i in ignored[:ACK_MAX_IGNORED])
    more = len(ignored) - ACK_MAX_IGNORED
    return shown + (f" and {more} more line{'s' if more != 1 else ''}" if more > 0 else "") + "."


@dataclass
class Letters:
    """Builds outbox rows for one game within one unit of work."""

    uow: object
    settings: Settings
    renderer: Renderer
    reply_key: bytes
    now: datetime
    sent: list[tuple[str, str]] = field(default_factory=list)
    #: The report each recipient got in this unit of work: the prompts it causes answer it.
    reports_sent: dict[str, str] = field(default_factory=dict)
    #: The parts of the letter each reader of a game got in this unit of work (`combined`): later ones join it.
    together: dict[tuple, list[Part]] = field(default_factory=dict)
    #: The letters waiting in the outbox for what follows them (`waiting`), read once a unit of work.
    _waiting: Waiting | None = None
    #: The ids of letters of this unit of work that wait (news): a part that must go now sends them.
    held: set = field(default_factory=set)

    def thread_root(self, game_id: str, recipient: str) -> str:
        """The Message-ID of a player's first letter of a game (the start letter), which every later one references.

        Made from the game and the address only, so every letter can name it
        and a mail client shows the whole game as one conversation.
        """
        return make_message_id(f"{game_id}:thread:{recipient}", self.settings.domain)

    def turn_root(self, game_id: str, turn: int, recipient: str) -> str:
        """The Message-ID every letter of one turn to one reader refers to: the turn's thread (issue 31)."""
        return make_message_id(f"{game_id}:turn:{turn}:{recipient}", self.settings.domain)

    def thread_headers(self, game_id: str, recipient: str, turn: int | None, message_id: str, topic: str
                   ) -> tuple[str, list[str], dict[str, str]]:
        """(subject, References, extra header fields) of a letter of the game's turn ``turn``.

        Gmail threads letters whose subjects are the same (but for "Re:") and whose References name an id
        seen before or the same id each time; Outlook's conversations go by the subject; Apple Mail and
        Thunderbird by References (docs/mail.md, "One conversation per turn"). So every letter of a turn
        to one reader bears the turn's subject and refers to the game's first letter and to the turn's own
        id, and what the letter is goes in its first line and in X-Pbem-Topic. Without a turn (a letter
        about the table, not the play) the topic is the subject.
        """
        root = self.thread_root(game_id, recipient)
        if turn is None:
            return topic, [root] if message_id != root else [], {}
        subject = f"[{game_id}] Turn {turn}" if turn else f"[{game_id}] Setup"
        refs = [r for r in (root, self.turn_root(game_id, turn, recipient)) if r != message_id]
        return subject, refs, {"X-Pbem-Topic": topic}

    def _post(
        self,
        kind: str,
        state: GameState,
        recipient: str,
        context: dict,
        purpose: str,
        *,
        reply_to: str | None = None,
        in_reply_to: str | None = None,
        message_id: str | None = None,
        auto_submitted: str | None = None,
        picture: Picture | None = None,
        digest: tuple[int, bool] | None = None,
        update: bool = False,
        news: bool = False,
    ) -> str:
        """Queue one letter, or join it to the letter this writer already queued for the same reader in this
        unit of work when both are of the kinds that travel together (`combined`); the letter's id either way.

        ``digest`` (the turn, and whether it ends with this letter) when the reader takes a digest: a report
        or an answer that refused nothing joins his held letter of the turn instead (`digests`). ``news``: a
        report to a player asked nothing now, which waits for what follows it (`waiting`); a letter that goes
        now takes any news waiting for its reader along."""
        if is_bot_address(recipient):  # a seat a bot plays reads nothing: the server answers for it
            return ""
        context = {**context, "board_cid": picture.content_id if picture is not None else None,
                   "page_link": letter_link(self.uow, self.settings, self.reply_key, state, recipient)}
        rendered = self.renderer.render(kind, context)
        message_id = message_id or make_message_id(f"{state.game_id}:{state.version}:{purpose}:{recipient}", self.settings.domain)
        # a prompt's first line says what is asked and by when: a letter it joins opens with it
        asked = rendered.text.split("\n", 1)[0] if kind == "prompt" else ""
        part = Part(kind, rendered, message_id, reply_to, in_reply_to, auto_submitted, picture, asked, state.turn)
        self.sent.append((kind, recipient))
        # An answer that refused a line travels alone, under its own subject: the player must see it first.
        refused = kind == "ack" and (context["errors"] or context["held"] or context["nothing_found"])
        together = kind in RANK and not refused and not update
        if digest is not None and kind in GATHERED and not refused:
            where = (state.game_id, recipient, digest[0])
            pieces = gather(self.uow.outbox, self.together.get(where), part, where, self.now,
                            lambda head, whole, shown: self._build(state.game_id, recipient, head, whole, shown),
                            self.settings.domain, self.settings.outbox_lease)
            if pieces is not None:
                self.together[where] = pieces
                held = digest_id(*where, self.settings.domain)
                if digest[1]:
                    self.uow.outbox.release(held, self.now)
                return held
        key = (state.game_id, recipient)
        joined = self.together.get(key) if together else None
        if joined is None and together and self.settings.gather_minutes:
            news_row = self.waiting(state.game_id).of(NEWS).get(recipient)  # news of an earlier unit of work
            if news_row is not None:
                joined = self.together[key] = [part_of(bytes(news_row.raw), news_row.message_id, part.turn)]
                self.held.add(news_row.message_id)
                self.waiting(state.game_id).forget(NEWS, recipient)
        if joined is not None:
            joined.append(part)
            whole, shown = combine(joined)
            raw = self._build(state.game_id, recipient, joined[0], whole, shown)
            head = joined[0].message_id
            still = head in self.held and news
            self.uow.outbox.rewrite(head, raw, NEWS if still else most_pressing(joined).kind)
            if head in self.held and not news:  # news waited for this letter: it goes now, with it
                self.uow.outbox.release(head, self.now)
                self.held.discard(head)
            return head
        raw = self._build(state.game_id, recipient, part, rendered, picture)
        wait = timedelta(minutes=self.settings.gather_minutes)
        if update:  # a prompt's update: written over the one waiting, or waiting from now on (`new_prompts`)
            waiting = self.waiting(state.game_id).of(UPDATE).get(recipient)
            if waiting is None:
                self.uow.outbox.enqueue(message_id=message_id, recipient=recipient, raw=raw, kind=UPDATE,
                                        game_id=state.game_id, now=self.now, send_at=self.now + wait)
                self.waiting(state.game_id).remember(UPDATE, recipient, message_id)
            else:
                self.uow.outbox.rewrite(message_id, raw, UPDATE)
            return message_id
        news = news and together and bool(self.settings.gather_minutes)
        self.uow.outbox.enqueue(message_id=message_id, recipient=recipient, raw=raw, kind=NEWS if news else kind,
                                game_id=state.game_id, now=self.now, send_at=self.now + wait if news else None)
        if news:
            self.held.add(message_id)
        if together:
            self.together[key] = [part]
        return message_id

    def _build(self, game_id: str, recipient: str, head: Part, rendered: RenderedMail, picture: Picture | None) -> bytes:
        """The message of a letter whose headers are ``head``'s (its first part's) and whose body is ``rendered``."""
        subject, references, extra = self.thread_headers(game_id, recipient, head.turn, head.message_id, rendered.subject)
        return build_message(
            sender=self.settings.sender,
            recipient=recipient,
            rendered=RenderedMail(subject, rendered.text, rendered.html),
            message_id=head.message_id,
            reply_to=head.reply_to,
            in_reply_to=head.in_reply_to,
            references=references,
            extra_headers=extra,
            date=self.now,
            auto_submitted=head.auto_submitted,
            picture=picture,
        )

    def deadline_for(self, state: GameState, player_id: int) -> tuple[str | None, str]:
        """(the deadline in force as a letter to this player shows it, as a subject shows it): his zone, UTC beside."""
        return deadline_in(state.deadline, timezone_of(state, player_id))

    def moderator_reply_to(self, state: GameState) -> str:
        """The moderator's own reply address (player 0): replying to the server's mail gives moderator orders."""
        return reply_address(self.reply_key, state.game_id, MODERATOR, self.settings.domain, self.settings.local_part)

    def press(self, state: GameState, event: Event, purpose: str, version: int) -> None:
        """Deliver a press message at once to each of its readers, signed unless it is grey.

        Each letter's Reply-To is the reader's press reply address for the press at ``version``: pressing
        Reply answers its writer by press (pbem.service.press_replies), which the letter says.
        """
        data = event.data
        for reader in press_readers(state, data):
            viewer = f"player:{reader.nation.lower()}" if reader.nation else "observer"
            text = describe_event(state, event, viewer) or ""
            sender = state.player(data["player"])
            title = "Anonymous press" if data.get("anonymous") else f"Press from {sender.nation or sender.name}"
            reply_to = press_reply_address(self.reply_key, state.game_id, reader.id, version, self.settings.domain,
                                           self.settings.local_part, seat_generation(state, reader.id))
            lines = [text, invitation(state, data), "To write to others, use PRESS TO <nation> ... END."]
            self.notice(self.email_of(state, reader), state.game_id, title, lines, f"{purpose}:{reader.id}", reply_to=reply_to,
                        turn=state.turn)

    def announce(self, state: GameState, text: str, purpose: str, moderator: str | None = None,
                 title: str = "From the moderator") -> None:
        """Tell every player at once, in his own thread of the game; and the ``moderator`` (his address) when
        the news is not his own doing (an absence, a deadline moved for one). ``title``: the subject, which says
        what happened, so a player reading his list of mail knows it."""
        for player in state.players:
            self.notice(self.email_of(state, player), state.game_id, title, [text], f"{purpose}:{player.id}",
                        reply_to=self.reply_to(state, player), turn=state.turn)
        if moderator and moderator != self.settings.sender:
            self.notice(moderator, state.game_id, "For the moderator", [text], f"{purpose}:moderator",
                        reply_to=self.moderator_reply_to(state))

    def reply_to(self, state: GameState, player: Player) -> str:
        return reply_address(
            self.reply_key, state.game_id, player.id, self.settings.domain, self.settings.local_part,
            seat_generation(state, player.id),
        )

    def email_of(self, state: GameState, player: Player) -> str:
        """The address of record of a player's seat."""
        row = self.uow.players.by_id(player.id) if hasattr(self.uow.players, "by_id") else None
        if row is None:
            raise LookupError(f"no address of record for player {player.id}")
        return row.email

    def label(self, player: Player) -> str:
        return f"{player.name} ({player.nation})" if player.nation else player.name

    def _common(self, state: GameState, chain_head: str) -> dict:
        return {
            "game": state.game_id,
            "turn": state.turn or None,
            "phase": phase_title(state, state.phase),
            "chain_head": chain_head[:16],
            "variants": variants_in_force(state),
            "span": False,  # a report covering several phases says so in its phase line
            "due": short_deadline(state.deadline),
        }

    def start(self, state: GameState, chain_head: str, secrets: dict[int, str], seat: dict | None = None) -> None:
        """The first letter of the game to each player in ``secrets`` (all, or a replacement alone).

        ``seat``: for a replacement joining a game under way (pbem.service.seats), whose seat he took and why,
        what is asked of him and his nation's position, which the letter tells first.
        """
        for player in (p for p in state.players if p.id in secrets):
            self._post(
                "start",
                state,
                self.email_of(state, player),
                {
                    **self._common(state, chain_head),
                    "player": player.name,
                    "players": [{"name": p.name, "nation": p.nation or "(to choose)"} for p in state.players],
                    "options": dict(state.options),
                    "variant_notes": [VARIANT_NOTES[v] for v in variants_in_force(state)],
                    "seed_commitment": state.seed_commitment,
                    "reply_address": self.reply_to(state, player),
                    "secret": secrets[player.id],
                    "rules_help": list(HELP_LINES),
                    "seat": seat,
                    "place_order": [state.player(pid).name for pid in state.place_order] if not state.turn else [],
                    "moderator": self._moderator_named(state),
                },
                "start",
                reply_to=self.reply_to(state, player),
                message_id=self._start_id(state, player),
            )

    def _moderator_named(self, state: GameState) -> str:
        """Who moderates, as a start letter says it (a sentence): a moderator of the game's own, or the operator.

        Never his address: no player reads another's address (docs/audit.md, "Metadata, addresses and
        secrets"); what the moderator does reaches every player in the game's letters, with his reason.
        """
        row = self.uow.games.get(state.game_id) if hasattr(self.uow, "games") else None
        address = getattr(row, "moderator_email", "") or ""
        if address and address != self.settings.sender:
            return ("This game has a moderator of its own: each thing he does (a pause, a deadline moved, a seat "
                    "handed on) is told to you with his reason.")
        return "This game is moderated by the server's operator."

    def _start_id(self, state: GameState, player: Player) -> str:
        """The thread's root for a first letter to this address; another id when the game wrote to it before
        (an observer who takes a seat, a player handed his own seat again to renew his SECRET)."""
        recipient = self.email_of(state, player)
        root = self.thread_root(state.game_id, recipient)
        if self.uow.outbox.by_message_id(root) is None:
            return root
        return make_message_id(f"{state.game_id}:start:{player.id}:{seat_generation(state, player.id)}:{recipient}",
                               self.settings.domain)

    def prompt(self, state: GameState, prompt: Prompt, chain_head: str, update: bool = False) -> None:
        """Ask one player for one decision: what and by when first, then his numbers, the orders, the rules.

        A prompt about places (its orders name areas) shows the part of the board round them, those areas
        outlined, when the server sends pictures: a player on a phone decides where to move or which city to
        lose from it, not from a map of the whole board.

        ``update``: the same decision brought up to date by what others did (an offer made to him): it waits
        `Settings.gather_minutes` in the outbox for the updates that follow, each written over it
        (`updates`); a prompt sent at once takes the place of one waiting.
        """
        player = state.player(prompt.player_id)
        recipient = self.email_of(state, player)
        waiting = self.waiting(state.game_id).of(UPDATE).get(recipient)
        if waiting is not None and not update:
            self.uow.outbox.drop_unsent(waiting.message_id)
            self.waiting(state.game_id).forget(UPDATE, recipient)
        asked = prompt_context(state, prompt, phase_title(state, state.phase))
        viewer = f"player:{player.nation.lower()}" if player.nation else "observer"
        pictures = mail_preference(state, player.id)[1]
        picture = prompt_picture(state, self.settings, viewer, asked["areas"]) if asked["areas"] and pictures else None
        self._post(
            "prompt",
            state,
            recipient,
            {
                **self._common(state, chain_head),
                **asked,
                "player": self.label(player),
                "deadline": self.deadline_for(state, player.id)[0],
                "due": self.deadline_for(state, player.id)[1],
                "help_lines": list(HELP_LINES),
            },
            f"prompt:{prompt.step}:{prompt.who}",
            message_id=waiting.message_id if update and waiting is not None else None,
            update=update,
            reply_to=self.reply_to(state, player),
            in_reply_to=self.reports_sent.get(recipient),
            auto_submitted="auto-generated",
            picture=picture,
        )

    def new_prompts(self, before: dict[str, Prompt], state: GameState, chain_head: str) -> None:
        """Prompt everyone whose pending decision is new since ``before``.

        A decision only brought up to date by another's orders (the same step but for what follows its ":",
        a trade offer made to him) is an update that waits a while for more (`prompt`); one that waits already
        is written again from the game as it is now, and taken back when its reader is asked nothing more."""
        asked = pending(state)
        waiting = self.waiting(state.game_id).of(UPDATE) if self.settings.gather_minutes else {}
        for who, prompt in asked.items():
            old = before.get(who)
            same = old is not None and old.player_id == prompt.player_id
            recipient = self.email_of(state, state.player(prompt.player_id))
            wrote = (state.game_id, recipient) in self.together  # he wrote: what waits for him goes with his answer
            if same and old.step == prompt.step:
                if recipient in waiting:
                    self.prompt(state, prompt, chain_head, update=not wrote)
                continue
            update = (same and old.step.partition(":")[0] == prompt.step.partition(":")[0]
                      and bool(self.settings.gather_minutes) and not wrote)
            self.prompt(state, prompt, chain_head, update=update)
        still = {self.email_of(state, state.player(p.player_id)) for p in asked.values()}
        for recipient, row in list(waiting.items()):
            if recipient not in still:
                self.uow.outbox.drop_unsent(row.message_id)
                del waiting[recipient]

    def waiting(self, game_id: str) -> Waiting:
        """The game's letters waiting in the outbox for what follows them (`waiting`)."""
        if self._waiting is None:
            self._waiting = Waiting(self.uow.outbox, game_id, self.now, self.settings.outbox_lease)
        return self._waiting

    def acknowledge(
        self,
        state: GameState,
        player: Player | None,
        recipient: str,
        *,
        accepted: Sequence[str],
        errors: Sequence[dict],
        on_file: Sequence[str],
        notes: Sequence[str],
        chain_head: str,
        in_reply_to: str | None,
        ignored: Sequence[str] = (),
        origin: str = "",
        nothing_found: bool = False,
        key: str | None = None,
        answers_only: bool = False,
        picture: Picture | None = None,
        held: tuple[str, str] = ("", ""),
        given_in: int | None = None,
    ) -> None:
        """What the server understood of one message, bounded however much the message held.

        ``given_in``: the turn the orders were given in, whose digest the answer joins for a reader who takes
        digests (his orders may have ended it).

        A message with no order in it says so first (subject and first line),
        with what is still needed and the order block to edit; so does one
        whose orders closing a step were ``held`` (subject, first line).
        """
        mine = [p for p in pending(state).values() if player is not None and p.player_id == player.id]
        # a digest reader's answer that only says his orders are on file waits for the digest; one that
        # answers a question, shows a map or confirms his MAIL order goes now
        quiet = (player is not None and mail_preference(state, player.id)[0] == "digest" and not notes
                 and not answers_only and picture is None and not any(a.startswith("MAIL ") for a in accepted))
        self._post(
            "ack",
            state,
            recipient,
            {
                **self._common(state, chain_head),
                "player": self.label(player) if player else "moderator",
                "accepted": [_clip(a) for a in accepted[:ACK_MAX_LINES]],
                "accepted_left": max(0, len(accepted) - ACK_MAX_LINES),
                "errors": [
                    {**e, "text": _clip(str(e["text"])), "reason": _clip(str(e["reason"]), 300)} for e in errors[:ACK_MAX_ERRORS]
                ],
                "error_count": len(errors),
                "errors_left": max(0, len(errors) - ACK_MAX_ERRORS),
                "ignored": _ignored_line(ignored),
                # the answer's first line already says what is still needed: the same question is not repeated
                "on_file": [o for o in on_file if not (nothing_found and o.startswith("Still needed from you:"))],
                "deadline": self.deadline_for(state, player.id)[0] if player else state.deadline,
                # a player hears a deadline only when something is asked of him: another's deadline misleads
                "asked": bool(mine) or player is None,
                "notes": _bounded_notes(notes),
                # what a message with no order in it is answered first: what is still needed
                "nothing_found": (
                    ("Still needed from you: " + mine[0].question if mine else "Nothing more is needed from you now.")
                    if nothing_found
                    else ""
                ),
                "template": mine[0].template if mine and nothing_found else "",
                "origin": origin,
                "answers_only": answers_only,
                "held_subject": held[0],
                "held": held[1],
            },
            f"ack:{key or in_reply_to or 'cli'}",
            reply_to=self.reply_to(state, player) if player else self.moderator_reply_to(state),
            in_reply_to=in_reply_to,
            picture=picture,
            digest=(state.turn if given_in is None else given_in, False) if quiet else None,
        )

    def reports(
        self,
        before: GameState,
        events: Sequence[Event],
        after: GameState,
        chain_head: str,
        since: GameState,
        watchers: Sequence[tuple[str, str]] = (),
        picture: Picture | None = None,
    ) -> None:
        """When a phase ends, every player hears what happened since it began, from their own view.

        ``before`` is the state the ``events`` start from; ``since`` names the phase the report begins with.
        ``watchers`` (name, address) are the observers: they read it as the public does.
        """
        game_address_ = game_address(after.game_id, self.settings.domain, self.settings.local_part)
        readers = [
            (self.label(p), f"player:{p.nation.lower()}" if p.nation else "observer", self.email_of(after, p),
             self.reply_to(after, p), p)  # a reply to a report is a reply to the game, like one to a prompt
            for p in after.players
        ]
        playing = {reader[2] for reader in readers}  # an observer who took a seat reads his report as a player
        readers += [(f"{name} (observer)", "observer", a, game_address_, None) for name, a in watchers if a not in playing]
        # Each event is told from the state it happened in: the same states for every reader, so folded once.
        steps = []
        state = before
        for event in events:
            steps.append((state, event))
            # the events given skip what a rollback superseded: at the rollback the state is already its target's
            state = restored(state, state, state.version + 1) if event.type == "RolledBack" else apply(state, event)
        told: dict[str, list[dict]] = {}  # what happened as each viewer reads it (observers read alike)
        asked = {p.player_id for p in pending(after).values()}
        for label, viewer, recipient, reply_to, reader in readers:
            if viewer not in told:
                told[viewer] = [{"text": text, "cites": list(event.cites)}
                                for state, event in steps if (text := describe_event(state, event, viewer))]
            happened = [dict(entry, cites=list(entry["cites"])) for entry in told[viewer]]
            span = self._common(since, chain_head)
            ended = next((e for e in events if e.type == "GameEnded"), None)
            span["result"] = f"{ended.data['winner']} wins" if ended is not None else ""
            if (since.turn, since.phase) != (after.turn, after.phase):
                until = phase_title(after, after.phase)
                began = f"turn {since.turn}, {span['phase']}" if since.turn else span["phase"]
                span["phase"] = f"{began} to turn {after.turn}, {until}"
                span["span"] = True  # the phase line already names its turns
            nation = reader.nation if reader is not None else None
            # observers read a digest (issue 31); a player as he chose with MAIL
            delivery, pictures = mail_preference(after, reader.id) if reader is not None else ("digest", True)
            turn_over = after.turn != since.turn or ended is not None or after.finished
            span.update(report_span(since, after, span["result"], reader is not None and reader.id in asked))
            sent = self._post(
                "report",
                after,
                recipient,
                {
                    **span,
                    "player": label,
                    "happened": happened,
                    "own": own_position(after, nation) if nation else [],
                    "others": others_positions(after, viewer, nation),
                },
                f"report:{before.phase}",
                reply_to=reply_to,
                picture=picture if pictures else None,
                digest=(since.turn, turn_over) if delivery == "digest" else None,
                news=reader is not None and reader.id not in asked,  # nothing asked of him: it may wait a while
            )
            if delivery != "digest":  # a prompt answers the report it follows, not a digest still held
                self.reports_sent[recipient] = sent

    def notice_id(self, purpose: str, recipient: str) -> str:
        """The Message-ID of the notice for ``purpose`` to ``recipient``: whether it was sent can be looked up."""
        return make_message_id(f"notice:{purpose}:{recipient}", self.settings.domain)

    def notice(
        self, recipient: str, game: str | None, title: str, lines: Sequence[str], purpose: str, *, reply_to: str | None = None,
        first: bool = False, in_reply_to: str | None = None, turn: int | None = None,
    ) -> None:
        """A short letter; ``first``: it opens the recipient's thread of the game when none was opened yet;
        ``in_reply_to``: the message it answers, so it shows as the answer to it; ``turn``: news of the play in
        that turn, which joins the turn's thread (a letter about the table alone has a subject of its own)."""
        if is_bot_address(recipient):
            return
        rendered = self.renderer.render("notice", {"game": game, "title": title, "lines": list(lines),
                                                   "page_link": letter_link(self.uow, self.settings, self.reply_key, game, recipient)})
        message_id = self.notice_id(purpose, recipient)
        if first and game and self.uow.outbox.by_message_id(self.thread_root(game, recipient)) is None:
            message_id = self.thread_root(game, recipient)
        if game:
            subject, references, extra = self.thread_headers(game, recipient, turn, message_id, rendered.subject)
        else:
            subject, references, extra = rendered.subject, [], {}
        raw = build_message(
            sender=self.settings.sender,
            recipient=recipient,
            rendered=RenderedMail(subject, rendered.text, rendered.html),
            message_id=message_id,
            reply_to=reply_to,
            in_reply_to=in_reply_to,
            references=references,
            extra_headers=extra,
            date=self.now,
        )
        self.uow.outbox.enqueue(message_id=message_id, recipient=recipient, raw=raw, kind="notice", game_id=game, now=self.now)
        self.sent.append(("notice", recipient))
