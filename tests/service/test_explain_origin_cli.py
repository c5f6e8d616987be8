"""Issue 30 at the command line: `pbem explain GAME V --as ...` names the order's line and mail to whom it may.

The order comes in as the MTA hands a mail to `pbem ingest`: a nation chosen
with a slip of the finger and a sign-off under it, under a subject of the
player's own. The moderator and the sender read the line, the mail's Subject
and Date and the source digest; an auditor while the game runs and another
player read who sent it and when, nothing of the mail. A log recorded before
orders kept their line is explained from the inbox (`InboxOrigins`).
"""

from __future__ import annotations

import email
import json
from dataclasses import replace
from datetime import datetime, timezone
from email.message import EmailMessage
from email.policy import default
from email.utils import format_datetime, make_msgid

from pbem.audit.explain import explain
from pbem.service.batch import mail_source
from pbem.service.origins import explained
from pbem.store.database import make_engine
from pbem.store.unit_of_work import UnitOfWork

from .test_cli import game, out, pbem, setup_turns  # noqa: F401 - game is the fixture the tests use

SENT = datetime(2026, 11, 28, 9, 14, 3, tzinfo=timezone.utc)


def _ingest(db_url, cwd) -> tuple[EmailMessage, str]:
    """The first player asked chooses Crete by mail, as his MTA delivers it; his mail and his name."""
    asked = next(iter(setup_turns(db_url, cwd)["pending"].values()))
    address = {"Ann": "ann@example.org", "Ben": "ben@example.org", "Cy": "cy@example.org"}[asked["player"]]
    engine = make_engine(db_url)
    with UnitOfWork(engine) as uow:
        prompt_row = [r for r in uow.outbox.list("g1") if r.kind == "prompt"][-1]
    engine.dispose()
    prompt = email.message_from_bytes(bytes(prompt_row.raw), policy=default)
    mail = EmailMessage()
    mail["From"] = address
    mail["To"] = str(prompt["Reply-To"])
    mail["Subject"] = "Crete for me, please"
    mail["Date"] = format_datetime(SENT)
    mail["Message-ID"] = make_msgid(domain="example.org")
    mail.set_content("natoin   crete\n\nCheers,\n" + asked["player"] + "\n")
    done = pbem(db_url, "ingest", "--from", address, "--to", str(prompt["Reply-To"]), stdin=mail.as_bytes(), cwd=cwd)
    assert done.returncode == 0 and out(done).startswith("done"), out(done)
    return mail, asked["player"]


def _chosen(db_url) -> int:
    engine = make_engine(db_url)
    with UnitOfWork(engine) as uow:
        version = next(r.version for r in uow.events.read("g1") if r.type == "NationChosen")
    engine.dispose()
    return version


def test_pbem_explain_names_the_line_and_the_mail_to_the_moderator_and_the_sender(game):  # noqa: F811
    db_url, cwd = game
    mail, name = _ingest(db_url, cwd)
    version = _chosen(db_url)
    source = mail_source(str(mail["Message-ID"]).strip("<>"))

    moderator = pbem(db_url, "explain", "g1", str(version), "--as", "moderator", cwd=cwd)
    assert moderator.returncode == 0, out(moderator)
    lines = moderator.stdout.decode().splitlines()
    assert lines[0] == f"EXPLAIN version {version} of g1 (setup, Nations and start areas), as moderator."
    assert lines[1] == f"Outcome: {name} chose Crete."
    assert lines[2] == "Started by: this event itself."
    assert lines[3].startswith(f"  By {name} (Crete) (actor player:") and f"source {source}), recorded at" in lines[3]
    assert '  As written, line 1: "natoin   crete"' in lines  # as he typed it: the slip, the case, the spaces
    assert f'  The mail: Subject "Crete for me, please", Date "{mail["Date"]}"' in lines
    assert "Cheers," not in moderator.stdout.decode()

    mine = pbem(db_url, "explain", "g1", str(version), "--as", "crete", "--json", cwd=cwd)
    assert '  As written, line 1: "natoin   crete"' in json.loads(mine.stdout)["lines"]

    for viewer in ("auditor", "thrace", "observer"):  # an auditor during the game reads what an observer reads
        shown = pbem(db_url, "explain", "g1", str(version), "--as", viewer, cwd=cwd)
        text = shown.stdout.decode()
        assert shown.returncode == 0 and f"  By {name} (Crete), recorded at " in text, out(shown)
        assert "natoin" not in text and "The mail:" not in text and "Crete for me" not in text and "source" not in text


def test_the_senders_export_keeps_his_line_and_another_players_withholds_it(game):  # noqa: F811
    """The line rides in the metadata the hash covers: his own export keeps it whole (and still checks), another
    player's withholds that event's metadata, as any note of the service's own."""
    db_url, cwd = game
    _ingest(db_url, cwd)
    version = _chosen(db_url)
    exports = {}
    for viewer in ("crete", "thrace"):
        made = pbem(db_url, "export", "g1", "--as", viewer, cwd=cwd)
        assert made.returncode == 0, out(made)
        exports[viewer] = {x.get("version"): x for x in map(json.loads, made.stdout.decode().splitlines())}
        (cwd / f"{viewer}.jsonl").write_bytes(made.stdout)
        checked = pbem(db_url, "import", "--check", str(cwd / f"{viewer}.jsonl"), cwd=cwd)
        assert checked.returncode == 0, out(checked)
    assert exports["crete"][version]["metadata"]["order"]["line"] == "natoin   crete"
    assert exports["thrace"][version]["withheld"] == ["metadata"] and "natoin" not in json.dumps(exports["thrace"])


def test_an_order_recorded_without_its_line_is_found_in_the_inbox(game):  # noqa: F811
    """A log from before orders kept their line: the stored message is read again, and the line that made that very
    order named; an export (no inbox) says the line is not in the log."""
    db_url, cwd = game
    mail, _ = _ingest(db_url, cwd)
    version = _chosen(db_url)
    engine = make_engine(db_url)
    with UnitOfWork(engine) as uow:
        recorded = uow.events.read("g1")
        older = [replace(r, metadata={k: v for k, v in r.metadata.items() if k != "order"}) for r in recorded]
        looked_up = explained(uow, "g1", older, version, "moderator")
    engine.dispose()
    assert '  As written, line 1: "natoin   crete"' in looked_up.lines
    assert f'  The mail: Subject "Crete for me, please", Date "{mail["Date"]}"' in looked_up.lines
    alone = explain("g1", older, version, "moderator")
    assert "  The line as written is not in this log (it was recorded before lines were kept)." in alone.lines
    assert not any("The mail:" in line for line in alone.lines)
