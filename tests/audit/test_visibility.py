"""Every viewer sees exactly what the rules let him see: bot games by real mail, every letter and every view checked.

Seeded games are played through the running server (`PostOffice`: SMTP on loopback, the outbox into Maildirs):
each player's mail client, driven by a bot, replies with orders, asks STATUS, HAND, BOARD, HISTORY, and sends
press; an observer watches; now and then a deadline passes. Then, against `knowledge.py` (a model written from
the rules, which never asks `pbem.rules.view` what is allowed):

* every event told to every player and the observer must not change when what that viewer may not know changes
  (another's cards, a deal, an offer, who traded a calamity, the stacks);
* every view of every viewer at every version shows his own hand only, the counts D-8 allows, no other player's
  question, seed or address, and does not change when the secrets do;
* every letter names no trader to one who was not party to the trade, and holds no other player's question,
  SECRET, reply or email address, no press sent to others, no seed before its reveal.

The games must hold trades, traded calamities, city captures and all twelve calamities. The 1991 deck reaches
its high stacks only with eight or nine cities, which bots never build, so the games play house maps (option
`ruleset-data`: the same calamities in other stacks, stack 2 sold cheaply) and bots that attack cities. The
default run plays one game (under a minute); PBEM_VISIBILITY_FULL=1 (`make visibility`) plays four, which hold
all twelve.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import shutil
import smtplib
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest
from service.mailclient import (  # the mail client every test by mail reads its Maildirs with
    letters,
    topic,
)

from pbem.mail.tokens import game_address
from pbem.rules import engine as rules
from pbem.rules.core.events import Event
from pbem.rules.core.state import Player
from pbem.rules.phases.movement.routes import land_neighbours
from pbem.rules.phases.movement.turns import MOVE_STEP, movable
from pbem.rules.ruleset.loader import PACKAGED_DATA
from pbem.rules.ruleset.rulebook import ruleset_of
from pbem.rules.turn import phase_title
from pbem.rules.view import view
from pbem.service.bots import WAIT, bot_orders, plan_moves, try_orders
from pbem.service.deadlines import pass_deadlines
from pbem.service.demo import reply_to_prompt
from pbem.service.games import NewPlayer, create_game
from pbem.service.projector import load_state, to_event
from pbem.service.queries import answer as queries_answer
from pbem.service.reminders import send_reminders
from pbem.service.server import PostOffice
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine
from pbem.store.unit_of_work import UnitOfWork
from pbem.mail.tokens import page_token
from pbem.rules import table
from pbem.service.links import link_generation
from pbem.service.pages import board, game_page, open_page
from pbem.service.positions import calamity_names, hand_text
from pbem.web.app import WebPages

from . import knowledge
from .knowledge import OVERSEERS, Cards, Knowledge, seat

GAME = "vis"
T0 = datetime(2027, 3, 1, 8, 0, tzinfo=UTC)
MODERATOR = "mod@moderators.example"
OBSERVER = ("Olga", "olga@watchers.example")
FULL = os.environ.get("PBEM_VISIBILITY_FULL", "") not in ("", "0")
CITY_ATTACK = 7  # tokens a bot gathers before it attacks a city (7 replace it by 6 defenders, §24.3)

#: House maps: the two pairs (non-tradable, tradable) stacks 1 and 2 hold; the other calamities follow in stacks 3-9.
#: Bots build a city or two, so they draw from stack 1 only; stack 2 is the one anyone may buy from, at 1 treasury a
#: card (§27.51 sells stack 9 at 18), so these four calamities come up every few turns; four maps hold all twelve.
LAYOUTS = {
    "a": (("Volcanic Eruption / Earthquake", "Treachery"), ("Famine", "Superstition")),
    "b": (("Civil War", "Slave Revolt"), ("Flood", "Barbarian Hordes")),
    "c": ((None, "Epidemic"), (None, "Civil Disorder")),
    "d": ((None, "Iconoclasm & Heresy"), (None, "Piracy")),
}
PURCHASE = {"stack": 2, "price": 1}
FEW_COPIES = 3


@dataclass(frozen=True)
class Spec:
    """One seeded game: players, turns, house map and options."""

    label: str
    players: int
    turns: int
    seed: str
    layout: str
    options: tuple[tuple[str, str], ...] = ()


#: The default game: five players, D-8 `1991` (hand sizes private), house map "a" (Volcano, Treachery, Famine,
#: Superstition); it holds trades, calamities traded to their victims and a city taken. The seed is chosen for
#: that: a change to the bots changes the game, so check the seed again after one (with issue 33's bots, which
#: see only their seats, a7 still holds a capture; most seeds of ten turns hold none).
SAMPLE = Spec("sample", 5, 10, "pbem-vis-a7", "a", (("public-hand-size", "1991"),))
#: `make visibility`: the sample and one game for each other house map, so all twelve calamities strike.
FULL_RUN = (
    SAMPLE,
    Spec("b", 4, 10, "pbem-vis-b2", "b", (("public-hand-size", "1991"), ("city-capture-spoils", "1991"))),
    Spec("c", 4, 10, "pbem-vis-c2", "c", (("public-hand-size", "seed"),)),
    Spec("d", 4, 10, "pbem-vis-d2", "d", (("public-hand-size", "1991"),)),
)


def house_map(folder: Path, layout: str) -> Path:
    """A copy of the 1991 data with the calamities placed per ``layout`` and stacks 1-2 thinned (docs/rules-data.md)."""
    shutil.copytree(PACKAGED_DATA, folder)
    stacks = json.loads((folder / "trade_stacks.json").read_text())
    calamities = json.loads((folder / "calamities.json").read_text())
    low = LAYOUTS[layout]
    fixed_rest = [c for c in knowledge.FIXED if c not in {f for f, _ in low}]
    tradable_rest = [c for c in knowledge.TRADABLE if c not in {t for _, t in low}]
    pairs = list(low) + [(fixed_rest[i] if i < len(fixed_rest) else None, t) for i, t in enumerate(tradable_rest)]
    stacks["purchase"] = PURCHASE
    placed = {}
    for stack, (fixed, tradable) in zip(stacks["stacks"], pairs + [(None, None)] * 9):
        stack["non_tradable_calamity"], stack["tradable_calamity"] = fixed, tradable
        placed.update({name: stack["number"] for name in (fixed, tradable) if name})
        if stack["number"] <= 2:
            for commodity in stack["commodities"]:
                commodity["copies"] = min(commodity["copies"], FEW_COPIES)
    for c in calamities["calamities"]:
        c["stack"] = placed[c["name"]]
    (folder / "trade_stacks.json").write_text(json.dumps(stacks))
    (folder / "calamities.json").write_text(json.dumps(calamities))
    return folder


# -- playing by mail -------------------------------------------------------------------------------------------


def attack_then_plan(prompt, state) -> str:
    """Movement as a warlike player writes it: take a neighbouring city, else close in on one, then grow (planner)."""
    nation = next(name for name, n in state.nations.items() if n.player_id == prompt.player_id)
    limits = {name: area.population_limit for name, area in ruleset_of(state).areas.items()}
    lines, after = [], state

    def move(count: int, source: str, target: str) -> None:
        nonlocal after
        tried = try_orders(after, prompt.player_id, f"MOVE {count} {source} {target}") if count > 0 else None
        if tried is not None:
            after, lines[len(lines):] = tried, [f"MOVE {count} {source} {target}"]

    cities = sorted(a for a, area in state.areas.items() if area.city not in (None, nation))
    for target in cities:
        sources = [a for a in land_neighbours(state, target) if movable(after, nation, a) > 0]
        if sum(movable(after, nation, a) for a in sources) >= CITY_ATTACK:
            for source in sources:
                move(movable(after, nation, source), source, target)
            break
    else:  # close in: fill the free areas next to an enemy city from one step further away
        for target in cities:
            for near in land_neighbours(state, target):
                room = limits[near] - after.area(near).tokens.get(nation, 0)
                if after.area(near).city or any(k for n, k in after.area(near).tokens.items() if n != nation):
                    continue
                for far in land_neighbours(state, near):
                    if room > 0 and far not in land_neighbours(state, target) and far != target:
                        count = min(room, movable(after, nation, far) - 1)
                        move(count, far, near)
                        room -= max(count, 0)
    planned = plan_moves(prompt, after).splitlines()
    return "\n".join(lines + planned)


@dataclass
class Played:
    spec: Spec
    db_url: str
    maildir: Path
    viewer_of: dict[str, str]  # address -> viewer
    player_id_of: dict[str, int]  # address -> player id (0: the moderator)
    queries: Counter = field(default_factory=Counter)


class MailTable:
    """The running server, the players' mail clients (bots) and the clock of one game."""

    def __init__(self, spec: Spec, tmp: Path) -> None:
        self.spec = spec
        self.settings = replace(Settings(), gather_minutes=0, db_url=f"sqlite:///{tmp / 'game.sqlite'}", maildir=tmp / "mail",
                                listen_port=0, board_pictures=False, relay_url=None)
        self.db = make_engine(self.settings.db_url)
        ensure_schema(self.db)
        self.now = T0
        self.office = PostOffice(self.db, self.settings, clock=lambda: self.now, outbox_every=0.05, deadlines_every=10**6)
        self.people = [NewPlayer(f"P{i + 1}", f"p{i + 1}@players{i + 1}.example") for i in range(spec.players)]
        self.rng = random.Random(f"visibility:{spec.seed}")
        self.replies = 0
        self.queries: Counter = Counter()

    def state(self):
        with UnitOfWork(self.db) as uow:
            return load_state(uow, GAME)

    async def mail(self, sender: str, to: str, text: str, reply_to: EmailMessage | None = None) -> None:
        if reply_to is not None:
            message = reply_to_prompt(reply_to, sender, text)
        else:
            message = EmailMessage()
            message["From"], message["To"], message["Subject"] = sender, to, "the game"
            message["Message-ID"] = make_msgid(domain=sender.split("@", 1)[1])
            message.set_content(text)

        def send() -> None:
            with smtplib.SMTP("127.0.0.1", self.office.port) as smtp:
                smtp.send_message(message, sender, [to])

        await asyncio.to_thread(send)
        await self.office.idle()

    async def reply(self, address: str, text: str) -> None:
        """A reply to one's first letter of the game: its Reply-To is one's own reply address."""
        word = "moderate" if address == MODERATOR else "new game"
        letter = next(m for m in letters(self.settings.maildir, address) if word in topic(m))
        await self.mail(address, str(letter["Reply-To"]), text, reply_to=letter)

    def queries_for(self, state, step: str) -> str:
        """What a player asks with his orders: STATUS where questions may tell secrets, EXPLAIN where a calamity
        strikes (the explanation names traders where the rules let it), the others in turn."""
        self.replies += 1
        asks = ["STATUS"] if step in ("trade", "hand-limit") or self.replies % 3 == 0 else []
        if self.replies % 5 == 0:
            asks.append(("HAND", "BOARD", "HISTORY 8", "ORDERS")[self.replies // 5 % 4])
        if state.phase == "calamity-resolution":
            with UnitOfWork(self.db) as uow:
                struck = [r.version for r in uow.events.read(GAME, after=max(0, state.version - 40))
                          if r.type.startswith(("Calamit", "Barbarian", "CivilWar", "Flood"))]
            asks.append(f"EXPLAIN {struck[-1] if struck else ''}".strip())
        self.queries.update(a.split()[0] for a in asks)
        return "".join(f"\n{a}" for a in asks)

    async def watch(self) -> None:
        name, address = OBSERVER
        await self.mail(address, game_address(GAME, self.settings.domain, self.settings.local_part), f"OBSERVE {name}")
        asked = next(m for m in letters(self.settings.maildir, MODERATOR) if "asks to watch" in topic(m))
        number = re.search(r"APPROVE (\d+)", knowledge.text_of(asked)).group(1)
        await self.reply(MODERATOR, f"APPROVE {number}")

    async def press(self, state) -> None:
        """One private word a turn between two neighbours at the table: a canary only they may read."""
        nations = [p for p in state.players if p.nation]
        sender, to = nations[state.turn % len(nations)], nations[(state.turn + 1) % len(nations)]
        address = next(p.email for p in self.people if p.name == sender.name)
        await self.reply(address, f"PRESS TO {to.nation}\nCanary {state.turn} from {sender.nation} to {to.nation}.\nEND")

    async def miss(self, state) -> None:
        """Nobody answers this step: a reminder shortly before the deadline, then the deadline passes."""
        due = datetime.strptime(state.deadline, "%Y-%m-%d %H:%M UTC").replace(tzinfo=UTC) if state.deadline else self.now
        self.now = max(self.now, due - timedelta(hours=1))
        await asyncio.to_thread(send_reminders, self.db, self.settings, now=self.now)
        self.now = max(self.now, due) + timedelta(minutes=1)
        await asyncio.to_thread(pass_deadlines, self.db, self.settings, now=self.now, force_game=GAME)
        await self.office.idle()

    async def play(self) -> None:
        house = house_map(Path(self.settings.maildir).parent / "house", self.spec.layout)
        options = dict(self.spec.options) | {"press": "on", "ruleset-data": str(house)}
        await asyncio.to_thread(create_game, self.db, self.settings, GAME, self.people, options=options,
                                seed=self.spec.seed, moderator_email=MODERATOR, now=self.now)
        await self.office.idle()
        await self.watch()
        pressed = 0
        for _ in range(20000):
            state = self.state()
            if state.finished or state.turn > self.spec.turns:
                return
            if state.turn > pressed:
                pressed = state.turn
                await self.press(state)
            asked = rules.pending(state)
            self.now += timedelta(minutes=10)
            if not asked or self.rng.random() < 0.02:
                await self.miss(state)
                continue
            candidates = sorted(asked.values(), key=lambda p: p.who)
            self.rng.shuffle(candidates)
            for prompt in candidates:
                moves = prompt.step == MOVE_STEP
                # Warlike players settle side by side (a greedy bot's setup), so that cities change hands.
                setup = prompt.step in ("choose-nation", "place-start-token")
                orders = attack_then_plan(prompt, state) if moves else bot_orders(
                    prompt, self.rng, state, "greedy" if setup else "planner")
                if orders != WAIT:
                    break
            if orders == WAIT:
                await self.miss(state)
                continue
            address = next(p.email for p in self.people if p.name == state.player(prompt.player_id).name)
            await self.reply(address, orders + self.queries_for(state, prompt.step))
        raise AssertionError(f"{self.spec.label}: the game did not reach turn {self.spec.turns}")


def play(spec: Spec, tmp: Path) -> Played:
    """Play ``spec`` by mail in ``tmp`` (database, Maildirs, house map)."""
    table = MailTable(spec, tmp)

    async def run() -> None:
        await table.office.start()
        try:
            await table.play()
        finally:
            await table.office.stop()

    asyncio.run(run())
    table.db.dispose()
    return read_played(spec, tmp, table.queries)


def read_played(spec: Spec, tmp: Path, queries: Counter) -> Played:
    """Who reads the knowledge.letters to each address of a game played in ``tmp``."""
    db = make_engine(f"sqlite:///{tmp / 'game.sqlite'}")
    with UnitOfWork(db) as uow:
        state = load_state(uow, GAME)
        emails = {p.id: p.email for p in uow.players.list(GAME)}
    db.dispose()
    viewer_of = {MODERATOR: "moderator", OBSERVER[1]: "observer"} | {emails[p.id]: seat(p.nation) for p in state.players}
    return Played(spec, f"sqlite:///{tmp / 'game.sqlite'}", tmp / "mail", viewer_of,
                  {MODERATOR: 0} | {emails[p.id]: p.id for p in state.players}, queries)


# -- checking --------------------------------------------------------------------------------------------------


@dataclass
class Findings:
    """What the checks found: leaks (each a sentence), and counts showing what was checked."""

    leaks: list[str] = field(default_factory=list)
    checked: Counter = field(default_factory=Counter)

    def leak(self, text: str) -> None:
        self.leaks.append(text)


@dataclass
class Game:
    """A played game read back: its events, the state before each version, and the model of what is known."""

    played: Played
    events: list[Event]
    states: list  # states[v]: the game after v events
    knowledge: Knowledge
    cards: Cards
    heads: dict[str, int]  # chain head (16 hex) -> version
    seed: str

    @property
    def viewers(self) -> list[str]:
        return sorted(seat(n) for n in self.states[-1].nations) + ["observer"]

    @classmethod
    def read(cls, played: Played) -> Game:
        db = make_engine(played.db_url)
        with UnitOfWork(db) as uow:
            recorded = uow.events.read(GAME)
            seed = uow.games.get(GAME).secret_seed
        db.dispose()
        events = [to_event(r) for r in recorded]
        states = [rules.new_game(GAME)]
        for event in events:
            states.append(rules.apply(states[-1], event))
        log = [(r.version, r.type, r.payload) for r in recorded]
        model = Knowledge.of(log, lambda v: states[v - 1])
        return cls(played, events, states, model, Cards.of(states[-1]), {r.hash[:16]: r.version for r in recorded}, seed)


def check_sentences(game: Game, found: Findings) -> None:
    """Every event told to every viewer: unchanged when what he may not know changes; no trader, seed, press."""
    rng = random.Random(f"perturb:{game.played.spec.seed}")
    sizes = game.knowledge.hand_size_rule == "1991"
    for index, event in enumerate(game.events):
        version, before = index + 1, game.states[index]
        for viewer in game.viewers:
            told = rules.describe_event(before, event, viewer)
            found.checked["sentences"] += 1
            secrets = [s for s in knowledge.event_secrets(before, event.type, dict(event.data), game.cards, rng, viewer)
                       if not s.may_read(viewer)]
            if told is not None and any(s.hidden for s in secrets):
                found.leak(f"v{version} {event.type} told to {viewer}, who may not know of it: {told!r}")
                continue
            data = dict(event.data)
            for secret in (s for s in secrets if s.change):
                data = secret.change(data)
            again = rules.describe_event(knowledge.perturbed_state(before, viewer, game.cards, rng, sizes=sizes),
                                         Event(event.type, data, event.cites), viewer)
            found.checked["sentences with secrets changed"] += bool(secrets)
            if again != told:
                found.leak(f"v{version} {event.type} to {viewer} changes with what he may not know "
                           f"({', '.join(s.what for s in secrets) or 'the state'}): {told!r} / {again!r}")
            check_text(game, found, viewer, version, told or "", f"v{version} {event.type}")


def check_text(game: Game, found: Findings, viewer: str, version: int, text: str, where: str, prose: bool = True) -> None:
    """No trader named to a non-party, no secret string, no address in one text ``viewer`` reads.

    A view (not ``prose``) is checked for traders by its structure instead: its sentences are not sentences.
    """
    if viewer in OVERSEERS or not text:
        return
    for trade in game.knowledge.calamity_trades if prose else ():
        if not trade.may_name_trader(viewer, version) and (sentence := knowledge.names_trader(text, trade)):
            found.leak(f"{where}: {viewer} reads who traded {trade.calamity} to {trade.victim}: {sentence!r}")
    for what, secret in game.knowledge.not_for(viewer, version, game.seed):
        if secret in text:
            found.leak(f"{where}: {viewer} reads {what}")
    own = [a for a, v in game.played.viewer_of.items() if v == viewer]
    for address in knowledge.EMAIL.findall(text):
        if address in game.played.viewer_of and address not in own:
            found.leak(f"{where}: {viewer} reads the address {address}")
        found.checked["addresses seen"] += 1


def check_views(game: Game, found: Findings, every: int) -> None:
    """Each viewer's view at every ``every``-th version: own hand, allowed counts, no question, seed or address."""
    rng = random.Random(f"views:{game.played.spec.seed}")
    sizes = game.knowledge.hand_size_rule == "1991"
    for version in range(1, len(game.states), every):
        state = game.states[version]
        asked = rules.pending(state)
        for viewer in game.viewers:
            shown = view(state, viewer)
            found.checked["views"] += 1
            where = f"v{version} view of {viewer}"
            for name, entry in shown["nations"].items():
                n = state.nations[next(k for k in state.nations if k.lower() == name)]
                if "hand" in entry and seat(n.name) != viewer:
                    found.leak(f"{where}: shows {n.name}'s hand")
                count = entry["hand_count"]
                allowed = len(n.hand) if not sizes or seat(n.name) == viewer else game.knowledge.public_hand_size(n.name, version)
                if count != allowed:
                    found.leak(f"{where}: {n.name} holds {count} cards by it, D-8 allows {allowed}")
            for who, prompt in asked.items():
                entry = shown["pending"].get(who, {})
                mine = seat(state.player(prompt.player_id).nation or "-") == viewer
                found.checked["questions of others"] += not mine
                if not mine and (entry.get("question") == prompt.question or set(entry) - {"step", "player", "question"}):
                    found.leak(f"{where}: shows {who}'s question {prompt.question!r}")
            check_text(game, found, viewer, version, json.dumps(shown), where, prose=False)
            again = view(knowledge.perturbed_state(state, viewer, game.cards, rng, sizes=sizes), viewer)
            if state.phase in knowledge.HAND_DECIDES_WHO_IS_ASKED:  # who is asked may differ; what each is asked may not
                both = shown["pending"].keys() & again["pending"].keys()
                for data in (shown, again):
                    data["pending"] = {k: v for k, v in data["pending"].items() if k in both}
            if again != shown:
                diff = [k for k in shown if shown[k] != again.get(k)]
                found.leak(f"{where}: changes with what he may not know, in {diff}: "
                           f"{[(shown[k], again.get(k)) for k in diff][:1]!r:.600}")


def check_letters(game: Game, found: Findings) -> None:
    """Every letter sent: whose it is, when (its chain head), and nothing of anyone else's in it."""
    secrets = {}
    for address in game.played.viewer_of:
        for letter in letters(game.played.maildir, address):
            match = re.search(r"SECRET (\S+)", knowledge.text_of(letter))
            if match and ("new game" in topic(letter) or "moderate" in topic(letter)):
                secrets[address] = match.group(1)
    found.checked["SECRETs known"] += len(secrets)
    viewer_of_player = {pid: game.played.viewer_of[a] for a, pid in game.played.player_id_of.items()}
    asked_of: dict[str, set[str]] = {v: set() for v in game.played.viewer_of.values()}
    for state in game.states:
        for prompt in rules.pending(state).values():
            asked_of[viewer_of_player[prompt.player_id]].add(prompt.question)
    for address, viewer in game.played.viewer_of.items():
        version = 0
        for letter in letters(game.played.maildir, address):
            text = knowledge.text_of(letter)
            found.checked["knowledge.letters"] += 1
            found.checked[f"knowledge.letters to {viewer.split(':')[0]}"] += 1
            if match := re.search(r"chain head:? ([0-9a-f]{16})", text):
                version = game.heads[match.group(1)]
                found.checked["knowledge.letters dated by their chain head"] += 1
            where = f"letter {letter['Subject']!r} to {viewer} (about v{version})"
            if viewer == "moderator":
                continue
            check_text(game, found, viewer, version, text, where)
            for other, secret in secrets.items():
                if other != address and re.search(rf"\b{re.escape(secret)}\b", text):
                    found.leak(f"{where}: holds the SECRET of {game.played.viewer_of[other]}")
            for reply_id in re.findall(rf"pbem\+{GAME}\.(\d+)\.", text):
                if int(reply_id) != game.played.player_id_of.get(address, -1):
                    found.leak(f"{where}: holds the reply address of player {reply_id}")
            for prompt in rules.pending(game.states[version]).values():
                theirs = viewer_of_player[prompt.player_id] != viewer
                if theirs and prompt.question not in asked_of[viewer] and prompt.question in text:
                    found.leak(f"{where}: holds another player's question {prompt.question!r}")
            if (match := re.search(r"HAND of (\w+)", text)) and seat(match.group(1)) != viewer:
                found.leak(f"{where}: answers HAND with {match.group(1)}'s cards")


def coverage(games: list[Game]) -> Counter:
    """What the games held: event types, calamities by kind, traded calamities, the questions asked by mail."""
    seen: Counter = Counter(e.type for game in games for e in game.events)
    for c in (c for game in games for e in game.events if e.type == "CalamitiesRevealed" for c in e.data["calamities"]):
        seen.update([f"calamity {c['calamity']}"] + ([f"traded {c['calamity']}"] if c["giver"] else []))
    seen.update(f"query {q}" for game in games for q in game.played.queries.elements())
    return seen


def audit(games: list[Game], every: int) -> Findings:
    """Every check on every game; ``every``: the views of every so many versions."""
    found = Findings()
    for game in games:
        check_sentences(game, found)
        check_views(game, found, every)
        check_letters(game, found)
    return found


# -- the tests ---------------------------------------------------------------------------------------------------

#: What the default game must hold (its seed is fixed, so this is what it holds; a change of the engine that loses
#: one of them makes the sample too weak to say anything, and this test says so).
SAMPLE_HOLDS = ("TradeExecuted", "CityAttackSucceeded", "SpoilsTaken", "PressSent", "ObserverJoined", "DeadlinePassed",
                "CalamitiesRevealed", "CalamityResolved", "HandsLimited", "TradeCardsBought", "OfferAccepted")


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> list[Game]:
    specs = FULL_RUN if FULL else (SAMPLE,)
    return [Game.read(play(spec, tmp_path_factory.mktemp(spec.label))) for spec in specs]


def test_the_games_hold_trades_traded_calamities_captures_and_every_calamity(games):
    seen = coverage(games)
    missing = [kind for kind in SAMPLE_HOLDS if not seen[kind]]
    assert not missing, f"the games never held {missing}: {sorted(seen.items())}"
    assert sum(seen[f"traded {c}"] for c in knowledge.TRADABLE) >= 2, "no calamity was traded to its victim"
    assert all(seen[f"query {q}"] for q in ("STATUS", "HAND", "BOARD", "HISTORY", "EXPLAIN")), seen
    kinds = {c for c in knowledge.FIXED + knowledge.TRADABLE if seen[f"calamity {c}"]}
    if FULL:
        assert kinds == set(knowledge.FIXED + knowledge.TRADABLE), f"calamities never revealed: {set(knowledge.FIXED + knowledge.TRADABLE) - kinds}"
        assert {t for t in knowledge.TRADABLE if seen[f"traded {t}"]} & {"Treachery", "Piracy", "Barbarian Hordes"}
    else:
        assert len(kinds) >= 3, kinds


def test_every_letter_and_every_view_shows_each_viewer_only_what_he_may_know(games):
    found = audit(games, every=1)
    assert found.checked["sentences with secrets changed"] > 100 and found.checked["knowledge.letters"] > 300
    assert found.checked["questions of others"] > 100 and found.checked["addresses seen"] > 100
    assert found.checked["knowledge.letters to observer"] > 10 and found.checked["SECRETs known"] > len(games) * 3
    assert found.checked["knowledge.letters dated by their chain head"] > found.checked["knowledge.letters"] / 2
    assert not found.leaks, f"{len(found.leaks)} leaks:\n" + "\n".join(found.leaks[:40])


def test_the_trader_is_told_to_the_two_parties_and_the_overseers_only(games):
    """§28.3: who traded a calamity to its victim is theirs; the check above is not vacuous."""
    told = Counter()
    for game in games:
        for index, event in enumerate(game.events):
            if event.type != "CalamitiesRevealed":
                continue
            for trade in (t for t in game.knowledge.calamity_trades if t.revealed == index + 1):
                for viewer in [*game.viewers, "moderator", "auditor"]:
                    named = knowledge.names_trader(rules.describe_event(game.states[index], event, viewer) or "", trade) is not None
                    party = viewer in OVERSEERS or viewer in (seat(trade.trader), seat(trade.victim))
                    assert named == party, (viewer, trade)
                    told[party] += 1
    assert told[True] and told[False]


def _others_read_only_that_he_is_asked(game: Game, state, prompt) -> None:
    """What a question says reaches its player and the overseers; the others read who is asked and for what phase."""
    who = state.player(prompt.player_id)
    for viewer in [*game.viewers, "moderator", "auditor"]:
        entry = view(state, viewer)["pending"][prompt.who]
        sender = None if viewer in OVERSEERS else next((p for p in state.players if seat(p.nation) == viewer), Player(0, "Olga"))
        status = queries_answer(None, state, sender, "STATUS", "", [])
        if viewer in OVERSEERS or viewer == seat(who.nation):
            assert entry["question"] == prompt.question and prompt.question in status
        else:
            assert entry == {"step": prompt.step, "question": f"orders for {phase_title(state, state.phase)}", "player": who.name}
            # (the viewer may read the same words of his own question: another nation can hold few cards too)
            assert f"{who.name} ({who.nation}): {prompt.question}" not in status
            assert f"Still asked: {who.name} ({who.nation}): orders for" in status


def test_a_question_that_tells_a_held_calamity_or_a_hand_size_is_read_by_its_player_only(games):
    """Regression: "you hold fewer than 3 tradable cards" and "... and hold 9" reached every view and STATUS."""
    game = games[0]
    trading = next(s for s in game.states if s.phase == "trade" and rules.pending(s))
    nation = min(trading.nations)
    state = trading.with_nation(replace(trading.nations[nation], hand=("Famine", "Ochre")))
    prompt = rules.pending(state)[nation.lower()]
    assert "fewer than 3 tradable cards" in prompt.question
    _others_read_only_that_he_is_asked(game, state, prompt)
    limiting = next(s for s in game.states if s.phase == "civilization-advances" and s.step == "hand-limit")
    state = limiting.with_nation(replace(limiting.nations[nation], hand=("Ochre",) * 5 + ("Hides",) * 5))
    prompt = rules.pending(state)[nation.lower()]
    assert "and hold 10" in prompt.question
    _others_read_only_that_he_is_asked(game, state, prompt)


def test_the_taker_of_a_city_is_not_told_the_size_of_the_hand_he_draws_from_under_1991(games):
    """Regression (D-8): the spoils prompt said "draw one card from Italy's hand (4 cards)" under `1991` too."""
    asked = [(s, p) for game in games for s in game.states for p in rules.pending(s).values() if p.step == "city-spoils"
             and "draw one trade card" in p.question]
    assert asked, "no city was taken from a player holding cards"
    for state, prompt in asked:
        rule = dict(state.options).get("public-hand-size", "seed")
        assert ("cards)" in prompt.question) == (rule == "seed"), prompt.question


# -- the games' pages (issue 32) -----------------------------------------------------------------------------------


def check_pages(game: Game, found: Findings, versions: int) -> None:
    """Each reader's page and board (pbem/web) at ``versions`` versions spread over the game (every one of them
    under `make visibility`), from his own link:
    the same checks as a view's, on the HTML and SVG the server would send."""
    db = make_engine(game.played.db_url)
    pages = WebPages(db, Settings(), _no_orders, clock=lambda: T0)
    every = max(1, (len(game.states) - 1) // versions)
    try:
        with UnitOfWork(db) as uow:
            state = load_state(uow, GAME)
            key = bytes.fromhex(uow.games.get(GAME).reply_secret)
            readers = [f"p{p.id}" for p in state.players] + ["moderator"]
            readers += [f"o{n}" for n in table.observers(state)] + ["auditor"]
            for reader in readers:
                opened = open_page(uow, GAME, reader, page_token(key, GAME, reader, link_generation(state, reader)))
                assert opened is not None, f"{reader}'s own link does not open"
                for version in range(1, len(game.states), every):
                    context = game_page(uow, pages.cache, opened, version)
                    html = pages._render("game.html", **context, form_id="0" * 32, proof="0" * 32, sent=False,
                                         preview=None, auditor_link=None)
                    svg = board(uow, opened, version)
                    found.checked["pages"] += 1
                    for text, what in ((html, "page"), (svg, "board")):
                        check_text(game, found, opened.viewer, version, text, f"v{version} {what} of {opened.viewer}",
                                   prose=False)
                    at = game.states[version]
                    own = next((n for n in at.nations.values() if seat(n.name) == opened.viewer), None)
                    for other in (n for n in at.nations.values() if opened.viewer not in OVERSEERS and n is not own):
                        shown = f"Hand ({len(other.hand)}): {hand_text(other.hand, calamity_names(at))}."
                        mine = own is not None and sorted(own.hand) == sorted(other.hand)
                        if other.hand and not mine and shown in html:
                            found.leak(f"v{version} page of {opened.viewer}: shows {other.name}'s hand")
    finally:
        db.dispose()


async def _no_orders(raw: bytes, sender: str, recipients: list[str]) -> None:
    raise AssertionError("a page read for the audit sends no orders")


def test_every_page_shows_each_reader_only_what_he_may_know(games):
    found = Findings()
    for game in games:
        check_pages(game, found, versions=len(game.states) if FULL else 40)  # make visibility: every version
    assert found.checked["pages"] >= 40 * 4 * len(games)
    assert not found.leaks, f"{len(found.leaks)} leaks:\n" + "\n".join(found.leaks[:40])
