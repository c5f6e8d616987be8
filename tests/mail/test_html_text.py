"""HTML mail as text: what players' clients write comes out as lines, and no input makes it slow.

The HTML reader runs on mail from anyone before the sender is known, so
besides what real clients write (the corpus), it is fed the shapes that made
the standard library's parser take hours on a 1 MB mail.
"""

from __future__ import annotations

import email
import email.policy
import html
import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.html_text import MAX_QUOTE_MARKS, html_to_text
from pbem.mail.order_text import extract_order_text

CORPUS = Path(__file__).parent / "corpus"


# --------------------------------------------------------------------------
# what the text is


def test_blocks_and_breaks_are_lines():
    assert html_to_text("<div>one</div><p>two</p><h2>three</h2>four") == "one\ntwo\nthree\nfour"
    assert html_to_text("a<br>b<br/><br>c") == "a\nb\n\nc"
    assert html_to_text("<p>a\n   b\t c</p>") == "a b c"
    assert html_to_text("<DIV>upper</DIV>case<BR>") == "upper\ncase"


def test_lists_and_tables():
    assert html_to_text("<ul><li>one</li><li>two <b>bold</b></li></ul><ol><li>three</ol>") == "one\ntwo bold\nthree"
    table = "<table><tr><th>Player</th><th>Nation</th></tr><tr><td>Ann</td><td>(to choose)</td></tr></table>"
    assert html_to_text(table) == "Player Nation\nAnn (to choose)"


def test_pre_keeps_its_lines():
    assert html_to_text("<pre>NATION Crete\nPLACE  Phaestos\n\nend</pre>after") == (
        "NATION Crete\nPLACE Phaestos\n\nend\nafter"
    )


def test_blockquotes_are_quoted_lines_per_level():
    text = html_to_text(
        "<div>Mine</div><blockquote><div>first level</div><blockquote>second<br>level</blockquote>"
        "<p>first again</p></blockquote><div>mine below</div>"
    )
    assert text == "Mine\n> first level\n> > second\n> > level\n> first again\nmine below"


def test_quote_marks_stop_at_the_cap():
    text = html_to_text("<blockquote>" * (MAX_QUOTE_MARKS + 5) + "deep" + "</blockquote>" * (MAX_QUOTE_MARKS + 5) + "out")
    assert text == "> " * MAX_QUOTE_MARKS + "deep\nout"


def test_a_quoted_reply_is_told_from_the_players_lines():
    # Gmail's layout: attribution, then the quoted letter in a blockquote, the orders below it
    reply = (
        '<div dir="ltr"><div class="gmail_quote"><div dir="ltr" class="gmail_attr">On Wed, Nov 25, 2026 at 5:28 AM '
        "&lt;pbem@pbem.localhost&gt; wrote:<br></div><blockquote class=\"gmail_quote\" style=\"margin:0px\">"
        "<div><ul><li>NATION Africa</li></ul><pre>===== ORDERS: edit below this line =====\nNATION Africa\n"
        "PLACE Sahara\n===== END OF ORDERS =====</pre></div></blockquote></div><div>NATION Crete</div>"
        "<div>PLACE Phaestos</div></div>"
    )
    assert extract_order_text(html_to_text(reply)) == "NATION Crete\nPLACE Phaestos"


def test_scripts_styles_and_head_are_not_text():
    page = (
        "<html><head><title>Title</title><style>p { color: red }</style></head><body>"
        "<script>if (a < b) document.write('<p>no</p>')</script><noscript>nojs</noscript>"
        "<template><p>later</p></template>shown</body></html>"
    )
    assert html_to_text(page) == "shown"
    assert html_to_text("<SCRIPT>x</Script >after") == "after"


def test_entities_and_nbsp():
    assert html_to_text("&lt;pbem@pbem.localhost&gt; &amp; &#65;&#x42; caf&eacute; &bogus; &amp") == (
        "<pbem@pbem.localhost> & AB café &bogus; &"
    )
    # Outlook's empty paragraph: one no-break space, which the reader takes for a blank line
    assert html_to_text('<p class="MsoNormal">a<o:p></o:p></p><p class="MsoNormal"><o:p>&nbsp;</o:p></p><p>b</p>') == (
        "a\n\xa0\nb"
    )


def test_outlook_conditional_comments():
    mail = (
        "<!--[if gte mso 9]><xml><o:OfficeDocumentSettings></o:OfficeDocumentSettings></xml><![endif]-->"
        "<p>NATION Crete</p><!--[if mso]><p>only in Outlook</p><![endif]-->"
        "<!--[if !mso]><!--><p>not in Outlook</p><!--<![endif]-->"
        "<p><![if !supportLists]>1.<![endif]>PLACE Phaestos</p>"
    )
    assert html_to_text(mail) == "NATION Crete\nnot in Outlook\n1.PLACE Phaestos"


def test_text_after_closing_tags_and_outside_the_document():
    assert html_to_text("<div><b>bold</b> tail</div> after div") == "bold tail\nafter div"
    assert html_to_text("<html><body><p>in</p></body></html>after the end") == "in\nafter the end"
    assert html_to_text("<p>a<!-- note -->b<?php x ?>c</p>") == "abc"


def test_tags_as_browsers_read_them():
    assert html_to_text("<a href='x>y' title=\"a>b\">link</a>") == "link"
    assert html_to_text("1 < 2 and 3 <4, a <-> b") == "1 < 2 and 3 <4, a <-> b"
    assert html_to_text("<![CDATA[hidden]]>x<!DOCTYPE html>y</ odd>z</>w") == "xyzw"
    # a tag or a comment left open at the end swallows the rest, as in a browser
    assert html_to_text("kept<a href='never closed") == "kept"
    assert html_to_text("kept<!-- never closed <p>x</p>") == "kept"
    assert html_to_text("<div/>a<blockquote/>b") == "a\nb"


@pytest.mark.parametrize("markup", ["", "   \n ", "<!-- only a comment -->", "<html><head></head><body></body></html>"])
def test_documents_without_text(markup):
    assert html_to_text(markup) == ""


def test_odd_characters_pass_through():
    assert html_to_text("plain text, no markup") == "plain text, no markup"
    assert html_to_text("a\x00b<p>c\x00</p>") == "a\x00b\nc\x00"
    assert html_to_text("lone \udcff surrogate<br>\ud800") == "lone \udcff surrogate\n\ud800"
    # the text is a str already: a charset named in the body changes nothing
    assert html_to_text('<meta charset="koi8-r"><p>Привет, café</p>') == "Привет, café"


def _html_replies() -> list[pytest.param]:
    """(orders, HTML part) of each corpus reply with its orders above or below the quote, named by its file."""
    replies = []
    for case in json.loads((CORPUS / "cases.json").read_text(encoding="utf-8")):
        if case["kind"] != "orders" or case["style"] not in ("top", "bottom"):
            continue
        message = email.message_from_bytes((CORPUS / case["file"]).read_bytes(), policy=email.policy.default)
        part = message.get_body(("html",))
        if part is not None:
            replies.append(pytest.param(case["orders"], part.get_content(), id=case["file"]))
    return replies


@pytest.mark.parametrize(("orders", "markup"), _html_replies())
def test_corpus_replies_in_html_give_the_players_orders_and_not_the_quote(orders, markup):
    own = [line.lower() for line in extract_order_text(html_to_text(markup)).split("\n")]
    for order in orders:
        assert unicodedata.normalize("NFKC", order).lower() in own
    # the quoted prompt's default orders are the quote's, not the player's
    assert "nation africa" not in own and "place sahara" not in own


# --------------------------------------------------------------------------
# any text


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises(text):
    assert isinstance(html_to_text(text), str)


@settings(max_examples=300, deadline=None)
@given(st.text().filter(lambda t: "<" not in t and "&" not in t))
def test_plain_text_keeps_its_words(text):
    assert html_to_text(text).split() == text.split()


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_escaped_text_comes_back(text):
    assert html_to_text(html.escape(text)).split() == text.split()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1).filter(str.strip), min_size=1, max_size=8))
def test_every_line_in_a_blockquote_is_quoted(lines):
    text = html_to_text("<blockquote>" + "<br>".join(html.escape(line) for line in lines) + "</blockquote>after")
    *quoted, last = text.split("\n")
    assert last == "after"
    assert all(line.startswith(">") for line in quoted)


# --------------------------------------------------------------------------
# hostile input

#: Shapes that took html.parser (or a "<[^>]*>" pattern, or libxml2) time growing with the square of their
#: length, each at the 1 MB message limit.
HOSTILE = r'''
import sys, time
from pbem.mail.html_text import html_to_text
M = 1_000_000
shapes = {
    "<a ": "<a " * (M // 3),
    "<!--": "<!--" * (M // 4),
    "</": "</" * (M // 2),
    "<?": "<?" * (M // 2),
    "<![CDATA[": "<![CDATA[" * (M // 9),
    "<": "<" * M,
    "<a href='x...": "<a href='" + "x" * (M - 9),
    "<blockquote>": "<blockquote>" * 100_000,
    "<div>": "<div>" * 200_000,
    "&": "&" * M,
    "&#": "&#" * (M // 2),
    "<b></i>": "<b></i>" * (M // 7),
    "<!--a--!>": "<!--a--!>" * (M // 9),
    "<blockquote>x<br>": "<blockquote>x<br>" * (M // 17),
    "<pre>newlines": "<blockquote><pre>" + "\n" * M,
}
for name, markup in shapes.items():
    start = time.perf_counter()
    text = html_to_text(markup)
    print(f"{name!r} {time.perf_counter() - start:.3f}s {len(text)}", flush=True)
'''


def test_hostile_shapes_at_the_size_limit_finish():
    """All shapes in one process, with one generous limit: linear code takes about a second for them all.

    Code that grows with the square of the input takes hours on any one of
    them, so the limit cannot be missed by chance, and the test cannot hang
    the suite.
    """
    try:
        done = subprocess.run([sys.executable, "-c", HOSTILE], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as slow:
        pytest.fail(f"not done in 60 s; finished: {slow.stdout!r}")
    assert done.returncode == 0, done.stderr
    finished = done.stdout.splitlines()
    assert len(finished) == 15, done.stdout
    # the text stays within a few times the mail: quote marks are capped
    assert all(int(line.rsplit(" ", 1)[1]) <= 5_000_000 for line in finished), done.stdout
