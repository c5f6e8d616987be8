"""A full disk and a read-only database under a real `pbem serve`: clear errors, nothing lost, nothing twice.

The faults are real: file systems mounted for the test (root is needed; CI
runs as root, and a machine that cannot mount skips with the reason).

* Full disk: the database and the mail spool (Maildir) each on a small tmpfs
  that a filler file fills to ENOSPC. While the spool is full, orders are
  taken and their letters wait in the outbox. While the database's disk is
  full, SMTP clients are answered 452 and keep their mail; the server is
  killed and started again on the full disk with messages stored and not
  handled, and must listen and keep them. Once the fillers are removed the
  relay's retries are taken, the waiting messages handled and the letters
  sent, each once.
* Read-only at start: the tmpfs remounted read-only (root ignores file
  modes, a read-only mount does not): `pbem serve`, `pbem game list` and
  `pbem ingest` each say in one line which file and what to do.
* Read-only while running: ext4 on a loop device mounted errors=remount-ro
  falls back to read-only under the running server (the kernel's answer to
  a failing disk, triggered through /sys/fs/ext4/<dev>/trigger_fs_error).
  SMTP clients get 4xx; the server stops when told; after e2fsck and a new
  mount every mail answered 250 is there and every order is applied once.

``make hostile-disk`` runs it (docs/reliability.md).
"""

from __future__ import annotations

import email
import json
import os
import shutil
import smtplib
import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from email.policy import default as default_policy
from pathlib import Path

import pytest

from pbem.service.games import create_game
from pbem.service.inbound import accept
from pbem.service.server import utc_now
from pbem.service.settings import Settings
from pbem.store.database import ensure_schema, make_engine

from .processes import PBEM, PLAYERS, Server, press_order, rows, send_until_taken, wait_until_settled

pytestmark = pytest.mark.hostile

MAILS = int(os.environ.get("PBEM_HOSTILE_DISK_MAILS", "8"))


# -- file systems ----------------------------------------------------------------------------------------------------

def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), capture_output=True, text=True, timeout=120)


def _unmount(target: Path) -> None:
    if _run("umount", str(target)).returncode != 0:
        _run("umount", "-l", str(target))  # still busy (a process the test failed to stop): detach it anyway


@pytest.fixture
def tmpfs(tmp_path) -> Iterator:
    """``mount(name, size)``: a tmpfs of that size at tmp_path/name, unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file system for the test needs root (CI runs as root)")
    mounted: list[Path] = []

    def mount(name: str, size: str) -> Path:
        target = tmp_path / name
        target.mkdir()
        done = _run("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target))
        if done.returncode != 0:
            pytest.skip(f"this machine cannot mount a tmpfs: {done.stderr.strip()}")
        mounted.append(target)
        return target

    yield mount
    for target in reversed(mounted):
        _unmount(target)


def _holders(folder: Path) -> str:
    found = []
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(folder)):
            found.append(f"{fd} -> {target}")
    return "\n".join(found)


def fill(folder: Path) -> Path:
    """Write a file until the file system is full (ENOSPC); remove it to free the space."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for chunk in (1 << 20, 1 << 12, 1 << 9):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError as error:
                assert error.errno == 28, error  # ENOSPC, and nothing else
    finally:
        os.close(fd)
    assert os.statvfs(folder).f_bavail == 0
    return filler


# -- the game and its mail -------------------------------------------------------------------------------------------

def setup_game(db_file: Path, maildir: Path) -> dict[str, str]:
    url = f"sqlite:///{db_file}"
    settings = Settings(db_url=url, maildir=maildir, board_pictures=False)
    db = make_engine(url)
    ensure_schema(db)
    create_game(db, settings, "g1", PLAYERS, seed="disk", now=utc_now())
    db.dispose()
    return {**os.environ, "PBEM_DATABASE_URL": url, "PBEM_MAILDIR": str(maildir), "PBEM_BOARD_PICTURES": "0",
            "PBEM_OUTBOX_LEASE": "2", "PBEM_DEADLINE_HOURS": "1000"}


def letters(maildir: Path) -> dict[str, list[email.message.Message]]:
    out = {}
    for folder in sorted(p for p in maildir.iterdir() if p.is_dir()):
        out[folder.name] = [email.message_from_bytes(f.read_bytes(), policy=default_policy)  # a folder being
                            for sub in ("new", "cur") if (folder / sub).is_dir()  # made may lack new/ for an instant
                            for f in sorted((folder / sub).iterdir())]
    return out


def reply_addresses(maildir: Path) -> dict[str, str]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
            maildir.exists() and all(letters(maildir).get(p.email) for p in PLAYERS)):
        time.sleep(0.1)
    return {p.email: str(letters(maildir)[p.email][0]["Reply-To"]) for p in PLAYERS}


def order(i: int, reply_to: dict[str, str]):
    sender = PLAYERS[i % len(PLAYERS)]
    return press_order(i, sender, reply_to[sender.email]), sender.email, reply_to[sender.email]


def send_once(port: int, i: int, reply_to: dict[str, str]) -> tuple[int, str]:
    """One try, as a relay's: the reply code and text to the end of DATA."""
    message, sender, to = order(i, reply_to)
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as smtp:
            smtp.send_message(message, sender, [to])
            return 250, "OK"
    except smtplib.SMTPResponseException as refused:
        return refused.smtp_code, refused.smtp_error.decode()


def still_talks(server: Server) -> None:
    """Not crashed, not wedged: the process runs and answers a NOOP at once."""
    assert server.proc is not None and server.proc.poll() is None, "".join(server.said[-30:])
    started = time.monotonic()
    with smtplib.SMTP("127.0.0.1", server.port, timeout=30) as smtp:
        assert smtp.noop()[0] == 250
    assert time.monotonic() - started < 10


def stored(db_file: Path, i: int) -> list[str]:
    return [s for (s,) in rows(db_file, f"SELECT status FROM inbox WHERE message_id = 'hostile-{i}@players.example'")]


def pbem(*args: str, env: dict[str, str], cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([*PBEM, *args], env=env, cwd=cwd, input=stdin, capture_output=True, timeout=120)


def one_line(done: subprocess.CompletedProcess, status: int, *words: str) -> str:
    err = done.stderr.decode()
    assert done.returncode == status, (done.returncode, err[-3000:])
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    return err.strip()


def check_everything_once(db_file: Path, maildir: Path, numbers: list[int], url: str, cwd: Path) -> None:
    """Every mail in the inbox once and done, applied once, answered once; no letter twice, no draft left."""
    ours = {f"hostile-{i}@players.example" for i in numbers}
    inbox = [(m.strip("<>"), s) for m, s in rows(db_file, "SELECT message_id, status FROM inbox") if m.strip("<>") in ours]
    assert Counter(m for m, _ in inbox) == Counter(ours)
    assert {s for _, s in inbox} == {"done"}
    pressed = Counter(json.loads(p)["text"] for (p,) in rows(db_file, "SELECT payload FROM events WHERE type = 'PressSent'"))
    assert pressed == Counter(f"hostile {i}" for i in numbers)
    boxes = letters(maildir)
    for address, box in boxes.items():
        ids = Counter(str(m["Message-ID"]) for m in box)
        assert [i for i, n in ids.items() if n > 1] == [], f"{address} got a letter twice"
    answers = Counter(str(m["In-Reply-To"]).strip("<>") for box in boxes.values() for m in box
                      if str(m["In-Reply-To"]).strip("<>") in ours)
    assert answers == Counter(ours)
    assert [f for folder in maildir.iterdir() if folder.is_dir() for f in (folder / "tmp").iterdir()] == []
    assert rows(db_file, "SELECT count(*) FROM inbox WHERE status = 'failed'") == [(0,)]
    verified = subprocess.run([*PBEM, "--db", url, "verify", "g1"], capture_output=True, text=True, cwd=cwd)
    assert verified.returncode == 0, verified.stdout + verified.stderr


# -- a full disk -----------------------------------------------------------------------------------------------------

def test_a_full_disk_defers_mail_keeps_what_it_took_and_catches_up(tmp_path, tmpfs):
    data, spool = tmpfs("data", "24m"), tmpfs("spool", "2m")
    db_file, maildir = data / "pbem.sqlite", spool / "mail"
    env = setup_game(db_file, maildir)
    url = env["PBEM_DATABASE_URL"]
    server = Server(env, tmp_path)
    server.start()
    began = time.monotonic()
    try:
        reply_to = reply_addresses(maildir)
        numbers = iter(range(10_000))

        # 1. The mail spool is full: orders are taken and handled, their letters wait in the outbox.
        spool_filler = fill(spool)
        spool_full = [next(numbers) for _ in range(MAILS)]
        for i in spool_full:
            assert send_until_taken(server.port, *order(i, reply_to)) == 1  # the database has room: taken at once
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(stored(db_file, i) != ["done"] for i in spool_full):
            time.sleep(0.1)
        assert all(stored(db_file, i) == ["done"] for i in spool_full)
        while time.monotonic() < deadline and not rows(db_file, "SELECT count(*) FROM outbox WHERE sent_at IS NULL "
                                                              "AND last_error LIKE '%No space left%'")[0][0]:
            time.sleep(0.1)
        queue = pbem("queue", env=env, cwd=tmp_path)
        assert queue.returncode == 0 and b"No space left on device" in queue.stdout, queue.stdout + queue.stderr
        waiting_letters = rows(db_file, "SELECT count(*) FROM outbox WHERE sent_at IS NULL")[0][0]
        assert waiting_letters >= len(spool_full)

        # 2. The database's disk is full too, with messages stored and not yet handled (as the server stores each
        #    before its 250; `accept` is that same call) and a WAL with no room left to grow.
        stored_first = [next(numbers) for _ in range(MAILS)]
        db = make_engine(url)
        for i in stored_first:
            message, sender, to = order(i, reply_to)
            accept(db, message.as_bytes(), sender, [to], utc_now())
        db.dispose()
        with sqlite3.connect(db_file, timeout=30) as conn:  # the WAL's space back to the disk, then none left
            while conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:
                time.sleep(0.05)
        data_filler = fill(data)
        deferred = [next(numbers) for _ in range(MAILS)]
        answers = [send_once(server.port, i, reply_to) for i in deferred]
        assert {code for code, _ in answers} == {452}, answers
        assert "4.3.1 Insufficient system storage" in answers[0][1]
        assert all(stored(db_file, i) == [] for i in deferred)  # answered 4xx: not kept, the relay keeps it
        still_talks(server)

        # 3. Killed and started again on the full disk: it listens, keeps what it could not handle, answers 452.
        server.kill()
        server.start()
        still_talks(server)
        assert {code for code, _ in (send_once(server.port, i, reply_to) for i in deferred)} == {452}
        assert all(stored(db_file, i) == ["received"] for i in stored_first)
        queue = pbem("queue", env=env, cwd=tmp_path)
        assert queue.returncode == 0, queue.stderr
        assert sum(b" received" in line for line in queue.stdout.splitlines()) == len(stored_first), queue.stdout

        # 4. Space is freed: the relay's retries are taken, the waiting messages handled, the letters sent.
        freed = time.monotonic()
        data_filler.unlink()
        spool_filler.unlink()
        for i in deferred:
            send_until_taken(server.port, *order(i, reply_to))
        after = [next(numbers) for _ in range(MAILS)]
        for i in after:
            send_until_taken(server.port, *order(i, reply_to))
        wait_until_settled(lambda query: rows(db_file, query)[0][0])
        caught_up = time.monotonic() - freed
    finally:
        server.stop()
    said = "".join(server.said)
    print(f"spool full: {len(spool_full)} orders taken, {waiting_letters} letters waited; database full: "
          f"{len(deferred)} mails answered 452 (twice, once across a restart), {len(stored_first)} stored ones waited; "
          f"{len(after)} more after; caught up {caught_up:.1f} s after the space was freed; {time.monotonic() - began:.0f} s")
    assert "Traceback" not in said, said[-5000:]
    faults = [line for line in server.said if " pbem.serve " in line and "is full" in line]
    assert 1 <= len(faults) <= 4, "".join(faults)  # logged when it begins (again after the restart), not each second
    check_everything_once(db_file, maildir, [*spool_full, *stored_first, *deferred, *after], url, tmp_path)


# -- a read-only database --------------------------------------------------------------------------------------------

def test_a_read_only_database_is_named_in_one_line_and_nothing_is_lost(tmp_path, tmpfs):
    data = tmpfs("data", "16m")
    db_file, maildir = data / "pbem.sqlite", tmp_path / "mail"
    env = setup_game(db_file, maildir)
    server = Server(env, tmp_path)
    server.start()
    try:
        reply_to = reply_addresses(maildir)
        for i in range(MAILS):
            send_until_taken(server.port, *order(i, reply_to))
        wait_until_settled(lambda query: rows(db_file, query)[0][0])
    finally:
        server.stop()
    message, sender, to = order(MAILS, reply_to)

    # Stopped cleanly (no -wal, no -shm left) and killed (both left): the mount made read-only each time.
    for leftovers in ("none", "wal"):
        if leftovers == "wal":
            server.start()
            server.kill()
            assert (data / "pbem.sqlite-wal").exists()
        remounted = _run("mount", "-o", "remount,ro", str(data))
        assert remounted.returncode == 0, remounted.stderr + _holders(data)
        try:
            named = f"{db_file} cannot be written"  # the database, not the lock file or the WAL beside it
            said = one_line(pbem("serve", "--listen", "127.0.0.1:0", env=env, cwd=tmp_path), 2, named,
                            "pbem.sqlite-wal", "remount the file system read-write")
            one_line(pbem("game", "list", env=env, cwd=tmp_path), 2, named)
            one_line(pbem("ingest", "--from", sender, "--to", to, env=env, cwd=tmp_path, stdin=message.as_bytes()),
                     75, named, "the MTA keeps it and retries")
        finally:
            assert _run("mount", "-o", "remount,rw", str(data)).returncode == 0
    print(f"read-only at start: {said}")

    # Writable again: the mail the MTA kept goes in, and everything from before is still there.
    taken = pbem("ingest", "--from", sender, "--to", to, env=env, cwd=tmp_path, stdin=message.as_bytes())
    assert taken.returncode == 0 and taken.stdout.startswith(b"done"), taken.stdout + taken.stderr
    flushed = pbem("flush", env=env, cwd=tmp_path)
    assert flushed.returncode == 0, flushed.stderr
    check_everything_once(db_file, maildir, list(range(MAILS + 1)), env["PBEM_DATABASE_URL"], tmp_path)


@pytest.fixture
def ext4(tmp_path) -> Iterator:
    """An ext4 file system on a loop device at tmp_path/disk, mounted errors=remount-ro; yields (mount point, device)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file system for the test needs root (CI runs as root)")
    if not (shutil.which("mkfs.ext4") and shutil.which("e2fsck")):
        pytest.skip("mkfs.ext4 and e2fsck are needed (e2fsprogs)")
    image, target = tmp_path / "disk.img", tmp_path / "disk"
    target.mkdir()
    with open(image, "wb") as out:
        out.truncate(64 << 20)
    made = _run("mkfs.ext4", "-q", "-F", str(image))
    assert made.returncode == 0, made.stderr
    done = _run("mount", "-o", "loop,errors=remount-ro", str(image), str(target))
    if done.returncode != 0:
        pytest.skip(f"this machine cannot mount a loop device: {done.stderr.strip()}")
    device = _run("findmnt", "-n", "-o", "SOURCE", str(target)).stdout.strip()
    if not Path(f"/sys/fs/ext4/{Path(device).name}/trigger_fs_error").exists():
        _unmount(target)
        pytest.skip("this kernel has no /sys/fs/ext4/<dev>/trigger_fs_error to make ext4 fall back to read-only")
    state = {"image": image, "target": target, "device": device}
    yield state
    _unmount(target)


def test_a_file_system_that_falls_back_to_read_only_under_the_server_loses_nothing(tmp_path, ext4):
    target = ext4["target"]
    db_file, maildir = target / "pbem.sqlite", target / "mail"
    env = setup_game(db_file, maildir)
    server = Server(env, tmp_path)
    server.start()
    before = list(range(MAILS))
    during = list(range(MAILS, 2 * MAILS))
    try:
        reply_to = reply_addresses(maildir)
        for i in before:
            send_until_taken(server.port, *order(i, reply_to))
        # The kernel's answer to a failing disk: the file system goes read-only under the running server.
        Path(f"/sys/fs/ext4/{Path(ext4['device']).name}/trigger_fs_error").write_text("1")
        answers = {i: send_once(server.port, i, reply_to) for i in during}
        refused = [i for i, (code, _) in answers.items() if code != 250]
        assert all(400 <= code < 500 for code, _ in answers.values()), answers
        assert refused, answers  # nothing can be written any more
        for i, (code, _) in answers.items():  # any 250 was committed before the fall
            assert code != 250 or stored(db_file, i) != [], i
        still_talks(server)
        one_line(pbem("game", "list", env=env, cwd=tmp_path), 2, str(db_file))
    finally:
        server.stop()  # it stops when told, read-only disk or not
    assert server.proc.returncode is not None
    # What an operator does: unmount, check, mount again; then start the server.
    assert _run("umount", str(target)).returncode == 0
    checked = _run("e2fsck", "-f", "-y", str(ext4["image"]))
    assert checked.returncode in (0, 1), checked.stdout + checked.stderr  # 1: errors corrected
    assert _run("mount", "-o", "loop,errors=remount-ro", str(ext4["image"]), str(target)).returncode == 0
    server.start()
    try:
        for i in during:
            send_until_taken(server.port, *order(i, reply_to))
        wait_until_settled(lambda query: rows(db_file, query)[0][0])
    finally:
        server.stop()
    codes = Counter(code for code, _ in answers.values())
    print(f"fell to read-only under the server: {dict(codes)} answered to {len(during)} mails; "
          f"{len(before) + len(during)} orders applied once after e2fsck and a new mount")
    check_everything_once(db_file, maildir, before + during, env["PBEM_DATABASE_URL"], tmp_path)
