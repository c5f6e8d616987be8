"""Bodies an adversary writes to make a reader slow: each pattern's worst input, repeated to any size.

A pattern that backtracks is slow only on the input made for it: a long run
of what it may take, then what makes it give up (blank lines before no
``SECRET``, a run of address characters with no ``@``, header lines with no
``From``, "On" lines with no "wrote"). Each shape here is one such unit,
taken from the patterns and readers of `pbem/mail/`, `pbem/orders/` and
`pbem/service/` (docs/mail.md, the pattern audit), repeated to the size
asked. `make fuzz` draws from them and `make hostile-stranger` sends each
at a megabyte; `shape` makes one.
"""

from __future__ import annotations

from collections.abc import Callable

from pbem.orders.language import VERBS

#: Each shape: a body of about ``size`` characters.
Shape = Callable[[int], str]


def _lines(unit: str) -> Shape:
    """``unit`` (one or more whole lines) repeated, between two lines of text so no edge is trimmed."""
    return lambda size: "x\n" + unit * max(1, size // len(unit)) + "\nx\n"


def _one_line(head: str, unit: str, tail: str = "!") -> Shape:
    """One line: ``head``, then ``unit`` repeated, then ``tail`` that makes a pattern give up."""
    return lambda size: head + unit * max(1, (size - len(head)) // len(unit)) + tail + "\n"


#: The header names clients write above a quote (pbem.mail.order_text), without a From among them.
_HEADER_KEYS = ("Subject", "Sent", "Date", "To", "Cc", "Objet", "Betreff", "Asunto", "Oggetto", "Тема")

SHAPES: dict[str, Shape] = {
    # blanks: the SECRET pattern read every run of blank lines again from each line start
    "blank-lines": _lines("\n"),
    "space-lines": _lines(" \n"),
    "tab-lines": _lines("\t\n"),
    "crlf-lines": _lines("\r\n"),
    "blank-run": _one_line("x", " "),
    "tab-run": _one_line("x", "\t"),
    "mixed-blanks": _lines(" \t \n\n"),
    # keywords with nothing after them
    "secret-lines": _lines("secret\n"),
    "secret-colons": _one_line("SECRET", ":"),
    "secret-blanks": _one_line("SECRET", " ", ""),
    "observe-lines": _lines("OBSERVE\n"),
    # quote marks and quote headers
    "quote-marks": _one_line("", ">"),
    "quote-lines": _lines("> \n"),
    "nested-quotes": lambda size: "".join(">" * (i % 60) + " x\n" for i in range(max(1, size // 32))),
    "header-lines": _lines("".join(f"{key}: a\n" for key in _HEADER_KEYS)),
    "subject-lines": _lines("Subject: a\n"),
    "from-lines": _lines("From: a\nx\n"),
    "attribution-starts": _lines("On\n"),
    "attribution-words": _one_line("Am ", "schrieb "),
    "attribution-digits": _one_line("1", "1 skrev ", "x:"),
    "mailbox-digits": _one_line("", "1<1<", ":"),
    "mailbox-runs": _one_line("1 <a", "a", "@b x:"),
    "rule-lines": _lines("----------\n"),
    "dash-run": _one_line("--", "-", " x"),
    "signature-lines": _lines("-- \n"),
    "footer-lines": _lines("Sent from my phone\n"),
    "order-markers": _lines("===== ORDERS: edit below this line =====\n===== END OF ORDERS =====\n"),
    # addresses and message ids (bounces are read for them)
    "address-run": _one_line("", "a-", "!"),
    "at-run": _one_line("<", "@", ""),
    "message-id-lines": _lines("Message-ID: <\n\n"),
    # order lines: a verb, then what its parser reads again and again
    "verb-lines": _lines("".join(f"{verb} \n" for verb in sorted(VERBS))),
    "verb-blanks": _lines("".join(f"{verb} x{' ' * 40}y\n" for verb in sorted(VERBS))),
    "verb-digits": _lines("".join(f"{verb} x {'1' * 40}x\n" for verb in sorted(VERBS))),
    "long-order": _one_line("MOVE 1 ", "Crete ", ""),
    "long-digits": _one_line("BUY Salt ", "1", "x"),
    "long-press": _one_line("PRESS TO Crete", " ", "x"),
    "for-blanks": _one_line("FOR x", " ", "y"),
    "treasury-words": _one_line("BUILD a", " t 1", "x"),
    # HTML-shaped text in a plain body
    "tag-starts": _one_line("", "<a ", ""),
}


def shape(name: str, size: int) -> str:
    """The body of shape ``name``, about ``size`` characters long."""
    return SHAPES[name](size)
