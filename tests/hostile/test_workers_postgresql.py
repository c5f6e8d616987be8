"""Four `pbem serve` workers on one PostgreSQL database, 50 games at once: order kept, nothing lost, each letter once.

Four real server processes share one database and one SMTP relay. Fifty
games are created at once, from several threads, while the workers already
run; then every player of every game (150 players) sends numbered press
orders by SMTP, all players at the same time, each player's orders one
after another (the next only once the previous was answered 250) and each
to another worker than the one before. Afterwards, from the database:

* per game, the versions are 1..N without a gap, and `pbem verify`
  re-derives the game from its hash chain;
* per game, each player's press appears in the order he sent it: order k
  was accepted before order k+1 was sent, so it must be applied first, even
  when k waits in one worker's queue while k+1 reaches another;
* no lost or doubled update: each order is one `PressSent` event, exactly
  once, and its message is `done`;
* the relay received every letter of the outbox exactly once, and nothing
  else (the outbox lease keeps the four senders apart).

``make hostile-workers`` runs it with 900 orders (``PBEM_HOSTILE_WORKER_MAILS``,
spread round-robin over the 150 players: six each), in 60 to 110 s on two cores.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.policy import default as default_policy

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from pbem.cli import main as pbem_cli
from pbem.service.games import NewPlayer, create_game
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine

from .processes import (
    Server,
    SinkRelay,
    press_message,
    send_until_taken,
    wait_until_settled,
)

pytestmark = pytest.mark.hostile

MAILS = int(os.environ.get("PBEM_HOSTILE_WORKER_MAILS", "900"))
GAMES = [f"g{n:02d}" for n in range(1, 51)]
NAMES = ("Ann", "Ben", "Cy")
WORKERS = 4


def _players(game: str) -> list[NewPlayer]:
    return [NewPlayer(name, f"{name.lower()}.{game}@players.example") for name in NAMES]


def _press(game: str, player: NewPlayer, number: int, to: str) -> EmailMessage:
    """Press order ``number`` of one player: its text names game, player and number, so the log shows its place."""
    return press_message(player, to, f"press-{game}-{player.name.lower()}-{number}", f"{game} {player.name} {number}")


def _reply_addresses(letters: list[bytes]) -> dict[str, str]:
    """Each player's reply address, from the game-start letters the relay received."""
    found = {}
    for raw in letters:
        headers = BytesHeaderParser(policy=default_policy).parsebytes(raw)
        if headers["Reply-To"]:
            found[str(headers["To"]).strip()] = str(headers["Reply-To"]).strip()
    return found


def test_four_workers_fifty_games_keep_order_lose_nothing_send_once(postgres_url, tmp_path):
    relay = SinkRelay(delay=0.0)
    relay.start()
    db = make_engine(postgres_url, pool_size=10)
    ensure_schema(db)
    settings = Settings(db_url=postgres_url, maildir=tmp_path / "mail", board_pictures=False)
    env = {**os.environ, "PBEM_DATABASE_URL": postgres_url, "PBEM_SMTP_RELAY": f"smtp://127.0.0.1:{relay.port}",
           "PBEM_BOARD_PICTURES": "0", "PBEM_DEADLINE_HOURS": "1000"}
    workers = [Server(env, tmp_path) for _ in range(WORKERS)]
    for worker in workers:
        worker.start()

    def count(query: str) -> int:
        with db.connect() as conn:
            return conn.execute(text(query)).scalar()

    people = [(game, player) for game in GAMES for player in _players(game)]
    share = defaultdict(list)  # each player's orders, numbered in the order he sends them
    for i in range(MAILS):
        game, player = people[i % len(people)]
        share[(game, player.name)].append(i // len(people))
    try:
        begun = time.monotonic()
        with ThreadPoolExecutor(max_workers=10) as pool:  # fifty games at once, while the workers run
            list(pool.map(lambda game: create_game(db, settings, game, _players(game), seed=game, now=utc_now()),
                          GAMES))
        wait_until_settled(count, timeout=120)
        reply_to = _reply_addresses(relay.received)
        created = time.monotonic() - begun

        def play(game: str, player: NewPlayer, first_worker: int) -> None:
            for turn, number in enumerate(share[(game, player.name)]):
                worker = workers[(first_worker + turn) % WORKERS]  # each order to another worker than the last
                send_until_taken(worker.port, _press(game, player, number, reply_to[player.email]), player.email,
                                 reply_to[player.email])

        started = time.monotonic()
        senders = [threading.Thread(target=play, args=(game, player, k)) for k, (game, player) in enumerate(people)]
        for thread in senders:
            thread.start()
        for thread in senders:
            thread.join()
        wait_until_settled(count, timeout=300)
        took = time.monotonic() - started
    finally:
        for worker in workers:
            worker.stop()
        relay.stop()

    with db.connect() as conn:
        inbox = Counter((m.strip("<>"), s) for m, s in conn.execute(text("SELECT message_id, status FROM inbox")))
        log = defaultdict(list)  # game -> [(version, type, payload)] in version order
        for game, version, kind, payload in conn.execute(
                text("SELECT game_id, version, type, payload FROM events ORDER BY game_id, version")):
            log[game].append((version, kind, json.loads(payload) if isinstance(payload, str) else payload))
        outbox = [m.strip("<>") for (m,) in conn.execute(text("SELECT message_id FROM outbox"))]
        unsent = conn.execute(text("SELECT count(*) FROM outbox WHERE sent_at IS NULL")).scalar()
    db.dispose()
    received = Counter(relay.message_ids())
    print(f"\n{WORKERS} workers: {len(GAMES)} games created and their letters sent in {created:.1f} s; {MAILS} orders "
          f"from {len(people)} players and {len(outbox)} letters in all settled in {took:.1f} s; "
          f"{sum(n - 1 for n in received.values())} letters sent twice")

    sent = {f"press-{g}-{name.lower()}-{n}@players.example" for (g, name), numbers in share.items() for n in numbers}
    assert set(log) == set(GAMES)
    gaps = [game for game in GAMES if [v for v, _, _ in log[game]] != list(range(1, len(log[game]) + 1))]
    assert not gaps, f"versions with a gap in {gaps}"
    assert Counter(m for m, s in inbox if m in sent and s == "done") == Counter(sent)  # each once, each done
    pressed = Counter(p["text"] for game in GAMES for _, kind, p in log[game] if kind == "PressSent")
    assert pressed == Counter(f"{g} {name} {n}" for (g, name), numbers in share.items() for n in numbers)
    applied = defaultdict(list)  # (game, player) -> the numbers of his press, in the order the log holds them
    for game in GAMES:
        for _, kind, payload in log[game]:
            if kind == "PressSent":
                _, name, number = payload["text"].split()
                applied[(game, name)].append(int(number))
    disordered = {who: numbers for who, numbers in applied.items() if numbers != share[who]}
    assert not disordered, f"{len(disordered)} players' press applied out of the order sent: {disordered}"
    assert unsent == 0
    assert received == Counter(outbox)  # each letter once, and nothing else
    runner, begun = CliRunner(), time.monotonic()
    for game in GAMES:
        verified = runner.invoke(pbem_cli, ["--db", postgres_url, "verify", game])
        assert verified.exit_code == 0, verified.output
    print(f"pbem verify of {len(GAMES)} games: {time.monotonic() - begun:.1f} s")
