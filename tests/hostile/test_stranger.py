"""A stranger's megabytes of the worst shapes while the players keep writing: theirs are answered at once.

A real server process (SQLite, Maildir delivery) runs a three-player game.
A stranger, an address that is no player's, sends over SMTP one message of
each adversarial shape of `tests/mail/adversary.SHAPES` (each pattern's worst
input, repeated: docs/mail.md, the pattern audit), each a text/plain message
just under the default ``max_message_bytes`` (1,000,000 octets, header
included), twice: once to the game's public address (``pbem+g1@...``) and
once to Cy's reply address, whose token is genuine but whose sender is not Cy
(refused as forged: it is read all the same). It sends them one after the
other, the next once the previous is answered 250, from a process of its own
(`stranger_client.py`). Meanwhile Ann (press orders) and Ben (STATUS
requests), each to their own reply address, send one message at a time about
a second apart, each over a new connection as a mail program does, until the
stranger's mail is all in and handled. For each of theirs the suite measures

* the SMTP session, connection to 250 (the server stores the message
  before it answers): under 1 s, and
* the time from the 250 to the acknowledgement appearing in the player's
  Maildir (the Maildir transport stamps each file's name with the time it
  moves it into ``new/``): under 2 s,

every one (it prints the max and median). When everything is handled:

* every stranger's message is in the inbox once, ``rejected`` or ``done``
  (none ``failed``, none left ``received``), and none applied anything: no
  event carries its Message-ID or its source, but for the one request to
  watch the game (``ObserverAsked``) that the OBSERVE lines sent to the
  game's address make, as anyone's OBSERVE does (pbem.service.observers);
* each was read: none was refused for taking longer than ``reading_limit``
  (the inbox's error says why each was refused), and the server's log line
  for each says it took less than ``reading_limit`` in all;
* Ann's and Ben's are all ``done``;
* no Maildir holds a letter twice, and ``pbem verify`` re-derives the game.

``make hostile-stranger`` runs it.
"""

from __future__ import annotations

import json
import os
import re
import smtplib
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from email.message import EmailMessage
from email.policy import default as default_policy
from pathlib import Path

import pytest

from pbem.mail.tokens import game_address
from pbem.service.batch import mail_source
from pbem.service.games import create_game
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine

from mail.adversary import SHAPES, shape
from .processes import PBEM, PLAYERS, UNPROCESSED, Maildirs, Server, letters_in, rows, wait_until_settled

pytestmark = pytest.mark.hostile

STRANGER = "eve@strangers.example"
EVERY = 1.0  # seconds between one player's answer and his next message
SESSION = 1.0  # seconds: the bound for a player's SMTP session, connection to 250
ANSWER = 2.0  # seconds: the bound from a player's 250 to his acknowledgement in his Maildir
#: Messages each player sends at least: on a fast machine the stranger's mail is all handled within ten of
#: them, and the figures should not depend on how fast it went.
MEASURED_EACH = 10
ANN, BEN, CY = PLAYERS
NEAR = 5000  # octets: each stranger's message is at most this much under max_message_bytes


def _player_message(sender, to: str, key: str, body: str) -> EmailMessage:
    message = EmailMessage(policy=default_policy)
    message["From"] = sender.email
    message["To"] = to
    message["Subject"] = "a word"
    message["Message-ID"] = f"<{key}@players.example>"
    message.set_content(body + "\n")
    return message


def _stranger_message(name: str, to: str, message_id: str, limit: int) -> bytes:
    """The message of shape ``name`` to ``to``, as sent (CRLF line ends): at most ``limit`` octets, and less than `NEAR` under it."""
    head = (f"From: Eve <{STRANGER}>\r\nTo: {to}\r\nSubject: a word\r\nMessage-ID: <{message_id}>\r\n"
            "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
            ).encode()

    def render(size: int) -> bytes:
        return head + re.sub(r"\r?\n", "\r\n", shape(name, size)).encode("utf-8")

    size = limit  # a shape's body grows in steps of its unit (at most a couple of thousand octets) with the size
    for _ in range(10):
        raw = render(size)
        if limit - NEAR < len(raw) <= limit:
            break
        size = max(1, int(size * (limit - NEAR / 2 - len(head)) / (len(raw) - len(head))))
    assert limit - NEAR < len(raw) <= limit, (name, len(raw))
    return raw


def _logged_ms(said: list[str]) -> dict[str, int]:
    """Message-ID -> the milliseconds the server's log line (``in id=... ms=...``) says its handling took."""
    found = {}
    for line in said:
        match = re.search(r"\bin id=(\S+) .* ms=(\d+)\s*$", line)
        if match:
            found[match.group(1).strip('"')] = int(match.group(2))
    return found


def _in_flight(sent: list[dict], window: tuple[float, float]) -> list[str]:
    """The stranger's mails whose SMTP session overlapped ``window`` (wall-clock times): shape and address."""
    return [m["name"][3:-4] for m in sent if m["began"] < window[1] and m["taken"] > window[0]]


def test_a_strangers_megabytes_of_every_shape_keep_the_players_answered_at_once(tmp_path):
    db_file, maildir = tmp_path / "pbem.sqlite", tmp_path / "mail"
    url = f"sqlite:///{db_file}"
    settings = Settings.from_env(db_url=url, maildir=maildir, board_pictures=False)
    db = make_engine(url)
    ensure_schema(db)
    create_game(db, settings, "g1", PLAYERS, seed="stranger", now=utc_now())
    db.dispose()
    env = {**os.environ, "PBEM_DATABASE_URL": url, "PBEM_MAILDIR": str(maildir), "PBEM_BOARD_PICTURES": "0",
           "PBEM_DEADLINE_HOURS": "1000"}
    server = Server(env, tmp_path)
    server.start()
    watcher = Maildirs(maildir, [ANN.email, BEN.email])
    began = time.monotonic()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(letters_in(maildir, p.email) for p in PLAYERS):
            time.sleep(0.1)
        reply_to = {p.email: str(letters_in(maildir, p.email)[0]["Reply-To"]) for p in PLAYERS}
        public = game_address("g1", settings.domain, settings.local_part)

        outgoing = tmp_path / "stranger"
        outgoing.mkdir()
        stranger_ids: dict[str, str] = {}  # Message-ID -> shape
        for number, name in enumerate(SHAPES):
            for where, to in (("game", public), ("reply", reply_to[CY.email])):
                message_id = f"stranger-{number:02d}-{name}-{where}@strangers.example"
                stranger_ids[message_id] = name
                raw = _stranger_message(name, to, message_id, settings.max_message_bytes - 1)
                (outgoing / f"{number:02d}-{name}-{where}.eml").write_bytes(f"X-To: {to}\r\n".encode() + raw)
        watcher.start()

        stranger = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("stranger_client.py")), str(server.port), STRANGER,
             str(outgoing)], stdout=subprocess.PIPE, text=True)
        measured: list[tuple[str, float, float]] = []  # (key, SMTP session seconds, 250 to answer seconds)
        missing: list[str] = []
        phases: dict[str, list[float]] = {}  # key -> seconds of its SMTP steps (connect, EHLO, MAIL, RCPT, DATA)
        window: dict[str, tuple[float, float]] = {}  # key -> wall-clock times of its connection and its 250

        def player(who, body: str) -> None:
            for j in range(10**9):
                if j >= MEASURED_EACH and stranger.poll() is not None and not rows(db_file, UNPROCESSED)[0][0]:
                    return  # the stranger's mail is in and handled, and enough of this player's measured
                key = f"{who.name.lower()}-{j}"
                message = _player_message(who, reply_to[who.email], key, body.format(j=j))
                opened, opened_at = time.monotonic(), time.time()
                steps = []  # seconds of each SMTP step: connection and greeting, EHLO, MAIL, RCPT, DATA to 250
                with smtplib.SMTP("127.0.0.1", server.port, timeout=120) as smtp:
                    steps.append(time.monotonic())
                    smtp.ehlo()
                    steps.append(time.monotonic())
                    smtp.mail(who.email)
                    steps.append(time.monotonic())
                    smtp.rcpt(reply_to[who.email])
                    steps.append(time.monotonic())
                    code, _ = smtp.data(message.as_bytes())
                    assert code == 250, (key, code)
                    taken_at, session = time.time(), time.monotonic() - opened
                    steps.append(time.monotonic())
                phases[key] = [round(b - a, 3) for a, b in zip([opened, *steps], steps)]
                window[key] = (opened_at, taken_at)
                answered = watcher.wait_for_answer(key)
                if answered is None:
                    missing.append(key)
                else:
                    measured.append((key, session, answered - taken_at))
                time.sleep(EVERY)

        players = [threading.Thread(target=player, args=(ANN, "PRESS TO ALL: ann {j}")),
                   threading.Thread(target=player, args=(BEN, "STATUS"))]
        stranger_began = time.monotonic()
        for thread in players:
            thread.start()
        sent = json.loads(stranger.communicate(timeout=600)[0])
        sending_took = time.monotonic() - stranger_began
        for thread in players:
            thread.join()
        wait_until_settled(lambda query: rows(db_file, query)[0][0], timeout=120)
        settled = time.monotonic() - stranger_began
    finally:
        server.stop()
        watcher.stop()

    sessions = [s for _, s, _ in measured]
    answers = [a for _, _, a in measured]
    stranger_sessions = [m["seconds"] for m in sent["sent"]]
    logged = _logged_ms(server.said)
    stranger_ms = {m: logged.get(m) for m in stranger_ids}
    print(f"\n{len(sent['sent'])} stranger's mails of {len(SHAPES)} shapes "
          f"({min(m['bytes'] for m in sent['sent']):,} to {max(m['bytes'] for m in sent['sent']):,} octets) taken in "
          f"{sending_took:.1f} s (SMTP session max {max(stranger_sessions):.3f} s, median "
          f"{statistics.median(stranger_sessions):.3f} s); {len(measured)} players' mails meanwhile; all settled "
          f"{settled:.1f} s after the stranger began; whole run {time.monotonic() - began:.1f} s")
    print(f"players' mails, SMTP session: max {max(sessions):.3f} s, median {statistics.median(sessions):.3f} s; "
          f"250 to answer in the Maildir: max {max(answers):.3f} s, median {statistics.median(answers):.3f} s")
    print("players' slowest SMTP sessions (s; connection, EHLO, MAIL, RCPT, DATA; the stranger's mails in flight): "
          + "; ".join(f"{k} {s:.3f} {phases[k]} {_in_flight(sent['sent'], window[k])}"
                      for k, s, _ in sorted(measured, key=lambda m: -m[1])[:5]))
    print("stranger's slowest SMTP sessions (s): " + ", ".join(
        f"{m['name'][3:-4]} {m['seconds']:.3f}" for m in sorted(sent["sent"], key=lambda m: -m["seconds"])[:5]))
    slowest = sorted(((ms or 0, m) for m, ms in stranger_ms.items()), reverse=True)[:5]
    print("stranger's mails handled slowest (server's log, ms): "
          + ", ".join(f"{stranger_ids[m]} ({m.split('-')[-1].split('@')[0]}) {ms}" for ms, m in slowest))

    assert sent["failures"] == [] and len(sent["sent"]) == len(stranger_ids), sent["failures"]
    assert missing == [], f"no answer within 30 s to {missing}"
    assert len(measured) >= 2 * MEASURED_EACH
    slow = [(k, round(s, 3), round(a, 3), phases[k], _in_flight(sent["sent"], window[k]))
            for k, s, a in measured if s >= SESSION or a >= ANSWER]
    assert slow == [], (f"players' mails over {SESSION} s to 250 or {ANSWER} s to the answer (key, session, answer, "
                        f"SMTP steps' seconds, the stranger's mails in flight): {slow}")

    player_ids = [f"{k}@players.example" for k, _, _ in measured]
    inbox = rows(db_file, "SELECT message_id, envelope_from, status, error FROM inbox ORDER BY id")
    assert Counter(m for m, *_ in inbox) == Counter([*stranger_ids, *player_ids])  # each once: none lost
    assert {s for m, _, s, _ in inbox if m in set(player_ids)} == {"done"}
    from_stranger = {m: (s, e or "") for m, sender, s, e in inbox if m in stranger_ids}
    assert all(sender == STRANGER for m, sender, *_ in inbox if m in stranger_ids)
    unfinished = {stranger_ids[m]: s for m, (s, _) in from_stranger.items() if s not in ("rejected", "done")}
    assert unfinished == {}, f"stranger's mails neither rejected nor done: {unfinished}"
    too_long = {stranger_ids[m]: e for m, (_, e) in from_stranger.items() if "took longer than" in e}
    assert too_long == {}, f"stranger's mails not read within reading_limit ({settings.reading_limit} s): {too_long}"
    unlogged = [m for m, ms in stranger_ms.items() if ms is None]
    assert unlogged == [], f"no log line for {unlogged}"
    over = {m: ms for m, ms in stranger_ms.items() if ms >= settings.reading_limit * 1000}
    assert over == {}, f"stranger's mails handled in more than reading_limit ({settings.reading_limit} s): {over}"

    # Nothing a stranger writes is applied; only his OBSERVE to the game's address asks the moderator to let him
    # watch (pbem.service.observers), which the log records: one ObserverAsked, and nothing else.
    sources = {m: mail_source(m) for m in stranger_ids}  # an order's source names the Message-ID's hash
    applied = Counter((stranger_ids[m], m.rsplit("-", 1)[1].split("@")[0], kind)
                      for kind, dedupe, meta in rows(db_file, "SELECT type, dedupe_key, metadata FROM events")
                      for m, source in sources.items() if (dedupe or "").startswith(m) or source in meta)
    assert applied == Counter({("observe-lines", "game", "ObserverAsked"): 1}), f"events from the stranger: {applied}"

    for box in sorted(p for p in maildir.iterdir() if p.is_dir()):
        twice = [i for i, n in Counter(str(m["Message-ID"]) for m in letters_in(maildir, box.name)).items() if n > 1]
        assert twice == [], f"{box.name} got a letter twice: {twice}"
    answered = Counter(str(m["In-Reply-To"] or "").strip("<>") for p in PLAYERS for m in letters_in(maildir, p.email))
    assert all(answered[m] == 1 for m in player_ids)

    verified = subprocess.run([*PBEM, "--db", url, "verify", "g1"], capture_output=True, text=True, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
