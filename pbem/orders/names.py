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
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from pbem.rules.ruleset.reference import match_name

#: How close a misspelling must be to be read as a name, and how far the runner-up must stay.
ACCEPT_RATIO = 0.85
RUNNER_UP_BELOW = 0.75


@lru_cache(maxsize=4096)
def _norm(text: str) -> str:
    """Remembered: a word that names nothing is compared with every name of the list, each normalised."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


@lru_cache(maxsize=4096)
def _letters(name: str) -> Counter[str]:
    return Counter(name)


def understand_name(text: str, candidates: Iterable[str], kind: str, *, explain: bool = True) -> tuple[str, str | None]:
    """(the name meant, a note when a misspelling was read) or LookupError, with suggestions if ``explain``."""
    names = list(candidates)
    try:
        return match_name(text, names, kind=kind, explain=explain), None
    except LookupError as refusal:
        typed = _norm(text)
        scored = sorted(((ratio, n) for n in names if (ratio := _likeness(typed, _norm(n))) is not None), reverse=True)
        if scored and scored[0][0] >= ACCEPT_RATIO and (len(scored) == 1 or scored[1][0] < RUNNER_UP_BELOW):
            best = scored[0][1]
            return best, f"read '{text}' as {best}"
        raise refusal


def _likeness(typed: str, name: str) -> float | None:
    """How alike the two spellings are (difflib's ratio), or None when it is surely below RUNNER_UP_BELOW.

    A name that far off can neither be read for the word nor stand in the
    way of the one that is: the cheap upper bounds spare working out the
    ratio for nearly every name (a misread area is compared with all of them).
    """
    length = len(typed) + len(name)  # difflib's two bounds, worked out as difflib does, before its matcher
    if length and 2.0 * min(len(typed), len(name)) / length < RUNNER_UP_BELOW:
        return None
    have = _letters(name)
    if length and 2.0 * sum(min(n, have[c]) for c, n in _letters(typed).items()) / length < RUNNER_UP_BELOW:
        return None
    return difflib.SequenceMatcher(None, typed, name).ratio()
