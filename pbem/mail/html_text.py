"""HTML mail as the plain text a player would read: blocks become lines, scripts and styles vanish.

Many phones and webmail clients send HTML only; the order parser reads text.
This runs on every HTML-only mail before its sender is known, so anyone on the
internet chooses its input, up to the message size limit (1 MB). It must take
time linear in that input, whatever it is.

Why a tokenizer of our own, and neither ``html.parser`` nor lxml:

* the standard library's ``html.parser`` rescans from each unfinished
  construct (``<a ``, ``<!--``, ``</``, ``<?``, ``<![CDATA[`` never closed) to
  the end of its input: in Python 3.11 ``"<a " * 26_666`` (80 kB) took a
  minute, and a 1 MB message would take hours. A pattern such as
  ``<[^>]*>`` does the same on ``"<" * n``;
* lxml (libxml2 2.14) reads those shapes fast, but each end tag that matches
  no open element makes libxml2 search all the elements still open, so
  ``"<b></i>" * 142_857`` (1 MB) took 29 seconds through its event interface,
  even when the event handler raised to stop it. Its tree interface caps
  that search by giving up at 256 nested elements, and then drops the rest of
  the mail (300 nested ``<div>`` lose all their text), and it drops any text
  after ``</html>``. The workarounds cost more than the few rules below.

The tokenizer reads as a browser's does (the HTML standard's tokenizer, less
what a text reader does not need): a tag runs to the first ``>`` outside a
quoted attribute value; a comment runs to ``-->``; ``<!...>``, ``<?...>`` and
``</ ...>`` are bogus comments running to the next ``>``; script and style run
to their end tag; a construct left open swallows the rest of the input, as in
a browser. No construct is ever read twice: the cursor only moves forward, and
every search for a delimiter goes through `_Next`, which answers again without
searching while the cursor has not passed its last answer; so each character is
looked at a bounded number of times (see `_Next`), and each tag's name and
attributes by one pass of `_tag_end`. Character references are decoded by
``html.unescape``, whose pattern reads at most 34 characters from each ``&``.
The text is built from the tags as they come, with a few counters and no
tree, so nesting 100,000 deep costs no more than 100,000 siblings; each line
takes `MAX_QUOTE_MARKS` marks at most, so the text stays within a few times
the size of the mail. The rules (those of the ``html.parser`` reader this
replaces):

* a block element (``<p>``, ``<div>``, ``<li>``, ``<tr>``, ...) starts and
  ends a line; ``<br>`` ends one even when it is empty, so ``a<br><br>b``
  keeps its blank line; table cells on one row are kept apart by a space;
* ``<pre>`` keeps its newlines; elsewhere runs of whitespace become one space;
  character references (``&amp;``, ``&#65;``, ``&nbsp;``) are decoded;
* script, style, head, title, template and noscript are dropped, and so are
  comments, which also drops Outlook's ``<!--[if mso]>...<![endif]-->``;
* a ``<blockquote>``'s lines are written as a plain-text reply quotes them,
  ``"> "`` once per level (`MAX_QUOTE_MARKS` at most), so that
  `pbem.mail.order_text` tells the player's lines from the quoted ones;
* a paragraph holding only ``&nbsp;`` is a line of one no-break space, which
  readers take for a blank line: the player's blank line stays where it was.
"""

from __future__ import annotations

import re
from html import unescape
from typing import Protocol

__all__ = ["MAX_QUOTE_MARKS", "html_to_text"]

#: The most "> " marks a line takes, however deep its blockquotes: the reader only asks whether a line is
#: quoted, and a cap keeps the text no larger than a few times the mail, even when the mail opens 100,000
#: blockquotes and then writes 100,000 lines in them. Real replies nest far fewer levels.
MAX_QUOTE_MARKS = 10

_BLOCK_TAGS = frozenset({
    "p", "div", "li", "ul", "ol", "tr", "table", "tbody", "thead", "h1", "h2",
    "h3", "h4", "h5", "h6", "pre", "section", "article", "header", "footer",
    "address", "dl", "dt", "dd", "center", "form", "fieldset", "figure", "hr",
    "body", "html",
})
#: Table cells: each starts with a space, so that cells on one row do not run together ("Ann(to choose)").
_CELL_TAGS = frozenset({"td", "th"})
_SKIP_TAGS = frozenset({"script", "style", "head", "title", "template", "noscript"})
_VOID_TAGS = frozenset({"br", "hr", "img", "meta", "link", "input", "wbr", "col", "area", "base"})

_SPACE_RUN = re.compile(r"[ \t\r\n\f]+")
_SPACES = re.compile(r" {2,}")

# The tokenizer's runs. Each is one character class repeated: matched where the cursor stands,
# it stops at the first character outside the class, so it costs what it consumes.
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_WHITESPACE = frozenset(" \t\n\r\f")
_SPACE = re.compile(r"[ \t\n\r\f]*")
_TAG_NAME = re.compile(r"[^ \t\n\r\f/>]*")
_ATTRIBUTE_NAME = re.compile(r"[^ \t\n\r\f/=>]*")
_UNQUOTED_VALUE = re.compile(r"[^ \t\n\r\f>]*")
#: A "<" that may begin markup; any other "<" is text, and is passed over without a look.
_MARKUP_OPEN = re.compile(r"<[A-Za-z/!?]")
#: Where the raw text of a script or a style ends: its end tag, in any case.
_RAW_TEXT_END = {
    "script": re.compile(r"</script[ \t\n\r\f/>]", re.IGNORECASE),
    "style": re.compile(r"</style[ \t\n\r\f/>]", re.IGNORECASE),
}


class _Sink(Protocol):
    """What the tokenizer tells of the input, in order: tags by their lower-case names, and the text between."""

    def start(self, tag: str, self_closing: bool) -> None: ...
    def end(self, tag: str) -> None: ...
    def data(self, text: str) -> None: ...


class _Next:
    """Where a delimiter next occurs at or after the cursor, searched for again only once the cursor has passed it.

    The tokenizer's cursor never moves back, so asked from a later place the
    answer is the last one as long as that is still ahead of the cursor, or
    was "nowhere". A new search starts only past the last answer: the
    stretches searched never overlap, and all the searches for one delimiter
    together read the input at most once. Without this, ``"<!--a--!>" * n``
    would look for ``-->`` to the end of the input once per comment.
    """

    __slots__ = ("_text", "_pattern", "_from", "_at")

    def __init__(self, text: str, delimiter: str | re.Pattern[str]) -> None:
        self._text = text
        self._pattern = re.compile(re.escape(delimiter)) if isinstance(delimiter, str) else delimiter
        self._from = -1  # where the last search started; -1: none yet
        self._at = -1  # its answer: where the delimiter starts; -1: nowhere at or after _from

    def __call__(self, i: int) -> int:
        """The first index >= ``i`` where the delimiter starts, or -1; ``i`` is never less than the last time's."""
        if self._from < 0 or 0 <= self._at < i:
            found = self._pattern.search(self._text, i)
            self._from, self._at = i, found.start() if found else -1
        return self._at


def _tag_end(text: str, i: int) -> tuple[int, bool]:
    """Past the ``>`` that ends a tag whose name ends at ``i``, and whether it was ``/>``; (-1, False) at the end.

    The HTML standard's attribute states, in one forward pass: a ``>`` ends
    the tag unless it is inside a quoted attribute value; a quote opens a
    value only just after ``=``. Every turn of the loop consumes at least one
    character.
    """
    n = len(text)
    while i < n:
        char = text[i]
        if char == ">":
            return i + 1, False
        if char == "/":
            if text.startswith(">", i + 1):
                return i + 2, True
            i += 1
        elif char in _WHITESPACE:
            i = _SPACE.match(text, i).end()
        else:
            # an attribute name: its first character may be anything, even "=" or a quote
            i = _SPACE.match(text, _ATTRIBUTE_NAME.match(text, i + 1).end()).end()
            if text.startswith("=", i):
                i = _SPACE.match(text, i + 1).end()
                if i >= n:
                    break
                quote = text[i]
                if quote == '"' or quote == "'":
                    close = text.find(quote, i + 1)
                    if close < 0:
                        break
                    i = close + 1
                elif quote != ">":
                    i = _UNQUOTED_VALUE.match(text, i).end()
    return -1, False


def _tokenize(text: str, sink: _Sink) -> None:
    """Read ``text`` once, from the start to the end, telling ``sink`` of each start tag, end tag and text.

    ``i`` only grows, and each `_Next` is asked from a place no earlier than
    the last time, which is what `_Next` needs to answer right.
    """
    n = len(text)
    next_markup = _Next(text, _MARKUP_OPEN)
    next_gt = _Next(text, ">")
    next_comment_end = _Next(text, "-->")
    next_bang_comment_end = _Next(text, "--!>")
    raw_text_ends = {name: _Next(text, pattern) for name, pattern in _RAW_TEXT_END.items()}
    i = 0  # the cursor: everything before it has been read
    text_from = 0  # the text not yet given to the sink starts here
    while i < n:
        lt = next_markup(i)
        if lt < 0:
            break
        kind = text[lt + 1]
        is_end_tag = kind == "/" and text[lt + 2:lt + 3] in _ASCII_LETTERS
        if is_end_tag or kind in _ASCII_LETTERS:
            name_start = lt + 2 if is_end_tag else lt + 1
            name_end = _TAG_NAME.match(text, name_start + 1).end()
            end, self_closing = _tag_end(text, name_end)
            if end < 0:
                # A tag left open at the end of the input is no tag and no text, as in a browser.
                n = lt
                break
            if text_from < lt:
                sink.data(text[text_from:lt])
            tag = text[name_start:name_end].lower()
            i = text_from = end
            if is_end_tag:
                sink.end(tag)
                continue
            sink.start(tag, self_closing)
            if tag in raw_text_ends and not self_closing:
                # Script or style: its content is no markup and not shown; its end tag is read as a tag.
                close = raw_text_ends[tag](i)
                i = text_from = n if close < 0 else close
            continue
        if kind == "/":
            if lt + 2 >= n:
                break  # "</" at the very end: text
            # "</>" is nothing; "</ x>", "</3>" are bogus comments
            end = lt + 3 if text[lt + 2] == ">" else next_gt(lt + 2) + 1
        elif kind == "!" and text.startswith("--", lt + 2):
            end = _comment_end(text, lt + 4, next_comment_end, next_bang_comment_end)
        else:
            # <!DOCTYPE>, <![CDATA[...]]>, <![if mso]>, <?xml ...?>: bogus comments, to the next ">"
            end = next_gt(lt + 2) + 1
        if text_from < lt:
            sink.data(text[text_from:lt])
        # end is 0 when the ">" or "-->" looked for is nowhere: the rest is comment
        i = text_from = n if end <= 0 else end
    if text_from < n:
        sink.data(text[text_from:n])


def _comment_end(text: str, i: int, next_end: _Next, next_bang_end: _Next) -> int:
    """Past the end of a comment whose "<!--" ends at ``i``: after "-->" or "--!>", or -1 (the rest of the input).

    "<!-->" and "<!--->" are whole (empty) comments, as the HTML standard reads them.
    """
    if text.startswith(">", i):
        return i + 1
    if text.startswith("->", i):
        return i + 2
    end = next_end(i)
    bang = next_bang_end(i)
    if bang >= 0 and (end < 0 or bang < end):
        return bang + 4
    return -1 if end < 0 else end + 3


class _TextBuilder:
    """The tokenizer's sink: lines of text, from the tags and the text between them.

    Tags come as written, not as a tree: an end tag without its start tag
    still ends a line, and counters never go below zero.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.current: list[str] = []
        self.skip_depth = 0
        self.quote_depth = 0
        self.pre_depth = 0

    # -- lines

    def _break(self, force: bool = False) -> None:
        """End the current line; an empty one is kept only when forced (``<br>``, a newline in ``<pre>``)."""
        line = "".join(self.current)
        # strip(" ") only: a paragraph holding just &nbsp; is a blank line
        if force or line.strip(" "):
            if self.quote_depth:
                # quoted text is kept, marked as a plain-text reply marks it, so the
                # reply reader can tell the player's lines below a quote from the quote
                line = "> " * min(self.quote_depth, MAX_QUOTE_MARKS) + line.strip(" ")
            self.lines.append(line)
        self.current = []

    def _ensure_break(self) -> None:
        """Start a new line unless the current one is empty; a line of spaces only is dropped."""
        if "".join(self.current).strip(" "):
            self._break()
        else:
            self.current = []

    # -- tokens

    def start(self, tag: str, self_closing: bool) -> None:
        if tag in _SKIP_TAGS:
            self.skip_depth += 1
        elif tag == "blockquote":
            # Quoted text of a reply: never orders, written as "> " lines.
            self._ensure_break()
            self.quote_depth += 1
        elif self.skip_depth:
            return
        elif tag == "br":
            self._break(force=True)
        elif tag in _BLOCK_TAGS:
            self._ensure_break()
            if tag == "pre":
                self.pre_depth += 1
        elif tag in _CELL_TAGS:
            self.current.append(" ")
        if self_closing and tag not in _VOID_TAGS:
            # <div/>: read as html.parser read it, an element opened and closed at once
            self.end(tag)

    def end(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self.skip_depth = max(0, self.skip_depth - 1)
        elif tag == "blockquote":
            self._ensure_break()
            self.quote_depth = max(0, self.quote_depth - 1)
        elif self.skip_depth:
            return
        elif tag in _BLOCK_TAGS:
            self._ensure_break()
            if tag == "pre":
                self.pre_depth = max(0, self.pre_depth - 1)

    def data(self, text: str) -> None:
        if self.skip_depth:
            return
        if "&" in text:
            text = unescape(text)
        if self.pre_depth:
            first, *more = text.split("\n")
            self.current.append(first)
            for part in more:
                self._break(force=True)
                self.current.append(part)
            return
        self.current.append(_SPACE_RUN.sub(" ", text))

    def text(self) -> str:
        self._break()
        return "\n".join(_SPACES.sub(" ", line).strip(" ") for line in self.lines)


def html_to_text(html: str) -> str:
    """Plain text of an HTML body, one line per <br>, <p>, <div>, <li>, ..., in time linear in its length.

    Blockquotes come out as "> " lines, scripts and styles not at all (see the
    module's docstring). Never raises on a str.
    """
    builder = _TextBuilder()
    _tokenize(html, builder)
    return builder.text()
