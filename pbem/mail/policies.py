"""The standard library's email policies, with each header class made once instead of once per header.

The modern policies (`email.policy.default`, `email.policy.SMTP`) look up
the class of every header they parse or set in a `HeaderRegistry`, and the
registry builds that class anew, with `type()`, on every lookup. An
acknowledgement sets about a dozen headers and its parts a dozen more;
building those classes was the largest single cost of answering a mail
(docs/performance.md). The registry here keeps each class it built, by
header name; the classes hold no state, so what is parsed, produced and
checked is exactly what the standard policies do.
"""

from __future__ import annotations

import email.policy
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

#: `email.policy.default` (for reading mail), with the kept registry.
DEFAULT = email.policy.default.clone(header_factory=_REGISTRY)
#: `email.policy.SMTP` (for writing mail: CRLF line ends), with the kept registry.
SMTP = email.policy.SMTP.clone(header_factory=_REGISTRY)
