"""Text that players and strangers wrote, made safe to show: every control character is written out visibly.

Why: a press message, a player's name, an order line echoed back, a subject
or a From display name reaches moderators' terminals, mail readers and log
viewers. Left raw, an ANSI escape sequence (``ESC [ 2 J``), a carriage
return, a backspace, a C1 control or a bidi override lets its writer clear a
screen, rewrite a line already shown, retitle a terminal or make text read
backwards; a line break in a name puts a line of his own making into a log
or a header. The log keeps what was written (it is evidence); only what is
shown is escaped, once, where it leaves pbem (docs/mail.md, docs/cli.md).

The escaped form is that of a Python string literal, so a moderator reads it
at a glance: ``\\n``, ``\\r``, ``\\t``, ``\\x1b`` for the other C0 controls,
DEL and the C1 controls, ``\\u202e`` for the bidi controls, the line and
paragraph separators and lone surrogates. A backslash the writer typed
stays as it is (``\\o/``, ``C:\\games``), except where the text right after
it begins with one of ``\\ n r t x u``: there it is doubled, so a typed
``\\x1b`` (shown ``\\\\x1b``) never passes for an escaped ESC. Each text thus
has exactly one escaped form and no two texts share one. Because of that,
escaping twice is not escaping once: escape a text at one output boundary
only.
"""

from __future__ import annotations

import re

__all__ = ["UNSAFE", "escape_controls", "holds_controls"]

#: The characters escaped everywhere: the C0 controls but tab and line feed, DEL, the C1 controls, the bidi
#: controls (Arabic letter mark, LRM, RLM, the embeddings and overrides, the isolates), the line and
#: paragraph separators, and lone surrogates (which no UTF-8 output can carry).
_ALWAYS = (
    r"\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff"
)

#: One character escaped in a body, where line feed and tab keep their meaning.
UNSAFE = re.compile(f"[{_ALWAYS}]")

#: One character escaped on one line.
_UNSAFE_ON_ONE_LINE = re.compile(f"[\\t\\n{_ALWAYS}]")

#: What a body's escaping replaces: a character of `UNSAFE`, or a backslash that would read as an escape.
_IN_BODY = re.compile(rf"\\(?=[\\nrtxu{_ALWAYS}])|[{_ALWAYS}]")
#: The same on one line (a header, a log line, a cell of a table): line feed and tab are escaped too.
_ON_ONE_LINE = re.compile(rf"\\(?=[\\nrtxu\t\n{_ALWAYS}])|[\t\n{_ALWAYS}]")

_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, *, one_line: bool = False) -> str:
    """``text`` with each control character written out (``\\x1b``), for a letter, a terminal or a log.

    ``one_line``: the text stands on one line (a header, a log line, a cell
    of a table), so a line feed or a tab in it is escaped too and cannot
    start a line of its own. Printable text without backslashes comes back
    unchanged (and as the same object, at the cost of one scan).
    """
    pattern = _ON_ONE_LINE if one_line else _IN_BODY
    if pattern.search(text) is None:
        return text
    return pattern.sub(_shown, text)


def holds_controls(text: str, *, one_line: bool = False) -> bool:
    """Whether ``text`` holds a character `escape_controls` writes out (backslashes aside).

    Text escaped once holds none, so a boundary that may be handed either
    raw or escaped text (a header field: an address as it came, or a subject
    the renderer escaped) escapes only what holds one, and never twice.
    """
    return (_UNSAFE_ON_ONE_LINE if one_line else UNSAFE).search(text) is not None
