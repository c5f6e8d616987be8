"""HTML mail as the plain text a player would read: blocks become lines, scripts and styles vanish.

Many phones and webmail clients send HTML only; the order parser reads text.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCK_TAGS = frozenset({
    "p", "div", "li", "ul", "ol", "tr", "table", "tbody", "thead", "h1", "h2",
    "h3", "h4", "h5", "h6", "pre", "section", "article", "header", "footer",
    "address", "dl", "dt", "dd", "center", "form", "fieldset", "figure", "hr",
    "body", "html",
})


_SKIP_TAGS = frozenset({"script", "style", "head", "title", "template", "noscript"})
_VOID_TAGS = frozenset({"br", "hr", "img", "meta", "link", "input", "wbr", "col", "area", "base"})


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current: list[str] = []
        self.skip_depth = 0
        self.quote_depth = 0
        self.pre_depth = 0

    # line management
    def _break(self, force: bool = False) -> None:
        line = "".join(self.current)
        # strip(" ") only: a paragraph holding just &nbsp; is a blank line
        if force or line.strip(" "):
            # quoted text is kept, marked as a plain-text reply marks it, so the
            # reply reader can tell the player's lines below a quote from the quote
            self.lines.append("> " * self.quote_depth + line.strip(" ") if self.quote_depth else line)
        self.current = []

    def _ensure_break(self) -> None:
        if "".join(self.current).strip(" "):
            self._break()
        else:
            self.current = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            self.skip_depth += 1
            return
        if tag == "blockquote":
            # Quoted text of a reply: never orders, written as "> " lines.
            self._ensure_break()
            self.quote_depth += 1
            return
        if self.skip_depth:
            return
        if tag == "br":
            self._break(force=True)
        elif tag in _BLOCK_TAGS:
            self._ensure_break()
            if tag == "pre":
                self.pre_depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID_TAGS:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if tag == "blockquote":
            self._ensure_break()
            self.quote_depth = max(0, self.quote_depth - 1)
            return
        if self.skip_depth:
            return
        if tag in _BLOCK_TAGS:
            self._ensure_break()
            if tag == "pre":
                self.pre_depth = max(0, self.pre_depth - 1)

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if self.pre_depth:
            parts = data.split("\n")
            for i, part in enumerate(parts):
                if i:
                    self._break(force=True)
                self.current.append(part)
            return
        self.current.append(re.sub(r"[ \t\r\n\f]+", " ", data))

    def text(self) -> str:
        self._break()
        return "\n".join(re.sub(r" {2,}", " ", line).strip(" ") for line in self.lines)


def html_to_text(html: str) -> str:
    """Plain text of an HTML body, one line per <br>, <p>, <div>, <li>, ..."""
    parser = _TextExtractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception:
        # html.parser is lenient; this is a last resort: drop the tags.
        return re.sub(r"<[^>]*>", "", html)
    return parser.text()
