"""`pbem.escaping.escape_controls`: control characters written out, printable text left alone, every text told apart.

The decoder below reads the escaped form back as docs/mail.md describes it;
that it gives back every text proves no two texts share an escaped form.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbem.escaping import UNSAFE, escape_controls

#: Characters the strategies draw often: the controls of the defect and the backslash-escape's own letters.
TRICKY = ["\x1b", "\x07", "\r", "\n", "\t", "\x08", "\x00", "\x7f", "\x85", "\x9b", "\u202e", "\u2066", "\u200f",
          "\u2028", "\ud800", "\\", "x", "u", "n", "r", "t", "1", "b", "[", "é", "😀", " "]
ANY_CHAR = st.one_of(st.sampled_from(TRICKY), st.characters(exclude_categories=()))
TEXT = st.text(alphabet=ANY_CHAR, max_size=40)


def unescape(shown: str) -> str:
    """The text an escaped form stands for: ``\\\\``, ``\\n``, ``\\r``, ``\\t``, ``\\xHH``, ``\\uHHHH``; any other
    backslash is the backslash itself."""
    out: list[str] = []
    i = 0
    while i < len(shown):
        char, following = shown[i], shown[i + 1: i + 2]
        if char != "\\" or following not in ("\\", "n", "r", "t", "x", "u") or not following:
            out.append(char)
            i += 1
        elif following in "\\nrt":
            out.append({"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}[following])
            i += 2
        else:
            width = 2 if following == "x" else 4
            digits = shown[i + 2: i + 2 + width]
            assert len(digits) == width and all(d in "0123456789abcdef" for d in digits), shown
            out.append(chr(int(digits, 16)))
            i += 2 + width
    return "".join(out)


def _is_control(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp") or bool(UNSAFE.match(char))


@given(TEXT)
def test_the_escaped_form_reads_back_as_the_text_so_no_two_texts_share_one(text):
    assert unescape(escape_controls(text)) == text
    assert unescape(escape_controls(text, one_line=True)) == text


@given(TEXT, TEXT)
def test_different_texts_are_shown_differently(a, b):
    if a != b:
        assert escape_controls(a) != escape_controls(b)
        assert escape_controls(a, one_line=True) != escape_controls(b, one_line=True)


@given(TEXT)
def test_no_control_character_comes_out(text):
    body = escape_controls(text)
    assert [c for c in body if _is_control(c) and c not in "\n\t"] == []
    assert body.count("\n") == text.count("\n") and body.count("\t") == text.count("\t")  # kept in a body
    assert [c for c in escape_controls(text, one_line=True) if _is_control(c)] == []


@given(st.text(alphabet=st.one_of(st.characters(exclude_categories=()), st.sampled_from(["\n", "\t", " "]))))
def test_printable_text_with_line_feeds_and_tabs_is_left_as_it_is(text):
    plain = UNSAFE.sub("", text).replace("\\", "")
    assert escape_controls(plain) is plain
    assert escape_controls(plain.replace("\n", " ").replace("\t", " "), one_line=True) == plain.replace("\n", " ").replace("\t", " ")


@pytest.mark.parametrize(("written", "shown"), [
    ("\x1b[2J\x1b[31mEVIL\x1b[0m", "\\x1b[2J\\x1b[31mEVIL\\x1b[0m"),
    ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
    ("a\rb", "a\\rb"),
    ("\x08", "\\x08"),
    ("\x9b31m", "\\x9b31m"),
    ("\u202eevil", "\\u202eevil"),
    ("del\x7f", "del\\x7f"),
    ("\u2028", "\\u2028"),
    ("\\o/ ¯\\_(ツ)_/¯ C:\\games", "\\o/ ¯\\_(ツ)_/¯ C:\\games"),  # a backslash that reads as no escape stays
    ("typed \\x1b", "typed \\\\x1b"),  # one that would is doubled
    ("\\\x1b", "\\\\\\x1b"),
    ("a\\\\b", "a\\\\\\b"),  # the first is doubled (a backslash follows it), the second not
])
def test_the_shown_forms(written, shown):
    assert escape_controls(written) == shown
    assert unescape(shown) == written


def test_line_feed_and_tab_stay_in_a_body_and_are_escaped_on_one_line():
    assert escape_controls("one\n\ttwo") == "one\n\ttwo"
    assert escape_controls("one\n\ttwo", one_line=True) == "one\\n\\ttwo"
    assert escape_controls("Ann\r\nBcc: eve@example.org", one_line=True) == "Ann\\r\\nBcc: eve@example.org"
    assert escape_controls("a\\nb", one_line=True) == "a\\\\nb"


def test_every_c0_and_c1_control_but_line_feed_and_tab_is_escaped_in_a_body():
    controls = [chr(c) for c in [*range(0x20), *range(0x7f, 0xa0)]]
    assert [c for c in controls if escape_controls(c) == c] == ["\t", "\n"]
    assert [c for c in controls if escape_controls(c, one_line=True) == c] == []
    assert all(not c.isprintable() for c in map(chr, range(0x110000)) if UNSAFE.match(c))  # nothing printable
