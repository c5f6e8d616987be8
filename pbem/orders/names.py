"""Names as people type them on a phone: any case, abbreviated, slightly misspelt.

Exact, case-free and unique-prefix matches come from the rules' own matcher.
On top of that, a misspelling is read as the name it plainly means when one
candidate is very close and no other comes near; the acknowledgement then
says how the word was read, so nothing is corrected silently. Anything less
clear is refused with the nearest names offered.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from pbem.rules.ruleset.reference import match_name

#: How close a misspelling must be to be read as a name, and how far the runner-up must stay.
ACCEPT_RATIO = 0.85
RUNNER_UP_BELOW = 0.75


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def understand_name(text: str, candidates: Iterable[str], kind: str) -> tuple[str, str | None]:
    """(the name meant, a note when a misspelling was read) or LookupError with suggestions."""
    names = list(candidates)
    try:
        return match_name(text, names, kind=kind), None
    except LookupError as refusal:
        typed = _norm(text)
        scored = sorted(
            ((difflib.SequenceMatcher(None, typed, _norm(n)).ratio(), n) for n in names), reverse=True
        )
        if scored and scored[0][0] >= ACCEPT_RATIO and (len(scored) == 1 or scored[1][0] < RUNNER_UP_BELOW):
            best = scored[0][1]
            return best, f"read {text!r} as {best}"
        raise refusal
