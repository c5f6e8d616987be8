"""Reads the players' Maildirs for deploy/e2e/postfix.sh (standard library only).

  maildir.py list BASE          one line per letter: KIND<TAB>TO<TAB>TOPIC<TAB>PATH
                                (KIND: start, prompt, ack, other; TOPIC: what the letter is,
                                its X-Pbem-Topic, else its subject: every letter of a turn
                                bears the turn's subject, "[g1] Turn 3")
  maildir.py reply PROMPT OUT   writes the body of a reply to the prompt into OUT (the
                                order block's lines, then the prompt quoted as a mail
                                client quotes it) and prints, one per line: the player's
                                address, the Reply-To address, the subject, In-Reply-To,
                                References, and the orders joined by " | "
  maildir.py text LETTER        the letter's text/plain part
"""

from __future__ import annotations

import email
import email.policy
import sys
from pathlib import Path

BEGIN = "===== ORDERS: edit below this line ====="
END = "===== END OF ORDERS ====="


def read(path: Path) -> email.message.EmailMessage:
    return email.message_from_bytes(path.read_bytes(), policy=email.policy.default)


def text_of(msg: email.message.EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    return part.get_content() if part is not None else ""


def header(msg: email.message.EmailMessage, name: str) -> str:
    return " ".join(str(msg[name] or "").split())


def topic(msg: email.message.EmailMessage) -> str:
    return header(msg, "X-Pbem-Topic") or header(msg, "Subject")


def kind(msg: email.message.EmailMessage) -> str:
    after_tag = topic(msg).split("] ", 1)[-1]
    if after_tag.startswith("A new game of Advanced Civilization"):
        return "start"
    if after_tag.startswith("Orders received") or "ACCEPTED FROM THIS MESSAGE" in text_of(msg):
        return "ack"
    if BEGIN in text_of(msg):
        return "prompt"
    return "other"


def main(argv: list[str]) -> int:
    command = argv[1]
    if command == "list":
        base = Path(argv[2])
        paths = sorted(base.glob("*/*/new/*")) + sorted(base.glob("*/*/cur/*"))
        for path in sorted(paths, key=lambda p: p.stat().st_mtime_ns):
            msg = read(path)
            print("\t".join([kind(msg), header(msg, "To"), topic(msg), str(path)]))
        return 0
    if command == "reply":
        msg, out = read(Path(argv[2])), Path(argv[3])
        body = text_of(msg)
        if BEGIN not in body or END not in body:
            print(f"no order block in {argv[2]}", file=sys.stderr)
            return 1
        block = body.split(BEGIN, 1)[1].split(END, 1)[0]
        orders = [line.strip() for line in block.splitlines() if line.strip()]
        quoted = "\n".join(("> " + line).rstrip() for line in body.splitlines())
        out.write_text(
            "\n".join(orders) + "\n\n" + f"On {header(msg, 'Date')}, {header(msg, 'From')} wrote:\n" + quoted + "\n",
            encoding="utf-8",
        )
        message_id = header(msg, "Message-ID")
        print(header(msg, "To"))
        print(header(msg, "Reply-To"))
        print("Re: " + header(msg, "Subject"))
        print(message_id)
        print(" ".join(x for x in (header(msg, "References"), message_id) if x))
        print(" | ".join(orders))
        return 0
    if command == "text":
        print(text_of(read(Path(argv[2]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
