"""Issue 31: MAIL DIGEST and MAIL NOPICTURES, chosen by mail, change what each player's mailbox gets.

Three players play setup and a turn by mail (`pbem demo`, bots replying by SMTP), once as the server
sends by default and once after every player replied ``MAIL DIGEST NOPICTURES`` to his start letter.
With the digest a turn's thread holds the letters that ask something (prompts) and one letter with the
turn's reports and the answers that only said orders were on file; no letter after the choice carries a
picture; and STATUS says what he chose.
"""

from __future__ import annotations

import asyncio
import email
import mailbox
from email.policy import default as default_policy

from click.testing import CliRunner

from pbem.cli import main as cli
from pbem.mail.order_text import ORDERS_BEGIN
from pbem.service.demo import run_demo


def _mailboxes(out) -> dict[str, list]:
    boxes = {}
    for folder in sorted((out / "mail").iterdir()):
        if folder.name.startswith("."):
            continue
        box = mailbox.Maildir(folder, factory=None, create=False)
        keys = sorted(box.keys(), key=lambda k: (int(k.split(".", 1)[0]), k))
        boxes[folder.name] = [email.message_from_bytes(box.get_bytes(k), policy=default_policy) for k in keys]
    return boxes


def _text(letter) -> str:
    return letter.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")


def _pictures(letter) -> int:
    return sum(1 for part in letter.walk() if part.get_content_type().startswith("image/"))


def _play(out, mail: str | None) -> dict[str, list]:
    code = asyncio.run(run_demo(out, players=3, turns=1, bots="planner", echo=lambda _line: None, mail=mail))
    assert code == 0
    return _mailboxes(out)


def test_digest_and_no_pictures_chosen_by_mail(tmp_path, monkeypatch):
    monkeypatch.setenv("PBEM_BOARD_PICTURES", "1")  # the server's pictures on, as they are by default
    every = _play(tmp_path / "every", None)
    digest = _play(tmp_path / "digest", "digest nopictures")
    assert sorted(every) == sorted(digest)
    for address, letters in digest.items():
        chose = next(i for i, m in enumerate(letters) if "MAIL DIGEST NOPICTURES" in _text(m))
        assert "Orders received" in str(letters[chose]["X-Pbem-Topic"])  # confirmed at once, not held
        later = letters[chose + 1:]
        assert [str(m["X-Pbem-Topic"]) for m in later if _pictures(m)] == []
        turn_one = [m for m in later if str(m["Subject"]).endswith("Turn 1")]
        digests = [m for m in turn_one if str(m["X-Pbem-Topic"]) == "Turn 1 in one letter"]
        assert len(digests) == 1, [str(m["X-Pbem-Topic"]) for m in turn_one]
        held = _text(digests[0])
        assert "what happened from turn 1" in held and "your orders are on file" in held
        # everything else of the turn asks something: a prompt with its order block
        rest = [m for m in turn_one if m is not digests[0]]
        assert rest and all(ORDERS_BEGIN in _text(m) for m in rest), [str(m["X-Pbem-Topic"]) for m in rest]
        assert not any("what happened from" in _text(m) for m in rest)
        assert any(_pictures(m) for m in every[address])  # by default reports come with the board
    # and by default the same turn took more letters in all
    in_turn_one = {name: sum(str(m["Subject"]).endswith("Turn 1") for box in boxes.values() for m in box)
                   for name, boxes in (("every", every), ("digest", digest))}
    assert in_turn_one["digest"] < in_turn_one["every"], in_turn_one

    url = f"sqlite:///{tmp_path / 'digest' / 'pbem.sqlite'}"
    status = CliRunner().invoke(cli, ["--db", url, "submit", "demo", "--as", "Alice"], input="STATUS\n")
    assert "Your mail: one letter a turn" in status.output and "without pictures" in status.output, status.output
    back = CliRunner().invoke(cli, ["--db", url, "submit", "demo", "--as", "Alice"], input="MAIL EVERY\nSTATUS\n")
    assert "accepted: MAIL EVERY" in back.output
    assert "Your mail: every letter as it is written, without pictures" in back.output, back.output
