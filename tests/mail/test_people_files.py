"""The files of tests/mail/people/ are what cases.json says: well-formed mail holding the lines typed.

The by-mail test (tests/service/test_people_by_mail.py) judges the server; this one judges the corpus, so
that a case failing there is the server's doing and not a file that lost a line in its encoding.
"""

from __future__ import annotations

import email
import email.policy
import json
import sys
import unicodedata
from pathlib import Path

import pytest

PEOPLE = Path(__file__).parent / "people"
sys.path.insert(0, str(PEOPLE))
from make_people import VERB_NAMES  # noqa: E402

#: The verbs and query words of issue 29's brief, which a name may begin or nearly spell.
WORDS = (
    "ABSENT ACCEPT ADVANCE ANNOUNCE APPROVE BUILD BUY CONVERT DEADLINE DEFER DENY DISCARD DONE DRAW EXTEND FACTION "
    "FINISH GIVE GROW HALT KEEP KICK LOSE MOVE NATION OFFER ORDER PAUSE PAY PICK PILLAGE PLACE PLAY REBELS REDUCE "
    "REPLACE RESUME REVOLT ROLLBACK SAIL SCRAP SEED SHIP SPOILS START TAX TIMEZONE TOWN UNKICK VOLUNTEER WATER "
    "WITHDRAW STATUS ORDERS HAND BOARD HISTORY MAP EXPLAIN HELP"
).split()
CASES = json.loads((PEOPLE / "cases.json").read_text(encoding="utf-8"))
FILLED = {b"{{FROM}}": b"ben@example.net", b"{{REPLY_TO}}": b"pbem+g1.2.abc@pbem.localhost",
          b"{{PROMPT_ID}}": b"pbem.1@pbem.localhost", b"{{SUBJECT}}": b"[g1] your orders"}


@pytest.mark.parametrize("case", CASES, ids=[c["file"].removesuffix(".eml") for c in CASES])
def test_file_holds_what_was_typed(case):
    raw = (PEOPLE / case["file"]).read_bytes()
    assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b""), "CRLF line ends only"
    for name, value in FILLED.items():
        raw = raw.replace(name, value)
    assert b"{{" not in raw, "a placeholder outside the four known ones"
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert message["In-Reply-To"] == "<pbem.1@pbem.localhost>" and str(message["Subject"]).lower().startswith("re:")
    text = message.get_body(preferencelist=("plain",)).get_content()
    for line in case["typed"]:
        if line.strip():
            assert line.rstrip() in text, f"{line!r} is not in the text part"


def _one_edit(a: str, b: str) -> bool:
    """Whether a and b differ by one letter replaced, added, dropped, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _plain(name: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", name) if unicodedata.category(c) != "Mn").upper()


def test_every_verb_like_name_signs_a_case():
    """Each name of first_names.txt that is a verb's beginning (3+ letters) or one edit from a verb or query
    word closes some reply of the sign-off category, and is in the file."""
    listed = Path(__file__).parent.parent.parent / "pbem" / "orders" / "first_names.txt"
    names = [n.strip() for n in listed.read_text(encoding="utf-8").splitlines() if n.strip() and not n.startswith("#")]
    verb_like = {
        _plain(n) for n in names if len(n) >= 3
        and any((w.startswith(_plain(n)) and w != _plain(n)) or _one_edit(_plain(n), w) for w in WORDS)
    }
    signed = {_plain(line.split()[-1]) for c in CASES if c["category"] == "sign-off" for line in c["typed"] if line.strip()}
    assert {_plain(n) for n in VERB_NAMES} <= {_plain(n) for n in names}, "a verb-like name missing from first_names.txt"
    assert verb_like <= signed, f"verb-like names that sign no case: {sorted(verb_like - signed)}"
