"""The standard library's email policies, with each header class made once instead of once per header,
and each header read parsed once.

The modern policies (`email.policy.default`, `email.policy.SMTP`) look up
the class of every header they parse or set in a `HeaderRegistry`, and the
registry builds that class anew, with `type()`, on every lookup. An
acknowledgement sets about a dozen headers and its parts a dozen more;
building those classes was the largest single cost of answering a mail
(docs/performance.md). The registry here keeps each class it built, by
header name; the classes hold no state, so what is parsed, produced and
checked is exactly what the standard policies do.

Reading a message asks for the same header again and again: the content
type, charset, parameters, disposition and file name of a part each parse
Content-Type or Content-Disposition afresh, ten parses of Content-Type for a
one-part mail. The policy for reading (`DEFAULT`) keeps the header objects
it made, by name and raw value; they are immutable strings with their parse
attached, so a second reader gets what a fresh parse would give.
"""

from __future__ import annotations

import email.policy
import threading
from email.headerregistry import BaseHeader, HeaderRegistry

__all__ = ["DEFAULT", "SMTP"]


class _KeptRegistry(HeaderRegistry):
    """A HeaderRegistry that builds the class for a header name once."""

    def __init__(self) -> None:
        super().__init__()
        self._built: dict[str, type[BaseHeader]] = {}

    def __getitem__(self, name: str) -> type[BaseHeader]:
        key = name.lower()
        built = self._built.get(key)
        if built is None:
            built = self._built[key] = super().__getitem__(name)
        return built


_REGISTRY = _KeptRegistry()

#: Header values read, parsed: at most this many are kept (then the store starts again).
_KEPT_HEADERS = 2048
_parsed: dict[tuple[str, str], BaseHeader] = {}
_parsed_lock = threading.Lock()


class _Reading(email.policy.EmailPolicy):
    """`email.policy.default`, whose parse of a header read from a message is made once per name and value."""

    def header_fetch_parse(self, name, value):
        if hasattr(value, "name"):  # set by a program, already a header object
            return value
        key = (name, value)
        header = _parsed.get(key)
        if header is None:
            header = super().header_fetch_parse(name, value)
            with _parsed_lock:
                if len(_parsed) >= _KEPT_HEADERS:
                    _parsed.clear()
                _parsed[key] = header
        return header


#: `email.policy.default` (for reading mail), with the kept registry and the kept parses.
DEFAULT = _Reading(header_factory=_REGISTRY)
#: `email.policy.SMTP` (for writing mail: CRLF line ends), with the kept registry.
SMTP = email.policy.SMTP.clone(header_factory=_REGISTRY)
